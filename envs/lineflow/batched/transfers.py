"""Carriers moving: along buffers, into and out of stations (takes, slots, magazines, parts of
sequential processes).
"""

from __future__ import annotations

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched.compiled import (
    EMPTY_TYPE,
)
from gymforge.envs.lineflow.batched.phases import (
    FETCH,
    GET_WAIT,
    IN_POLL,
    MAG_POLL,
    PUT_WAIT,
    SEQ_ERROR,
    WAIT,
)
from gymforge.envs.lineflow.batched.state import (
    INF,
    LineState,
)
from gymforge.envs.lineflow.batched.tensor_ops import (
    _add_at,
    _and_not,
    _any_rows,
    _at,
    _choose,
    _lookup,
    _only,
    _or,
    _scalar,
    _uniform_pairs,
)


class _Transfers:
    """Methods of :class:`~gymforge.envs.lineflow.batched.engine.Engine` (see there)."""

    def _move_on(self, state: LineState, act: torch.Tensor | None) -> None:
        """The end of a sweep in which a row took a carrier off or a put ended: the carriers
        that can move on now (into the slot a take freed, or from the first slot a put filled)
        move (``_move``) here instead of in the next sweep's ``_slots``, which does them before
        anything else (here they come after this sweep's claims, which draw numbers: the same
        order). The instance is then often settled, or has only a claim pending (see
        ``_claim_only``), and needs no second sweep."""
        self._move(state, act)

    def _part_index(self, state: LineState) -> torch.Tensor:
        """Flat index (R, B) of (carrier type, row, part being processed) into part tables."""
        line = self.line
        part = state.seq_part.clamp(max=self._n_parts - 1)
        return (state.carrier_type * line.rows + self._row) * self._n_parts + part

    def _next_part(
        self,
        state: LineState,
        mask: torch.Tensor,
        start_work: torch.Tensor | None,
        phase: torch.Tensor,
        rng: InstanceRNG,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        line = self.line
        now = state.now[None]
        count = _lookup(line.part_count.flatten(), state.carrier_type * line.rows + self._row)
        finished = mask & (state.seq_part >= count)
        state.last_time = torch.where(finished, state.seq_total, state.last_time)
        todo = _and_not(mask, finished)
        flat = self._part_index(state)
        probability = _lookup(line.part_error_probability.flatten(), flat)
        u = _uniform_pairs(rng, line.rows, _any_rows(todo))
        error = todo & (u[:, 0] < probability)
        duration = (
            _lookup(line.part_error_time.flatten(), flat)
            - torch.log1p(-u[:, 1]) * self.col.error_scale
        )
        state.started = torch.where(error, now, state.started)
        state.wake = torch.where(error, now + duration, state.wake)
        phase = _choose(finished, PUT_WAIT, _choose(error, SEQ_ERROR, phase))
        return _or(start_work, _and_not(todo, error)), phase

    def _start(self, state: LineState, starting: torch.Tensor, phase: torch.Tensor) -> torch.Tensor:
        """START: sources wait, switches check their input, magazines fetch, others get."""
        w = self._wide(state.now.shape[0])
        col = self.col
        now = state.now[None]
        reads = starting & w.source  # a source starting its cycle reads its waiting time
        state.waiting_read |= reads
        waits = reads & (state.waiting > 0)
        state.wake = torch.where(waits, now + state.waiting, state.wake)
        new_phase = _choose(waits, WAIT, w.phase(GET_WAIT))
        if self._has_switch:
            selected = _lookup(self._inputs_flat, self._inputs_offset + state.index_in)
            has_carrier = state.count.gather(0, selected) > 0
            switch = starting & w.switch
            state.cur_in = torch.where(switch & has_carrier, selected, state.cur_in)
            state.wake = torch.where(_and_not(switch, has_carrier), now + col.poll, state.wake)
            new_phase = _choose(switch, _choose(has_carrier, GET_WAIT, w.phase(IN_POLL)), new_phase)
        if self._has_magazine:
            magazine = starting & w.magazine
            self._match_target(state, magazine)
            state.wake = torch.where(magazine, now + col.getting_time, state.wake)
            new_phase = _choose(magazine, FETCH, new_phase)
        return _choose(starting, new_phase, phase)

    def _magazine_take(
        self, state: LineState, mask: torch.Tensor, phase: torch.Tensor
    ) -> torch.Tensor:
        w = self._wide(state.now.shape[0])
        unlimited = w.unlimited
        self._match_target(state, mask)
        take = mask & (unlimited | (state.stored > 0))
        state.stored = state.stored - _and_not(take, unlimited).long()
        state.carrier_created = torch.where(
            take, _scalar(0.0, state.carrier_created), state.carrier_created
        )
        if self._typed:
            state.carrier_type = torch.where(
                take, _scalar(EMPTY_TYPE, state.carrier_type), state.carrier_type
            )
        wait = _and_not(mask, take)
        state.wake = torch.where(wait, state.now[None] + 1.0, state.wake)
        return _choose(take, PUT_WAIT, _choose(wait, MAG_POLL, phase))

    def _match_target(self, state: LineState, mask: torch.Tensor) -> None:
        w = self._wide(state.now.shape[0])
        matched = mask & w.actionable_magazine
        state.stored = torch.where(matched, state.target, state.stored)

    # --- slots --------------------------------------------------------------------------------
    def _slots(
        self, state: LineState, active: torch.Tensor | None, arrivals: torch.Tensor | None
    ) -> None:
        """Arrivals due at ``now``, then carriers moving on into free slots, as if downstream first.

        A moving carrier's ``ready`` is its arrival time and every other slot's is ``inf``, so
        ``ready <= now`` alone marks the arrivals. Processing the slots downstream first, an
        arrived carrier at slot ``k`` moves into ``k + 1`` when that slot is free or its own
        arrived carrier moves on: so a run of arrived carriers ending at a free slot all move
        one slot on. The moves of all slots are found first (a recurrence over the slots from
        the last one) and then applied at once. ``arrivals``: ``state.ready <= now`` if known.

        Without arrivals no carrier can move on: none could after the last sweep (its own moves
        or ``_move_on``'s came last), and nothing since frees a slot (``_claim_only`` and
        ``_work_ends_only`` only fill first slots or touch none), so the moves are skipped;
        under the plain rules, which have no ``_move_on``, they are not.
        """
        act = None if active is None else active[None]
        now = state.now[None]
        arriving = _only(act, state.ready <= now if arrivals is None else arrivals)
        if self._has(arriving):
            state.arrived.logical_or_(arriving)
            ready = state.ready  # (a where in place: faster than masked_fill_)
            torch.where(arriving, _scalar(INF, ready), ready, out=ready)
            self._move(state, act)
        elif not self.shortcuts:  # (the plain rules move carriers on only here: see ``plain``)
            self._move(state, act)

    def _move(self, state: LineState, act: torch.Tensor | None) -> None:
        """Arrived carriers of the instances ``act`` (1, B; None: all) move on into free slots
        (the second half of ``_slots``).

        After it, no arrived carrier of those instances can move on (a moved carrier is not
        arrived, and every slot it leaves was checked), so a second call changes nothing until
        a carrier arrives, a row takes a carrier off or a put ends.
        """
        w = self._wide(state.now.shape[0])
        # in the flat (NS, B) slot space, slot i + 1 is the next slot of slot i (``_passable`` is
        # False at every buffer's last slot, so no move crosses buffers); ``x[1:]`` and ``x[:-1]``
        # are contiguous row ranges, and the in-place updates below write the state itself
        arrived, held = state.arrived, state.held
        # the row ranges, sliced once: each slice is a torch call, which at the compacted batch
        # sizes costs more than the update it feeds
        arrived_from, held_from, held_to = arrived[:-1], held[:-1], held[1:]
        passes = arrived_from & w.passable  # the carrier at i could move on to i + 1
        if act is not None:
            passes &= act
        move = _and_not(passes, held_to)  # (NS - 1, B): the carrier at i moves to i + 1 ...
        if not self._has(move):
            return
        # ... or into slot i + 1 when that slot's carrier moves on (a chain of passing carriers,
        # at most C - 1 long). Only where a carrier could follow one that moves into a free
        # slot: without that, going down from the last slot, every move is into a free slot.
        if self._has(passes[:-1] & move[1:]):
            # slot i + 1 is or will be free in this pass: free now, or passing its carrier on
            # into a slot that is (in-place methods on the row-range views: ``x[:-1] &= y``
            # would also call __setitem__, a slice and a self-copy more per update)
            free_now = ~held_to
            frees = free_now
            for _ in range(self._cmax - 2):
                chained = free_now.clone()
                chained[:-1].bitwise_or_(passes[1:] & frees[1:])
                frees = chained
            move = passes & frees
        now = state.now[None]
        # ``x & ~move`` in place as ``move < x`` (``_and_not``) written into ``x``: no ``~move``
        torch.lt(move, arrived_from, out=arrived_from)
        torch.lt(move, held_from, out=held_from)
        held_to.bitwise_or_(move)
        ready = state.ready[1:]
        torch.where(move, now + self._slot_time_next, ready, out=ready)
        # (slot i + 1 takes slot i's value: the rows overlap, so ``where`` cannot write in place)
        created = state.slot_created
        created_to = created[1:]
        created_to.copy_(torch.where(move, created[:-1], created_to))
        if self._typed:
            kind = state.slot_type
            kind_to = kind[1:]
            kind_to.copy_(torch.where(move, kind[:-1], kind_to))

    def _comp_flat(self, state: LineState) -> torch.Tensor:
        """Flat (row, k) index (R, B) of each row's current component buffer, for the tables."""
        k = state.comp_k.clamp(max=self.line.component.shape[1] - 1)
        return self._component_offset + k

    def _comp_last_slot(self, state: LineState) -> torch.Tensor:
        """Flat slot index of the last slot of each row's current component buffer: (R, B), or
        (R,) on lines where no assembly has more than one (an index for ``_at``)."""
        if self._one_component:  # (k is always 0)
            return self._fixed_comp_last
        return self._lookup_comp_last(state)

    def _lookup_comp_last(self, state: LineState) -> torch.Tensor:
        """``_comp_last_slot`` looked up by (row, k): (R, B)."""
        return _lookup(self._component_last_flat, self._comp_flat(state))

    def _last_slot(self, buffer: torch.Tensor) -> torch.Tensor:
        """Flat slot index (like ``buffer``) of the last slot of ``buffer``."""
        return _lookup(self.line.slot_last, buffer)

    def _in_last_slot(self, state: LineState) -> torch.Tensor:
        """Flat slot index of the last slot of each row's ``cur_in``: (R, B), or (R,) when no
        switch changes it (an index for ``_at``)."""
        if not self._fixed_buffers:  # (only switches change their input buffer)
            return self._last_slot(state.cur_in)
        return self._fixed_in_last

    def _out_first_slot(self, state: LineState) -> torch.Tensor:
        """Flat slot index of the first slot of each row's ``cur_out``, as ``_in_last_slot``."""
        if not self._fixed_buffers:  # (only switches change their output buffer)
            return _lookup(self.line.slot_first, state.cur_out)
        return self._fixed_out_first

    def _cur_in(self, state: LineState) -> torch.Tensor:
        """Each row's input buffer: the state's (R, B) when switches change it, else the line's
        (R,) (an index for ``_at``)."""
        if not self._fixed_buffers:
            return state.cur_in
        return self.line.buffer_in

    def _cur_out(self, state: LineState) -> torch.Tensor:
        """Each row's output buffer, as ``_cur_in``."""
        if not self._fixed_buffers:
            return state.cur_out
        return self.line.buffer_out

    def _arrived_at(self, state: LineState, flat: torch.Tensor) -> torch.Tensor:
        return _at(state.arrived, flat)

    @staticmethod
    def _set_at(
        slots: torch.Tensor, flat: torch.Tensor, mask: torch.Tensor, value: torch.Tensor | bool
    ) -> None:
        """Set ``slots`` (NS, B) at the slots ``flat`` (an index for ``_at``) of the rows in
        ``mask`` to ``value`` (scalar or (R, B)), in place; costs ~ R * B, not NS * B.

        The other rows write back what is there. Only a real buffer's one downstream row takes
        from it and only its one upstream row puts on it, so rows sharing a slot (the null
        buffer's) are never in ``mask`` and write the same value.
        """
        current = _at(slots, flat)
        if value is True:
            new = current | mask
        elif value is False:
            new = _and_not(current, mask)
        else:
            new = torch.where(mask, value, current)
        if flat.dim() == 1:
            slots.index_copy_(0, flat, new)
        else:
            slots.scatter_(0, flat, new)

    def _take(
        self,
        state: LineState,
        mask: torch.Tensor,
        buffer: torch.Tensor,
        flat: torch.Tensor,
        component: bool,
    ) -> None:
        """Rows in ``mask`` (R, B) take the carrier in the last slot ``flat`` of ``buffer``."""
        created = _at(state.slot_created, flat)
        origin = _at(state.slot_type, flat) if self._typed else None
        if component:
            if self._can_fail:  # (else only the condition check would read it)
                state.comp_created = torch.where(mask, created, state.comp_created)
            if origin is not None:
                state.comp_type = torch.where(mask, origin, state.comp_type)
        else:
            state.carrier_created = torch.where(mask, created, state.carrier_created)
            if origin is not None:
                state.carrier_type = torch.where(mask, origin, state.carrier_type)
        self._set_at(state.held, flat, mask, False)
        # a slot's carrier has arrived only where the slot is held: so the taken carriers' slots,
        # which are no longer held, are no longer arrived (one op over the slots instead of a
        # ``_set_at``'s three)
        state.arrived.logical_and_(state.held)
        _add_at(state.count, buffer, mask, -1)
