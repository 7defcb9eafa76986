"""What ``batched.py`` measures and how it builds it: the constants, the scenarios, the
settings and result records, and the constructors of each system's vector env.

Kept apart from the measuring code so that every other piece of the benchmark shares one
definition of a scenario and a configuration.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

import gymforge  # noqa: F401  (registers the LineFlow ids with Gymnasium)
from benchmarks.lineflow.scenarios import SCENARIOS as ANCHOR_SCENARIOS
from benchmarks.lineflow.scenarios import Scenario

TORCH = "torch"
TORCH_WORKERS = "torch-workers"  # the torch engine split over worker processes (num_workers)
SYNC = "simpy-sync"
LINEFLOW = "lineflow-rl"
SYSTEM_ORDER = (LINEFLOW, SYNC, TORCH, TORCH_WORKERS)

DEFAULT_BATCH_SIZES = (1, 64, 1024, 4096, 16384)
SYNC_BATCH_SIZES = (1, 64)
MULTI_THREAD_MIN_BATCH = 1024  # the second thread setting is measured from this B on
DEFAULT_THREADS = (1, 2)
DEFAULT_WORKERS = 2  # worker processes of the torch-workers system (1 thread each)
TARGET_BATCH = 4096
MEMORY_SMALL_BATCH = 64
MEMORY_STEPS = 3
ANCHOR_HORIZON = 4000
ANCHOR_WARM_UP_STEPS = 200
CALIBRATION_MIN_S = 0.3
CANARY_OPS = 40  # the thread-contention canary: this many parallel adds ...
CANARY_ELEMENTS = 1 << 18  # ... of float64 tensors this long (above torch's grain size)
CONTENTION_RATIO = 3.0  # canary time with N threads / with 1 thread above which N is skipped
BASE_SEED = 1000
WARM_SEED = 7
PROFILE_SCENARIO = "WA3"
PROFILE_BATCH = 4096
CPROFILE_STEPS = 10
STRUCTURE_STEPS = 5
TOP_OPS = 15
VERSIONED_PACKAGES = ("gymforge", "lineflow-rl", "numpy", "torch", "simpy", "gymnasium")
REPO_ROOT = Path(__file__).resolve().parents[2]


#: throughput target of each line the batched benchmark measures (None: measured, no target)
TARGETS = {"WT": 1_000_000.0, "WA3": 200_000.0, "CL3": 200_000.0, "PD5": None}
SCENARIOS: dict[str, Scenario] = {
    key: replace(ANCHOR_SCENARIOS[key], target=target) for key, target in TARGETS.items()
}


@dataclass
class Settings:
    """What the command line chose."""

    device: str
    batch_sizes: list[int]
    threads: list[int]
    workers: int  # torch-workers processes (1: not measured)
    repeats: int
    target_seconds: float
    cap_seconds: float
    warm_up: str  # "tiled" or "own"
    warm_up_steps: int
    warm_up_batch: int
    action_batches: int
    anchor: bool
    sync: bool
    profile_steps: int  # 0: no profile


@dataclass
class Measurement:
    """One timed run of one configuration."""

    scenario: str
    system: str
    batch: int
    threads: int
    round: int
    vector_steps: int
    env_steps: int
    seconds: float
    env_steps_per_s: float | None  # None: skipped
    capped: bool
    skipped: str | None = None  # why the measurement was not taken
    thread_canary_ratio: float | None = None  # multi-thread configs: canary time N / 1 thread
    episode_step_start: int | None = None  # torch: the episode step the timing started at
    event_rounds_per_step: float | None = None
    sweeps_per_step: float | None = None
    workers: int = 1  # processes the batch is split over (torch-workers)


# --------------------------------------------------------------------------------------------
# Small helpers


def tensor_bytes(value: Any) -> int:
    """Bytes held by the tensors among the fields of a dataclass (or ``vars``) ``value``."""
    items = (
        [getattr(value, f.name) for f in dataclasses.fields(value)]
        if dataclasses.is_dataclass(value)
        else list(vars(value).values())
    )
    return sum(t.element_size() * t.nelement() for t in items if isinstance(t, torch.Tensor))


def field_bytes(value: Any) -> dict[str, int]:
    """Bytes of every tensor field of the dataclass ``value``."""
    if not dataclasses.is_dataclass(value):
        return {}
    out = {}
    for f in dataclasses.fields(value):
        tensor = getattr(value, f.name)
        if isinstance(tensor, torch.Tensor):
            out[f.name] = tensor.element_size() * tensor.nelement()
    return out


def synchronize(device: str) -> None:
    """Wait for queued kernels on a CUDA ``device``; nothing on the CPU."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()


