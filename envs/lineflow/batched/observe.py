"""Batched observations in exactly the layout of ``features.observation_features``.

Every observed feature group is computed for all rows, buffers or workers at once, batch axis last
like the engine's state (one row of ``B`` per raw column); an index built once from the feature
names selects the observed rows in observation order, and one transpose makes them ``(B, F)``.
"""

from __future__ import annotations

import torch

from gymforge.envs.lineflow.batched.compiled import KIND_MAGAZINE, KIND_SWITCH, CompiledLine
from gymforge.envs.lineflow.batched.phases import (
    FAILING,
    FETCH,
    GET_WAIT,
    GETTING,
    N_PHASES,
    SEQ_ERROR,
    WORKING,
)
from gymforge.envs.lineflow.batched.state import LineState
from gymforge.envs.lineflow.features import (
    MODE_NAMES,
    TIMED_STATIONS,
    observation_features,
    timed_scale,
)
from gymforge.envs.lineflow.spec import MagazineSpec, SourceSpec

WORKING_MODE, WAITING_MODE, FAILING_MODE = 0, 1, 2


def _one_hot(values: torch.Tensor, width: int) -> torch.Tensor:
    """(n, B) ints in ``[0, width)`` -> (n * width, B) float32 one-hot (no range check, no sync)."""
    choices = torch.arange(width, device=values.device)[None, :, None]
    return (values[:, None, :] == choices).flatten(0, 1).to(torch.float32)


