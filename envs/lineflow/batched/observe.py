"""Batched observations in exactly the layout of ``features.observation_features``.

Every feature group is computed for all stations or buffers at once into one raw tensor; a
permutation built once from the feature names puts the columns in observation order.
"""

from __future__ import annotations

import torch

from gymforge.envs.lineflow.batched.compiled import CompiledLine
from gymforge.envs.lineflow.batched.engine import FAILING, WORKING, LineState
from gymforge.envs.lineflow.features import (
    MODE_NAMES,
    TIMED_STATIONS,
    observation_features,
    timed_scale,
)
from gymforge.envs.lineflow.spec import AssemblySpec, SourceSpec


class Observer:
    """Builds observations (B, n_features) float32 from a ``LineState``."""

    def __init__(self, line: CompiledLine, horizon: float) -> None:
        spec = line.spec
        device = line.kind.device
        self.horizon = horizon
        names = [s.name for s in spec.stations]
        s, nb = len(names), len(spec.buffers)
        raw_names = [f"{n}.mode={m}" for n in names for m in MODE_NAMES]
        raw_names += [f"{n}.waiting_time" for n in names]
        raw_names += [f"{n}.processing_time" for n in names]
        raw_names += [f"{n}.scrap" for n in names]
        raw_names += [f"{b.name}.fill" for b in spec.buffers]
        raw_names += ["time"]
        index = {name: i for i, name in enumerate(raw_names)}
        features = [f.name for f in observation_features(spec)]
        missing = [f for f in features if f not in index]
        if missing:
            raise ValueError(f"the torch engine cannot observe {missing} yet")
        self._perm = torch.tensor([index[f] for f in features], dtype=torch.long, device=device)
        largest = [
            (st.waiting_time_choices - 1) * st.waiting_time_step
            if isinstance(st, SourceSpec)
            else 1.0
            for st in spec.stations
        ]
        scale = [timed_scale(st) if isinstance(st, TIMED_STATIONS) else 1.0 for st in spec.stations]
        self._largest = torch.tensor(largest, dtype=torch.float64, device=device)
        self._scale = torch.tensor(scale, dtype=torch.float64, device=device)
        self._capacity = line.capacity.to(torch.float64)
        self._assembly = torch.tensor(
            [isinstance(st, AssemblySpec) for st in spec.stations], device=device
        )
        self._n = (s, nb)

    def __call__(self, state: LineState) -> torch.Tensor:
        mode = torch.where(state.phase == WORKING, 0, torch.where(state.phase == FAILING, 2, 1))
        one_hot = torch.nn.functional.one_hot(mode, 3).flatten(1).to(torch.float64)
        scrap = (state.n_scrap - state.scrap_seen).clamp(max=1).to(torch.float64)
        state.scrap_seen = state.n_scrap.clone()
        raw = torch.cat(
            [
                one_hot,
                state.waiting / self._largest,
                (state.last_time / self._scale).clamp(max=1.0),
                scrap,
                state.count.to(torch.float64) / self._capacity,
                (state.now / self.horizon).clamp(max=1.0)[:, None],
            ],
            dim=1,
        )
        return raw.index_select(1, self._perm).to(torch.float32)
