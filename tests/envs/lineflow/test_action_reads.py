"""``last_action_read`` of the batched LineFlow envs: a waiting time the env marks unread in a
step may be replaced by any other value without changing the line (rewards, parts, every
observation but the observed setting), while changing a read one does change it; dimensions
of other kinds are always marked read."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

N, STEPS = 8, 400


def _env(env_id: str):
    return gym.make_vec(
        env_id, num_envs=N, vectorization_mode="vector_entry_point", array_backend="torch"
    )


def _run(env_id: str, actions: torch.Tensor):
    """Rewards, observations and read flags of ``actions`` (T, N, A) from seed 5."""
    env = _env(env_id)
    obs, _ = env.reset(seed=5)
    rewards, observations, reads = [], [obs], []
    for t in range(actions.shape[0]):
        obs, reward, _, _, _ = env.step(actions[t])
        rewards.append(reward)
        observations.append(obs)
        reads.append(env.last_action_read.clone())
    waiting = [i for i, f in enumerate(env.features) if f.name.endswith(".waiting_time")]
    return torch.stack(rewards), torch.stack(observations), torch.stack(reads), waiting


@pytest.mark.parametrize("env_id", ["LineFlow-WaitingTime-v0", "LineFlow-WaitingTimeJump-v0"])
def test_action_reads__an_unread_waiting_time_changes_nothing_but_its_observation(env_id):
    space = _env(env_id).single_action_space
    g = torch.Generator().manual_seed(0)
    high = torch.as_tensor(space.nvec)
    actions = (torch.rand(STEPS, N, len(high), generator=g) * high).long()
    rewards, obs, reads, waiting = _run(env_id, actions)
    share = reads.float().mean().item()
    assert 0.005 < share < 0.3  # read now and then, not every step
    # replace every unread action by another value: the line does the same
    other = torch.where(reads, actions, (actions + 1 + high // 2) % high)
    assert bool((other != actions).any())
    rewards2, obs2, reads2, _ = _run(env_id, other)
    keep = [i for i in range(obs.shape[-1]) if i not in waiting]
    torch.testing.assert_close(rewards2, rewards, rtol=0, atol=0)
    torch.testing.assert_close(obs2[..., keep], obs[..., keep], rtol=0, atol=0)
    assert torch.equal(reads2, reads)
    # control: replacing the read ones as well changes the line
    changed = (actions + 1 + high // 2) % high
    _, obs3, _, _ = _run(env_id, changed)
    assert not torch.equal(obs3[..., keep], obs[..., keep])


def test_action_reads__other_kinds_of_dimension_are_always_read():
    env = _env("LineFlow-ComplexLine-v0")
    env.reset(seed=1)
    kinds = [kind for kind, _, _ in env.compiled.actions]
    tracked = torch.tensor([kind == "waiting_time" for kind in kinds])
    seen = torch.zeros(len(kinds), dtype=torch.bool)
    for _ in range(200):
        env.step(torch.as_tensor(env.action_space.sample()))
        read = env.last_action_read
        assert read.shape == (N, len(kinds))
        assert bool(read[:, ~tracked].all())
        seen |= ~read.all(dim=0)
    assert torch.equal(seen, tracked)  # only the waiting time was ever unread
