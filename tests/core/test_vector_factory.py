"""Explicit construction: a class builds itself; ``make_vector``/``sharded`` build the rest."""

from __future__ import annotations

import ast
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import gymforge  # noqa: F401  (registers the ids)
from gymforge.checks.conformance import check_sharded_equivalence
from gymforge.core.sharded import ShardedVectorEnv, sharded
from gymforge.core.vector_env import FACTORY_KEYWORDS, TorchVectorEnv
from gymforge.core.vector_factory import make_vector
from gymforge.envs.cmab.gym_env import CascadeVecEnv
from gymforge.envs.lineflow.batched.vector_env import LineFlowVecEnv
from gymforge.envs.probe.gym_env import ProbeVecEnv

CORE = Path(__file__).resolve().parents[2] / "gymforge" / "core"


@pytest.mark.parametrize("cls", [ProbeVecEnv, LineFlowVecEnv, CascadeVecEnv])
def test_a_class_constructor_returns_an_instance_of_its_class(cls):
    env = cls(num_envs=3)
    assert type(env) is cls and env.num_envs == 3
    assert env.autoreset_mode == AutoresetMode.SAME_STEP and env.array_backend == "torch"
    assert type(make_vector(cls, num_envs=3, num_workers=1)) is cls


@pytest.mark.parametrize("keyword", FACTORY_KEYWORDS)
@pytest.mark.parametrize("cls", [ProbeVecEnv, CascadeVecEnv])  # (CMAB: a **kwargs catch-all)
def test_a_class_constructor_refuses_the_factory_keywords_by_name(cls, keyword):
    value = {"num_workers": 2, "autoreset_mode": "next_step", "array_backend": "numpy"}[keyword]
    with pytest.raises(TypeError, match=rf"{cls.__name__}\(\.\.\.\) takes no {keyword}") as error:
        cls(num_envs=4, **{keyword: value})
    message = str(error.value)
    assert f"make_vector({cls.__name__}, {keyword}=" in message
    assert ("sharded(" in message) == (keyword == "num_workers")


def test_sharded_returns_a_sharded_env_equal_to_the_one_process_env():
    def make_vec(num_envs: int, workers: int) -> TorchVectorEnv:
        if workers == 1:
            return ProbeVecEnv(num_envs=num_envs, patience=1, max_steps=6)
        return sharded(ProbeVecEnv, num_workers=workers, num_envs=num_envs, patience=1, max_steps=6)

    env = make_vec(5, 2)
    try:
        assert isinstance(env, ShardedVectorEnv) and env.bounds == [(0, 3), (3, 5)]
    finally:
        env.close()
    space = ProbeVecEnv(num_envs=1).single_action_space
    check_sharded_equivalence(make_vec, space, num_envs=5, num_workers=2, steps=30)


def test_sharded_with_one_worker_is_still_a_sharded_env_in_this_process():
    env = sharded(ProbeVecEnv, num_workers=1, num_envs=3)
    plain = ProbeVecEnv(num_envs=3)
    try:
        assert isinstance(env, ShardedVectorEnv) and env.bounds == [(0, 3)]
        assert env._processes == []
        assert torch.equal(env.reset(seed=7)[0], plain.reset(seed=7)[0])
        action = torch.tensor([0, 1, 2])
        for x, y in zip(env.step(action)[:4], plain.step(action)[:4], strict=True):
            assert torch.equal(x, y)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ["LineFlow-WaitingTime-v0", "OffCMAB-Cascade-v0"])
def test_make_vec_with_num_workers_builds_a_sharded_env_of_the_id(env_id):
    make = {
        "id": env_id,
        "num_envs": 3,
        "vectorization_mode": "vector_entry_point",
        "array_backend": "torch",
    }
    plain = gym.make_vec(**make)
    env = gym.make_vec(**make, num_workers=2)
    try:
        assert isinstance(env, ShardedVectorEnv) and not isinstance(plain, ShardedVectorEnv)
        assert env.bounds == [(0, 2), (2, 3)]
        assert env.single_action_space == plain.single_action_space
        assert torch.equal(env.reset(seed=11)[0], plain.reset(seed=11)[0])
        space = plain.single_action_space
        space.seed(0)
        for _ in range(5):
            action = torch.as_tensor(np.stack([space.sample() for _ in range(3)]))
            for x, y in zip(env.step(action)[:4], plain.step(action)[:4], strict=True):
                assert torch.equal(x, y)
    finally:
        env.close()


def test_make_vector_checks_every_option_before_building():
    with pytest.raises(ValueError, match="num_envs must be an int >= 1, got 0"):
        make_vector(ProbeVecEnv, num_envs=0, num_workers=2)
    with pytest.raises(ValueError, match=r"num_workers must be an int in \[1, num_envs=2\]"):
        make_vector(ProbeVecEnv, num_envs=2, num_workers=3)
    with pytest.raises(ValueError, match="num_workers > 1 needs autoreset_mode SAME_STEP"):
        make_vector(ProbeVecEnv, num_envs=2, num_workers=2, autoreset_mode="disabled")
    with pytest.raises(ValueError, match="array_backend must be one of"):
        make_vector(ProbeVecEnv, num_envs=2, array_backend="jax")
    with pytest.raises(ValueError, match="autoreset=False is autoreset_mode DISABLED"):
        make_vector(ProbeVecEnv, num_envs=2, autoreset=False, autoreset_mode="next_step")
    env = make_vector(ProbeVecEnv, num_envs=2, autoreset_mode="disabled", array_backend="numpy")
    assert type(env) is ProbeVecEnv and env.metadata["autoreset_mode"] == AutoresetMode.DISABLED
    assert isinstance(env.reset(seed=0)[0], np.ndarray)


def _imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return modules


def test_the_vector_env_module_does_not_import_what_builds_on_it():
    """No import cycle: ``vector_env`` (the base) imports neither the sharded env nor the factory,
    not even inside a function; they import it."""
    imported = _imported_modules(CORE / "vector_env.py")
    above = {"gymforge.core.sharded", "gymforge.core.vector_factory", "gymforge.core.shard_worker"}
    assert not imported & above
    assert "gymforge.core.vector_env" in _imported_modules(CORE / "sharded.py")


def test_make_vec_returns_numpy_by_default_and_torch_when_a_device_is_named():
    make = {"id": "Probe-Match-v0", "num_envs": 2, "vectorization_mode": "vector_entry_point"}
    assert isinstance(gym.make_vec(**make).reset(seed=0)[0], np.ndarray)
    assert isinstance(gym.make_vec(**make, device="cpu").reset(seed=0)[0], torch.Tensor)
    assert isinstance(gym.make_vec(**make, array_backend="torch").reset(seed=0)[0], torch.Tensor)
    numpy_on_device = gym.make_vec(**make, device="cpu", array_backend="numpy")
    assert isinstance(numpy_on_device.reset(seed=0)[0], np.ndarray)
    assert make_vector(ProbeVecEnv, num_envs=2).array_backend == "numpy"
