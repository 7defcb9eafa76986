"""Batched state of the confounder-stream env."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class StreamState:
    """State of ``B`` independent streams (every instance has its own draws and order).

    The stage data are drawn once per episode, as the reference draws every stage from one seed:
    stage ``k``'s images are rendered from the same uniforms and noise with that stage's shift.
    The pixel noise is either held per instance (``noise``, generator draws) or read from a
    shared table (``noise_rows``, counter draws; see :mod:`.counter_draws`).
    """

    u_cf: torch.Tensor  # (B, 2N) float32, confounder uniforms
    u_mf: torch.Tensor  # (B, 2N) float32, main-effect uniforms
    noise: torch.Tensor | None  # (B, 2N, 1024) float32 standard normal pixel noise (v0 draws)
    order: torch.Tensor  # (B, stages * passes, 2N) int64, the shuffled order of every pass
    t: torch.Tensor  # (B,) int64, batches already scored in this episode
    # (B, 2N) int64 rows of the shared noise table (counter draws; then ``noise`` is None)
    noise_rows: torch.Tensor | None = None
