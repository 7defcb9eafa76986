"""The LineFlow lines the speed and memory benchmarks measure, each with its upstream twin.

One row per line: the gymforge id, the lineflow-rl class and keyword arguments that build the same
line upstream (the anchor), the constructor call as the reports print it, and, for the batched
benchmark, the throughput the torch engine must reach at its target batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Scenario:
    """One benchmarked line: its gymforge id and the equivalent lineflow-rl construction."""

    key: str
    gym_id: str
    lineflow_class: str  # a name in lineflow.examples
    lineflow_kwargs: dict[str, Any]
    lineflow_text: str  # the constructor call as written in the report
    target: float | None = None  # env steps/s of the torch engine at the target batch, at least


SCENARIOS: dict[str, Scenario] = {
    s.key: s
    for s in (
        Scenario("WT", "LineFlow-WaitingTime-v0", "WaitingTime", {}, "WaitingTime()"),
        Scenario(
            "WTJ",
            "LineFlow-WaitingTimeJump-v0",
            "WaitingTime",
            {"with_jump": True, "t_jump_max": 2000},
            "WaitingTime(with_jump=True, t_jump_max=2000)",
        ),
        Scenario(
            "PD5",
            "LineFlow-PartDistribution-v0",
            "MultiProcess",
            {"alternate": False, "n_processes": 5},
            "MultiProcess(alternate=False, n_processes=5)",
        ),
        Scenario(
            "WA3",
            "LineFlow-WorkerAssignment-v0",
            "WorkerAssignment",
            {"n_assemblies": 3},
            "WorkerAssignment(n_assemblies=3)",
        ),
        Scenario(
            "CL3",
            "LineFlow-ComplexLine-v0",
            "ComplexLine",
            {"n_assemblies": 3, "n_workers": 9, "scrap_factor": 1 / 3, "alternate": False},
            "ComplexLine(n_assemblies=3, n_workers=9, scrap_factor=1/3, alternate=False)",
        ),
    )
}
