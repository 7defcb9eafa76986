"""The one table of every gymforge environment id.

Everything else — Gymnasium registration, the CLI, the conformance tests, the docs — enumerates
:data:`SPECS`; nothing keeps a hand-written list of ids.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

import gymnasium as gym

RANDOM_AGENT = "gymforge.agents.random_agent:RandomAgent"


@dataclass(frozen=True)
class Capabilities:
    """What an id supports; tests, docs and leaderboards read these flags.

    Attributes:
        multi_agent: a PettingZoo env (``parallel_entry_point``) rather than a ``gym.Env``.
        batched: has a torch ``vector_entry_point`` (``gym.make_vec``, thousands of instances).
        devices: torch devices the batched implementation runs on.
        offline_dataset: ships or collects an offline dataset.
        render_modes: render modes of the single env.
        deterministic: the same seed and actions give the same trajectory.
        same_engine: ``gym.make`` is the batch-of-one view of the ``make_vec`` dynamics, so a
            vector instance equals the scalar env sample by sample. False where the scalar env
            is an exact reference engine of its own (LineFlow's SimPy engine), which the vector
            engine matches in distribution.
    """

    multi_agent: bool = False
    batched: bool = False
    devices: tuple[str, ...] = ("cpu",)
    offline_dataset: bool = False
    render_modes: tuple[str, ...] = ()
    deterministic: bool = True
    same_engine: bool = True


@dataclass(frozen=True)
class EnvSpec:
    """One registered id.

    Attributes:
        id: the Gymnasium id, e.g. ``"LineFlow-v0"``.
        family: the family folder under ``envs/``.
        summary: one line for listings.
        entry_point: ``"module:Class"`` of the single-agent ``gym.Env``.
        vector_entry_point: ``"module:Class"`` of the batched ``TorchVectorEnv``, if any.
        parallel_entry_point: ``"module:Class"`` of the PettingZoo ``ParallelEnv``, if any.
        kwargs: default keyword arguments of the id (variants differ only here).
        capabilities: see :class:`Capabilities`.
        agents: reference agents by CLI name, as ``"module:factory"``; ``random`` is implied.
    """

    id: str
    family: str
    summary: str
    entry_point: str | None
    vector_entry_point: str | None = None
    parallel_entry_point: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    capabilities: Capabilities = field(default_factory=Capabilities)
    agents: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))
        agents = {} if self.capabilities.multi_agent else {"random": RANDOM_AGENT}
        agents.update(self.agents)
        object.__setattr__(self, "agents", MappingProxyType(agents))

    def make(self, **overrides: Any) -> gym.Env:
        """``gym.make`` of this id with keyword overrides."""
        return gym.make(self.id, **overrides)


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
        batched=False,
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
        vector_entry_point=_LINEFLOW_VEC_ENV if row.batched else None,
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
        vector_entry_point=_LINEFLOW_VEC_ENV,
        kwargs={"scenario": "waiting_time"},
        capabilities=_LINEFLOW_BATCHED,
        agents={"optimal": f"{_LINEFLOW_AGENTS}:OptimalWaitingTimeAgent"},
    ),
    *(_lineflow_spec(row) for row in _LINEFLOW_ROWS),
    EnvSpec(
        id="Probe-Match-v0",
        family="probe",
        summary="Probe env: name the shown target; exercises termination, truncation, autoreset",
        entry_point="gymforge.envs.probe.gym_env:ProbeEnv",
        vector_entry_point="gymforge.envs.probe.gym_env:ProbeVecEnv",
        capabilities=Capabilities(batched=True, devices=("cpu", "cuda")),
    ),
)


def all_specs() -> tuple[EnvSpec, ...]:
    return SPECS


def get_spec(env_id: str) -> EnvSpec:
    """The spec of ``env_id``; unknown ids raise ``ValueError`` listing the registered ones."""
    for spec in SPECS:
        if spec.id == env_id:
            return spec
    raise ValueError(f"unknown env id {env_id!r}; registered: {[s.id for s in SPECS]}")


def load_entry_point(entry_point: str) -> Any:
    """Import ``"module:attribute"``."""
    module_name, _, attribute = entry_point.partition(":")
    if not attribute:
        raise ValueError(f"entry point must look like 'module:attribute', got {entry_point!r}")
    return getattr(importlib.import_module(module_name), attribute)


def register_all() -> None:
    """Register every single-agent id with Gymnasium (idempotent)."""
    for spec in SPECS:
        if spec.capabilities.multi_agent or spec.id in gym.registry:
            continue
        gym.register(
            id=spec.id,
            entry_point=spec.entry_point,
            vector_entry_point=spec.vector_entry_point,
            kwargs=dict(spec.kwargs),
            disable_env_checker=False,
        )
