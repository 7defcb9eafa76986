"""The plain rules of the batched LineFlow engine: every instant settled by full sweeps alone,
repeated until a sweep changes nothing, with every line-specific shortcut off.

``Engine(line, shortcuts=False)`` (``gym.make_vec(id, shortcuts=False)``) runs these. They are
the rules that the shortcuts (``docs/design/lineflow_engine.md``, "Every shortcut behind one
switch") reproduce with fewer torch calls: a reader can run them, and a test checks that they
give the golden digests of every batched LineFlow id bit for bit.
"""

from __future__ import annotations

from dataclasses import fields

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched.state import (
    MAX_SWEEPS,
    LineState,
)

# sweeps at one instant before a line is declared unsettled (the plain rules spend one more
# sweep per instant than the shortcuts, to see that nothing changes, and move carriers on
# only at the start of a sweep)
MAX_PLAIN_SWEEPS = 4 * MAX_SWEEPS

_FIELDS = tuple(field.name for field in fields(LineState))


def _snapshot(state: LineState, rng: InstanceRNG) -> list[torch.Tensor]:
    """Copies of every state tensor and of the random counters (sweeps change some in place)."""
    return [getattr(state, name).clone() for name in _FIELDS] + [rng.counter.clone()]


def _bits(value: torch.Tensor) -> torch.Tensor:
    """``value`` as integers of the same width, so that ``!=`` compares bits (-0.0 and 0.0
    differ, as they may in what follows)."""
    if value.dtype == torch.float64:
        return value.view(torch.int64)
    if value.dtype == torch.float32:
        return value.view(torch.int32)
    return value


def _changed(before: list[torch.Tensor], state: LineState, rng: InstanceRNG) -> torch.Tensor:
    """The instances (B,) in which anything differs from ``before`` (a ``_snapshot``)."""
    after = [getattr(state, name) for name in _FIELDS] + [rng.counter]
    changed = torch.zeros_like(rng.counter, dtype=torch.bool)
    for old, new in zip(before, after, strict=True):
        differs = _bits(old) != _bits(new)  # (..., B): the batch axis is last
        changed |= differs.reshape(-1, differs.shape[-1]).any(dim=0)
    return changed


class _Plain:
    """Methods of :class:`~gymforge.envs.lineflow.batched.engine.Engine` (see there)."""

    def _settle_plainly(self, state: LineState, active: torch.Tensor, rng: InstanceRNG) -> None:
        """Sweep the ``active`` instances (B,) until a sweep changes nothing in them.

        A sweep is a function of the state and the random counters alone, so once one changes
        neither, every further sweep would repeat it: the instant is settled. Each sweep runs
        over the whole batch, masked to the instances still changing.
        """
        for _ in range(MAX_PLAIN_SWEEPS):
            before = _snapshot(state, rng)
            self._sweep(state, active, rng)
            active = active & _changed(before, state, rng)
            if not bool(active.any()):
                return
        raise RuntimeError("line did not settle: a zero-time cycle of moves")  # pragma: no cover
