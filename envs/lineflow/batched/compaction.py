"""Compaction: the still-active instances of a batch gathered into a smaller batch, stepped, and
written back (only the fields a line's rules read and write).
"""

from __future__ import annotations

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched.state import (
    _FIELD_NAMES,
    LineState,
)

# gather the still-active instances into a smaller batch when fewer than 1/2 of the batch and
# at least COMPACT_MIN fewer instances are active (below that, per-op overhead dominates; with
# most instances settling in one sweep, a gather of 1/2 to 3/4 of the batch cost more than the
# sweeps over the inactive rest)
COMPACT_BELOW, COMPACT_ABOVE, COMPACT_MIN = 2, 1, 128


def _select(state: LineState, index: torch.Tensor, names: tuple[str, ...]) -> LineState:
    """The instances ``index`` of ``state``; fields outside ``names`` are left ``None`` (so a rule
    that reads one fails loudly instead of broadcasting a full-batch tensor)."""
    expanded = _Expanded(index)
    chosen = {}
    for name in names:
        value = getattr(state, name)
        chosen[name] = value.gather(-1, expanded.like(value))
    return LineState(**{name: chosen.get(name) for name in _FIELD_NAMES})


class _Expanded:
    """``index`` (B',) expanded over the leading axis of each field shape it meets, made once
    per shape, for a gather or scatter along the last axis of the field (several times faster
    on the CPU than ``index_select`` or ``index_copy_`` along the last axis): the fields of a
    state have only a few shapes ((B,), (R, B), (NS, B), ...), so one compaction expands the
    index a few times instead of once per field (each expand is a torch call, and at the batch
    sizes that compaction produces the calls cost more than the copies)."""

    def __init__(self, index: torch.Tensor) -> None:
        self.index = index
        self._by_shape: dict[torch.Size, torch.Tensor] = {}

    def like(self, value: torch.Tensor) -> torch.Tensor:
        """The index for a gather or scatter along the last axis of ``value`` (1-D or 2-D)."""
        shape = value.shape
        found = self._by_shape.get(shape)
        if found is None:
            found = self.index if len(shape) == 1 else self.index.expand(shape[0], -1)
            self._by_shape[shape] = found
        return found


def _write_back(
    state: LineState, sub: LineState, index: torch.Tensor, names: tuple[str, ...]
) -> None:
    """Copy fields ``names`` of ``sub`` back into ``state`` at ``index``, in place (cost ~ len(index))."""
    expanded = _Expanded(index)
    for name in names:
        value = getattr(state, name)
        value.scatter_(-1, expanded.like(value), getattr(sub, name))


# LineState fields that a compacted sub-run of ``Engine.advance`` or ``Engine._settle`` can
# change, by the line parts that change them, and so writes back (the others -- waiting, target,
# jump_*, w_target, scrap_seen -- only actions, resets and observations change; ``now`` does
# not change while settling, and ``advance`` sets it to ``until`` after the write-back) ...
_ALWAYS_WRITTEN = (
    "phase", "wake", "started", "last_time", "carrier_created", "n_parts", "held", "arrived",
    "ready", "slot_created", "count", "waiting_read",
)  # fmt: skip


_WRITTEN_BY = {
    "types": ("carrier_type", "slot_type"),
    "switch": ("cur_in", "cur_out", "index_in", "index_out"),
    "storage": ("stored",),  # magazines and collectors
    "assembly": ("comp_k",),
    "failing assembly": ("comp_created", "n_scrap"),
    "typed assembly": ("comp_type",),
    "sequential": ("seq_part", "seq_total"),
    "runs": ("run_left", "run_type"),
    "workers": ("factor", "w_station", "w_dest", "w_arrive", "w_holder"),
}


# ... and the fields it reads besides those (scrap_seen is for observations only; cur_in and
# cur_out never change without switches, nor run_type without runs: the engine then reads the
# line's constants instead, see ``_cur_in``)
_ALWAYS_READ = ("now", "waiting")


_READ_BY = {
    "storage": ("target",),
    "extra": ("seq_part",),  # part-dependent extra times look up the part being processed
    "slowdown": ("jump_start", "jump_end", "jump_factor"),
    "workers": ("w_target",),
}


def _worth_compacting(n_active: int, batch: int) -> bool:
    """Whether to gather ``n_active`` instances of ``batch`` into a smaller batch."""
    return n_active * COMPACT_BELOW < batch * COMPACT_ABOVE and batch - n_active >= COMPACT_MIN


def _select_rng(rng: InstanceRNG, index: torch.Tensor) -> InstanceRNG:
    return InstanceRNG(
        seed=rng.seed.index_select(0, index),
        counter=rng.counter.index_select(0, index),
        key=rng.key.index_select(0, index),
    )
