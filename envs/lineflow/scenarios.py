"""The benchmark lines, each built once as a ``LineSpec`` with the reference's parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gymforge.envs.lineflow.builder import LineBuilder
from gymforge.envs.lineflow.spec import LineSpec


def waiting_time(
    processing_time_source: float = 5.0,
    transition_time: float = 5.0,
    assembly_condition: float = 35.0,
    scrap_factor: float = 1.0,
) -> LineSpec:
    """WaitingTime (WT): a component source feeds an assembly whose parts expire.

    ``S_main`` (no processing time, unlimited carriers) feeds ``Assembly`` (T = 20); the actionable
    source ``S_component`` (T = ``processing_time_source``, waiting time in steps of 1) supplies one
    component per carrier, which must reach the assembly within ``assembly_condition`` time units
    of its creation or it is scrapped (5 time units lost). ``Sink`` counts finished parts.

    Too short a waiting time floods the component buffer and parts expire; too long starves the
    assembly. The reference optimum is ``(1.1·20 + 3.1) − (1.1·T_S + 1.1) = 18.5`` (≈ 160 parts).
    """
    line = LineBuilder("waiting_time", scrap_factor=scrap_factor)
    line.source(
        "S_main",
        processing_time=0.0,
        carrier_capacity=2,
        actionable_waiting_time=False,
        unlimited_carriers=True,
    )
    line.source(
        "S_component",
        processing_time=processing_time_source,
        waiting_time=0.0,
        waiting_time_step=1.0,
        carrier_capacity=1,
        carrier_specs={
            "carrier": {"Part": {"Assembly": {"assembly_condition": assembly_condition}}}
        },
        unlimited_carriers=True,
        actionable_waiting_time=True,
    )
    line.assembly("Assembly", processing_time=20.0, nok_part_error_time=5.0)
    line.sink("Sink", processing_time=0.0)
    line.connect(
        "S_component", "Assembly", kind="component", capacity=3, transition_time=transition_time
    )
    line.connect("S_main", "Assembly", capacity=2, transition_time=2.0)
    line.connect("Assembly", "Sink", capacity=2, transition_time=2.0)
    return line.build()


SCENARIOS: dict[str, Callable[..., LineSpec]] = {
    "waiting_time": waiting_time,
}


def make_scenario(name: str, **kwargs: Any) -> LineSpec:
    """Build scenario ``name`` with keyword overrides; unknown names raise ``ValueError``."""
    if name not in SCENARIOS:
        raise ValueError(f"scenario must be one of {sorted(SCENARIOS)}, got {name!r}")
    return SCENARIOS[name](**kwargs)
