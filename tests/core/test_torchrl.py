"""The TorchRL adapter: TorchRL's own spec check on every batched id, and TorchRL rollouts with
partial resets equal to ``gym.make_vec``'s SAME_STEP autoreset step by step."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

pytest.importorskip("torchrl")
from tensordict import TensorDictBase
from torchrl.envs.utils import check_env_specs

from gymforge.adapters.torchrl import TorchRLEnv
from gymforge.checks.autoreset import sample_actions, truncate_after
from gymforge.registry import all_specs

BATCHED = [s for s in all_specs() if s.capabilities.batched and not s.capabilities.multi_agent]


def ids(specs):
    return [s.id for s in specs]


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_torchrl_check_env_specs(spec):
    check_env_specs(TorchRLEnv(spec.id, num_envs=3), seed=0)


@pytest.mark.parametrize("spec", BATCHED, ids=ids(BATCHED))
def test_torchrl_rollout_with_partial_resets_equals_same_step_autoreset(spec):
    periods, steps, seed = (2, 3, 4), 9, 7
    actions = sample_actions(gym.make(spec.id).action_space, len(periods), steps)
    make = dict(num_envs=len(periods), vectorization_mode="vector_entry_point")
    disabled = gym.make_vec(spec.id, **make, autoreset_mode=AutoresetMode.DISABLED)
    env = TorchRLEnv(truncate_after(disabled, periods))
    env.set_seed(seed)
    replay = iter(actions)

    def policy(td: TensorDictBase) -> TensorDictBase:
        return td.set("action", torch.as_tensor(next(replay)))

    rollout = env.rollout(steps, policy, break_when_any_done=False, auto_reset=True)
    assert rollout.batch_size == (len(periods), steps)

    venv = truncate_after(gym.make_vec(spec.id, **make, array_backend="torch"), periods)
    obs, _ = venv.reset(seed=seed)
    for t, action in enumerate(actions):
        assert torch.equal(rollout["observation"][:, t], obs), f"step {t}: observation"
        obs, reward, terminated, truncated, info = venv.step(torch.as_tensor(action))
        step = rollout["next"][:, t]
        assert torch.equal(step["reward"].squeeze(-1), reward.float()), f"step {t}: reward"
        assert torch.equal(step["terminated"].squeeze(-1), terminated), f"step {t}: terminated"
        assert torch.equal(step["truncated"].squeeze(-1), truncated), f"step {t}: truncated"
        final = info.get("final_obs", obs)
        done = (terminated | truncated).reshape(-1, *[1] * (obs.dim() - 1))
        assert torch.equal(step["observation"], torch.where(done, final, obs)), f"step {t}"
    assert bool(rollout["next", "truncated"].any())  # (the partial resets were exercised)


def test_torchrl_env_refuses_an_autoresetting_vector_env():
    venv = gym.make_vec("Probe-Match-v0", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match="autoreset_mode DISABLED"):
        TorchRLEnv(venv)
    with pytest.raises(TypeError, match="batched gymforge id or a TorchVectorEnv"):
        TorchRLEnv(np.zeros(2))  # type: ignore[arg-type]
