"""ShardedVectorEnv: a batch split over worker processes is the same env as one process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401  (registers the ids)
from gymforge.checks.conformance import check_sharded_equivalence
from gymforge.core.sharded import ShardedVectorEnv, shard_bounds, sharded
from gymforge.envs.probe.gym_env import ProbeVecEnv

PROBE = "Probe-Match-v0"


def _probe(num_envs: int, workers: int, **kwargs) -> gym.vector.VectorEnv:
    return gym.make_vec(
        PROBE,
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        num_workers=workers,
        **{"array_backend": "torch", **kwargs},
    )


def _first_and_size(env, start: int) -> tuple[int, int]:
    return start, env.num_envs


def _fail_in_shard(env, start: int, failing: int) -> int:
    if start == failing:
        raise KeyError(f"shard starting at {start}")
    return start


def test_shard_bounds_split_evenly_larger_shards_first():
    assert shard_bounds(5, 2) == [(0, 3), (3, 5)]
    assert shard_bounds(4096, 2) == [(0, 2048), (2048, 4096)]
    assert shard_bounds(7, 3) == [(0, 3), (3, 5), (5, 7)]
    assert shard_bounds(3, 3) == [(0, 1), (1, 2), (2, 3)]


def test_staggered_autoresets_merge_into_the_one_process_infos():
    """With patience 1 a probe episode ends at the first mistake, so instances finish at different
    steps: some steps end episodes in one shard and none in another, whose ``final_obs`` and
    ``final_info`` entries the sharded env must fill in as the one-process env does."""
    kwargs = {"patience": 1, "max_steps": 6}
    plain = _probe(6, 1, **kwargs)
    space = plain.single_action_space
    check_sharded_equivalence(
        lambda n, workers: _probe(n, workers, **kwargs), space, num_envs=6, num_workers=3, steps=30
    )
    # the same actions as the check: it saw steps with finished instances in only some shards
    space.seed(0)
    plain.reset(seed=3)
    partial = 0
    for _ in range(30):
        action = torch.as_tensor(np.stack([space.sample() for _ in range(6)]))
        *_, infos = plain.step(action)
        if "final_obs" in infos:
            per_shard = infos["_final_obs"].view(3, 2).any(dim=1)
            partial += bool(per_shard.any() and not per_shard.all())
    assert partial > 0


@pytest.mark.parametrize("workers", [0, 5, True, 1.5, "2"])
def test_bad_num_workers_is_refused_before_any_process_starts(workers):
    with pytest.raises(ValueError, match=r"num_workers must be an int in \[1, num_envs=4\]"):
        _probe(4, workers)


def test_workers_run_on_the_cpu_with_autoreset_only():
    # (a torch without CUDA refuses the device itself, first)
    with pytest.raises(ValueError, match=r"device must be 'cpu', got 'cuda'|no usable CUDA device"):
        sharded(ProbeVecEnv, num_workers=2, num_envs=4, device="cuda")
    with pytest.raises(ValueError, match="needs autoreset=True"):
        sharded(ProbeVecEnv, num_workers=2, num_envs=4, autoreset=False)
    with pytest.raises(ValueError, match="needs autoreset=True"):
        _probe(4, 2, autoreset=False)


def test_one_worker_is_the_plain_env_in_this_process():
    assert type(_probe(4, 1)) is ProbeVecEnv
    assert type(_probe(4, np.int64(1))) is ProbeVecEnv
    env = _probe(4, 2)
    try:
        assert isinstance(env, ShardedVectorEnv) and env.bounds == [(0, 2), (2, 4)]
    finally:
        env.close()


def test_bad_action_is_refused_before_any_shard_steps():
    plain, sharded = _probe(4, 1), _probe(4, 2)
    try:
        plain.reset(seed=0)
        sharded.reset(seed=0)
        with pytest.raises(ValueError, match="action"):
            sharded.step(torch.tensor([0, 1, 2, 99]))
        action = torch.tensor([0, 1, 2, 3])
        for x, y in zip(plain.step(action)[:4], sharded.step(action)[:4], strict=True):
            assert torch.equal(x, y)  # (nothing moved on the bad action)
    finally:
        sharded.close()


def test_apply_to_shards_and_errors_in_this_process_or_a_worker():
    env = _probe(5, 2)  # (shard 0 runs in this process, shard 1 in a worker)
    try:
        assert env.apply_to_shards(_first_and_size) == [(0, 3), (3, 2)]
        with pytest.raises(RuntimeError, match=r"shard 0 \(instances \(0, 3\)\) failed.*KeyError"):
            env.apply_to_shards(_fail_in_shard, 0)
        with pytest.raises(
            RuntimeError, match=r"shard 1 \(instances \(3, 5\)\) failed(.|\n)*KeyError"
        ):
            env.apply_to_shards(_fail_in_shard, 3)
        assert env.apply_to_shards(_fail_in_shard, -1) == [0, 3]  # the pipes are still in step
        env.reset(seed=1)
        obs, *_ = env.step(torch.zeros(5, dtype=torch.long))
        assert obs.shape == (5, *env.single_observation_space.shape)
    finally:
        env.close()


def test_step_before_reset_and_close_ends_the_workers():
    env = _probe(4, 2)
    processes = list(env._processes)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(torch.zeros(4, dtype=torch.long))
    env.close()
    assert all(process.poll() is not None for process in processes)


def test_a_dead_worker_is_named_and_the_others_stay_in_step():
    env = _probe(6, 3)  # (shards 1 and 2 in workers)
    try:
        env.reset(seed=0)
        env._processes[1].kill()  # shard 2's worker
        env._processes[1].wait()
        with pytest.raises(RuntimeError, match=r"shard 2 \(instances \(4, 6\)\) could not"):
            env.step(torch.zeros(6, dtype=torch.long))
        with pytest.raises(RuntimeError, match=r"shard 2 \(instances \(4, 6\)\) could not"):
            env.reset(seed=0)  # (shard 1 replied to the failed step: that reply was read)
        shard_1 = env._channels[0]  # its next reply answers the next command, nothing stale
        shard_1.send(("apply", (_first_and_size, (2,), {})))
        assert shard_1.recv() == ("ok", (2, 2))
    finally:
        processes = list(env._processes)
        env.close()
    assert all(process.poll() is not None for process in processes)


def test_ppo_trains_through_the_sb3_adapter_on_a_sharded_env():
    from stable_baselines3 import PPO

    from gymforge.adapters.sb3 import as_sb3_vec_env

    env = _probe(4, 2)
    try:
        model = PPO("MlpPolicy", as_sb3_vec_env(env), n_steps=32, batch_size=64, seed=0)
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
    finally:
        env.close()


def test_a_script_without_a_main_guard_can_start_workers(tmp_path):
    """The workers are fresh interpreters that never import the user's script (multiprocessing's
    spawn would re-run it, and a script without ``if __name__ == "__main__"`` would fail)."""
    script = tmp_path / "no_guard.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import gymnasium as gym
            import torch
            import gymforge

            env = gym.make_vec("{PROBE}", num_envs=4, vectorization_mode="vector_entry_point",
                               num_workers=2)
            obs, _ = env.reset(seed=0)
            obs, reward, *_ = env.step(torch.zeros(4, dtype=torch.long))
            print("shape", tuple(obs.shape))
            env.close()
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "shape (4, 6)" in done.stdout
