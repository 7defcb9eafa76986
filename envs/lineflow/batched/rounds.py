"""The rounds that settle an instance without a full sweep: workers arriving, switches polling
again, works ending at once, claims of a freed slot, and the settle loop that chooses them.
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
from gymforge.envs.lineflow.batched.compiled import (
    EMPTY_TYPE,
)
from gymforge.envs.lineflow.batched.phases import (
    COMP_WAIT,
    GET_WAIT,
    IN_POLL,
    OUT_CHECK,
    OUT_POLL,
    PUT_WAIT,
    PUTTING,
    SEQ_NEXT,
    START,
    WORKING,
)
from gymforge.envs.lineflow.batched.shortcuts import (
    _Due,
    _Undrawn,
)
from gymforge.envs.lineflow.batched.state import (
    INF,
    MAX_SWEEPS,
    LineState,
)
from gymforge.envs.lineflow.batched.tensor_ops import (
    _and_not,
    _any_rows,
    _at,
    _choose,
    _lookup,
    _scalar,
)


class _Rounds:
    """Methods of :class:`~gymforge.envs.lineflow.batched.engine.Engine` (see there)."""

    def _arrive_walkers_only(
        self, state: LineState, active: torch.Tensor, timed: torch.Tensor
    ) -> torch.Tensor:
        """Settle the ``active`` instances whose only event now is workers ending their walk, and
        return the other active instances (B,), which need a full ``_settle``. ``timed`` (B,):
        whether a timer or a slot arrival is due now (in the active instances, whose clock is at
        their next event: whether its earliest timer or slot arrival is that event).

        At the start of a round every instance is settled (nothing was pending when its last
        settle ended, and only time has passed since; an action only sends workers walking), so
        in such an instance a sweep would only let the workers arrive (and maybe walk on), after
        which nothing is pending: no timer is due, no carrier arrives, and a worker's arrival
        enables no rule. Doing just that, without a sweep over the whole batch, is the same.
        Actions send the workers of most instances walking, and their arrivals would otherwise
        make full-batch sweeps in which almost nothing happens.
        """
        walkers_only = _and_not(active, timed)
        if not self._has(walkers_only):
            return active
        self._workers_arrive(state, walkers_only, state.w_arrive <= state.now[None])
        return active & timed

    def _poll_again_only(self, state: LineState, active: torch.Tensor) -> torch.Tensor:
        """Settle the ``active`` instances whose only events now are switches' input polls that
        find the selected input empty, and return the other active instances (B,).

        In a sweep such a switch would go IN_POLL -> START -> IN_POLL with ``wake = now +
        poll`` (``_start``), and, the instance being settled otherwise (see
        ``_arrive_walkers_only``), nothing else would happen. Switches poll on a fixed interval
        in most instances, so this spares the full-batch sweeps those polls would make.
        """
        w = self._wide(state.now.shape[0])
        now = state.now[None]
        due = state.wake <= now
        selected = _lookup(self._inputs_flat, self._inputs_offset + state.index_in)
        empty = state.count.gather(0, selected) == 0
        poll_fails = due & (state.phase == w.phase(IN_POLL)) & empty
        others = [_and_not(due, poll_fails), state.ready <= now]
        if self.line.n_workers:
            others.append(state.w_arrive <= now)
        other = _any_rows(torch.cat(others))
        polls_only = _and_not(active, other)
        if not self._has(polls_only):
            return active
        again = poll_fails & polls_only[None]
        state.wake = torch.where(again, now + self.col.poll, state.wake)
        return active & other

    def _settle(
        self, state: LineState, active: torch.Tensor, n_active: int, rng: InstanceRNG
    ) -> None:
        """Sweep the ``active`` instances until nothing more can happen at their current instant.

        After each sweep only the instances with something still pending (``_pending``) sweep
        again, so no sweep is spent confirming that nothing changes; those with only claims and
        the ends of works that took no time pending make them without a sweep
        (``_work_ends_only``, ``_claim_only``). When fewer than half of
        the batch still sweep, they are gathered into a smaller batch, settled there (again
        shrinking as they finish) and written back in place: the work is elementwise per
        instance, so the result is the same.
        """
        batch = active.shape[0]
        due = None
        for _ in range(MAX_SWEEPS):
            if _worth_compacting(n_active, batch):
                index = torch.nonzero(active).squeeze(1)
                sub_state = _select(state, index, self._used)
                sub_rng = _select_rng(rng, index)
                self._settle(sub_state, torch.ones_like(index, dtype=torch.bool), n_active, sub_rng)
                _write_back(state, sub_state, index, self._written)
                rng.counter.index_copy_(0, index, sub_rng.counter)
                return
            undrawn = self._sweep(state, active, rng, everyone=n_active == batch, due=due)
            pending, claims, due, ends, first_held = self._pending(state)
            if ends is not None:
                pending, claims = self._work_ends_only(
                    state, active, pending, ends, claims, first_held
                )
            active = self._claim_only(state, active, pending, claims, rng, undrawn)
            n_active = int(active.sum())
            if n_active == 0:
                return
        raise RuntimeError("line did not settle: a zero-time cycle of moves")  # pragma: no cover

    def _pending(
        self, state: LineState
    ) -> tuple[torch.Tensor, torch.Tensor, _Due, torch.Tensor | None, torch.Tensor]:
        """Instances (B,) where a sweep at ``state.now`` would still do something other than a
        claim or a simple work end, the claims (R, B), the due timers and arrivals it found
        (for the next sweep, see ``_Due``), the simple work ends (R, B; None on lines
        without zero-time work, where they are left in the due timers), and whether each row's
        output's first slot is held (R, B; for ``_work_ends_only``, which changes no slot).

        Exactly the preconditions of the sweep's rules: a due timer, slot arrival or worker
        arrival; a row in START or OUT_CHECK (they always move on); a row waiting for a carrier
        that has arrived; and, returned apart (see ``_claim_only``), a row waiting for a slot
        that is free (a claim), and (see ``_work_ends_only``) a due WORKING timer of a row that is not a sequential process,
        unless it is a sink that would start again and take a carrier that has arrived. (No
        carrier can move on after a sweep, see ``_slots``.)
        """
        w = self._wide(state.now.shape[0])
        line = self.line
        now = state.now[None]
        phase = state.phase
        due = _Due(
            timers=state.wake <= now,
            slots=state.ready <= now,
            workers=state.w_arrive <= now if line.n_workers else None,
        )
        arrived_in = self._arrived_at(state, self._in_last_slot(state))
        if self._zero_work:
            ends = due.timers & (phase == w.phase(WORKING))
            if self._has_sequential:  # (the only rows that do not end simply)
                ends &= w.ends_simply
            ends = _and_not(ends, w.restarts & arrived_in)
            timers = _and_not(due.timers, ends)
        else:
            ends, timers = None, due.timers
        pending = timers | (phase == w.phase(START))
        if self._has_switch:  # (only switches check their output)
            pending |= phase == w.phase(OUT_CHECK)
        if self._has_sequential:
            pending |= phase == w.phase(SEQ_NEXT)
        waiting = phase == w.phase(GET_WAIT)
        pending |= waiting & (w.no_input | arrived_in)
        if self._has_assembly:
            comp_last = self._comp_last_slot(state)
            pending |= (phase == w.phase(COMP_WAIT)) & self._arrived_at(state, comp_last)
        first = self._out_first_slot(state)
        first_held = _at(state.held, first)
        claims = _and_not(phase == w.phase(PUT_WAIT), first_held)
        # one reduction over the rows of all the (rows, B) conditions stacked, instead of one
        # reduction per condition and an or of the results (fewer torch calls)
        conditions = [pending, due.slots]
        if due.workers is not None:
            conditions.append(due.workers)
        return _any_rows(torch.cat(conditions)), claims, due, ends, first_held

    def _work_ends_only(
        self,
        state: LineState,
        active: torch.Tensor,
        pending: torch.Tensor,
        ends: torch.Tensor,
        claims: torch.Tensor,
        first_held: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """End the simple work ends (``ends``, (R, B), see ``_pending``) of the ``active``
        instances whose only pending rules are such ends and claims, and return ``pending``
        and the claims (R, B) with those of the rows that now wait to put their carrier on
        (``first_held``: whether each row's output's first slot is held, from ``_pending``).

        A sweep of such an instance would end the work (release its workers, count a sink's
        part, set ``last_time``; a sink without output starts again and waits for a carrier,
        which has not arrived; a switch checks its selected output: room, it waits to put on,
        else it polls again; the others wait to put their carrier on) and claim the free
        first slots, drawing the put times once for all its claims, as ``_claim_only`` then
        does; nothing else: no other rule's precondition holds, and a work end changes no
        slot. Rows that work for no time (the WaitingTime sink and main source, the
        ComplexLine switch) end their work at the instant they start it, which made a second
        sweep in most settles of such lines.
        """
        ending = ends & _and_not(active, pending)[None]  # (one check: most settles have ends)
        if not self._has(ending):
            return pending, claims
        w = self._wide(state.now.shape[0])
        if self.line.n_workers:
            self._release(state, ending)
        finished = ending & w.sink
        state.n_parts = state.n_parts + finished.sum(dim=0)
        state.last_time = torch.where(ending, state.now[None] - state.started, state.last_time)
        if self._typed:
            state.carrier_type = torch.where(
                finished, _scalar(EMPTY_TYPE, state.carrier_type), state.carrier_type
            )
        state.wake = torch.where(ending, _scalar(INF, state.wake), state.wake)
        phase = _choose(ending, w.after_end, state.phase)
        if self._has_switch:  # OUT_CHECK, as in ``_sweep`` (it may change ``cur_out``)
            phase = self._check_output(state, ending & w.switch, phase)
            first_held = _at(state.held, self._out_first_slot(state))
        state.phase = phase
        # the rows waiting to put on are those that were (their claims, with the same first
        # slots) and the ending rows that now do (they were WORKING): no or of the two needed
        return pending, _and_not(phase == w.phase(PUT_WAIT), first_held)

    def _check_output(
        self, state: LineState, checking: torch.Tensor, phase: torch.Tensor
    ) -> torch.Tensor:
        """OUT_CHECK of the switch rows ``checking`` (R, B): with room on the selected output,
        it becomes ``cur_out`` and the row waits to put on (PUT_WAIT); else the row polls again
        after ``poll_interval`` (OUT_POLL). Returns ``phase`` with the new phases."""
        w = self._wide(state.now.shape[0])
        selected = _lookup(self._outputs_flat, self._outputs_offset + state.index_out)
        room = state.count.gather(0, selected) < _lookup(self.line.capacity, selected)
        state.cur_out = torch.where(checking & room, selected, state.cur_out)
        state.wake = torch.where(
            _and_not(checking, room), state.now[None] + self.col.poll, state.wake
        )
        return _choose(checking, _choose(room, PUT_WAIT, w.phase(OUT_POLL)), phase)

    def _claim_only(
        self,
        state: LineState,
        active: torch.Tensor,
        pending: torch.Tensor,
        claims: torch.Tensor,
        rng: InstanceRNG,
        undrawn: _Undrawn | None = None,
    ) -> torch.Tensor:
        """Let the ``active`` instances (B,) whose only pending rule is a claim (``claims``,
        (R, B): PUT_WAIT rows whose output's first slot is free; ``pending``: the instances
        with anything else pending, see ``_pending``) claim their slots, and return the active
        instances that need another sweep (``active & pending``).

        A sweep of such an instance would only claim (no timer is due, no carrier arrives or
        can move on, no row waits for an arrived carrier, none is in START, OUT_CHECK or
        SEQ_NEXT), drawing the put times (``_start_put``) as here, after which nothing is
        pending: a claim fills a first slot, which lets no carrier move. Most of the second
        sweeps of a settle were such claims: a take lets the carriers behind it move on
        (``_sweep``'s last ``_move``), which frees the first slot a row is waiting for.

        ``undrawn``: the draws the sweep just left (see ``_puts_take_time``), made here first,
        with these in one draw where they can share it (``_draw_undrawn``).
        """
        # (one check, not one of ``claims`` first: most settles have some)
        free = claims & _and_not(active, pending)[None]
        claiming = self._has(free)
        if claiming:
            state.phase = _choose(free, PUTTING, state.phase)
            self._hold_first(state, free)
        if undrawn is not None or claiming:
            self._draw_undrawn(state, undrawn, free if claiming else None, rng)
        return active & pending
