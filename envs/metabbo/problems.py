"""Problem sets of ``MetaBBO-v0``: MetaBox's train/test splits of the 24 BBOB functions, and how
each instance draws its problem.

Splits (MetaBox's ``bbob`` suite, by function id):

=============  ==========================================  ==========================
Split          train                                       test
=============  ==========================================  ==========================
``easy``       4, 6-14, 18-20, 22-24 (16 functions)        1, 2, 3, 5, 15, 16, 17, 21
``difficult``  1, 2, 3, 5, 15, 16, 17, 21                  4, 6-14, 18-20, 22-24
``all``        1-24                                        1-24
user           ``function_ids=[...]`` (both subsets)       the same list
=============  ==========================================  ==========================

Instances (``instance_mode``): ``random`` draws a MetaBox-style instance (random shift, rotation
and bias, :func:`~.bbob.random_instances`) from an instance seed in ``0 .. 2^24 - 1``;
``coco`` uses COCO's ``bbob`` instance ids ``1 .. coco_instances`` (:func:`~.bbob.coco_instances`).
How random instances are drawn (``draws``): ``generator`` (the v0 ids) gives each instance its own
CPU generator, one at a time on the host; ``counter`` (the v1 ids) draws the same distribution
for the whole batch on its device from counter-based streams (:func:`~.bbob.counter_instances`).
At every reset an instance draws, from its own random stream, first the function (uniform over
the subset), then the instance seed or id, so its problem depends only on its own seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch
from torch import Tensor

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.metabbo.bbob import (
    FUNCTION_IDS,
    MAX_COCO_DIMENSION,
    MAX_COCO_INSTANCE_ID,
    MAX_DIMENSION,
    MIN_DIMENSION,
    BBOBInstances,
    coco_instances,
    counter_instances,
    gallagher_peaks_needed,
    random_instances,
)

__all__ = [
    "DRAWS",
    "INSTANCE_MODES",
    "RANDOM_INSTANCE_SEEDS",
    "SPLITS",
    "SUBSETS",
    "ProblemSet",
    "build_instances",
    "draw_problems",
    "merge_instances",
    "split_functions",
]

_EASY_TEST = (1, 2, 3, 5, 15, 16, 17, 21)
_EASY_TRAIN = tuple(f for f in FUNCTION_IDS if f not in _EASY_TEST)
SPLITS: dict[str, dict[str, tuple[int, ...]]] = {
    "easy": {"train": _EASY_TRAIN, "test": _EASY_TEST},
    "difficult": {"train": _EASY_TEST, "test": _EASY_TRAIN},
    "all": {"train": FUNCTION_IDS, "test": FUNCTION_IDS},
}
SUBSETS = ("train", "test")
INSTANCE_MODES = ("random", "coco")
DRAWS = ("generator", "counter")
RANDOM_INSTANCE_SEEDS = 2**24  # instance seeds drawn in 0 .. 2^24 - 1


def split_functions(split: object, subset: object = "train") -> tuple[int, ...]:
    """Function ids of ``subset`` (``"train"``/``"test"``) of a named split, or of a user list."""
    if subset not in SUBSETS:
        raise ValueError(f"subset must be one of {SUBSETS}, got {subset!r}")
    if isinstance(split, str):
        if split not in SPLITS:
            raise ValueError(
                f"split must be one of {sorted(SPLITS)} or a list of function ids in 1..24, "
                f"got {split!r}"
            )
        return SPLITS[split][subset]
    return _function_list(split)


def _function_list(ids: object) -> tuple[int, ...]:
    if isinstance(ids, Tensor | np.ndarray):
        ids = ids.tolist()
    ok = (
        isinstance(ids, Sequence)
        and not isinstance(ids, str)
        and len(ids) > 0
        and all(isinstance(i, int | np.integer) and not isinstance(i, bool) for i in ids)
    )
    if not ok:
        raise ValueError(f"function_ids must be a non-empty list of integers in 1..24, got {ids!r}")
    bad = sorted({int(i) for i in ids if int(i) not in FUNCTION_IDS})
    if bad:
        raise ValueError(f"function_ids must be integers in 1..24, got invalid ids {bad}")
    return tuple(int(i) for i in ids)


@dataclass(frozen=True)
class ProblemSet:
    """Where an env's instances come from.

    Attributes:
        function_ids: the functions a reset draws from (uniformly).
        dimension: ``D`` of every instance.
        instance_mode: ``"random"`` (MetaBox-style) or ``"coco"`` (COCO instance ids).
        coco_instances: COCO instance ids ``1..coco_instances`` are drawn in ``coco`` mode.
        draws: how ``random`` instances are drawn: ``"generator"`` (one CPU generator per
            instance) or ``"counter"`` (batched counter-based streams, on the env's device).
    """

    function_ids: tuple[int, ...]
    dimension: int
    instance_mode: str = "random"
    coco_instances: int = 15
    draws: str = "generator"

    def __post_init__(self) -> None:
        _function_list(list(self.function_ids))
        if self.draws not in DRAWS:
            raise ValueError(f"draws must be one of {DRAWS}, got {self.draws!r}")
        if self.instance_mode not in INSTANCE_MODES:
            raise ValueError(
                f"instance_mode must be one of {INSTANCE_MODES}, got {self.instance_mode!r}"
            )
        upper = MAX_COCO_DIMENSION if self.instance_mode == "coco" else MAX_DIMENSION
        d = self.dimension
        if (
            isinstance(d, bool)
            or not isinstance(d, int | np.integer)
            or not (MIN_DIMENSION <= d <= upper)
        ):
            raise ValueError(
                f"dimension must be an integer in {MIN_DIMENSION}..{upper} for instance_mode "
                f"{self.instance_mode!r}, got {d!r}"
            )
        n = self.coco_instances
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_COCO_INSTANCE_ID:
            raise ValueError(
                f"coco_instances must be an integer in 1..{MAX_COCO_INSTANCE_ID}, got {n!r}"
            )


def draw_problems(
    problem_set: ProblemSet, rng: InstanceRNG, where: Tensor
) -> tuple[Tensor, Tensor]:
    """``[B]`` function ids and instance ids (seeds in random mode) drawn from each instance's
    stream; only the streams of the instances in ``where`` advance."""
    fids = torch.tensor(problem_set.function_ids, dtype=torch.int64, device=rng.seed.device)
    fid = fids[rng.integers(len(problem_set.function_ids), where=where)]
    if problem_set.instance_mode == "coco":
        iid = rng.integers(problem_set.coco_instances, where=where) + 1
    else:
        iid = rng.integers(RANDOM_INSTANCE_SEEDS, where=where)
    return fid, iid


def build_instances(
    problem_set: ProblemSet,
    function_ids: Sequence[int] | Tensor,
    instance_ids: Sequence[int] | Tensor,
    device: torch.device | str,
) -> BBOBInstances:
    """The instances ``(function_ids[i], instance_ids[i])`` of ``problem_set``'s mode (counter
    draws take tensors where they are; the other modes read them on the host)."""
    d = problem_set.dimension
    if problem_set.instance_mode == "random" and problem_set.draws == "counter":
        return counter_instances(function_ids, d, instance_ids, device)
    fids, iids = _host_list(function_ids), _host_list(instance_ids)
    if problem_set.instance_mode == "coco":
        return coco_instances(fids, d, iids, device)
    return random_instances(fids, d, iids, device)


def _host_list(values: Sequence[int] | Tensor) -> list[int]:
    return values.tolist() if isinstance(values, Tensor) else list(values)


def merge_instances(old: BBOBInstances, new: BBOBInstances, index: Tensor) -> BBOBInstances:
    """``old`` with the rows at ``index`` (``[n]`` int64) replaced by the ``n`` rows of ``new``."""
    both = BBOBInstances.cat([old, new])  # pads the Gallagher peaks to a common count
    b = old.batch_size
    rows = torch.arange(b, device=old.device)
    rows = rows.index_copy(0, index, b + torch.arange(index.shape[0], device=old.device))
    out = both.select(rows)
    k = max(_peaks_needed(out), 0)
    if k < out.peak_weights.shape[1]:  # drop padding no function of the batch needs
        out = BBOBInstances(
            **{
                f.name: getattr(out, f.name)[:, :k]
                if f.name.startswith("peak_")
                else getattr(out, f.name)
                for f in fields(out)
            }
        )
    return out


def _peaks_needed(inst: BBOBInstances) -> int:
    return gallagher_peaks_needed(inst.function_id)
