"""The event loop: each instance's next event, the event rounds up to ``until``, and the walkers
that arrive at its very start.
"""

from __future__ import annotations

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched.compaction import (
    _select,
    _select_rng,
    _worth_compacting,
    _write_back,
)
from gymforge.envs.lineflow.batched.state import (
    LineState,
)


class _EventLoop:
    """Methods of :class:`~gymforge.envs.lineflow.batched.engine.Engine` (see there)."""

    def next_event(self, state: LineState) -> torch.Tensor:
        """Earliest pending timer, slot arrival or worker arrival of each instance (B,).

        ``ready`` is finite exactly at the slots of moving carriers (held, not yet arrived), so
        its minimum over the slots is the earliest slot arrival.
        """
        return self._next_events(state)[1]

    def _next_events(self, state: LineState) -> tuple[torch.Tensor, torch.Tensor]:
        """Each instance's earliest timer or slot arrival, and its earliest event (``next_event``:
        the same, or a worker arrival), both (B,)."""
        timed = torch.minimum(state.wake.amin(dim=0), state.ready.amin(dim=0))
        if self.line.n_workers:
            return timed, torch.minimum(timed, state.w_arrive.amin(dim=0))
        return timed, timed

    def advance(self, state: LineState, until: torch.Tensor, rng: InstanceRNG) -> None:
        """Process every event strictly before ``until`` (B,) and set the clocks to ``until``.

        Each event round moves the instances with an event before ``until`` to their next
        event time and settles them there (see ``_settle``). An instance without an event
        before ``until`` in one round has none in any later round (only its own events change
        it), so when few enough are left, they are gathered into a smaller batch once, which
        runs all the remaining rounds (shrinking again as it goes) and is written back once.

        Under the plain rules (``Engine.shortcuts`` False) every round settles every instance
        with an event by sweeps alone (``_settle_plainly``), over the whole batch.
        """
        if not self.shortcuts:
            self._advance_plainly(state, until, rng)
            return
        if self.line.n_workers:
            self._arrive_walkers_now(state, until)
        self._advance(state, until, rng)

    def _advance_plainly(self, state: LineState, until: torch.Tensor, rng: InstanceRNG) -> None:
        """``advance`` by the plain rules: move each instance with an event before ``until`` to
        its next event and sweep it until a sweep changes nothing, round after round."""
        while True:
            t_next = self.next_event(state)
            active = t_next < until
            if not bool(active.any()):
                break
            state.now = torch.where(active, t_next, state.now)
            self._settle_plainly(state, active, rng)
        state.now = until.clone()

    def _arrive_walkers_now(self, state: LineState, until: torch.Tensor) -> None:
        """Workers whose walk ends at the very start of ``advance`` (``w_arrive == now``, before
        ``until``) arrive, before the event rounds.

        The first round would let them arrive at ``now`` first thing: in a sweep, workers
        arrive after ``_slots`` (which no worker affects) and before every other rule, and in
        an instance whose only event they are, ``_arrive_walkers_only`` does just this. An
        action is taken at a whole step and a walk lasts a whole number of steps in most lines,
        so most instances have such walkers at the start of a step: arriving here spares a
        round over the whole batch (its ``next_event`` and ``_arrive_walkers_only``).
        """
        now = state.now[None]
        arriving = (state.w_arrive <= now) & (state.now < until)[None]
        self._workers_arrive(state, None, arriving)

    def _advance(self, state: LineState, until: torch.Tensor, rng: InstanceRNG) -> None:
        """``advance`` after its start: the event rounds (see ``advance``)."""
        batch = until.shape[0]
        while True:
            t_timed, t_next = self._next_events(state)
            active = t_next < until
            n_active = int(active.sum())
            if n_active == 0:
                break
            if _worth_compacting(n_active, batch):
                index = torch.nonzero(active).squeeze(1)
                sub_state, sub_rng = _select(state, index, self._used), _select_rng(rng, index)
                self._advance(sub_state, until.index_select(0, index), sub_rng)
                _write_back(state, sub_state, index, self._written)
                rng.counter.index_copy_(0, index, sub_rng.counter)
                break
            state.now = torch.where(active, t_next, state.now)
            if self.line.n_workers or self._has_switch:
                if self.line.n_workers:
                    active = self._arrive_walkers_only(state, active, t_timed <= t_next)
                if self._has_switch:
                    active = self._poll_again_only(state, active)
                n_active = int(active.sum())
                if n_active == 0:
                    continue
            self._settle(state, active, n_active, rng)
        state.now = until.clone()
