"""Dynamics of the probe env, batched over instances: pure functions of (config, state, action, rng)."""

from __future__ import annotations

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.probe.config import ProbeConfig
from gymforge.envs.probe.types import ProbeState


def initial_state(
    config: ProbeConfig, rng: InstanceRNG, where: torch.Tensor | None = None
) -> ProbeState:
    """A fresh episode for every instance (draws advance only the instances in ``where``)."""
    target = rng.integers(config.n_targets, where=where)
    zeros = torch.zeros_like(target)
    return ProbeState(target=target, steps=zeros, mistakes=zeros.clone())


def reset_where(
    config: ProbeConfig, state: ProbeState, mask: torch.Tensor, rng: InstanceRNG
) -> ProbeState:
    """Replace the instances selected by ``mask`` (B,) with fresh episodes."""
    fresh = initial_state(config, rng, where=mask)
    return ProbeState(
        target=torch.where(mask, fresh.target, state.target),
        steps=torch.where(mask, fresh.steps, state.steps),
        mistakes=torch.where(mask, fresh.mistakes, state.mistakes),
    )


def step(
    config: ProbeConfig, state: ProbeState, action: torch.Tensor, rng: InstanceRNG
) -> tuple[ProbeState, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Score ``action`` (B,) against the target, then draw the next target.

    Returns the new state, reward (B,) float32, terminated (B,) bool and truncated (B,) bool.
    """
    correct = action == state.target
    mistakes = state.mistakes + (~correct).long()
    steps = state.steps + 1
    terminated = mistakes >= config.patience
    truncated = (steps >= config.max_steps) & ~terminated
    next_target = rng.integers(config.n_targets)
    new_state = ProbeState(target=next_target, steps=steps, mistakes=mistakes)
    return new_state, correct.to(torch.float32), terminated, truncated


def observe(config: ProbeConfig, state: ProbeState) -> torch.Tensor:
    """Observation (B, n_targets + 2): one-hot target, elapsed fraction, mistake fraction."""
    one_hot = torch.nn.functional.one_hot(state.target, config.n_targets).to(torch.float32)
    elapsed = (state.steps.to(torch.float32) / config.max_steps)[:, None]
    mistakes = (state.mistakes.to(torch.float32) / config.patience)[:, None]
    return torch.cat([one_hot, elapsed, mistakes], dim=1)
