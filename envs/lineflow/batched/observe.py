"""Batched observations in exactly the layout of ``features.observation_features``.

Every feature group is computed for all rows, buffers or workers at once into one raw tensor;
an index built once from the feature names puts the columns in observation order.
"""

from __future__ import annotations

import torch

from gymforge.envs.lineflow.batched.compiled import KIND_MAGAZINE, KIND_SWITCH, CompiledLine
from gymforge.envs.lineflow.batched.engine import (
    FAILING,
    FETCH,
    GET_WAIT,
    GETTING,
    SEQ_ERROR,
    WORKING,
    LineState,
)
from gymforge.envs.lineflow.features import (
    MODE_NAMES,
    TIMED_STATIONS,
    observation_features,
    timed_scale,
)
from gymforge.envs.lineflow.spec import MagazineSpec, SourceSpec

WORKING_MODE, WAITING_MODE, FAILING_MODE = 0, 1, 2


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
        raw = [f"{n}.mode={m}" for n in names for m in MODE_NAMES]
        raw += [f"{n}.waiting_time" for n in names]
        raw += [f"{n}.processing_time" for n in names]
        raw += [f"{n}.n_workers" for n in names]
        raw += [f"{n}.scrap" for n in names]
        raw += [f"{n}.stored" for n in names]
        raw += [f"{n}.index_in={i}" for n in names for i in range(self._io_width[0])]
        raw += [f"{n}.index_out={i}" for n in names for i in range(self._io_width[1])]
        worker_names = [f"{p.name}.W{w}" for p in spec.pools for w in range(p.n_workers)]
        pool_rows = [
            [names.index(x) for x in spec.pool_stations(p.name)]
            for p in spec.pools
            for _ in range(p.n_workers)
        ]
        raw += [
            f"{w}={names[r]}" for w, rows in zip(worker_names, pool_rows, strict=True) for r in rows
        ]
        raw += [f"{b.name}.fill" for b in spec.buffers]
        type_rows, type_ids = [], []  # every source carrier type (ids as in compiled.py)
        for r, st in enumerate(spec.stations):
            if isinstance(st, SourceSpec):
                for j, kind in enumerate(st.carrier_specs):
                    raw.append(f"{st.name}.carrier_type={kind}")
                    type_rows.append(r)
                    type_ids.append(int(line.type_base[r]) + j)
        raw += ["time"]
        index = {name: i for i, name in enumerate(raw)}
        features = [f.name for f in observation_features(spec)]
        missing = [f for f in features if f not in index]
        if missing:
            raise ValueError(f"the torch engine cannot observe {missing} yet")
        self._perm = torch.tensor([index[f] for f in features], dtype=torch.long, device=device)
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
        self._pool_size = line.worker_pool_size[:s].clamp(min=1.0)
        self._capacity = line.capacity[:-1].to(torch.float64)
        self._kind = line.kind[:s]
        self._type_rows = torch.tensor(type_rows, dtype=torch.long, device=device)
        self._type_ids = torch.tensor(type_ids, dtype=torch.long, device=device)
        self._worker_rows = [
            torch.tensor(rows, dtype=torch.long, device=device) for rows in pool_rows
        ]

    def modes(self, state: LineState) -> torch.Tensor:
        """Each station's mode (B, S): 0 working, 1 waiting, 2 failing, as the SimPy engine reports."""
        phase = state.phase[:, : self.line.n_stations]
        switch_busy = (self._kind == KIND_SWITCH) & ((phase == GET_WAIT) | (phase == GETTING))
        magazine_busy = (self._kind == KIND_MAGAZINE) & (phase == FETCH)
        working = (phase == WORKING) | switch_busy | magazine_busy
        return torch.where(
            working,
            WORKING_MODE,
            torch.where((phase == FAILING) | (phase == SEQ_ERROR), FAILING_MODE, WAITING_MODE),
        )

    def __call__(self, state: LineState) -> torch.Tensor:
        s = self.line.n_stations
        one_hot = torch.nn.functional.one_hot(self.modes(state), 3).flatten(1).to(torch.float64)
        scrap = (state.n_scrap[:, :s] - state.scrap_seen[:, :s]).clamp(max=1).to(torch.float64)
        state.scrap_seen = state.n_scrap.clone()
        parts = [
            one_hot,
            state.waiting[:, :s] / self._largest,
            (state.last_time[:, :s] / self._scale).clamp(max=1.0),
            self._workers_at(state) / self._pool_size,
            scrap,
            (state.stored[:, :s] / self._max_stored).clamp(max=1.0),
            torch.nn.functional.one_hot(state.index_in[:, :s], self._io_width[0])
            .flatten(1)
            .to(torch.float64),
            torch.nn.functional.one_hot(state.index_out[:, :s], self._io_width[1])
            .flatten(1)
            .to(torch.float64),
        ]
        if self._worker_rows:
            shown = torch.where(state.w_arrive < float("inf"), state.w_dest, state.w_station)
            parts += [
                (shown[:, w, None] == rows[None, :]).to(torch.float64)
                for w, rows in enumerate(self._worker_rows)
            ]
        parts += [
            state.count[:, :-1].to(torch.float64) / self._capacity,
            (state.run_type.index_select(1, self._type_rows) == self._type_ids).to(torch.float64),
            (state.now / self.horizon).clamp(max=1.0)[:, None],
        ]
        return torch.cat(parts, dim=1).index_select(1, self._perm).to(torch.float32)

    def _workers_at(self, state: LineState) -> torch.Tensor:
        s = self.line.n_stations
        if not self._worker_rows:
            return torch.zeros(state.now.shape[0], s, dtype=torch.float64, device=state.now.device)
        standing = state.w_arrive == float("inf")
        rows = torch.arange(s, device=state.now.device)
        return (
            ((state.w_station[:, None, :] == rows[None, :, None]) & standing[:, None, :])
            .sum(dim=2)
            .to(torch.float64)
        )
