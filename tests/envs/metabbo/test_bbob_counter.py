"""Counter-drawn random BBOB instances (the MetaBBO v1 ids): known answers, the generator
version's distribution, batch independence, no per-instance generators, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gymforge.envs.metabbo import counter_instances, evaluate, random_instances
from gymforge.envs.metabbo.bbob import FUNCTION_IDS
from gymforge.envs.metabbo.bbob_counter import gram_schmidt

FIELDS = ("x_opt", "f_opt", "rot_r", "rot_q", "peak_centers", "peak_scales", "peak_weights")


def _ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov-Smirnov statistic: the largest gap between the empirical CDFs."""
    grid = np.sort(np.concatenate([a, b]))
    cdf_a = np.searchsorted(np.sort(a), grid, side="right") / a.size
    cdf_b = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return float(np.abs(cdf_a - cdf_b).max())


def _ks_critical(n: int, m: int) -> float:
    """The statistic's 0.1% critical value (c(alpha) = 1.95)."""
    return 1.95 * math.sqrt((n + m) / (n * m))


@pytest.mark.parametrize("dimension", (2, 3, 10, 40))
def test_counter__value_at_x_opt_is_f_opt(dimension: int) -> None:
    inst = counter_instances(list(FUNCTION_IDS), dimension, 11)
    f = evaluate(inst, inst.x_opt[:, None, :].clone())[:, 0]
    torch.testing.assert_close(f, inst.f_opt, rtol=0.0, atol=1e-9)


