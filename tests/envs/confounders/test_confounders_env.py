"""ConfounderStream env: stream walk, revealed labels, rewards, task-free mode, bad actions."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401
from gymforge.envs.confounders.gym_env import ConfounderStreamVecEnv

VERSIONS = ("ConfounderStream-v0", "ConfounderStream-v1")


def _small(env_id="ConfounderStream-v0", **kwargs):
    kwargs = {"samples_per_group": 32, "batch_size": 16, **kwargs}
    return gym.make(env_id, **kwargs)


@pytest.mark.parametrize("env_id", VERSIONS)
def test_episode_walks_every_stage_and_reveals_the_labels(env_id):
    env = _small(env_id, passes_per_stage=2)
    obs, _ = env.reset(seed=0)
    stages, boundaries, steps = [], [], 0
    terminated = False
    while not terminated:
        cf = obs[:, -1]
        action = (cf > 4.5).astype(np.float32)  # threshold on the confounder
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        y = info["y"]
        pred = (action >= 0.5).astype(int)
        expected = np.mean([np.mean(pred[y == k] == k) for k in (0, 1) if np.any(y == k)])
        assert reward == pytest.approx(expected, abs=1e-6)
        stages.append(info["stage"])
        boundaries.append(info["stage_boundary"])
        steps += 1
    per_stage = 2 * (64 // 16)
    assert steps == env.unwrapped._vector.episode_length == 5 * per_stage
    assert stages == [k for k in range(5) for _ in range(per_stage)]
    assert [i for i, b in enumerate(boundaries) if b] == [per_stage * k - 1 for k in range(1, 5)]
    assert reward == 1.0  # at s = 0.5 the confounder separates the groups perfectly


@pytest.mark.parametrize("env_id", VERSIONS)
def test_every_stage_shows_each_image_once_per_pass(env_id):
    env = _small(env_id)
    obs, _ = env.reset(seed=1)
    seen = []
    for _ in range(4):  # the four batches of stage 0
        seen.append(obs[:, -1].copy())
        obs, *_ = env.step(np.full(16, 0.5, np.float32))
    assert len(np.unique(np.concatenate(seen))) == 64


def test_task_free_mode_hides_stage_information():
    env = _small(task_free=True)
    env.reset(seed=0)
    *_, info = env.step(np.zeros(16, np.float32))
    assert "stage" not in info and "stage_boundary" not in info and "y" in info


def test_vector_instances_are_independent_streams():
    venv = ConfounderStreamVecEnv(num_envs=3, samples_per_group=32, batch_size=16)
    obs, _ = venv.reset(seed=5)
    assert obs.shape == (3, 16, 1025)
    assert not torch.equal(obs[0], obs[1])
    single = ConfounderStreamVecEnv(num_envs=1, samples_per_group=32, batch_size=16)
    one, _ = single.reset(seed=6)
    assert torch.equal(one[0], obs[1])


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (np.zeros(15, np.float32), r"action must have shape \(1, 16\)"),
        (np.full(16, 1.5, np.float32), r"action\[0\] must lie in"),
        (np.full(16, -0.1, np.float32), r"action\[0\] must lie in"),
        (np.full(16, np.nan, np.float32), r"action\[0\] must lie in"),
    ],
)
def test_bad_actions_are_rejected_before_any_state_change(action, match):
    env = _small()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(action)
    again, *_ = env.step(np.zeros(16, np.float32))
    fresh = _small()
    fresh.reset(seed=0)
    np.testing.assert_array_equal(again, fresh.step(np.zeros(16, np.float32))[0])


def test_v1_draws_batched_without_generators_and_reads_distinct_table_rows(monkeypatch):
    from gymforge.envs.confounders import counter_draws

    venv = ConfounderStreamVecEnv(num_envs=6, samples_per_group=64, draws="counter")
    table = counter_draws.noise_table(counter_draws.table_rows(128), venv.device)

    def no_generators(*args, **kwargs):
        raise AssertionError("a per-instance generator was created at reset")

    monkeypatch.setattr(torch, "Generator", no_generators)
    venv.reset(seed=[3, 4, 5, 6, 7, 8])
    rows = venv.state.noise_rows
    assert venv.state.noise is None and rows.shape == (6, 128)
    assert all(len(torch.unique(r)) == 128 for r in rows)  # an instance's noise rows differ
    assert int(rows.min()) >= 0 and int(rows.max()) < table.shape[0]
    assert sorted(venv.state.order[0, 0].tolist()) == list(range(128))  # a permutation
    # the table is standard normal: mean 0, std 1 (4M draws)
    assert abs(float(table.mean())) < 5e-3 and abs(float(table.std()) - 1.0) < 5e-3


def test_v1_draws_the_same_distribution_as_v0():
    """Per stage, the confounder values the two versions show agree in mean and spread (their
    numbers differ: other draws)."""
    cf = {}
    for env_id in VERSIONS:
        venv = gym.make_vec(
            env_id, num_envs=64, vectorization_mode="vector_entry_point", array_backend="torch"
        )
        obs, _ = venv.reset(seed=0)
        cf[env_id] = obs[:, :, -1].reshape(-1)
    a, b = cf.values()
    assert not torch.equal(a, b)
    assert abs(float(a.mean() - b.mean())) < 0.05 and abs(float(a.std() - b.std())) < 0.05


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"shifts": (0.0, 1.2)}, r"shifts\[1\]"),
        ({"schedule": "zigzag"}, "kind"),
        ({"batch_size": 100}, "batch_size"),
        ({"task_free": "yes"}, "task_free"),
        ({"noise_std": -0.5}, "noise_std"),
        ({"draws": "philox"}, r"draws must be one of \['generator', 'counter'\]"),
    ],
)
def test_bad_arguments_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        _small(**kwargs)
