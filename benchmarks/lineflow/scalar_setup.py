"""What ``scalar.py`` measures: the constants and targets, the scenarios, the records of a
system and an episode, and the factories of the two systems (gymforge and lineflow-rl).

One definition shared by the measuring, summarising and reporting modules.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks.lineflow.scenarios import Scenario

SHORT_HORIZON = 4000
LONG_HORIZON = 40_000
CHUNK = 1000  # steps between two clock readings within an episode
EXTRA_ACTIONS = 10  # pre-sampled beyond the expected episode length, as a safety margin
WARM_UP_STEPS = 200
BASE_SEED = 1000
MEMORY_RUNS = 3
MEMORY_SEED = BASE_SEED
GYMFORGE = "gymforge"
LINEFLOW = "lineflow-rl"
VERSIONED_PACKAGES = ("gymforge", "lineflow-rl", "numpy", "torch", "simpy", "gymnasium", "pygame")
REPO_ROOT = Path(__file__).resolve().parents[2]

SPEED_TARGET = 5.0  # gymforge / lineflow-rl steps/s at the short horizon, at least
HORIZON_TARGET = 0.8  # gymforge steps/s at the long horizon / at the short one, at least
MEMORY_TARGET = 0.5  # gymforge / lineflow-rl peak RSS, at most

StepFn = Callable[[Any], tuple[Any, Any, bool, bool, Any]]


@dataclass
class System:
    """One system under test on one scenario: how to build its env for a horizon (in steps)."""

    name: str
    scenario: str
    make: Callable[[int], Any]
    description: str
    envs: dict[int, Any] = field(default_factory=dict)

    def env(self, horizon: int) -> Any:
        """The env of ``horizon`` steps, built once and reused across episodes."""
        if horizon not in self.envs:
            self.envs[horizon] = self.make(horizon)
        return self.envs[horizon]

    def close(self) -> None:
        """Close and drop every env built so far."""
        for env in self.envs.values():
            with contextlib.suppress(Exception):
                env.close()
        self.envs.clear()


@dataclass
class Episode:
    """Timings of one episode of one system."""

    scenario: str
    system: str
    horizon: int
    phase: str  # "speed" (target 1), "long" (40k) or "paired" (4k, within the long episode)
    seed: int
    steps: int
    reset_s: float
    step_s: float
    steps_per_s: float
    chunk_steps_per_s: list[float]  # rate of each consecutive block of CHUNK steps (last partial)
    first_1000_steps_per_s: float
    last_1000_steps_per_s: float
    first_tenth_steps_per_s: float  # first / last tenth of the episode (whole CHUNKs, >= 1)
    last_tenth_steps_per_s: float


# --------------------------------------------------------------------------------------------
# Systems


def gymforge_factory(scenario: Scenario) -> Callable[[int], gym.Env]:
    """``horizon -> env`` for gymforge's ``scenario`` (step size 1), as users get it."""

    def make(horizon: int) -> gym.Env:
        if horizon == SHORT_HORIZON:
            return gym.make(scenario.gym_id)  # the default horizon
        return gym.make(scenario.gym_id, horizon=horizon)

    return make


def lineflow_factory(anchor: Any, scenario: Scenario) -> Callable[[int], Any]:
    """``horizon -> env`` for lineflow-rl's equivalent of ``scenario``."""
    line_simulation, examples = anchor
    line_class = getattr(examples, scenario.lineflow_class)

    def make(horizon: int) -> Any:
        # simulation_end = horizon + 1 gives exactly `horizon` steps (reset consumes one).
        return line_simulation(line_class(**scenario.lineflow_kwargs), simulation_end=horizon + 1)

    return make


def build_systems(scenario: Scenario, anchor: Any) -> list[System]:
    """The systems to measure on ``scenario``, gymforge first (the anchor only if imported)."""
    systems = [
        System(
            GYMFORGE,
            scenario.key,
            gymforge_factory(scenario),
            f'gym.make("{scenario.gym_id}"[, horizon=H])',
        )
    ]
    if anchor is not None:
        systems.append(
            System(
                LINEFLOW,
                scenario.key,
                lineflow_factory(anchor, scenario),
                f"LineSimulation({scenario.lineflow_text}, simulation_end=H + 1)",
            )
        )
    return systems
