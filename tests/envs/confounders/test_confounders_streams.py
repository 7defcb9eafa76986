"""Streams: the synthetic recipe's ranges, kernel, schedules, plug-in tensors, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gymforge.envs.confounders.config import StreamConfig, SyntheticConfig
from gymforge.envs.confounders.schedules import PAPER_SHIFTS, shift_schedule
from gymforge.envs.confounders.streams import SyntheticStream, TensorStream
from gymforge.envs.confounders.synthetic import gaussian_kernel


def _reference_kernel(size: int, nsig: float) -> np.ndarray:
    """The kernel written from the reference's formula with the standard library's erf."""
    interval = (2 * nsig + 1.0) / size
    edges = np.linspace(-nsig - interval / 2.0, nsig + interval / 2.0, size + 1)
    cdf = np.array([0.5 * (1 + math.erf(e / math.sqrt(2))) for e in edges])
    raw = np.sqrt(np.outer(np.diff(cdf), np.diff(cdf)))
    return raw / raw.sum()


def test_gaussian_kernel_matches_the_formula():
    np.testing.assert_allclose(gaussian_kernel(16, 5).numpy(), _reference_kernel(16, 5), atol=1e-15)


def test_stage_ranges_follow_the_recipe_at_every_shift():
    stream = SyntheticStream(SyntheticConfig(samples_per_group=500), seed=3)
    for stage, s in enumerate(PAPER_SHIFTS):
        cf, mf = stream.stage_effects(stage)
        a, b = stream.base.y == 0, stream.base.y == 1
        for values, lo, hi in (
            (cf[a], 3 - s, 5 - s),
            (cf[b], 4 + s, 6 + s),
            (mf[a], 3 + s, 5 + s),
            (mf[b], 4 - s, 6 - s),
        ):
            assert lo - 1e-5 <= float(values.min()) and float(values.max()) <= hi + 1e-5
            assert float(values.min()) < lo + 0.05 and float(values.max()) > hi - 0.05


def test_images_hold_the_effects_in_their_quadrants():
    cfg = SyntheticConfig(samples_per_group=8, noise_std=0.0)
    stream = SyntheticStream(cfg, shuffle=False)
    x, c, y = stream.stage_data(2)
    cf, mf = stream.stage_effects(2)
    k = gaussian_kernel(16).float()
    img = x[:, 0]
    torch.testing.assert_close(img[:, :16, :16], mf[:, None, None] * k)
    torch.testing.assert_close(img[:, 16:, 16:], mf[:, None, None] * k)
    torch.testing.assert_close(img[:, 16:, :16], cf[:, None, None] * k)
    assert float(img[:, :16, 16:].abs().max()) == 0.0
    torch.testing.assert_close(c[:, 0], cf)
    assert y.tolist() == [0] * 8 + [1] * 8


def test_noise_has_the_configured_scale_and_stages_share_draws():
    stream = SyntheticStream(SyntheticConfig(samples_per_group=64, noise_std=0.5), shuffle=False)
    x0, _, _ = stream.stage_data(0)
    x4, _, _ = stream.stage_data(4)
    top_right = x0[:, 0, :16, 16:]
    assert float(top_right.std()) == pytest.approx(0.5, rel=0.05)
    torch.testing.assert_close(x0[:, 0, :16, 16:], x4[:, 0, :16, 16:])  # same noise in every stage


def test_at_the_last_stage_only_the_confounder_separates_the_groups():
    stream = SyntheticStream(SyntheticConfig(samples_per_group=2000))
    cf, mf = stream.stage_effects(4)
    y = stream.base.y
    assert float(cf[y == 0].max()) <= float(cf[y == 1].min())  # perfectly separable
    assert abs(float(mf[y == 0].mean() - mf[y == 1].mean())) < 0.05  # same distribution


def test_iteration_order_seeds_and_batch_counts():
    cfg = SyntheticConfig(samples_per_group=40)
    stream = SyntheticStream(cfg, batch_size=32, passes_per_stage=2, seed=1)
    batches = list(stream)
    assert len(batches) == 5 * 2 * (80 // 32)
    assert [b.stage for b in batches] == sorted(b.stage for b in batches)
    again = list(SyntheticStream(cfg, batch_size=32, passes_per_stage=2, seed=1))
    assert all(torch.equal(a.x, b.x) for a, b in zip(batches, again, strict=True))
    other = next(iter(SyntheticStream(cfg, batch_size=32, seed=2)))
    assert not torch.equal(other.x, batches[0].x)
    val = stream.validation()
    assert val.seed == 2 and len(list(val)) == 5 * 3  # no drop_last, no shuffle


def test_schedules():
    assert shift_schedule() == PAPER_SHIFTS
    assert shift_schedule("linear", 3, 0.0, 0.5) == (0.0, 0.25, 0.5)
    assert shift_schedule("step", 4, 0.1, 0.4) == (0.1, 0.1, 0.4, 0.4)
    np.testing.assert_allclose(
        shift_schedule("cyclic", 6, 0.0, 0.5, period=4), [0, 0.25, 0.5, 0.25, 0, 0.25]
    )


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: shift_schedule("sine"), "kind"),
        (lambda: shift_schedule("linear", 3, 0.0, 1.5), "high"),
        (lambda: shift_schedule("cyclic", 3, period=1), "period"),
        (lambda: StreamConfig(shifts=(0.0, -0.1)), r"shifts\[1\]"),
        (lambda: StreamConfig(shifts=(0.0, float("nan"))), r"shifts\[1\]"),
        (lambda: StreamConfig(batch_size=0), "batch_size"),
        (lambda: SyntheticConfig(samples_per_group=1), "samples_per_group"),
        (lambda: SyntheticConfig(noise_std=-1.0), "noise_std"),
        (lambda: SyntheticConfig(width=0.0), "width"),
        (lambda: SyntheticStream(shifts=(2.0,)), "shifts"),
    ],
)
def test_bad_configuration_names_the_field(call, field):
    with pytest.raises(ValueError, match=field):
        call()


def test_tensor_stream_plug_in():
    n = 30
    x = torch.randn(n, 5)
    c = torch.randn(n, 2)
    y = torch.randint(0, 2, (n,))
    stage = torch.tensor([7] * 10 + [3] * 20)
    stream = TensorStream(x, c, y, stage, batch_size=8, shuffle=False)
    assert stream.num_stages == 2 and stream.stage_ids == [3, 7]
    batches = list(stream)
    assert [b.stage for b in batches] == [0, 0, 0, 1, 1]
    torch.testing.assert_close(torch.cat([b.x for b in batches[:3]]), x[10:])
    assert batches[0].c.shape == (8, 2)
    with pytest.raises(ValueError, match="c must have 30 rows"):
        TensorStream(x, c[:5], y, stage)
    with pytest.raises(ValueError, match="y must be a 1-D integer"):
        TensorStream(x, c, y.float(), stage)
    with pytest.raises(ValueError, match="x must be a finite"):
        TensorStream(x * float("nan"), c, y, stage)
    with pytest.raises(ValueError, match="stage must be an int"):
        stream.stage_data(2)
