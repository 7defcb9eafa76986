"""SB3 callbacks of ``gymforge train``: scrap-factor curriculum, held-out evaluation, checkpoints."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from gymforge.baselines.sb3.agent import SB3Agent
from gymforge.baselines.training.checkpoints import Schedule
from gymforge.baselines.training.config import Curriculum
from gymforge.baselines.training.evaluation import run_episodes, summarize
from gymforge.baselines.training.seeds import eval_seeds


class ScrapFactorCurriculum(BaseCallback):
    """LineFlow's scrap-factor curriculum (upstream ``CurriculumLearningCallback``).

    Training starts with the scrap factor at ``curriculum.start`` (or at ``factor`` when a run
    resumes). After each rollout, if the last ``look_back`` finished training episodes returned
    ``threshold`` or more on average, the factor grows by ``update`` (at most ``factor_max``) and
    the window is emptied, so the next raise needs ``look_back`` episodes at the new factor.
    The envs receive it through ``env_method("set_scrap_factor", f)``.
    """

    def __init__(self, curriculum: Curriculum, factor: float | None = None) -> None:
        super().__init__()
        self.curriculum = curriculum
        self.factor = curriculum.start if factor is None else float(factor)
        self._window: list[float] = []

    def _apply(self) -> None:
        self.training_env.env_method("set_scrap_factor", self.factor)
        self.logger.record("curriculum/scrap_factor", self.factor)

    def _on_training_start(self) -> None:
        self._apply()

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", []):
            episode = info.get("episode")
            if episode is not None:
                self._window.append(float(episode["r"]))
        return True

    def _on_rollout_end(self) -> None:
        c = self.curriculum
        recent = self._window[-c.look_back :]
        ready = len(recent) >= c.look_back and np.mean(recent) >= c.threshold
        if ready and self.factor < c.factor_max:
            self.factor = min(self.factor + c.update, c.factor_max)
            self._window = []
            self._apply()
        self.logger.record("curriculum/scrap_factor", self.factor)


class PeriodicEvaluation(BaseCallback):
    """Every ``every`` steps, run the current policy deterministically on held-out seeds.

    The seeds are ``EVAL_SEED_BASE + k`` (disjoint from every training seed); results are logged
    as ``eval/mean_return`` and appended to :attr:`history`, and ``on_result(history)`` is called
    (the trainer writes ``evaluations.json``).
    """

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any],
        every: int,
        episodes: int,
        frame_stack: int,
        recurrent: bool,
        history: list[dict[str, Any]],
        on_result: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> None:
        super().__init__()
        self.env_id = env_id
        self.env_kwargs = env_kwargs
        self.every = every
        self.episodes = episodes
        self.frame_stack = frame_stack
        self.recurrent = recurrent
        self.history = history
        self.on_result = on_result
        self._schedule = Schedule(every, None)

    def _on_training_start(self) -> None:
        self._schedule = Schedule.after(self.model.num_timesteps, self.every)

    def evaluate(self) -> dict[str, Any]:
        agent = SB3Agent(self.model, self.frame_stack, self.recurrent)
        episodes = run_episodes(agent, self.env_id, self.env_kwargs, eval_seeds(self.episodes))
        row = {"timesteps": int(self.model.num_timesteps), **summarize(episodes)}
        row["episodes"] = episodes
        return row

    def _on_step(self) -> bool:
        if self._schedule.due(self.model.num_timesteps):
            row = self.evaluate()
            self.history.append(row)
            self.logger.record("eval/mean_return", row["mean_return"])
            self.logger.record("eval/std_return", row["std_return"])
            if self.on_result is not None:
                self.on_result(self.history)
        return True


class Checkpoints(BaseCallback):
    """Every ``every`` steps, call ``save(folder_name)`` for a resumable checkpoint."""

    def __init__(self, every: int, save: Callable[[], Path]) -> None:
        super().__init__()
        self.every = every
        self.save = save
        self._schedule = Schedule(every, None)

    def _on_training_start(self) -> None:
        self._schedule = Schedule.after(self.model.num_timesteps, self.every)

    def _on_step(self) -> bool:
        if self._schedule.due(self.model.num_timesteps):
            self.save()
        return True
