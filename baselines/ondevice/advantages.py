"""Generalised advantage estimation and the PPO loss, as plain tensor functions.

Kept apart from the training loop so that each has a test with a known answer.
"""

from __future__ import annotations

import torch


def gae(
    rewards: torch.Tensor,
    values: torch.Tensor,
    dones: torch.Tensor,
    last_value: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and returns of a rollout, ``(T, B)`` each.

    Args:
        rewards: ``(T, B)`` reward of step ``t`` (a truncated episode's last reward already
            includes ``gamma * V(final observation)``).
        values: ``(T, B)`` value estimates of the observations the actions were taken in.
        dones: ``(T, B)`` whether the episode ended at step ``t`` (no bootstrap across it).
        last_value: ``(B,)`` value of the observation after the last step.
        gamma, lam: discount and GAE's lambda.

    ``A_t = δ_t + γλ(1 - d_t) A_{t+1}`` with ``δ_t = r_t + γ(1 - d_t) V_{t+1} - V_t``;
    returns are ``A + V``.
    """
    steps = rewards.shape[0]
    advantages = torch.empty_like(rewards)
    running = torch.zeros_like(last_value)
    next_value = last_value
    not_done = 1.0 - dones.to(rewards.dtype)
    for t in range(steps - 1, -1, -1):
        delta = rewards[t] + gamma * not_done[t] * next_value - values[t]
        running = delta + gamma * lam * not_done[t] * running
        advantages[t] = running
        next_value = values[t]
    return advantages, advantages + values


def ppo_loss(
    new_log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    advantages: torch.Tensor,
    new_values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    entropy: torch.Tensor,
    clip: float | None,
    clip_value: float | None,
    value_coef: float,
    entropy_coef: float,
    weights: torch.Tensor | None = None,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """PPO's clipped surrogate plus value and entropy terms (minimised).

    ``loss = policy_loss + value_coef * mean((V - R)^2) - entropy_coef * entropy`` (the value
    term as Stable-Baselines3 weights it: its ``vf_coef`` 0.5 means the same here).

    ``clip=None`` is the unclipped policy gradient ``-ratio * A`` (A2C's loss after one step,
    where the ratio is 1); ``clip_value`` clips the value change like the policy's (``None``:
    plain squared error). ``weights`` (0/1 per sample, optional) restrict the policy and entropy
    terms to the samples whose action counted (their means are over those samples; the value
    term keeps every sample). Returns the loss and detached parts for logging.
    """

    def policy_mean(x: torch.Tensor) -> torch.Tensor:
        if weights is None:
            return x.mean()
        return (x * weights).sum() / weights.sum().clamp(min=1.0)

    ratio = (new_log_prob - old_log_prob).exp()
    surrogate = ratio * advantages
    if clip is not None:
        clipped = ratio.clamp(1.0 - clip, 1.0 + clip) * advantages
        surrogate = torch.minimum(surrogate, clipped)
    policy_loss = -policy_mean(surrogate)
    value_error = (new_values - returns) ** 2
    if clip_value is not None:
        moved = old_values + (new_values - old_values).clamp(-clip_value, clip_value)
        value_error = torch.maximum(value_error, (moved - returns) ** 2)
    value_loss = value_error.mean()
    entropy_mean = policy_mean(entropy)
    loss = policy_loss + value_coef * value_loss - entropy_coef * entropy_mean
    with torch.no_grad():
        log_ratio = new_log_prob - old_log_prob
        parts = {
            "policy_loss": policy_loss.detach(),
            "value_loss": value_loss.detach(),
            "entropy": entropy_mean.detach(),
            "approx_kl": policy_mean((ratio - 1) - log_ratio),
            "clip_fraction": (
                policy_mean(((ratio - 1.0).abs() > clip).float())
                if clip is not None
                else torch.zeros((), device=ratio.device)
            ),
        }
    return loss, parts
