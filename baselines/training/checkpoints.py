"""Checkpoint folders and the step schedules of periodic work, shared by both backends.

A checkpoint is ``OUT/checkpoints/step_N/``, filled in a temporary folder beside it and renamed
into place, so a killed run leaves complete checkpoints only. Evaluations and checkpoints fall
due every ``every`` steps counted from the run's start: a resumed run continues the same grid,
and a check that lands past several due steps (a rollout longer than ``every``) does the work
once.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CHECKPOINTS_DIR = "checkpoints"


def checkpoint_folders(run: Path, names: tuple[str, ...]) -> list[Path]:
    """The run's checkpoint folders that hold every file of ``names``, newest (by step) first."""
    found = []
    for folder in (run / CHECKPOINTS_DIR).glob("step_*"):
        if all((folder / name).is_file() for name in names):
            try:
                found.append((int(folder.name.removeprefix("step_")), folder))
            except ValueError:
                continue
    return [folder for _, folder in sorted(found, reverse=True)]


def write_checkpoint(out: Path, step: int, fill: Callable[[Path], None]) -> Path:
    """``OUT/checkpoints/step_<step>``, written by ``fill(folder)`` into a temporary folder and
    renamed into place (replacing an older one of the same step)."""
    folder = out / CHECKPOINTS_DIR / f"step_{step}"
    tmp = out / CHECKPOINTS_DIR / f".step_{step}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    fill(tmp)
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    return folder


@dataclass
class Schedule:
    """Work due every ``every`` steps (``every`` 0: never); ``next`` is the next due step."""

    every: int
    next: int | None

    @classmethod
    def after(cls, done_steps: int, every: int) -> Schedule:
        """The schedule of a run that has trained ``done_steps`` steps so far."""
        return cls(every, (done_steps // every + 1) * every if every else None)

    def due(self, step: int) -> bool:
        """Whether the work is due at ``step``; when it is, the schedule moves past ``step``."""
        if self.next is None or step < self.next:
            return False
        while self.next <= step:
            self.next += self.every
        return True
