"""Reference agents act on the env's own tensors, not only on numpy arrays.

A batched env returns torch tensors on its device; every reference agent of every batched
single-agent id must act on them (converting once at its boundary) and act exactly as it does
on the same observations as numpy arrays. The ``gpu`` variant feeds CUDA tensors.
"""

from __future__ import annotations

import inspect

import gymnasium as gym
import numpy as np
import pytest
import torch

from gymforge.registry import all_specs, load_entry_point


class DeviceTensor(torch.Tensor):
    """A CPU tensor that refuses numpy conversion the way a CUDA tensor does (``.cpu()`` first)."""

    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert a device tensor to numpy: copy it to the host first")

    def numpy(self, *args, **kwargs):
        raise TypeError("can't convert a device tensor to numpy: copy it to the host first")

    def cpu(self, *args, **kwargs):
        return super().cpu(*args, **kwargs).as_subclass(torch.Tensor)


CASES = [
    (spec.id, name)
    for spec in all_specs()
    if spec.vector_entry_point is not None and not spec.capabilities.multi_agent
    for name in spec.agents
]


def _actions_both_ways(env_id: str, agent_name: str, device: str, steps: int = 6) -> None:
    env = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", device=device)
    try:
        factory = load_entry_point(_spec(env_id).agents[agent_name])
        on_numpy, on_tensor = factory(env), factory(env)
        seeded = "seed" in inspect.signature(getattr(on_numpy, "reset", lambda: None)).parameters
        obs, _ = env.reset(seed=3)
        for step in range(steps):
            host = obs.cpu().numpy() if isinstance(obs, torch.Tensor) else obs
            actions = []
            device_obs = obs.as_subclass(DeviceTensor) if device == "cpu" else obs
            for agent, observation in ((on_numpy, host), (on_tensor, device_obs)):
                if seeded:  # (the same fresh state: stochastic agents may share a space's RNG)
                    torch.manual_seed(step)
                    agent.reset(seed=step)
                action = agent.act(observation)
                actions.append(
                    action.cpu().numpy() if isinstance(action, torch.Tensor) else np.asarray(action)
                )
            assert np.array_equal(actions[0], actions[1]), (env_id, agent_name, step)
            from_numpy = actions[0]
            obs, *_ = env.step(torch.as_tensor(from_numpy, device=device))
    finally:
        env.close()


def _spec(env_id: str):
    return next(spec for spec in all_specs() if spec.id == env_id)


@pytest.mark.parametrize(("env_id", "agent_name"), CASES)
def test_agent_acts_on_tensors_as_on_numpy(env_id: str, agent_name: str) -> None:
    torch.set_num_threads(1)
    _actions_both_ways(env_id, agent_name, "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize(("env_id", "agent_name"), CASES)
def test_agent_acts_on_cuda_tensors(env_id: str, agent_name: str) -> None:
    _actions_both_ways(env_id, agent_name, "cuda")
