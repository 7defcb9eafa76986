"""A2C: the one-epoch, one-minibatch, unclipped case of :mod:`.ppo`'s update.

With one gradient step per rollout the probability ratio is exactly 1 when the loss is taken,
so PPO's surrogate without clipping is the policy gradient ``-A * grad log pi``; value loss and
entropy bonus are the same terms. The settings are Stable-Baselines3's A2C defaults (RMSprop,
learning rate 7e-4, 5-step rollouts, GAE lambda 1, no advantage normalisation) with the
rollout length a task config may raise for thousands of instances.
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    "n_steps": 5,
    "n_epochs": 1,
    "n_minibatches": 1,
    "learning_rate": 7e-4,
    "gae_lambda": 1.0,
    "clip": None,
    "clip_value": None,
    "value_coef": 0.5,
    "entropy_coef": 0.0,
    "max_grad_norm": 0.5,
    "normalize_advantage": False,
    "optimizer": "rmsprop",
}
