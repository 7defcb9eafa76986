"""Puts, work and workers: put times, processing times and their noise (drawn at once or later),
runs of carrier types, and workers taken, released and walking.
"""

from __future__ import annotations

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched.shortcuts import (
    _LOG1P_AT_ZERO,
    _Undrawn,
)
from gymforge.envs.lineflow.batched.state import (
    INF,
    LineState,
)
from gymforge.envs.lineflow.batched.tensor_ops import (
    _add_at,
    _and_not,
    _any_rows,
    _lookup,
    _only,
    _scalar,
    _uniform_firsts,
    _uniform_pairs,
    _uniform_rows,
)


class _Work:
    """Methods of :class:`~gymforge.envs.lineflow.batched.engine.Engine` (see there)."""

    def _start_put(self, state: LineState, mask: torch.Tensor, rng: InstanceRNG) -> None:
        """Rows in ``mask`` (R, B) claim the first slot of their output and draw the put time."""
        self._hold_first(state, mask)
        self._draw_put_times(state, mask, _any_rows(mask), rng)

    def _hold_first(self, state: LineState, mask: torch.Tensor) -> None:
        """Rows in ``mask`` (R, B) claim (hold) the first slot of their output."""
        self._set_at(state.held, self._out_first_slot(state), mask, True)

    def _draw_undrawn(
        self,
        state: LineState,
        undrawn: _Undrawn | None,
        free: torch.Tensor | None,
        rng: InstanceRNG,
    ) -> None:
        """Make the draws a sweep left (``undrawn``: its works' noise, then its claims' put
        times) and then that of the claims ``_claim_only`` made after it (``free``, (R, B) or
        None), each run of them in which no instance is twice in one draw.

        A draw gives each instance the numbers of its counter and advances the counters of
        the instances it is for, and a number depends only on the counter and its lane (a
        draw of ``2R`` lanes holds those of ``R``): an instance in only one draw of a run gets
        the same numbers from one draw of ``2R`` lanes for the run (nothing draws in between),
        and every counter ends the same. The runs draw in order, as the draws would.
        """
        parts: list[tuple[bool, torch.Tensor, torch.Tensor]] = []  # (work?, rows, instances)
        if undrawn is not None:
            if undrawn.work is not None:
                parts.append((True, undrawn.work, undrawn.work_where))  # type: ignore[arg-type]
            if undrawn.claimed is not None:
                parts.append((False, undrawn.claimed, _any_rows(undrawn.claimed)))
        if free is not None:
            parts.append((False, free, _any_rows(free)))
        run = [parts[0]]
        where = parts[0][2]
        for part in parts[1:]:
            if self._has(where & part[2]):  # an instance draws again: the run so far draws first
                self._draw_run(state, run, where, undrawn, rng)
                run, where = [part], part[2]
            else:
                run.append(part)
                where = where | part[2]
        self._draw_run(state, run, where, undrawn, rng)

    def _draw_run(
        self,
        state: LineState,
        run: list[tuple[bool, torch.Tensor, torch.Tensor]],
        where: torch.Tensor,
        undrawn: _Undrawn | None,
        rng: InstanceRNG,
    ) -> None:
        """One draw for the ``run`` of ``_draw_undrawn`` (instances ``where``, (B,))."""
        rows = self.line.rows
        puts = None
        for work, mask, _ in run:
            if not work:
                puts = mask if puts is None else puts | mask
        if not run[0][0]:  # (only puts)
            self._draw_put_times(state, puts, where, rng)  # type: ignore[arg-type]
            return
        if puts is None:  # (only the works: the first numbers of pairs, as ``_start_work``)
            self._end_work(state, undrawn, _uniform_firsts(rng, rows, where))  # type: ignore[arg-type]
            return
        # ``log1p(-u)`` of both halves' numbers at once (one call each for the two)
        log = torch.log1p(-_uniform_pairs(rng, rows, where))
        self._end_work(state, undrawn, log[:, 0], logged=True)  # type: ignore[arg-type]
        self._put_times(state, puts, log.view(2 * rows, -1)[:rows], logged=True)

    def _end_work(
        self, state: LineState, undrawn: _Undrawn, u: torch.Tensor, logged: bool = False
    ) -> None:
        """The ends of the works with noise ``undrawn.work`` (R, B), with their numbers ``u``
        (R, B; ``logged``: already as ``log1p(-u)``). (Those without noise have their end: it
        may even have come, at once.)"""
        log = u if logged else torch.log1p(-u)
        duration = undrawn.base - log * self.col.noise_scale
        state.wake = torch.where(undrawn.work, state.now[None] + duration, state.wake)

    def _draw_put_times(
        self, state: LineState, mask: torch.Tensor, where: torch.Tensor, rng: InstanceRNG
    ) -> None:
        """Rows in ``mask`` (R, B) start putting on: ``wake`` after the put time, drawn for the
        instances ``where`` (B,) (those with a row in ``mask``)."""
        line = self.line
        self._put_times(state, mask, _uniform_rows(rng, line.rows, where))

    def _put_times(
        self, state: LineState, mask: torch.Tensor, u: torch.Tensor, logged: bool = False
    ) -> None:
        """Rows in ``mask`` (R, B) start putting on, with their numbers ``u`` (R, B;
        ``logged``: already as ``log1p(-u)``)."""
        line = self.line
        if not self._fixed_buffers:
            put_time = _lookup(line.put_time, state.cur_out)
            put_scale = _lookup(line.put_scale, state.cur_out)
        else:
            put_time, put_scale = self._fixed_put_time, self._fixed_put_scale
        duration = put_time - (u if logged else torch.log1p(-u)) * put_scale
        state.wake = torch.where(mask, state.now[None] + duration, state.wake)

    def _finish_put(self, state: LineState, mask: torch.Tensor) -> None:
        first = self._out_first_slot(state)
        self._set_at(state.slot_created, first, mask, state.carrier_created)
        if self._typed:
            self._set_at(state.slot_type, first, mask, state.carrier_type)
        self._set_at(state.arrived, first, mask, True)
        _add_at(state.count, self._cur_out(state), mask, 1)
        if self._puts_on_null:  # (else no row ever puts on it)
            state.arrived[self._null_slot] = False

    def _start_work(
        self, state: LineState, mask: torch.Tensor, rng: InstanceRNG
    ) -> _Undrawn | None:
        """Rows in ``mask`` (R, B) start working. On lines where ``_defer_work`` their numbers
        are left to the ``_claim_only`` after the sweep (returned, see ``_draw_undrawn``):
        until then their works end after the processing time, ``log1p(-u)`` taken as its value
        at ``u = 0`` (-0.0, like ``log1p(-u) * 0`` for every ``u``: the very end of a work
        without noise)."""
        w = self._wide(state.now.shape[0])
        line, col = self.line, self.col
        now = state.now[None]
        if line.n_workers:
            self._take_workers(state, mask & w.takes_at_work)
        # the second number of a row's pair decides rework: without rework anywhere it is
        # never used, so only the first ones are computed (the same draw; the plain rules
        # compute both)
        deferred = self._defer_work
        if deferred:
            u = _LOG1P_AT_ZERO
        elif self._has_rework or not self.shortcuts:
            u = _uniform_pairs(rng, line.rows, _any_rows(mask))
            u = u if self._has_rework else u[:, 0]
        else:
            u = _uniform_firsts(rng, line.rows, _any_rows(mask))
        factor = (
            torch.where(w.pooled, state.factor, _scalar(1.0, state.factor))
            if line.n_workers
            else 1.0
        )
        if self._has_slowdown:
            jump = w.assembly & (state.jump_start <= now) & (now < state.jump_end)
            factor = factor * torch.where(jump, state.jump_factor, _scalar(1.0, state.jump_factor))
        time = col.processing_time
        new_part = mask & w.source
        if self._has_runs and self._has(new_part):
            self._next_type(state, new_part, rng)
        if self._has_extra:
            # a source's own parts are new (type from its run); sequential processes look up
            # the part being processed, everything else the carrier's parts
            carrier = _lookup(line.type_extra.flatten(), state.carrier_type * line.rows + self._row)
            part = _lookup(line.part_extra.flatten(), self._part_index(state))
            extra = torch.where(w.sequential, part, carrier)
            time = time + torch.where(w.source, _scalar(0.0, extra), extra)
        if self._has_rework:
            duration = time * factor - torch.log1p(-u[:, 0]) * col.noise_scale
            duration = torch.where(u[:, 1] < col.rework_probability, 2 * duration, duration)
        elif deferred:
            if self._fixed_work is not None:  # (the same columns every time)
                base, duration = self._fixed_work
            else:
                base = time * factor
                duration = base - u * col.noise_scale  # (u: log1p(-0.0))
        else:  # (u[:, 1] < 0 never holds)
            duration = time * factor - torch.log1p(-u) * col.noise_scale
        state.started = torch.where(mask, now, state.started)
        state.wake = torch.where(mask, now + duration, state.wake)
        state.carrier_created = torch.where(new_part, now, state.carrier_created)
        if self._typed:
            run_type = state.run_type if self._has_runs else self.col.type_base  # (fixed w/o runs)
            state.carrier_type = torch.where(new_part, run_type, state.carrier_type)
        if not deferred:
            return None
        return _Undrawn(work=mask & w.noisy, base=base, work_where=_any_rows(mask))

    def _next_type(self, state: LineState, sources: torch.Tensor, rng: InstanceRNG) -> None:
        """Sources emit runs of ``run_min … run_min + run_span - 1`` carriers of one random type."""
        col = self.col
        u = _uniform_pairs(rng, self.line.rows, _any_rows(sources))
        new_run = sources & (state.run_left == 0)
        kind = (u[:, 0] * col.n_types).long().clamp(max=col.n_types - 1)
        length = col.run_min + (u[:, 1] * col.run_span).long().clamp(max=col.run_span - 1)
        state.run_type = torch.where(new_run, col.type_base + kind, state.run_type)
        state.run_left = torch.where(new_run, length, state.run_left) - sources.long()

    # --- workers ------------------------------------------------------------------------------
    def _take_workers(self, state: LineState, mask: torch.Tensor) -> None:
        """Rows in ``mask`` hold the free workers standing at them; their speed-up is stored.

        Work is per worker (W, B): each worker looks up its own station in ``mask``.
        """
        if not self._has(mask):
            return
        standing = (state.w_arrive == INF) & (state.w_holder < 0)  # (W, B)
        taken = mask.gather(0, state.w_station) & standing
        if self._station_skill is None:
            skill = _lookup(self._skill_flat, self._worker_offset + state.w_station)
        else:  # every worker has this skill at every station it can stand at
            skill = self._station_skill
        # the skills of a row's workers are summed in worker order (as a scatter over (B, W)
        # rows did), so the float sums are the same bits
        total = torch.zeros_like(state.factor).scatter_add_(
            0, state.w_station, torch.where(taken, skill, _scalar(0.0, state.factor))
        )
        state.factor = torch.where(mask, torch.exp(-0.3 * total), state.factor)
        state.w_holder = torch.where(taken, state.w_station, state.w_holder)

    def _release(self, state: LineState, mask: torch.Tensor) -> None:
        w = self._wide(state.now.shape[0])
        if not self._has(mask & w.pooled):
            return
        released = mask.gather(0, state.w_holder.clamp(min=0)) & (state.w_holder >= 0)
        state.w_holder = torch.where(released, _scalar(-1, state.w_holder), state.w_holder)
        self._workers_leave(state, _any_rows(released))

    def _workers_leave(self, state: LineState, rows: torch.Tensor) -> None:
        """Free standing workers whose target differs from their station start walking."""
        leave = (
            rows[None]
            & (state.w_holder < 0)
            & (state.w_arrive == INF)
            & (state.w_target != state.w_station)
        )
        if self._instant_walks:
            instant = leave & (self._transition == 0)
            state.w_station = torch.where(instant, state.w_target, state.w_station)
            walk = _and_not(leave, instant)
        else:  # (no walk takes no time)
            walk = leave
        state.w_dest = torch.where(walk, state.w_target, state.w_dest)
        state.w_arrive = torch.where(walk, state.now[None] + self._transition, state.w_arrive)

    def _workers_arrive(
        self, state: LineState, active: torch.Tensor | None, arrived: torch.Tensor
    ) -> None:
        """Workers whose walk ends (``arrived``: ``w_arrive <= now``, (W, B)) reach their station."""
        arriving = _only(None if active is None else active[None], arrived)
        if not self._has(arriving):
            return
        state.w_station = torch.where(arriving, state.w_dest, state.w_station)
        state.w_arrive = torch.where(arriving, _scalar(INF, state.w_arrive), state.w_arrive)
        self._workers_leave(state, _any_rows(arriving))
