"""Opt-in per-step state history of a LineFlow episode, exported as a pandas DataFrame.

The history is one preallocated float array (``max_steps + 1`` rows), so recording a step costs
O(1) whatever the episode length (the reference appends with ``np.vstack``, O(n²) overall).
Columns, in this order:

| Column | Unit | Meaning |
|---|---|---|
| ``time`` | time units | simulation time at the end of the step |
| ``n_parts``, ``n_scrap_parts`` | count | cumulative parts finished and components scrapped |
| ``<station>.mode`` | category | ``working``, ``waiting`` or ``failing`` |
| ``<station>.processing_time`` | time units | last processing time (processes and assemblies) |
| ``<station>.n_workers`` | count | workers at the station (stations in a pool) |
| ``<magazine>.stored`` | count | carriers stored (limited magazines) |
| ``<action>`` | category | every action entry, labelled (waiting time, buffer, station, count) |
| ``<buffer>.fill`` | fraction | carriers on the buffer ÷ capacity |

pandas is imported only when :meth:`StateHistory.to_frame` is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gymforge.core.extras import require
from gymforge.envs.lineflow.features import TIMED_STATIONS, action_slots
from gymforge.envs.lineflow.sim_stations import MODES
from gymforge.envs.lineflow.spec import LineSpec, MagazineSpec

if TYPE_CHECKING:
    import pandas as pd

    from gymforge.envs.lineflow.simpy_engine import LineSimulation


class StateHistory:
    """Rows of line state, one per step, written into a preallocated array."""

    def __init__(self, spec: LineSpec, max_steps: int) -> None:
        self.spec = spec
        self.slots = action_slots(spec)
        self._timed = [s.name for s in spec.stations if isinstance(s, TIMED_STATIONS)]
        self._pooled = [s.name for s in spec.stations if getattr(s, "worker_pool", None)]
        self._magazines = [
            s.name
            for s in spec.stations
            if isinstance(s, MagazineSpec) and not s.unlimited_carriers
        ]
        self.columns = [
            "time",
            "n_parts",
            "n_scrap_parts",
            *(f"{s.name}.mode" for s in spec.stations),
            *(f"{name}.processing_time" for name in self._timed),
            *(f"{name}.n_workers" for name in self._pooled),
            *(f"{name}.stored" for name in self._magazines),
            *(slot.name for slot in self.slots),
            *(f"{b.name}.fill" for b in spec.buffers),
        ]
        self._data = np.full((max_steps + 1, len(self.columns)), np.nan)
        self._rows = 0

    def clear(self) -> None:
        self._rows = 0

    def record(self, sim: LineSimulation, action: np.ndarray | None) -> None:
        """Append the state of ``sim`` after ``action`` (None at reset)."""
        row = self._data[self._rows]
        row[0], row[1], row[2] = sim.now, sim.n_parts, sim.n_scrap
        i = 3
        for station in sim.stations.values():
            row[i] = station.mode
            i += 1
        for name in self._timed:
            row[i] = sim.stations[name].last_processing_time
            i += 1
        for name in self._pooled:
            row[i] = sim.stations[name].n_workers
            i += 1
        for name in self._magazines:
            row[i] = sim.stations[name].n_stored
            i += 1
        n = len(self.slots)
        row[i : i + n] = np.nan if action is None else action
        i += n
        for buffer in sim.buffers.values():
            row[i] = buffer.fill
            i += 1
        self._rows += 1

    @property
    def values(self) -> np.ndarray:
        """The recorded rows as a float array (categories as codes), shape ``(steps + 1, columns)``."""
        return self._data[: self._rows]

    def to_frame(self) -> pd.DataFrame:
        """The recorded rows as a DataFrame, with categories as labelled ``Categorical`` columns."""
        pd = require("pandas", "LineFlow's state history as a DataFrame")

        frame = pd.DataFrame(self.values, columns=self.columns)
        for count in ("n_parts", "n_scrap_parts"):
            frame[count] = frame[count].astype(np.int64)
        for station in self.spec.stations:
            frame[f"{station.name}.mode"] = _categorical(frame[f"{station.name}.mode"], MODES)
        for slot in self.slots:
            frame[slot.name] = _categorical(frame[slot.name], slot.labels)
        return frame


def _categorical(codes: Any, labels: tuple[str, ...]) -> Any:
    pd = require("pandas", "LineFlow's state history as a DataFrame")

    values = codes.to_numpy()
    known = ~np.isnan(values)
    integer = np.where(known, values, -1).astype(np.int64)
    return pd.Categorical.from_codes(integer, categories=list(labels))