def test_counter__random_points_are_not_below_f_opt() -> None:
    inst = counter_instances(list(FUNCTION_IDS) * 2, 5, list(range(48)))
    x = torch.rand(48, 200, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert (evaluate(inst, x * 10.0 - 5.0) - inst.f_opt[:, None]).min().item() >= -1e-9


def test_counter__an_instance_depends_only_on_its_own_seed_and_function() -> None:
    fids = torch.tensor([21, 9, 22, 4, 21, 1])
    seeds = torch.tensor([3, 3, 5, 8, 9, 2**40])
    batch = counter_instances(fids, 6, seeds)
    again = counter_instances(fids, 6, seeds)
    for name in FIELDS:
        assert torch.equal(getattr(batch, name), getattr(again, name)), name
    for row in range(6):
        alone = counter_instances(fids[row : row + 1], 6, seeds[row : row + 1])
        k = alone.peak_weights.shape[1]
        for name in ("x_opt", "f_opt", "rot_r", "rot_q"):
            assert torch.equal(getattr(alone, name)[0], getattr(batch, name)[row]), (row, name)
        for name in ("peak_centers", "peak_scales", "peak_weights"):
            assert torch.equal(getattr(alone, name)[0], getattr(batch, name)[row, :k]), (row, name)
    other = counter_instances(fids, 6, seeds + 1)
    assert not torch.equal(other.x_opt, batch.x_opt)
    assert not torch.equal(other.rot_q, batch.rot_q)


def test_counter__follows_the_metabox_convention() -> None:
    inst = counter_instances([1] * 400, 8, list(range(400)))
    assert inst.x_opt.abs().max().item() <= 4.0
    assert set(inst.f_opt.tolist()) == {100.0 * k for k in range(1, 26)}
    eye = torch.eye(8, dtype=torch.float64).expand(400, 8, 8)
    for rot in (inst.rot_r, inst.rot_q):
        torch.testing.assert_close(rot @ rot.transpose(1, 2), eye, rtol=0.0, atol=1e-12)
    special = counter_instances([5, 20, 24, 4], 8, 1)
    expected = torch.tensor([5.0, 4.2096874637 / 2, 1.25], dtype=torch.float64)
    assert torch.equal(special.x_opt.abs()[:3, 0], expected)
    assert bool((special.x_opt[3, ::2] >= 0).all())


def test_counter__same_distribution_as_the_generator_version() -> None:
    """Shift coordinates, rotation entries (Haar: each entry's law is that of a coordinate of
    a uniform unit vector) and f_opt: two-sample KS tests at the 0.1% level."""
    n = 600
    counter = counter_instances([1] * n, 6, list(range(n)))
    generator = random_instances([1] * n, 6, list(range(n)))
    for name in ("x_opt", "rot_r", "rot_q", "f_opt"):
        a = getattr(counter, name).reshape(n, -1)[:, 0].numpy()
        b = getattr(generator, name).reshape(n, -1)[:, 0].numpy()
        assert _ks_statistic(a, b) < _ks_critical(n, n), name
    # and a check that can fail: the shift against a shifted copy of itself
    a = counter.x_opt[:, 0].numpy()
    assert _ks_statistic(a, a + 2.0) > _ks_critical(n, n)


@pytest.mark.parametrize("fid", (21, 22))
def test_counter__gallagher_peaks_have_the_bbob_structure(fid: int) -> None:
    d = 5
    counter = counter_instances([fid] * 3, d, [1, 2, 3])
    generator = random_instances([fid], d, 1)
    torch.testing.assert_close(counter.peak_weights[0], generator.peak_weights[0])
    # the global peak sits at x_opt (in the rotated frame); the other centres in the box
    for row in range(3):
        expected = counter.rot_r[row] @ counter.x_opt[row]
        torch.testing.assert_close(counter.peak_centers[row, 0], expected, rtol=0, atol=1e-12)
        assert not torch.equal(counter.peak_centers[row, 1], counter.peak_centers[row, 2])

    # each peak's scales are its condition ** (rank / (d - 1) - 0.5) over a permutation of the
    # ranks: the product over coordinates is 1, and the set of conditions is the generator's
    def conditions(inst) -> torch.Tensor:  # max/min scale = condition ** 1
        scales = inst.peak_scales[0]
        return torch.sort(scales.max(-1).values / scales.min(-1).values).values

    torch.testing.assert_close(conditions(counter), conditions(generator), rtol=1e-9, atol=0)
    torch.testing.assert_close(
        counter.peak_scales.prod(-1), torch.ones_like(counter.peak_weights), rtol=1e-9, atol=0
    )
    f = evaluate(counter, counter.x_opt[:, None, :].clone())[:, 0]
    torch.testing.assert_close(f, counter.f_opt, rtol=0.0, atol=1e-9)


def test_counter__gram_schmidt_matches_numpy_qr_up_to_signs() -> None:
    b = torch.randn(4, 7, 7, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    q = gram_schmidt(b)
    ref = np.linalg.qr(b.numpy())[0]
    signs = np.sign(np.einsum("bij,bij->bj", q.numpy(), ref))
    np.testing.assert_allclose(q.numpy(), ref * signs[:, None, :], atol=1e-10)


def test_counter__the_v1_env_resets_without_per_instance_generators(monkeypatch) -> None:
    import gymnasium as gym

    import gymforge  # noqa: F401

    def refuse(*args, **kwargs):
        raise AssertionError("a torch.Generator was created")

    env = gym.make_vec("MetaBBO-v1", num_envs=32, vectorization_mode="vector_entry_point")
    with pytest.warns(DeprecationWarning):
        old = gym.make_vec("MetaBBO-v0", num_envs=4, vectorization_mode="vector_entry_point")
    monkeypatch.setattr(torch, "Generator", refuse)
    obs, _ = env.reset(seed=5)
    assert obs.shape == (32, 9)
    env.step(torch.zeros(32, 3, dtype=torch.int64))
    with pytest.raises(AssertionError, match=r"torch\.Generator"):
        old.reset(seed=5)  # the v0 draws do use them: the check above can fail


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: counter_instances(torch.tensor([1.0]), 5, 1), "function_ids must hold integers"),
        (lambda: counter_instances([3, 25], 5, 1), r"function_ids must be integers in 1\.\.24"),
        (lambda: counter_instances([1], 5, -1), r"seeds must be integers in 0\.\.2\^53"),
        (lambda: counter_instances([1, 2], 5, [1, 2, 3]), "same length"),
        (lambda: counter_instances([1], 101, 1), r"dimension must be in 2\.\.100"),
    ],
)
def test_counter__bad_input_names_the_field(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()
