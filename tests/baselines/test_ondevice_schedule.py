"""The on-device trainer's learning-rate schedule.

The schedule anneals linearly over the run from the share of steps done *before* each rollout,
as cleanrl does: the first update takes the full rate and the last one ``lr / updates``. Reading
the share after the rollout had the first update already annealed and the last one at rate 0,
so every run threw its last rollout away.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gymforge.baselines.ondevice import run as ondevice_run
from gymforge.baselines.training.runs import TrainRequest

LR = 0.002


def _learning_rates(tmp_path: Path, steps: int, resume: Path | None = None) -> list[float]:
    """The rate each update of a tiny Probe-Match run used, in order."""
    request = TrainRequest(
        env_id=None if resume else "Probe-Match-v0",
        algo=None if resume else "ppo",
        steps=steps,
        out=None if resume else tmp_path / "run",
        n_envs=None if resume else 4,
        overrides=None if resume else {
            "eval": {"every": 0},
            "checkpoint_every": 32,
            "algos": {"ppo": {"n_steps": 4, "n_epochs": 1, "n_minibatches": 1, "learning_rate": LR}},
        },
        resume=resume,
    )  # fmt: skip
    plan = ondevice_run.resolve(request, "cpu", 1, None)
    session = ondevice_run.build(plan, tensorboard=False, progress_bar=False)
    trainer = session.trainer
    rates: list[float] = []
    update = trainer.update

    def recording_update(progress: float = 0.0) -> dict[str, Any]:
        stats = update(progress)
        rates.append(trainer.optimizer.param_groups[0]["lr"])
        return stats

    trainer.update = recording_update  # type: ignore[method-assign]
    ondevice_run.loop(plan, session, log=lambda message: None)
    return rates


def test_lr_anneals_from_the_full_rate_and_the_last_update_still_learns(tmp_path):
    rates = _learning_rates(tmp_path, 64)  # 4 rollouts of 4 steps x 4 instances
    assert rates == pytest.approx([LR, 0.75 * LR, 0.5 * LR, 0.25 * LR])
    assert min(rates) > 0


def test_a_resumed_run_continues_the_schedule_where_it_stopped(tmp_path):
    first = _learning_rates(tmp_path, 32)
    assert first == pytest.approx([LR, 0.5 * LR])
    resumed = _learning_rates(tmp_path, 64, resume=tmp_path / "run")
    assert resumed == pytest.approx([0.5 * LR, 0.25 * LR])
