"""The sampling-temperature schedule of the on-device trainer: rollouts at temperature ``T``
store the log-probabilities of ``softmax(logits / T)``, ``T`` falls from 1 to the configured end
over the run, greedy acting ignores it, and settings that cannot apply are refused."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

from gymforge.baselines.ondevice.ppo import PPO
from gymforge.baselines.ondevice.ppo_config import PPOConfig


def _env(env_id: str = "Probe-Match-v0", n: int = 4):
    return gym.make_vec(
        env_id, num_envs=n, vectorization_mode="vector_entry_point", array_backend="torch"
    )


def test_temperature__falls_linearly_and_rollouts_store_the_tempered_log_probs():
    trainer = PPO(_env(), PPOConfig(n_steps=4, final_temperature=0.25), seed=0)
    trainer.collect(progress=0.0)
    assert trainer.temperature == 1.0
    trainer.collect(progress=0.5)
    assert trainer.temperature == pytest.approx(0.625)
    trainer.collect(progress=1.0)
    assert trainer.temperature == pytest.approx(0.25)
    # the stored log-probabilities are those of the tempered distribution
    with torch.no_grad():
        out, _ = trainer.policy.heads(trainer.buf_obs[0])
        tempered = torch.log_softmax(out / 0.25, -1).gather(-1, trainer.buf_actions[0])[..., 0]
        plain = torch.log_softmax(out, -1).gather(-1, trainer.buf_actions[0])[..., 0]
    torch.testing.assert_close(trainer.buf_log_prob[0], tempered)
    assert not torch.allclose(tempered, plain)
    trainer.update(progress=1.0)  # runs with the same temperature (ratio 1 at its first step)


def test_temperature__off_by_default_leaves_the_trainer_as_it_was():
    a = PPO(_env(), PPOConfig(n_steps=4), seed=3)
    b = PPO(_env(), PPOConfig(n_steps=4, final_temperature=1.0), seed=3)
    for trainer in (a, b):
        trainer.collect(progress=0.9)
        trainer.update(progress=0.9)
    assert a.temperature == b.temperature == 1.0
    for pa, pb in zip(a.policy.parameters(), b.policy.parameters(), strict=True):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0)


@pytest.mark.parametrize("value", [0, 1.5, True, "low"])
def test_temperature__out_of_range_is_refused(value):
    with pytest.raises(ValueError, match=r"final_temperature must be a number in \(0, 1\]"):
        PPOConfig(final_temperature=value)


def test_temperature__refused_for_box_actions():
    with pytest.raises(ValueError, match="final_temperature applies to categorical actions"):
        PPO(_env("MinMaxTuning-v0", 2), PPOConfig(final_temperature=0.5), seed=0)
