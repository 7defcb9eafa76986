"""Offline Off-CMAB learners behind the agent protocol: ``fit(dataset)``, then ``act``.

``OfflineAgent(env, learner="clcb")`` learns one super arm from a logged dataset of the env's
instance and plays it every step (an offline learner does not adapt online). ``learner`` is one
of :data:`LEARNERS`: ``clcb`` (the reference) or one of the offline learners the paper compares
it with (``cucb_offline``, ``emp``, ``lfu``, ``lec``; same layer, same folder).

A dataset is bound to the instance it was logged on (its ``instance_params_hash``): once the
env's instance is chosen by ``reset``, ``fit`` and ``act`` refuse a dataset of another instance
with a ``ValueError`` naming both. An env not reset yet holds no chosen instance (the leaderboard
evaluator's agent copy), so it is not compared.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymforge.agents.cmab.clcb import clcb
from gymforge.agents.cmab.cucb_offline import cucb_offline
from gymforge.agents.cmab.emp import emp
from gymforge.agents.cmab.lec import lec
from gymforge.agents.cmab.lfu import lfu
from gymforge.envs.cmab.datasets import LoggedDataset, load_dataset
from gymforge.envs.cmab.problem import Params, params_hash, select_params


def _learners() -> dict[str, Callable[[LoggedDataset], torch.Tensor]]:
    return {"clcb": clcb, "cucb_offline": cucb_offline, "emp": emp, "lfu": lfu, "lec": lec}


LEARNERS = ("clcb", "cucb_offline", "emp", "lfu", "lec")


def super_arm_ids(arm: torch.Tensor) -> torch.Tensor:
    """Ids ``(k,)`` of a natural-form super arm with batch axis 1 (ranked ids, mask or path)."""
    if arm.dtype == torch.bool:
        return torch.nonzero(arm[0])[:, 0]
    return arm[0] if arm.dim() == 2 else arm


class OfflineAgent:
    """Plays the super arm an offline learner picks from a logged dataset."""

    def __init__(self, env: Any, learner: str = "clcb", **learner_kwargs: Any) -> None:
        if learner not in LEARNERS:
            raise ValueError(f"learner must be one of {LEARNERS}, got {learner!r}")
        unwrapped = getattr(env, "unwrapped", env)
        self.scalar = hasattr(unwrapped, "_vector")
        self.vector = unwrapped._vector if self.scalar else unwrapped
        self.learner = learner
        self.learner_kwargs = learner_kwargs
        self.super_arm: np.ndarray | None = None
        self.dataset_instance: tuple[str, int] | None = None  # (params hash, seed)
        self._checked_params: Params | None = None

    def _check_instance(self, instance: tuple[str, int]) -> None:
        """Raise unless every instance of the env is the one the dataset was logged on."""
        params = self.vector.params
        if not getattr(self.vector, "instance_chosen", False) or params is self._checked_params:
            return
        expected, seed = instance
        for row in range(self.vector.num_envs):
            found = params_hash(select_params(params, slice(row, row + 1)))
            if found != expected:
                env_seed = int(self.vector.rng.seed[row])
                where = "the env" if self.vector.num_envs == 1 else f"the env's instance {row}"
                raise ValueError(
                    f"dataset: logged on the instance of seed {seed} (instance_params_hash "
                    f"{expected[:12]}), but {where} is the instance of seed {env_seed} "
                    f"(instance_params_hash {found[:12]}); reset the env with seed={seed} or "
                    "log a dataset on this instance"
                )
        self._checked_params = params

    def reset(self, seed: int | None = None) -> None:
        """Nothing to reset: the fitted super arm stays."""

    def fit(self, dataset: LoggedDataset | str | Path) -> np.ndarray:
        """Learn the super arm from ``dataset``: a :class:`LoggedDataset`, its folder, or
        ``"minari:NAME"`` for a Minari dataset written by the collector's ``--minari NAME``
        (found under ``MINARI_DATASETS_PATH``)."""
        if not isinstance(dataset, LoggedDataset):
            dataset = load_dataset(dataset)
        problem = self.vector.problem
        if dataset.problem.name != problem.name:
            raise ValueError(
                f"dataset: env_id {dataset.metadata.get('env_id')!r} logs the application "
                f"{dataset.problem.name!r}, but this env is {problem.name!r}; collect the "
                "dataset on this env's id"
            )
        if dataset.problem.public_config() != problem.public_config():
            changed = sorted(
                key
                for key, value in problem.public_config().items()
                if dataset.problem.public_config().get(key) != value
            )
            raise ValueError(
                f"dataset: logged on a different {problem.name} problem than this env's "
                f"(problem fields {changed} differ; dataset env_kwargs "
                f"{dataset.metadata.get('env_kwargs')})"
            )
        instance = (str(dataset.metadata["instance_params_hash"]), int(dataset.metadata["seed"]))
        self._checked_params = None
        self._check_instance(instance)  # before any state changes
        arm = _learners()[self.learner](dataset, **self.learner_kwargs)
        self.super_arm = super_arm_ids(arm).numpy()
        self.dataset_instance = instance
        return self.super_arm

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        if self.super_arm is None:
            raise RuntimeError("call fit(dataset) before act()")
        if self.dataset_instance is not None:
            self._check_instance(self.dataset_instance)
        action = self.vector.encode(self.super_arm)
        if self.scalar:
            return action[0].numpy()
        return action.expand(self.vector.num_envs, -1)


def clcb_agent(env: Any) -> OfflineAgent:
    """CLCB (Off-CMAB's reference offline learner): fits a super arm on ``fit(dataset)``."""
    return OfflineAgent(env, learner="clcb")


def cucb_offline_agent(env: Any) -> OfflineAgent:
    """CUCB-Offline baseline (upper confidence bounds on the logged data)."""
    return OfflineAgent(env, learner="cucb_offline")


def emp_agent(env: Any) -> OfflineAgent:
    """EMP baseline (the empirical means of the logged data, no confidence term)."""
    return OfflineAgent(env, learner="emp")


def lfu_agent(env: Any) -> OfflineAgent:
    """LFU baseline (LLM cache: cache the most frequently logged queries)."""
    return OfflineAgent(env, learner="lfu")


def lec_agent(env: Any) -> OfflineAgent:
    """LEC baseline (LLM cache: cache the queries of largest empirical expected cost)."""
    return OfflineAgent(env, learner="lec")
