"""LineFlow ids: ``LineFlow-v0`` (generic) and one id per scenario of :mod:`gymforge.envs.lineflow.scenarios`."""

from __future__ import annotations

from typing import Any, NamedTuple

from gymforge.spec import Capabilities, EnvSpec

ORDER = 0

_LINEFLOW_ENV = "gymforge.envs.lineflow.gym_env:LineFlowEnv"
_LINEFLOW_VEC_ENV = "gymforge.envs.lineflow.batched.vector_env:LineFlowVecEnv"
_LINEFLOW_AGENTS = "gymforge.agents.lineflow"
_LINEFLOW_BATCHED = Capabilities(
    batched=True, devices=("cpu", "cuda"), render_modes=("rgb_array", "human"), same_engine=False
)
_LINEFLOW_SCALAR_ONLY = Capabilities(render_modes=("rgb_array", "human"))


class _LineRow(NamedTuple):
    """One LineFlow id: ``LineFlow-<suffix>-v0`` running ``scenario`` with ``scenario_kwargs``."""

    suffix: str
    scenario: str
    scenario_kwargs: dict[str, Any]
    summary: str
    agents: dict[str, str]  # CLI name -> class in gymforge.agents.lineflow
    batched: bool = True  # the torch engine runs the line (tests check this against the engine)


_LINEFLOW_ROWS: tuple[_LineRow, ...] = (
    _LineRow(
        "WaitingTime",
        "waiting_time",
        {},
        "time a component source so parts neither starve nor expire",
        {"optimal": "OptimalWaitingTimeAgent"},
    ),
    _LineRow(
        "WaitingTimeJump",
        "waiting_time_jump",
        {},
        "WaitingTime with a seeded temporary assembly slowdown",
        {"heuristic": "LastObservationAgent"},
    ),
    _LineRow(
        "PartDistribution",
        "part_distribution",
        {"n_processes": 5},
        "route parts over k parallel processes (k=5)",
        {"greedy": "GreedyRoutingAgent", "optimal_share": "OptimalShareAgent"},
    ),
    _LineRow(
        "WorkerAssignment",
        "worker_assignment",
        {"n_assemblies": 3},
        "assign 3k workers to k assemblies (k=3)",
        {"best_partition": "BestPartitionAgent"},
    ),
    _LineRow(
        "ComplexLine",
        "complex_line",
        {"n_assemblies": 3},
        "workers, routing and source timing together (k=3)",
        {"heuristic": "ComplexLineHeuristicAgent"},
    ),
    _LineRow(
        "PartDependentProcess",
        "part_dependent_process",
        {},
        "carrier types with part-dependent times",
        {},
    ),
    _LineRow("SimpleLine", "simple_line", {}, "source, process, sink", {}),
    _LineRow(
        "MultiSink",
        "multi_sink",
        {},
        "one source routed to five sinks",
        {"greedy": "GreedyRoutingAgent"},
    ),
    _LineRow(
        "DoubleSource", "double_source", {}, "a fast and a slow source merging into one sink", {}
    ),
    _LineRow(
        "ComponentAssembly",
        "component_assembly",
        {},
        "closed carrier loop with assemblies and rework",
        {},
    ),
    _LineRow(
        "CarrierMagazine",
        "carrier_magazine",
        {},
        "the simplest closed carrier loop, actionable magazine",
        {},
    ),
)


def _lineflow_spec(row: _LineRow) -> EnvSpec:
    kwargs: dict[str, Any] = {"scenario": row.scenario}
    if row.scenario_kwargs:
        kwargs["scenario_kwargs"] = row.scenario_kwargs
    return EnvSpec(
        id=f"LineFlow-{row.suffix}-v0",
        family="lineflow",
        summary=f"LineFlow {row.suffix}: {row.summary}",
        entry_point=_LINEFLOW_ENV,
        vector_env=_LINEFLOW_VEC_ENV if row.batched else None,
        kwargs=kwargs,
        capabilities=_LINEFLOW_BATCHED if row.batched else _LINEFLOW_SCALAR_ONLY,
        agents={name: f"{_LINEFLOW_AGENTS}:{cls}" for name, cls in row.agents.items()},
    )


SPECS: tuple[EnvSpec, ...] = (
    EnvSpec(
        id="LineFlow-v0",
        family="lineflow",
        summary="Production line (exact SimPy engine); scenario= name or line= LineSpec",
        entry_point=_LINEFLOW_ENV,
        vector_env=_LINEFLOW_VEC_ENV,
        kwargs={"scenario": "waiting_time"},
        capabilities=_LINEFLOW_BATCHED,
        agents={"optimal": f"{_LINEFLOW_AGENTS}:OptimalWaitingTimeAgent"},
    ),
    *(_lineflow_spec(row) for row in _LINEFLOW_ROWS),
)