class Observer:
    """Builds observations (B, n_features) float32 from a ``LineState``."""

    def __init__(self, line: CompiledLine, horizon: float) -> None:
        spec = line.spec
        device = line.kind.device
        self.line = line
        self.horizon = horizon
        s = line.n_stations
        names = [st.name for st in spec.stations]
        self._io_width = (line.inputs.shape[1], line.outputs.shape[1])
        worker_names = [f"{p.name}.W{w}" for p in spec.pools for w in range(p.n_workers)]
        pool_rows = [
            [names.index(x) for x in spec.pool_stations(p.name)]
            for p in spec.pools
            for _ in range(p.n_workers)
        ]
        type_rows, type_ids = [], []  # every source carrier type (ids as in compiled.py)
        type_names = []
        for r, st in enumerate(spec.stations):
            if isinstance(st, SourceSpec):
                for j, kind in enumerate(st.carrier_specs):
                    type_names.append(f"{st.name}.carrier_type={kind}")
                    type_rows.append(r)
                    type_ids.append(int(line.type_base[r]) + j)
        # the raw columns of each feature group, in the order its builder returns them
        groups: dict[str, list[str]] = {
            "modes": [f"{n}.mode={m}" for n in names for m in MODE_NAMES],
            "waiting_time": [f"{n}.waiting_time" for n in names],
            "processing_time": [f"{n}.processing_time" for n in names],
            "n_workers": [f"{n}.n_workers" for n in names],
            "scrap": [f"{n}.scrap" for n in names],
            "stored": [f"{n}.stored" for n in names],
            "index_in": [f"{n}.index_in={i}" for n in names for i in range(self._io_width[0])],
            "index_out": [f"{n}.index_out={i}" for n in names for i in range(self._io_width[1])],
            "workers": [
                f"{w}={names[r]}"
                for w, rows in zip(worker_names, pool_rows, strict=True)
                for r in rows
            ],
            "fill": [f"{b.name}.fill" for b in spec.buffers],
            "carrier_type": type_names,
            "time": ["time"],
        }
        where = {name: (group, i) for group, raw in groups.items() for i, name in enumerate(raw)}
        features = [f.name for f in observation_features(spec)]
        missing = [f for f in features if f not in where]
        if missing:
            raise ValueError(f"the torch engine cannot observe {missing} yet")
        self.n_features = len(features)
        # only the observed groups are computed; each is copied into its feature rows
        self._copies = [
            self._copy_plan(
                group,
                len(groups[group]),
                [(i, where[f][1]) for i, f in enumerate(features) if where[f][0] == group],
                device,
            )
            for group in groups
            if any(where[f][0] == group for f in features)
        ]
        f64 = {"dtype": torch.float64, "device": device}
        self._largest = torch.tensor(
            [
                (st.waiting_time_choices - 1) * st.waiting_time_step
                if isinstance(st, SourceSpec)
                else 1.0
                for st in spec.stations
            ],
            **f64,
        )
        self._scale = torch.tensor(
            [timed_scale(st) if isinstance(st, TIMED_STATIONS) else 1.0 for st in spec.stations],
            **f64,
        )
        self._max_stored = torch.tensor(
            [
                max(st.max_carriers, 1) if isinstance(st, MagazineSpec) else 1
                for st in spec.stations
            ],
            **f64,
        )
        self._largest = self._largest[:, None]  # constants as (rows, 1) columns
        self._scale = self._scale[:, None]
        self._max_stored = self._max_stored[:, None]
        self._pool_size = line.worker_pool_size[:s].clamp(min=1.0)[:, None]
        self._kind = line.kind[:s, None]
        # the mode of every (phase, station), looked up by ``phase * S + station``
        self._stations = torch.arange(s, device=device)[:, None]
        every_phase = torch.arange(N_PHASES, device=device)[:, None].expand(N_PHASES, s)
        self._mode_table = self._modes_of(every_phase.T).T.flatten()  # (N_PHASES * S,)
        # the modes one-hot: 1.0 at ``(phase * S + station) * 3 + mode`` for each (phase,
        # station) and its mode, else 0.0, looked up at ``phase * 3S + (station * 3 + mode)``
        modes = torch.arange(3, device=device)
        self._mode_one_hot = (
            (self._mode_table[:, None] == modes).to(torch.float32).flatten()
        )  # (N_PHASES * S * 3,)
        self._mode_offsets = (self._stations * 3 + modes)[:, :, None]  # (S, 3, 1)
        self._capacity = line.capacity[:-1, None].to(torch.float64)
        self._type_rows = torch.tensor(type_rows, dtype=torch.long, device=device)
        self._type_ids = torch.tensor(type_ids, dtype=torch.long, device=device)[:, None]
        # the worker-location columns: (worker, pool row) of each, in raw order
        self._worker_columns = (
            torch.tensor(
                [w for w, rows in enumerate(pool_rows) for _ in rows],
                dtype=torch.long,
                device=device,
            ),
            torch.tensor([r for rows in pool_rows for r in rows], dtype=torch.long, device=device)[
                :, None
            ],
        )

    def modes(self, state: LineState) -> torch.Tensor:
        """Each station's mode (B, S): 0 working, 1 waiting, 2 failing, as the SimPy engine reports."""
        return self._station_modes(state).T

    def _station_modes(self, state: LineState) -> torch.Tensor:
        """Each station's mode (S, B), looked up by (phase, station)."""
        flat = state.phase[: self.line.n_stations].long() * self.line.n_stations + self._stations
        return self._mode_table.index_select(0, flat.flatten()).view(flat.shape)

    def _modes_of(self, phase: torch.Tensor) -> torch.Tensor:
        """The mode of (S, ...) station phases (a switch works while it gets, a magazine while it
        fetches)."""
        switch_busy = (self._kind == KIND_SWITCH) & ((phase == GET_WAIT) | (phase == GETTING))
        magazine_busy = (self._kind == KIND_MAGAZINE) & (phase == FETCH)
        working = (phase == WORKING) | switch_busy | magazine_busy
        return torch.where(
            working,
            WORKING_MODE,
            torch.where((phase == FAILING) | (phase == SEQ_ERROR), FAILING_MODE, WAITING_MODE),
        )

    @staticmethod
    def _copy_plan(
        group: str, width: int, pairs: list[tuple[int, int]], device: torch.device | str
    ) -> tuple[str, slice | torch.Tensor, torch.Tensor | None]:
        """How group ``group`` (of ``width`` rows) fills the observation: (group, feature rows,
        group rows or None for all of them in order), from its ``(feature index, group row)``
        pairs. A run of consecutive feature rows is a slice (a plain copy)."""
        rows = [r for _, r in pairs]
        targets = [i for i, _ in pairs]
        consecutive = targets == list(range(targets[0], targets[0] + len(targets)))
        long = {"dtype": torch.long, "device": device}
        dst = slice(targets[0], targets[-1] + 1) if consecutive else torch.tensor(targets, **long)
        src = None if rows == list(range(width)) else torch.tensor(rows, **long)
        return group, dst, src

    def __call__(self, state: LineState) -> torch.Tensor:
        """The observations (B, n_features) float32; marks the scrap seen so far as reported.

        Only the observed feature groups are computed (values in float64 as the SimPy env computes
        them, then rounded to float32; 0/1 groups directly in float32, the same numbers), each
        copied into its rows of an (n_features, B) buffer, which one transpose makes (B, F).
        """
        out = torch.empty(
            self.n_features, state.now.shape[0], dtype=torch.float32, device=state.now.device
        )
        for group, dst, src in self._copies:
            values = getattr(self, f"_group_{group}")(state)
            if src is not None:
                values = values.index_select(0, src)
            if isinstance(dst, slice):
                out[dst] = values  # rounds float64 to float32 as .to(torch.float32) does
            else:
                out.index_copy_(0, dst, values.to(torch.float32))
        state.scrap_seen = state.n_scrap.clone()
        return out.T.contiguous()

    # --- feature groups: (width, B) in the raw column order of ``__init__``: float64, or
    # float32 where every value is 0 or 1 (exact in both) ----------------------------------------
    def _group_modes(self, state: LineState) -> torch.Tensor:
        """``_one_hot(self._station_modes(state), 3)`` in one lookup of the float32 one-hot
        table (no int64 modes, comparison and conversion of (S, 3, B) in between)."""
        s = self.line.n_stations
        index = state.phase[:s].long()[:, None, :] * (3 * s) + self._mode_offsets
        return self._mode_one_hot.index_select(0, index.view(-1)).view(3 * s, -1)

    def _group_waiting_time(self, state: LineState) -> torch.Tensor:
        return state.waiting[: self.line.n_stations] / self._largest

    def _group_processing_time(self, state: LineState) -> torch.Tensor:
        return (state.last_time[: self.line.n_stations] / self._scale).clamp(max=1.0)

    def _group_n_workers(self, state: LineState) -> torch.Tensor:
        return self._workers_at(state) / self._pool_size

    def _group_scrap(self, state: LineState) -> torch.Tensor:
        s = self.line.n_stations
        return (state.n_scrap[:s] - state.scrap_seen[:s]).clamp(max=1).to(torch.float32)

    def _group_stored(self, state: LineState) -> torch.Tensor:
        return (state.stored[: self.line.n_stations] / self._max_stored).clamp(max=1.0)

    def _group_index_in(self, state: LineState) -> torch.Tensor:
        return _one_hot(state.index_in[: self.line.n_stations], self._io_width[0])

    def _group_index_out(self, state: LineState) -> torch.Tensor:
        return _one_hot(state.index_out[: self.line.n_stations], self._io_width[1])

    def _group_workers(self, state: LineState) -> torch.Tensor:
        shown = torch.where(state.w_arrive < float("inf"), state.w_dest, state.w_station)
        worker, row = self._worker_columns
        return (shown.index_select(0, worker) == row).to(torch.float32)

    def _group_fill(self, state: LineState) -> torch.Tensor:
        return state.count[:-1].to(torch.float64) / self._capacity

    def _group_carrier_type(self, state: LineState) -> torch.Tensor:
        chosen = state.run_type.index_select(0, self._type_rows)
        return (chosen == self._type_ids).to(torch.float32)

    def _group_time(self, state: LineState) -> torch.Tensor:
        return (state.now / self.horizon).clamp(max=1.0)[None, :]

    def _workers_at(self, state: LineState) -> torch.Tensor:
        """Workers standing at each station (S, B) float64."""
        standing = (state.w_arrive == float("inf")).to(torch.float64)
        counts = torch.zeros(
            self.line.rows, state.now.shape[0], dtype=torch.float64, device=state.now.device
        )
        return counts.scatter_add_(0, state.w_station, standing)[: self.line.n_stations]
