"""Run folders of both backends: where a run goes, whether it may go there, what it records.

A run folder ``OUT`` holds ``config.json`` (what the run was, written last), the backend's model
file, ``evaluations.json`` and ``checkpoints/step_N/``; every file is written to a temporary
name and renamed, so a killed run leaves a complete artifact or none. A fresh run refuses a
folder that already holds one (``--resume`` continues it instead); a resumed run writes into
the run the checkpoint belongs to, must name the same env id and algorithm (or none), and must
ask for more steps than were trained.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import gymnasium as gym
import torch

from gymforge.baselines.training.checkpoints import CHECKPOINTS_DIR
from gymforge.baselines.training.config import TrainConfig
from gymforge.baselines.training.seeds import seeds_record
from gymforge.core.outputs import check_writable

CONFIG_FILE = "config.json"
EVALUATIONS_FILE = "evaluations.json"


@dataclass(kw_only=True)
class RunPlan:
    """What both trainers resolve a request into: what to train, for how long, where, and from
    which run it continues. Each backend's plan adds its own settings."""

    env_id: str
    algo: str
    seed: int
    steps: int
    cfg: TrainConfig
    out: Path
    done_steps: int
    source: Path | None = None
    previous: dict[str, Any] | None = None
    command: list[str] | None = None
    #: ``time.perf_counter()`` when the request was resolved (the run's wall time starts here)
    started: float = field(default_factory=time.perf_counter)


@dataclass(frozen=True, kw_only=True)
class TrainRequest:
    """What a user asks either trainer for (the command line's flags), before any check."""

    env_id: str | None
    algo: str | None
    steps: int
    seed: int = 0
    out: str | Path | None = None
    n_envs: int | None = None
    config_file: str | Path | None = None
    overrides: dict[str, Any] | None = None
    resume: str | Path | None = None
    command: list[str] | None = None


@dataclass(kw_only=True)
class Origin:
    """Where a run starts: a fresh request's env id, algorithm, seed and config, or the resumed
    run's (with its folder, ``config.json`` and the backend's trainer state)."""

    env_id: str
    algo: str
    seed: int
    cfg: TrainConfig
    source: Path | None = None
    previous: dict[str, Any] | None = None
    state: Any = None

    @property
    def done_steps(self) -> int:
        return int(self.previous["steps"]) if self.previous else 0


def fresh_or_resumed(
    request: TrainRequest,
    locate: Callable[[Path], tuple[Path, dict[str, Any], Any]],
    load: Callable[[str], TrainConfig],
    from_record: Callable[[dict[str, Any], tuple[str, ...]], TrainConfig],
) -> Origin:
    """A resumed run takes its run's env id, algorithm, seed and config (``from_record`` of its
    ``config.json``); a fresh one needs an env id and algorithm and loads its config with
    ``load(env_id)``."""
    if request.resume is not None:
        source, previous, state = resumed_run(
            request.resume, locate, request.env_id, request.algo, request.steps
        )
        cfg = from_record(previous["train_config"], (str(source / CONFIG_FILE),))
        return Origin(
            env_id=previous["env_id"], algo=previous["algo"], seed=int(previous["seed"]),
            cfg=cfg, source=source, previous=previous, state=state,
        )  # fmt: skip
    if request.env_id is None or request.algo is None:
        raise ValueError("env_id and algo are required unless resuming")
    return Origin(
        env_id=request.env_id, algo=request.algo, seed=request.seed, cfg=load(request.env_id)
    )


@dataclass
class TrainResult:
    """What a backend's ``train`` produced (training speed and timings: on-device runs)."""

    out: Path
    steps: int
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    steps_per_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temporary file in the same folder, then rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)


def check_count(name: str, value: Any) -> int:
    """``value`` when it is an int >= 1 (``steps``, ``n_envs``); ``ValueError`` naming it else."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    return value


def run_root(folder: Path) -> Path:
    """The run a folder belongs to (a checkpoint's run, or the folder itself)."""
    return folder.parent.parent if folder.parent.name == CHECKPOINTS_DIR else folder


def resumed_run(
    resume: str | Path,
    locate: Callable[[Path], tuple[Path, dict[str, Any], Any]],
    env_id: str | None,
    algo: str | None,
    steps: int,
) -> tuple[Path, dict[str, Any], Any]:
    """What ``locate(path)`` finds under ``--resume``: the artifact folder, its ``config.json``
    and the backend's trainer state (or ``None``), checked against the env id and algorithm
    asked for and the step count."""
    resume = Path(resume)
    if not resume.exists():
        raise ValueError(f"--resume: {resume} does not exist")
    source, previous, state = locate(resume)
    for name, key, given in (("env id", "env_id", env_id), ("algo", "algo", algo)):
        if given is not None and given != previous[key]:
            raise ValueError(
                f"--resume: the run at {source} trained {name} {previous[key]!r}, not {given!r}"
            )
    if steps <= previous["steps"]:
        raise ValueError(
            f"steps must exceed the {previous['steps']} steps already trained at {source}, "
            f"got {steps}"
        )
    return source, previous, state


def run_folder(out: str | Path | None, source: Path | None, default: Path) -> Path:
    """Where a run writes: ``out``, else the resumed run's folder, else ``default``. A fresh
    run refuses a folder holding a run; the folder must be writable."""
    if out is None:
        out = run_root(source) if source is not None else default
    out = Path(out)
    if source is None and (out / CONFIG_FILE).exists():
        raise ValueError(f"{out} already holds a run; pass --resume {out} or another --out")
    check_writable(out, "--out")
    return out


def previous_evaluations(out: Path, resuming: bool, done_steps: int) -> list[dict[str, Any]]:
    """A resumed run's evaluations up to the step it resumes from (none for a fresh run)."""
    if not resuming or not (out / EVALUATIONS_FILE).is_file():
        return []
    old = json.loads((out / EVALUATIONS_FILE).read_text())["evaluations"]
    return [row for row in old if row["timesteps"] <= done_steps]


def write_evaluations(out: Path, header: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """``evaluations.json``: the run's ``header`` (env id, algo, seed, ...) and its rows."""
    write_json(out / EVALUATIONS_FILE, {**header, "evaluations": rows})


def run_record(
    *,
    algo: str,
    env_id: str,
    cfg: TrainConfig,
    seed: int,
    steps: int,
    target_steps: int,
    n_envs: int,
    scrap_factor: float | None,
    seed_unit: str,
    command: list[str] | None,
    source: Path | None,
) -> dict[str, Any]:
    """The ``config.json`` entries both backends write (each adds its own)."""
    return {
        "algo": algo,
        "env_id": env_id,
        "env_kwargs": cfg.env_kwargs,
        "frame_stack": cfg.frame_stack,
        "seed": seed,
        "steps": int(steps),
        "target_steps": int(target_steps),
        "n_envs": n_envs,
        "train_config": cfg.to_json(),
        "config_sources": list(cfg.sources),
        "curriculum_state": None if scrap_factor is None else {"scrap_factor": scrap_factor},
        "seeds": seeds_record(seed_unit),
        "command": command,
        "resumed_from": str(source) if source is not None else None,
        "versions": {
            "torch": torch.__version__,
            "gymnasium": gym.__version__,
            "python": platform.python_version(),
        },
        "saved_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
