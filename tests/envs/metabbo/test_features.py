"""The 9 status features: hand-computed values, masking, and non-finite costs."""

from __future__ import annotations

import math

import torch

from gymforge.envs.metabbo.features import NUM_FEATURES, status_features


def _features(x, cost, alive, best_x, best_f, init_max, gen=3, stag=2, improved=True, t=10):
    return status_features(
        torch.tensor(x, dtype=torch.float64),
        torch.tensor(cost, dtype=torch.float64),
        torch.tensor(alive),
        torch.tensor(best_x, dtype=torch.float64),
        torch.tensor(best_f, dtype=torch.float64),
        torch.tensor(init_max, dtype=torch.float64),
        torch.tensor([gen]),
        torch.tensor([stag]),
        torch.tensor([improved]),
        t,
        10.0,
    )


def test_features__hand_computed_two_individuals() -> None:
    # x1 = (0, 0) cost 3, x2 = (3, 4) cost 5; gbest 1 at (0, 0); c_max = 9; box width 10, D = 2.
    f = _features(
        [[[0.0, 0.0], [3.0, 4.0]]], [[3.0, 5.0]], [[True, True]], [[0.0, 0.0]], [1.0], [9.0]
    )
    diag = 10.0 * math.sqrt(2.0)
    den = 8.0 + 1e-8
    expected = [
        ((3 - 1) + (5 - 1)) / 2 / den,  # mean gap to gbest
        (0 + 5 + 5 + 0) / 4 / diag,  # mean over all n^2 pairs
        1.0 / (4.0 + 1e-8),  # std(3, 5) = 1 over (c_max - g) / 2 = 4
        (10 - 3) / 10,
        2 / 10,
        (0 + 5) / 2 / diag,  # cbest is x1
        (0 + 2) / 2 / den,
        (0 + 5) / 2 / diag,  # gbest at x1 too
        1.0,
    ]
    assert f.shape == (1, NUM_FEATURES) and f.dtype == torch.float32
    torch.testing.assert_close(f[0], torch.tensor(expected, dtype=torch.float32))


def test_features__dead_rows_are_ignored() -> None:
    alive_only = _features(
        [[[0.0, 0.0], [3.0, 4.0]]], [[3.0, 5.0]], [[True, True]], [[0.0, 0.0]], [1.0], [9.0]
    )
    with_dead = _features(
        [[[0.0, 0.0], [3.0, 4.0], [5.0, -5.0]]],
        [[3.0, 5.0, 1e9]],
        [[True, True, False]],
        [[0.0, 0.0]],
        [1.0],
        [9.0],
    )
    torch.testing.assert_close(alive_only, with_dead)


def test_features__non_finite_costs_never_poison() -> None:
    x = [[[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]]]
    alive = [[True, True, True]]
    cases = [
        ([[3.0, math.inf, math.nan]], [1.0], [9.0]),  # some costs non-finite
        ([[math.inf, math.inf, math.inf]], [math.inf], [math.inf]),  # nothing finite yet
        ([[3.0, 5.0, 4.0]], [1.0], [math.inf]),  # no finite initial cost
        ([[1e308, -1e308, 0.0]], [-1e308], [1e308]),  # overflowing differences
    ]
    for cost, best_f, init_max in cases:
        f = _features(x, cost, alive, [[0.0, 0.0]], best_f, init_max)
        assert torch.isfinite(f).all(), (cost, f)
        assert ((f >= 0) & (f <= 1)).all(), (cost, f)
    # an infinite cost counts as c_max: same features as writing c_max there
    a = _features(x, [[3.0, math.inf, 4.0]], alive, [[0.0, 0.0]], [1.0], [9.0])
    b = _features(x, [[3.0, 9.0, 4.0]], alive, [[0.0, 0.0]], [1.0], [9.0])
    torch.testing.assert_close(a, b)
