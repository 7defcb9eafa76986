"""``mask_unread_actions`` of the on-device PPO: with every dimension read it is plain PPO, with
none read the actor does not move (the critic does), rollouts record the env's read flags, and
an env that does not report them is refused."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

from gymforge.baselines.ondevice.ppo import PPO
from gymforge.baselines.ondevice.ppo_config import PPOConfig

SMALL = {"n_steps": 16, "n_minibatches": 2, "n_epochs": 2, "hidden": (16, 16)}


def _env(env_id: str = "LineFlow-WaitingTime-v0", n: int = 4):
    return gym.make_vec(
        env_id, num_envs=n, vectorization_mode="vector_entry_point", array_backend="torch"
    )


def _actor(trainer: PPO) -> list[torch.Tensor]:
    return [p.detach().clone() for n, p in trainer.policy.named_parameters() if "actor" in n]


def _critic(trainer: PPO) -> list[torch.Tensor]:
    return [p.detach().clone() for n, p in trainer.policy.named_parameters() if "critic" in n]


def test_action_reads__rollouts_record_the_envs_flags():
    trainer = PPO(_env(), PPOConfig(mask_unread_actions=True, **SMALL), seed=0)
    trainer.collect()
    assert trainer.buf_read.shape == (16, 4, 1)
    assert 0 < trainer.buf_read.float().mean() < 0.5
    assert torch.equal(trainer.buf_read[-1], trainer.env.last_action_read)


def test_action_reads__every_dimension_read_is_plain_ppo():
    plain = PPO(_env(), PPOConfig(**SMALL), seed=2)
    masked = PPO(_env(), PPOConfig(mask_unread_actions=True, **SMALL), seed=2)
    for trainer in (plain, masked):
        trainer.collect()
    masked.buf_read.fill_(True)
    torch.testing.assert_close(masked.buf_dim_log_prob[..., 0], plain.buf_log_prob)
    plain.update()
    masked.update()
    for a, b in zip(plain.policy.parameters(), masked.policy.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_action_reads__no_dimension_read_leaves_the_actor_and_trains_the_critic():
    trainer = PPO(_env(), PPOConfig(mask_unread_actions=True, **SMALL), seed=4)
    trainer.collect()
    trainer.buf_read.fill_(False)
    actor, critic = _actor(trainer), _critic(trainer)
    trainer.update()
    for before, after in zip(actor, _actor(trainer), strict=True):
        assert torch.equal(before, after)
    assert any(not torch.equal(b, a) for b, a in zip(critic, _critic(trainer), strict=True))


def test_action_reads__a_loss_without_reads_has_no_actor_gradient_and_one_read_has():
    trainer = PPO(_env(), PPOConfig(mask_unread_actions=True, **SMALL), seed=6)
    trainer.collect()
    n = 64

    def actor_grad(read: torch.Tensor) -> float:
        trainer.policy.zero_grad()
        out, values = trainer.policy.heads(trainer.buf_obs.reshape(n, -1))
        loss, _ = trainer._loss(
            out,
            values,
            torch.arange(n),
            torch.randn(n, generator=torch.Generator().manual_seed(1)),
            torch.randn(n, generator=torch.Generator().manual_seed(2)),
            trainer.buf_actions.reshape(n, -1),
            trainer.buf_log_prob.reshape(n),
            trainer.buf_values.reshape(n),
            read,
            trainer.buf_dim_log_prob.reshape(n, -1),
        )
        loss.backward()
        return sum(
            float(p.grad.abs().sum())
            for name, p in trainer.policy.named_parameters()
            if "actor" in name and p.grad is not None
        )

    none = torch.zeros(n, 1, dtype=torch.bool)
    assert actor_grad(none) == 0.0
    some = none.clone()
    some[::7] = True
    assert actor_grad(some) > 0.0


def test_action_reads__an_env_without_read_flags_is_refused():
    with pytest.raises(ValueError, match="mask_unread_actions needs categorical actions"):
        PPO(_env("Probe-Match-v0"), PPOConfig(mask_unread_actions=True), seed=0)
    with pytest.raises(ValueError, match="mask_unread_actions must be true or false"):
        PPOConfig(mask_unread_actions="yes")
