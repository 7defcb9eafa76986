"""The staged evaluation of a mixed BBOB batch equals each function's plain kernel, bit for bit.

The reference is independent of the stages: every instance is evaluated on its own, by its
function's kernel in :mod:`~gymforge.envs.metabbo.bbob_functions` (the plain formulas, with
their loops), and must give exactly the staged values of the whole batch.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from gymforge.envs.metabbo import bbob_functions as bf
from gymforge.envs.metabbo import bbob_stages as stages
from gymforge.envs.metabbo import workspace
from gymforge.envs.metabbo.bbob import (
    FUNCTION_IDS,
    BBOBInstances,
    coco_instances,
    evaluate,
    random_instances,
)


def _alone(inst: BBOBInstances, x: torch.Tensor) -> torch.Tensor:
    """Each instance evaluated by itself with its plain kernel (``evaluate``'s NaN clean-up)."""
    rows = []
    for i in range(inst.batch_size):
        one = inst.select([i])
        value = bf.KERNELS[int(one.function_id)](one.kernel_args(), x[i : i + 1])
        value = value + one.f_opt[:, None]
        rows.append(torch.nan_to_num(value, nan=math.inf, posinf=math.inf, neginf=-math.inf))
    return torch.cat(rows)


def _points(n: int, p: int, d: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(n, p, d, dtype=torch.float64, generator=g) * 10.0 - 5.0
    x[:, :3] *= 1.7  # outside the box: the penalties
    x[:, 3] = x[:, 4].round()  # integers: rounding ties
    x[:, 5] = 0.0
    return x


def _assert_bits_equal(got: torch.Tensor, want: torch.Tensor, fids: list[int]) -> None:
    same = (got.view(torch.int64) == want.view(torch.int64)).all(-1)
    bad = sorted({fids[i] for i in torch.nonzero(~same).flatten().tolist()})
    assert not bad, f"staged values differ from the plain kernels for functions {bad}"


@pytest.mark.parametrize("dimension", [2, 3, 7, 10, 20])
def test_every_function_in_one_batch_equals_its_kernel_alone(dimension: int) -> None:
    g = torch.Generator().manual_seed(dimension)
    fids = [FUNCTION_IDS[i] for i in torch.randperm(24, generator=g).tolist()] * 2
    inst = random_instances(fids, dimension, list(range(len(fids))))
    x = _points(len(fids), 23, dimension, seed=dimension)
    x[:, 6] = inst.x_opt  # the optimum: T_osz(0), f - f_opt = 0
    _assert_bits_equal(evaluate(inst, x), _alone(inst, x), fids)


@pytest.mark.parametrize("seed", range(12))
def test_random_compositions_equal_the_kernels(seed: int) -> None:
    """Subsets of functions in random orders and counts (one function, already in stage order,
    every function), random and COCO instances."""
    g = torch.Generator().manual_seed(100 + seed)
    k = [1, 2, 5, 24][seed % 4]
    chosen = torch.randperm(24, generator=g)[:k] + 1
    n = int(torch.randint(k, 3 * k + 2, (1,), generator=g))
    fids = chosen[torch.randint(0, k, (n,), generator=g)].tolist()
    if seed == 5:
        fids = sorted(fids, key=stages.STAGE_ORDER.index)
    d = int(torch.randint(2, 13, (1,), generator=g))
    make = coco_instances if seed % 3 == 0 else random_instances
    inst = make(fids, d, [1 + i for i in range(n)])
    x = _points(n, 17, d, seed)
    _assert_bits_equal(evaluate(inst, x), _alone(inst, x), fids)


def test_non_finite_rows_match_the_kernels_on_the_masked_points() -> None:
    fids = list(FUNCTION_IDS)
    inst = random_instances(fids, 6, list(range(24)))
    x = _points(24, 9, 6, seed=7)
    x[::2, 0, 1], x[1::2, 1, 0], x[::3, 2, 2] = math.nan, math.inf, -math.inf
    got = evaluate(inst, x)
    finite = torch.isfinite(x).all(-1)
    want = _alone(inst, torch.where(finite[..., None], x, 0.0))
    want = torch.where(finite, want, math.inf)
    _assert_bits_equal(got, want, fids)


def test_stage_runs_are_contiguous_in_the_stage_order() -> None:
    order = stages.STAGE_ORDER
    assert sorted(order) == list(FUNCTION_IDS)
    runs = (stages.ROTATE_1, stages.OSZ, stages.ASY_05, stages.COND_BEFORE_2, stages.ROTATE_2)
    for run in (*runs, stages.ROTATE_3, *stages._TAIL_GROUPS):
        positions = sorted(order.index(f) for f in run)
        assert positions == list(range(positions[0], positions[0] + len(run))), run


def test_the_number_of_rotation_passes_does_not_grow_with_the_functions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At most three rotation passes per evaluation, however many distinct functions; one per
    distinct rotated function (up to 40) was the function-by-function cost."""
    calls = []
    plain = bf._rot

    def counting(*args: Any, **kwargs: Any) -> torch.Tensor:
        calls.append(args[1].shape[0])
        return plain(*args, **kwargs)

    monkeypatch.setattr(bf, "_rot", counting)
    for fids in ([9], [9, 10, 11, 12, 13], list(FUNCTION_IDS)):
        inst = random_instances(fids * 2, 5, list(range(2 * len(fids))))
        calls.clear()
        evaluate(inst, _points(inst.batch_size, 8, 5, seed=1))
        assert 1 <= len(calls) <= 3, (fids, calls)


def test_the_plan_is_computed_once_per_instances_object() -> None:
    inst = random_instances([3, 22, 7, 1], 4, [0, 1, 2, 3])
    x = _points(4, 8, 4, seed=2)
    first = evaluate(inst, x)
    plan = stages.plan(inst)
    assert stages.plan(inst) is plan and plan.perm is not None
    assert torch.equal(evaluate(inst, x), first)
    assert [int(inst.function_id[i]) for i in plan.perm.tolist()] == [1, 3, 7, 22]


def test_a_batch_evaluated_in_small_blocks_equals_the_kernels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A large batch runs its rotations, ``T_osz``, ``T_asy`` and the term series of f16, f21,
    f22 and f23 in blocks of instances; blocks of a few instances (what a batch of thousands
    gets) give the same bits as each instance alone."""
    monkeypatch.setattr(workspace, "ROW_BLOCK_BYTES", 4096)
    blocks = []
    plain = bf._rot_block

    def counting(*args: Any) -> torch.Tensor:
        blocks.append(args[1].shape[0])
        return plain(*args)

    monkeypatch.setattr(bf, "_rot_block", counting)
    fids = list(FUNCTION_IDS) * 3
    inst = random_instances(fids, 10, list(range(len(fids))))
    x = _points(len(fids), 9, 10, seed=11)
    _assert_bits_equal(evaluate(inst, x), _alone(inst, x), fids)
    assert max(blocks) < 3 * len(stages.ROTATE_1), "the rotations did not run in blocks"
