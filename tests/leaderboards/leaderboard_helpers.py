"""Shared helpers of the leaderboard tests: a small board root and agents for failure tests.

``small_root`` writes a short protocol (LineFlow WaitingTime, 300-step episodes, 3 held-out
seeds) into a temporary board root and calibrates it with the real random and optimal agents.
The agents below are real agents (they act on real observations); they only add a marker file, a
delay, or a failure, to drive the interrupted-submission tests through real code paths.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from gymforge.agents.random_agent import RandomAgent
from gymforge.leaderboards.calibrate import calibrate
from gymforge.leaderboards.files import write_json_atomic
from gymforge.registry import get_spec

TASK = "lineflow/ShortWaitingTime"
ENV_ID = "LineFlow-WaitingTime-v0"
#: held-out seeds above the training range [0, 2**62) of `gymforge train`.
SEEDS = [2**62 + 5_000_000 + i for i in range(3)]
HORIZON = 300


def protocol_data(seeds: list[int] | None = None, horizon: int = HORIZON) -> dict[str, Any]:
    seeds = SEEDS if seeds is None else seeds
    return {
        "schema": "gymforge.protocol/1",
        "task": TASK,
        "version": 1,
        "title": "LineFlow WaitingTime, short episodes (test board)",
        "description": "WaitingTime with 300-step episodes, for the tests.",
        "env": {
            "id": ENV_ID,
            "version": 0,
            "kwargs": {"horizon": horizon},
            "registry_kwargs": dict(get_spec(ENV_ID).kwargs),
        },
        "evaluation": {
            "seeds": seeds,
            "episodes": len(seeds),
            "max_steps": horizon,
            "verify_episodes": 1,
        },
        "training_seeds": {"start": 0, "stop": 2**62},
        "budget": {"train_env_steps": 1000, "source": "test"},
        "metric": {"name": "return", "higher_is_better": True, "description": "sum of rewards"},
        "record_info": ["n_parts", "n_scrap_parts"],
        "normalisation": {
            "random": {"agent": "random", "score": None},
            "reference": {"agent": "optimal", "score": None},
        },
        "tolerance": {"abs": 1e-6},
        # the test agents this board runs besides the registered ones
        "agents": {
            "slow": "leaderboard_helpers:SlowAgent",
            "failing": "leaderboard_helpers:FailingAgent",
        },
    }


def small_root(path: Path) -> Path:
    """A calibrated board root with the one short task and no submissions."""
    write_json_atomic(path / "protocols" / f"{TASK}.json", protocol_data())
    calibrate(path, TASK)
    return path


def meta(name: str = "Random baseline", **extra: Any) -> dict[str, Any]:
    return {"name": name, "authors": ["gymforge tests"], "method": "uniform random", **extra}


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (to compare a board before and after)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


class SlowAgent(RandomAgent):
    """Random actions, 5 ms per step, touching ``$LB_MARKER`` once it has started acting."""

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        marker = os.environ.get("LB_MARKER")
        if marker:
            Path(marker).touch()
        time.sleep(0.005)
        return super().act(observation, info)


class FailingAgent(RandomAgent):
    """Random actions; its second episode fails (reset raises)."""

    def __init__(self, env: Any) -> None:
        self.episodes = 0
        super().__init__(env)

    def reset(self, seed: int | None = None) -> None:
        self.episodes += 1
        if self.episodes > 2:  # the constructor's reset, the first episode, then this one
            raise RuntimeError("agent crashed in its second episode")
        super().reset(seed)


#: what :class:`RecordingOfflineAgent` was fitted on: ``(metadata, params)`` per ``fit`` call.
FITTED: list[tuple[dict[str, Any], dict[str, Any]]] = []


class RecordingOfflineAgent:
    """CLCB on the offline track, recording each dataset that ``fit`` receives in :data:`FITTED`."""

    def __init__(self, env: Any) -> None:
        from gymforge.agents.cmab.agent import OfflineAgent

        self.inner = OfflineAgent(env, learner="clcb")

    def fit(self, dataset: Any) -> None:
        FITTED.append((dict(dataset.metadata), dict(dataset.params)))
        self.inner.fit(dataset)

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> Any:
        return self.inner.act(observation, info)


def copy_board(pristine: Path, tmp_path: Path) -> Path:
    """A fresh copy of a pristine board folder to tamper with."""
    root = tmp_path / "board"
    shutil.copytree(pristine, root)
    return root


def fixed_wait_model(path: Path, wait: int) -> Path:
    """A saved SB3 PPO model (a weights file, as a board takes) that always picks ``wait``:
    its action head's weights are zero and its bias favours ``wait``."""
    import gymnasium as gym
    import torch
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", gym.make(ENV_ID), policy_kwargs={"net_arch": [8]}, seed=0)
    with torch.no_grad():
        model.policy.action_net.weight.zero_()
        model.policy.action_net.bias.zero_()
        model.policy.action_net.bias[wait] = 10.0
    model.save(str(path))
    return path
