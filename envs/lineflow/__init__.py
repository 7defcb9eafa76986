"""LineFlow: production-line simulation for RL control (SimPy engine, LineSpec, scenarios)."""

from gymforge.envs.lineflow.builder import LineBuilder
from gymforge.envs.lineflow.gym_env import LineFlowEnv
from gymforge.envs.lineflow.scenarios import SCENARIOS, make_scenario
from gymforge.envs.lineflow.spec import (
    AssemblySpec,
    BufferSpec,
    LineSpec,
    ProcessSpec,
    SinkSpec,
    SourceSpec,
)

__all__ = [
    "SCENARIOS",
    "AssemblySpec",
    "BufferSpec",
    "LineBuilder",
    "LineFlowEnv",
    "LineSpec",
    "ProcessSpec",
    "SinkSpec",
    "SourceSpec",
    "make_scenario",
]
