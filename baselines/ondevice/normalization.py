"""Running observation statistics on the env's device.

The mean and variance of every observation feature over all observations seen so far, merged
batch by batch (Chan et al.'s parallel update), in float64 so that millions of samples do not
drift. A batch with a non-finite value is skipped and counted, never merged: one NaN would
otherwise poison the statistics for good.
"""

from __future__ import annotations

from typing import Any

import torch


class RunningObsNorm:
    """``(obs - mean) / sqrt(var + eps)``, clipped to ``[-clip, clip]``.

    Args:
        size: number of features.
        device: where the statistics live (the env's device).
        clip: bound of the normalised values.
        eps: added to the variance.
    """

    def __init__(
        self, size: int, device: torch.device | str, clip: float = 10.0, eps: float = 1e-8
    ) -> None:
        self.mean = torch.zeros(size, dtype=torch.float64, device=device)
        self.var = torch.ones(size, dtype=torch.float64, device=device)
        self.count = torch.zeros((), dtype=torch.float64, device=device)
        self.skipped = torch.zeros((), dtype=torch.int64, device=device)
        self.clip = float(clip)
        self.eps = float(eps)
        self._scale: tuple[torch.Tensor, torch.Tensor] | None = None

    def update(self, batch: torch.Tensor) -> None:
        """Merge a batch ``(N, size)``; a batch with NaN or inf is skipped (``skipped`` += 1).

        The check and the merge are tensor ops (no host sync): a skipped batch merges with
        weight zero.
        """
        x = batch.detach().reshape(-1, self.mean.shape[0]).to(torch.float64)
        finite = torch.isfinite(x).all()
        x = torch.where(finite, x, torch.zeros_like(x))
        n = torch.where(finite, float(x.shape[0]), 0.0).to(torch.float64)
        batch_mean = x.mean(0)
        batch_var = x.var(0, unbiased=False)
        total = self.count + n
        weight = n / total.clamp(min=1.0)
        delta = batch_mean - self.mean
        self.mean = self.mean + delta * weight
        m2 = self.var * self.count + batch_var * n + delta**2 * self.count * weight
        self.var = torch.where(total > 0, m2 / total.clamp(min=1.0), self.var)
        self.count = total
        self.skipped = self.skipped + (~finite).to(torch.int64)
        self._scale = None

    def __call__(self, obs: torch.Tensor) -> torch.Tensor:
        if self._scale is None:
            std = torch.sqrt(self.var + self.eps)
            self._scale = (self.mean.to(torch.float32), (1.0 / std).to(torch.float32))
        mean, inv_std = self._scale
        return ((obs - mean) * inv_std).clamp_(-self.clip, self.clip)

    def state_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean.cpu(),
            "var": self.var.cpu(),
            "count": self.count.cpu(),
            "skipped": self.skipped.cpu(),
            "clip": self.clip,
            "eps": self.eps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        device = self.mean.device
        for key in ("mean", "var", "count", "skipped"):
            value = state[key].to(device)
            if value.shape != getattr(self, key).shape:
                raise ValueError(
                    f"observation statistics {key!r} have shape {tuple(value.shape)}, expected "
                    f"{tuple(getattr(self, key).shape)}"
                )
            setattr(self, key, value.to(getattr(self, key).dtype))
        self.clip, self.eps = float(state["clip"]), float(state["eps"])
        self._scale = None
