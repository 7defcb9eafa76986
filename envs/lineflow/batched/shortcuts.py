"""What decides the batched LineFlow engine's shortcuts for a line: whether types, component
failures, put times and work times can be left untracked or drawn later, and the records the
shortcut rounds pass on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from gymforge.envs.lineflow.batched.compiled import (
    CompiledLine,
)


@dataclass
class _Due:
    """The comparisons with ``now`` that ``Engine._pending`` makes and the next sweep needs first:
    nothing changes ``wake``, ``ready``, ``w_arrive`` or ``now`` in between, so the sweep reuses
    them instead of comparing the float64 tensors again."""

    timers: torch.Tensor  # (R, B) wake <= now
    slots: torch.Tensor  # (NS, B) ready <= now
    workers: torch.Tensor | None  # (W, B) w_arrive <= now (None: no workers)


@dataclass
class _Undrawn:
    """The draws a sweep left to the ``_claim_only`` after it (see ``_puts_take_time``): its
    claims (``claimed``, (R, B) rows) and, on lines where ``Engine._defer_work``, the rows with
    noise that started working (``work``, (R, B)) with their processing time before the noise
    (``base``, broadcasting to (R, B)), and the instances that drew for the works they started
    (``work_where``, (B,), with or without noise). None: none."""

    claimed: torch.Tensor | None = None
    work: torch.Tensor | None = None
    base: torch.Tensor | None = None
    work_where: torch.Tensor | None = None


def _types_decide(line: CompiledLine, has_extra: bool, assembly: torch.Tensor) -> bool:
    """Whether a carrier's type ever decides anything on ``line``: processing times by type
    (``has_extra``: extra times, sequential processes' parts) or assembly conditions that differ
    by component type (``assembly``: (R,) the assembly rows)."""
    conditions = line.condition[:, assembly]
    return has_extra or bool((conditions != conditions[:1]).any())


def _assemblies_can_fail(line: CompiledLine, assembly: torch.Tensor) -> bool:
    """Whether an assembly of ``line`` (``assembly``: (R,) the assembly rows) can ever find a
    component invalid: some assembly condition (of some type) is finite."""
    return bool(line.condition[:, assembly].isfinite().any())


MIN_PUT_TIME = 2.0**-20  # below 2**32, a clock plus at least this is a later time


_LOG1P_AT_ZERO = torch.tensor(-0.0, dtype=torch.float64)  # log1p(-u) at u = 0


def _puts_take_time(line: CompiledLine, never_puts: torch.Tensor, switch: torch.Tensor) -> bool:
    """Whether every put on ``line`` takes at least ``MIN_PUT_TIME``: the put time of every
    buffer a row can put on (a switch's outputs, every other row's output; ``never_puts``:
    (R,) the sinks without output and the collectors, which store what they take) is at least
    that (a put lasts its put time plus an exponential draw).

    Then a put that starts at ``now`` never ends at ``now``, so drawing its put time later in
    the settle changes nothing that ``_pending`` sees in between, nor the next sweep that
    reuses its comparisons (``_Due``): no due timer either way, and no slot (the claim holds
    the slot at once). So ``_claim_only`` can draw the put times of the sweep's claims and its
    own in one draw (``Engine._draw_undrawn``).
    """
    targets: list[int] = []
    for r in range(line.rows):
        if bool(never_puts[r]):
            continue
        if bool(switch[r]):
            targets += line.outputs[r, : int(line.n_outputs[r])].tolist()
        else:
            targets.append(int(line.buffer_out[r]))
    if not targets:
        return False
    put_time = line.put_time[torch.tensor(targets, device=line.put_time.device)]
    return bool((put_time >= MIN_PUT_TIME).all())


def _works_take_time(line: CompiledLine, noisy: torch.Tensor) -> bool:
    """Whether every work with noise (``noisy``: (R,) rows with a noise scale) takes at least
    ``MIN_PUT_TIME`` before its noise: its processing time times the smallest speed-up factor
    its workers can give (``exp(-0.3 * total skill)``, see ``Engine._take_workers``) is at least
    that. (For lines without rework, runs, sequential processes, extra times or slowdowns,
    whose work times or draws depend on more; see ``Engine._defer_work``.)

    Then such a work, started at ``now``, never ends at ``now`` whatever its noise, and its
    end can be drawn later in the settle, as the put times are (``_puts_take_time``); works
    without noise end after their processing time, known without the numbers.
    """
    skill = line.worker_skill.clamp(min=0).amax(dim=1).sum() if line.n_workers else 0.0
    least = math.exp(-0.3 * float(skill))
    time = line.processing_time[noisy]
    return bool((time * least >= MIN_PUT_TIME).all())
