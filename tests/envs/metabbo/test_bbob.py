"""Batched BBOB functions: differential test against COCO (``cocoex``), known answers,
batch-composition independence, seeded random instances and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gymforge.envs.metabbo import BBOBInstances, coco_instances, evaluate, random_instances
from gymforge.envs.metabbo.bbob import FUNCTION_IDS, FUNCTION_NAMES

DIMENSIONS = (2, 5, 10, 20)
COCO_INSTANCE_IDS = (1, 2, 5, 15, 101)
TOLERANCE = 1e-8  # |f - f_coco| <= TOLERANCE * max(1, |f_coco|)


def _population(inst: BBOBInstances, seed: int) -> torch.Tensor:
    """Per instance: random points in [-5, 5]^D and [-6, 6]^D, points near x_opt, and x_opt."""
    gen = torch.Generator().manual_seed(seed)
    b, d = inst.batch_size, inst.dimension
    uniform = torch.rand(b, 12, d, generator=gen, dtype=torch.float64) * 10.0 - 5.0
    outside = torch.rand(b, 2, d, generator=gen, dtype=torch.float64) * 12.0 - 6.0
    noise = torch.randn(b, 4, d, generator=gen, dtype=torch.float64)
    noise = noise * torch.tensor([1e-1, 1e-3, 1e-5, 1e-8], dtype=torch.float64)[:, None]
    near = inst.x_opt[:, None, :] + noise
    return torch.cat([uniform, outside, near, inst.x_opt[:, None, :]], dim=1)


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_bbob__matches_cocoex_on_every_function(dimension: int) -> None:
    cocoex = pytest.importorskip("cocoex")
    fids = [f for f in FUNCTION_IDS for _ in COCO_INSTANCE_IDS]
    iids = [i for _ in FUNCTION_IDS for i in COCO_INSTANCE_IDS]
    inst = coco_instances(fids, dimension, iids)
    x = _population(inst, seed=dimension)
    ours = evaluate(inst, x).numpy()
    options = "instances: " + ",".join(map(str, COCO_INSTANCE_IDS))
    suite = cocoex.Suite("bbob", options, f"dimensions: {dimension}")
    failures = []
    for row, (fid, iid) in enumerate(zip(fids, iids, strict=True)):
        problem = suite.get_problem_by_function_dimension_instance(fid, dimension, iid)
        ref = np.array([problem(point) for point in x[row].numpy()])
        problem.free()
        rel = np.abs(ours[row] - ref) / np.maximum(1.0, np.abs(ref))
        if not rel.max() <= TOLERANCE:
            failures.append((fid, iid, float(rel.max())))
        # COCO's value at our x_opt is our f_opt: x_opt and f_opt are COCO's.
        assert ref[-1] == pytest.approx(inst.f_opt[row].item(), abs=1e-9), (fid, iid)
    assert not failures, f"(function, instance, max relative error) above {TOLERANCE}: {failures}"


@pytest.mark.parametrize("dimension", (2, 3, 10, 40))
def test_bbob__value_at_x_opt_is_f_opt(dimension: int) -> None:
    fids = list(FUNCTION_IDS)
    for inst in (
        coco_instances(fids, dimension, 7),
        random_instances(fids, dimension, 11),
    ):
        f = evaluate(inst, inst.x_opt[:, None, :].clone())[:, 0]
        torch.testing.assert_close(f, inst.f_opt, rtol=0.0, atol=1e-9)


def test_bbob__random_points_are_not_below_f_opt() -> None:
    fids = list(FUNCTION_IDS) * 2
    inst = random_instances(fids, 5, list(range(48)))
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(48, 200, 5, generator=gen, dtype=torch.float64) * 10.0 - 5.0
    gap = evaluate(inst, x) - inst.f_opt[:, None]
    assert gap.min().item() >= -1e-9


@pytest.mark.parametrize("dimension", (2, 10, 20))
def test_bbob__mixed_batch_equals_per_function_evaluation(dimension: int) -> None:
    gen = torch.Generator().manual_seed(dimension)
    fids = (torch.randperm(24, generator=gen) + 1).repeat(2)
    iids = [1] * 24 + [4] * 24
    mixed = coco_instances(fids, dimension, iids)
    x = torch.rand(48, 9, dimension, generator=gen, dtype=torch.float64) * 10.0 - 5.0
    together = evaluate(mixed, x)
    for row in range(48):
        alone = coco_instances([int(fids[row])], dimension, [iids[row]])
        assert torch.equal(evaluate(alone, x[row : row + 1]), together[row : row + 1])
        assert torch.equal(evaluate(alone, x[row : row + 1, :3]), together[row : row + 1, :3])


def test_bbob__select_and_cat_keep_values() -> None:
    a = coco_instances([1, 21, 7], 5, [1, 2, 3])
    b = random_instances([22, 3], 5, [9, 9])
    both = BBOBInstances.cat([a, b])
    x = torch.rand(5, 6, 5, dtype=torch.float64) * 10.0 - 5.0
    f = evaluate(both, x)
    assert torch.equal(f[:3], evaluate(a, x[:3]))
    assert torch.equal(f[3:], evaluate(b, x[3:]))
    picked = both.select([4, 0])
    assert torch.equal(evaluate(picked, x[[4, 0]]), f[[4, 0]])


def test_bbob__kernel_args_cut_the_peaks_to_the_function_and_refuse_a_mix() -> None:
    both = BBOBInstances.cat([random_instances([22, 22], 4, [1, 2]), random_instances([21], 4, 3)])
    f22_args = both.select([0, 1]).kernel_args()
    assert f22_args.peak_weights.shape == (2, 21)
    assert f22_args.peak_centers.shape == (2, 21, 4)
    assert both.select([2]).kernel_args().peak_weights.shape == (1, 101)
    assert torch.equal(both.select([2]).kernel_args().rot_r, both.rot_r[2:])
    with pytest.raises(ValueError, match=r"one function, got functions \[21, 22\]"):
        both.kernel_args()


def test_bbob__random_instances_are_reproducible_and_seed_dependent() -> None:
    fids = list(FUNCTION_IDS)
    first = random_instances(fids, 6, 3)
    again = random_instances(fids, 6, 3)
    other = random_instances(fids, 6, 4)
    for name in ("x_opt", "f_opt", "rot_r", "rot_q", "peak_centers", "peak_scales"):
        assert torch.equal(getattr(first, name), getattr(again, name)), name
    assert not torch.equal(first.x_opt, other.x_opt)
    assert not torch.equal(first.rot_r, other.rot_r)
    # An instance depends only on its own (seed, function id), not on the rest of the batch.
    alone = random_instances([9], 6, [3])
    assert torch.equal(alone.x_opt[0], first.x_opt[8])
    assert torch.equal(alone.rot_q[0], first.rot_q[8])


def test_bbob__random_instances_follow_the_metabox_convention() -> None:
    inst = random_instances([1] * 200, 8, list(range(200)))
    assert inst.x_opt.abs().max().item() <= 4.0
    assert set(inst.f_opt.tolist()) <= {100.0 * k for k in range(1, 26)}
    eye = torch.eye(8, dtype=torch.float64).expand(200, 8, 8)
    for rot in (inst.rot_r, inst.rot_q):
        torch.testing.assert_close(rot @ rot.transpose(1, 2), eye, rtol=0.0, atol=1e-12)
    special = random_instances([5, 20, 24], 8, 1)
    expected = torch.tensor([5.0, 4.2096874637 / 2, 1.25], dtype=torch.float64)
    assert torch.equal(special.x_opt.abs()[:, 0], expected)


def test_bbob__non_finite_rows_evaluate_to_inf() -> None:
    inst = coco_instances([1, 16, 21], 4, 1)
    x = torch.zeros(3, 4, 4, dtype=torch.float64)
    x[0, 1, 2] = math.nan
    x[1, 2, 0] = math.inf
    x[2, 3, 3] = -math.inf
    f = evaluate(inst, x)
    assert f[0, 1] == math.inf and f[1, 2] == math.inf and f[2, 3] == math.inf
    finite = torch.ones(3, 4, dtype=torch.bool)
    finite[0, 1] = finite[1, 2] = finite[2, 3] = False
    assert torch.isfinite(f[finite]).all()
    assert torch.equal(f[finite], evaluate(inst, torch.zeros(3, 4, 4, dtype=torch.float64))[finite])


def test_bbob__float32_input_is_evaluated_in_float64() -> None:
    inst = coco_instances([2, 12], 3, 1)
    x = torch.rand(2, 5, 3) * 10.0 - 5.0
    f = evaluate(inst, x)
    assert f.dtype == torch.float64
    assert torch.equal(f, evaluate(inst, x.double()))


def test_bbob__function_names_cover_all_ids() -> None:
    assert sorted(FUNCTION_NAMES) == list(FUNCTION_IDS)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: coco_instances([0], 5, 1), r"function_ids must be integers in 1\.\.24.*\[0\]"),
        (
            lambda: random_instances([3, 25], 5, 1),
            r"function_ids must be integers in 1\.\.24.*\[25\]",
        ),
        (lambda: coco_instances([1], 1, 1), r"dimension must be in 2\.\.40, got 1"),
        (lambda: coco_instances([1], 41, 1), r"dimension must be in 2\.\.40, got 41"),
        (lambda: random_instances([1], 101, 1), r"dimension must be in 2\.\.100, got 101"),
        (lambda: random_instances([1], 2.5, 1), r"dimension must be an integer in 2\.\.100"),
        (lambda: coco_instances([1], 5, 0), r"instance_ids must be in 1\.\.200000, got \[0\]"),
        (lambda: random_instances([1], 5, -1), r"seeds must be integers in 0\.\.2\^53"),
        (lambda: coco_instances([1, 2, 3], 5, [1, 2]), r"same length, got 3 and 2"),
        (lambda: coco_instances([1.0], 5, 1), r"function_ids must be an integer or a 1-D"),
    ],
)
def test_bbob__bad_constructor_input_names_the_field(call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("x", "message"),
    [
        (torch.zeros(2, 5), r"x must be a tensor of shape \[B=2, P, D=5\], got \(2, 5\)"),
        (torch.zeros(3, 4, 5), r"x must be a tensor of shape \[B=2, P, D=5\], got \(3, 4, 5\)"),
        (torch.zeros(2, 4, 6), r"x must be a tensor of shape \[B=2, P, D=5\], got \(2, 4, 6\)"),
        (np.zeros((2, 4, 5)), r"x must be a tensor of shape \[B=2, P, D=5\], got ndarray"),
        (torch.zeros(2, 4, 5, dtype=torch.int64), r"x must have a floating dtype"),
    ],
)
def test_bbob__bad_x_names_the_field(x, message: str) -> None:
    inst = coco_instances([1, 2], 5, 1)
    with pytest.raises(ValueError, match=message):
        evaluate(inst, x)


def test_bbob__inconsistent_instances_are_rejected() -> None:
    inst = coco_instances([1, 2], 5, 1)
    fields = {name: getattr(inst, name) for name in inst.__dataclass_fields__}
    with pytest.raises(ValueError, match=r"rot_q must have shape \(2, 5, 5\)"):
        BBOBInstances(**(fields | {"rot_q": torch.zeros(2, 4, 4, dtype=torch.float64)}))
    with pytest.raises(ValueError, match=r"f_opt must have dtype torch.float64"):
        BBOBInstances(**(fields | {"f_opt": inst.f_opt.float()}))
    with pytest.raises(ValueError, match=r"function_ids must be integers in 1\.\.24"):
        BBOBInstances(**(fields | {"function_id": torch.tensor([1, 30])}))
    with pytest.raises(ValueError, match=r"peak_weights must hold K >= 101 peaks"):
        BBOBInstances(**(fields | {"function_id": torch.tensor([1, 21])}))
