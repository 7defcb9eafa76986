"""The observation and action layout of a line, derived once from its ``LineSpec``.

Both engines fill the same layout, so an agent sees identical features whichever engine runs.
Every observation feature is normalised to [0, 1]:

| Feature | Per | Value |
|---|---|---|
| ``<station>.mode=working/waiting/failing`` | station | one-hot of the station's current mode |
| ``<source>.waiting_time`` | actionable source | current waiting time ÷ largest choice |
| ``<source>.carrier_type=<type>`` | source with > 1 carrier type | one-hot of the type being emitted |
| ``<station>.processing_time`` | process, assembly | last sampled processing time ÷ (4 × nominal), clipped to 1 |
| ``<assembly>.scrap`` | assembly | component carriers scrapped during the last step, clipped to 1 |
| ``<buffer>.fill`` | buffer | carriers on the buffer ÷ capacity |
| ``time`` | line | simulation time ÷ horizon |

Actions: one discrete choice per actionable source, in station order: index ``k`` sets the
waiting time to ``k · waiting_time_step``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gymforge.envs.lineflow.spec import AssemblySpec, LineSpec, ProcessSpec, SourceSpec

MODE_NAMES = ("working", "waiting", "failing")
PROCESSING_TIME_SCALE = 4.0


@dataclass(frozen=True)
class Feature:
    """One observation feature: its name, unit and what it means."""

    name: str
    unit: str
    description: str


def observation_features(spec: LineSpec) -> list[Feature]:
    """The observation features of ``spec``, in observation order."""
    features: list[Feature] = []
    for station in spec.stations:
        for mode in MODE_NAMES:
            features.append(
                Feature(f"{station.name}.mode={mode}", "one-hot", f"{station.name} is {mode}")
            )
        if isinstance(station, SourceSpec):
            if station.actionable_waiting_time:
                largest = (station.waiting_time_choices - 1) * station.waiting_time_step
                features.append(
                    Feature(
                        f"{station.name}.waiting_time", f"÷ {largest:g}", "current waiting time"
                    )
                )
            if len(station.carrier_specs) > 1:
                for kind in station.carrier_specs:
                    features.append(
                        Feature(
                            f"{station.name}.carrier_type={kind}", "one-hot", f"emitting {kind!r}"
                        )
                    )
        if isinstance(station, (ProcessSpec, AssemblySpec)):
            scale = PROCESSING_TIME_SCALE * station.processing_time
            features.append(
                Feature(
                    f"{station.name}.processing_time",
                    f"÷ {scale:g}, clipped",
                    "last processing time",
                )
            )
        if isinstance(station, AssemblySpec):
            features.append(
                Feature(
                    f"{station.name}.scrap", "count, clipped to 1", "scrapped during the last step"
                )
            )
    for buffer in spec.buffers:
        features.append(
            Feature(f"{buffer.name}.fill", f"÷ {buffer.capacity}", "carriers on the buffer")
        )
    features.append(Feature("time", "÷ horizon", "simulation time"))
    return features


def action_nvec(spec: LineSpec) -> np.ndarray:
    """Number of choices of each action (one per actionable source)."""
    return np.array([s.waiting_time_choices for s in spec.actionable_sources], dtype=np.int64)
