"""Dynamics of the confounder-stream env, batched over instances.

Pure functions of (config, state, action): an episode's data are drawn at reset (see
:func:`draw_episode`, or :mod:`.counter_draws` for the v1 ids), so stepping only gathers,
renders and scores a batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gymforge.envs.confounders.config import StreamConfig, SyntheticConfig
from gymforge.envs.confounders.metrics import balanced_accuracy, group_accuracy
from gymforge.envs.confounders.synthetic import draw_base, effects, render
from gymforge.envs.confounders.types import StreamState


@dataclass(frozen=True)
class EnvConfig:
    """The synthetic recipe and the stream walk of one env (see the two configs)."""

    synthetic: SyntheticConfig
    stream: StreamConfig

    @property
    def steps_per_pass(self) -> int:
        return self.synthetic.samples_per_stage // self.stream.batch_size

    @property
    def steps_per_stage(self) -> int:
        return self.stream.passes_per_stage * self.steps_per_pass

    @property
    def episode_length(self) -> int:
        return self.stream.num_stages * self.steps_per_stage


def draw_episode(config: EnvConfig, seeds: list[int], device: torch.device) -> StreamState:
    """Draw a fresh episode for each seed, each from its own ``torch.Generator`` on ``device``."""
    n = config.synthetic.samples_per_stage
    passes = config.stream.num_stages * config.stream.passes_per_stage
    parts = []
    for seed in seeds:
        generator = torch.Generator(device=device).manual_seed(seed)
        base = draw_base(config.synthetic, generator, device)
        order = torch.stack(
            [torch.randperm(n, generator=generator, device=device) for _ in range(passes)]
        )
        parts.append((base.u_cf, base.u_mf, base.noise, order))
    u_cf, u_mf, noise, order = (torch.stack(p) for p in zip(*parts, strict=True))
    t = torch.zeros(len(seeds), dtype=torch.int64, device=device)
    return StreamState(u_cf=u_cf, u_mf=u_mf, noise=noise, order=order, t=t)


def replace_where(state: StreamState, mask: torch.Tensor, fresh: StreamState) -> StreamState:
    """``state`` with the instances selected by ``mask`` (B,) taken from ``fresh`` (B', ...).

    ``fresh`` holds one row per selected instance, in order.
    """
    out = StreamState(**{k: None if v is None else v.clone() for k, v in vars(state).items()})
    for name, value in vars(out).items():
        if value is not None:
            value[mask] = getattr(fresh, name)
    return out


def stage_of(config: EnvConfig, t: torch.Tensor) -> torch.Tensor:
    """Stage index (B,) of the batch at step ``t`` (clamped to the last batch)."""
    t = t.clamp(max=config.episode_length - 1)
    return t // config.steps_per_stage


def batch_indices(config: EnvConfig, state: StreamState) -> torch.Tensor:
    """Sample indices (B, batch_size) of the current batch of every instance."""
    t = state.t.clamp(max=config.episode_length - 1)
    stage = t // config.steps_per_stage
    within = t % config.steps_per_stage
    row = stage * config.stream.passes_per_stage + within // config.steps_per_pass
    start = (within % config.steps_per_pass) * config.stream.batch_size
    cols = start[:, None] + torch.arange(config.stream.batch_size, device=t.device)
    rows = state.order[torch.arange(t.shape[0], device=t.device), row]  # (B, 2N)
    return torch.gather(rows, 1, cols)


def labels(config: EnvConfig, idx: torch.Tensor) -> torch.Tensor:
    """Group labels (B, b) int64 of sample indices: the first N samples are group A (0)."""
    return (idx >= config.synthetic.samples_per_group).long()


def observe(
    config: EnvConfig,
    state: StreamState,
    shifts: torch.Tensor,
    templates: torch.Tensor,
    table: torch.Tensor | None = None,
) -> torch.Tensor:
    """Observation (B, b, 1024 + 1): every image's pixels, then its confounder value
    (``table``: the shared noise table of counter draws)."""
    idx = batch_indices(config, state)
    y = labels(config, idx)
    shift = shifts[stage_of(config, state.t)][:, None]
    cf, mf = effects(
        config.synthetic,
        torch.gather(state.u_cf, 1, idx),
        torch.gather(state.u_mf, 1, idx),
        y,
        shift,
    )
    if state.noise is not None:
        noise = torch.gather(state.noise, 1, idx[..., None].expand(-1, -1, state.noise.shape[-1]))
    else:  # rows of the shared noise table (counter draws)
        assert state.noise_rows is not None and table is not None
        rows = torch.gather(state.noise_rows, 1, idx)
        noise = table.index_select(0, rows.reshape(-1)).reshape(*idx.shape, table.shape[-1])
    images = render(config.synthetic, templates, cf, mf, noise)
    return torch.cat([images, cf[..., None]], dim=-1)


def step(
    config: EnvConfig, state: StreamState, action: torch.Tensor
) -> tuple[StreamState, dict[str, torch.Tensor], torch.Tensor]:
    """Score the predicted probabilities ``action`` (B, b) of the current batch.

    Returns the new state, the revealed info (``y``, ``stage``, ``stage_boundary``,
    ``group_accuracy``) and ``terminated`` (B,) bool. The reward is the info's
    ``balanced_accuracy`` (threshold 0.5).
    """
    idx = batch_indices(config, state)
    y = labels(config, idx)
    pred = (action >= 0.5).long()
    stage = stage_of(config, state.t)
    t = state.t + 1
    terminated = t >= config.episode_length
    boundary = (t % config.steps_per_stage == 0) & ~terminated
    info = {
        "y": y,
        "stage": stage,
        "stage_boundary": boundary,
        "balanced_accuracy": balanced_accuracy(pred, y).to(torch.float32),
        "group_accuracy": group_accuracy(pred, y).to(torch.float32),
    }
    new_state = StreamState(state.u_cf, state.u_mf, state.noise, state.order, t, state.noise_rows)
    return new_state, info, terminated
