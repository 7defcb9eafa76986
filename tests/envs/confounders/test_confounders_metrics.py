"""Metrics: dCor² against the ``dcor`` package, hand-computed accuracies, BWT and forgetting."""

from __future__ import annotations

import dcor
import numpy as np
import pytest
import torch

from gymforge.envs.confounders import metrics


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dependent", [False, True])
def test_distance_correlations_agree_with_the_dcor_package(seed, dependent):
    rng = np.random.default_rng(seed)
    f = rng.standard_normal((120, 20))
    c = rng.uniform(3, 6, 120)
    if dependent:
        f = f + 0.5 * c[:, None]
    ours_u = float(metrics.u_distance_correlation_sqr(torch.tensor(f), torch.tensor(c)))
    ours_v = float(metrics.distance_correlation_sqr(torch.tensor(f), torch.tensor(c)))
    assert ours_u == pytest.approx(dcor.u_distance_correlation_sqr(f, c), abs=1e-6)
    assert ours_v == pytest.approx(dcor.distance_correlation_sqr(f, c), abs=1e-6)


def test_per_class_dcor_uses_each_class_alone():
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], 60)
    c = rng.uniform(3, 6, 120) + y  # c depends on y: pooled dCor would count that
    f = rng.standard_normal((120, 8)) + 3.0 * y[:, None]
    per_class = metrics.per_class_dcor_sqr(torch.tensor(f), torch.tensor(c), torch.tensor(y))
    for k in (0, 1):
        m = y == k
        assert float(per_class[k]) == pytest.approx(
            dcor.u_distance_correlation_sqr(f[m], c[m]), abs=1e-6
        )
    pooled = metrics.u_distance_correlation_sqr(torch.tensor(f), torch.tensor(c))
    assert float(pooled) > 0.1 > float(per_class.abs().max())


def test_u_dcor_is_zero_for_a_constant_confounder():
    f = torch.randn(10, 3)
    assert float(metrics.u_distance_correlation_sqr(f, torch.ones(10))) == 0.0


def test_balanced_and_group_accuracy_by_hand():
    y = torch.tensor([[0, 0, 0, 1], [1, 1, 1, 1]])
    pred = torch.tensor([[0, 1, 1, 1], [1, 0, 1, 1]])
    groups = metrics.group_accuracy(pred, y)
    torch.testing.assert_close(groups[0], torch.tensor([1 / 3, 1.0], dtype=torch.float64))
    assert torch.isnan(groups[1, 0]) and float(groups[1, 1]) == 0.75
    torch.testing.assert_close(
        metrics.balanced_accuracy(pred, y),
        torch.tensor([(1 / 3 + 1) / 2, 0.75], dtype=torch.float64),
    )


def test_bwt_forgetting_and_average_accuracy_by_hand():
    r = torch.tensor([[0.9, 0.1, 0.2], [0.7, 0.8, 0.3], [0.6, 0.9, 0.5]])
    assert metrics.average_accuracy(r) == pytest.approx((0.6 + 0.9 + 0.5) / 3)
    assert metrics.backward_transfer(r) == pytest.approx(((0.6 - 0.9) + (0.9 - 0.8)) / 2)
    assert metrics.forgetting(r) == pytest.approx(((0.9 - 0.6) + (0.8 - 0.9)) / 2)
    assert metrics.backward_transfer(torch.ones(1, 1)) == 0.0
    with pytest.raises(ValueError, match="square"):
        metrics.forgetting(torch.ones(2, 3))