# --------------------------------------------------------------------------------------------
# Building the systems


def make_torch(scenario: Scenario, batch: int, device: str, workers: int = 1) -> Any:
    """The torch engine's vector env of ``batch`` instances on ``device``, split over ``workers``
    processes when more than one."""
    return gym.make_vec(
        scenario.gym_id,
        num_envs=batch,
        vectorization_mode="vector_entry_point",
        device=device,
        num_workers=workers,
    )


def make_sync(scenario: Scenario, batch: int) -> Any:
    """The SimPy engine under Gymnasium's ``SyncVectorEnv``."""
    return gym.make_vec(scenario.gym_id, num_envs=batch, vectorization_mode="sync")


def make_anchor(anchor: Any, scenario: Scenario) -> Any:
    """lineflow-rl's ``LineSimulation`` of ``scenario`` with a 4000-step episode."""
    line_simulation, examples = anchor
    line = getattr(examples, scenario.lineflow_class)(**scenario.lineflow_kwargs)
    # simulation_end = H + 1 gives exactly H steps (its reset consumes one time unit)
    return line_simulation(line, simulation_end=ANCHOR_HORIZON + 1)


class EngineCounter:
    """Counts the torch engine's event rounds and settle sweeps by wrapping two methods of one
    ``Engine`` instance (``next_event`` and ``_sweep``); inert when they do not exist.

    With ``track_active`` set (the profile only: it costs one reduction per sweep), it also sums
    the share of instances each sweep's ``active`` mask selects.
    """

    def __init__(self, env: Any) -> None:
        self.events = 0
        self.sweeps = 0
        self.active = False
        self.track_active = False
        self.active_share_sum = 0.0
        self.active_share_count = 0
        engine = getattr(env.unwrapped, "engine", None)
        next_event = getattr(engine, "next_event", None)
        sweep = getattr(engine, "_sweep", None)
        if not (callable(next_event) and callable(sweep)):
            return

        def counted_next_event(*args: Any, **kwargs: Any) -> Any:
            self.events += 1
            return next_event(*args, **kwargs)

        def counted_sweep(*args: Any, **kwargs: Any) -> Any:
            self.sweeps += 1
            if self.track_active:
                mask = kwargs.get("active", args[1] if len(args) > 1 else None)
                if isinstance(mask, torch.Tensor) and mask.dtype == torch.bool:
                    self.active_share_sum += float(mask.float().mean())
                    self.active_share_count += 1
            return sweep(*args, **kwargs)

        engine.next_event = counted_next_event
        engine._sweep = counted_sweep
        self.active = True

    def snapshot(self) -> tuple[int, int]:
        """Current (next_event calls, sweeps)."""
        return self.events, self.sweeps


def episode_step(env: Any) -> int | None:
    """The torch env's step count within the current episode (instance 0), if exposed."""
    steps = getattr(env.unwrapped, "_steps", None)
    return int(steps[0]) if isinstance(steps, torch.Tensor) and steps.numel() else None


# --------------------------------------------------------------------------------------------
# Configurations and their measurement


@dataclass
class Config:
    """One system at one batch size and thread count on one scenario, with its live env."""

    scenario: str
    system: str
    batch: int
    threads: int
    env: Any
    actions: list[Any]
    counter: EngineCounter | None = None
    workers: int = 1  # processes the batch is split over (torch-workers)
    steps: int = 1  # vector steps per measurement (from the calibration)
    calibration_s_per_step: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return (
            f"{self.scenario} {self.system} B={self.batch} threads={self.threads} "
            f"workers={self.workers}"
        )
