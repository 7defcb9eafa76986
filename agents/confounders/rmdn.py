"""``RecursiveMetadataNorm`` (R-MDN): remove the linear effect of confounders from features online.

Shah et al., "Confounder-Free Continual Learning via Recursive Feature Normalization" (ICML 2025).
For a batch of ``N`` samples with design matrix ``X = [y, c, 1]`` (label, confounder columns,
intercept) and flattened features ``F`` (N, d), training mode runs one block recursive-least-squares
step (Woodbury form, an ``N x N`` solve):

    P <- P / lambda
    K  = P X^T (I_N + X P X^T)^-1
    P <- P - K X P + reg I
    beta <- beta + K (F - X beta)

and both modes return ``r = F - X[:, 1:] beta[1:]``: the fitted confounder and intercept parts are
removed, the label column's part stays. With ``lambda = 1`` and ``reg = 0``, after any number of
batches ``beta = (X^T X + delta I)^-1 X^T F`` over all the data seen (ridge regression), where
``P_0 = I / delta``. Gradients flow through ``F`` only; ``beta`` and ``P`` are buffers (saved in
``state_dict``) and are frozen in eval mode.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def design_matrix(y: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """``X = [y, c, 1]``: labels (N,), confounders (N,) or (N, k) -> (N, k + 2) float."""
    c = c.reshape(c.shape[0], -1)
    dtype = c.dtype if c.dtype.is_floating_point else torch.float32
    ones = torch.ones(c.shape[0], 1, dtype=dtype, device=c.device)
    return torch.cat([y.reshape(-1, 1).to(dtype), c.to(dtype), ones], dim=1)


def _check_positive(name: str, value: float, low: float, high: float | None = None) -> None:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    ok = ok and value > low and (high is None or value <= high)
    if not ok:
        allowed = f"({low}, {high}]" if high is not None else f"> {low}"
        raise ValueError(f"must be a finite float in {allowed}, got {value!r}")


class RecursiveMetadataNorm(nn.Module):
    """R-MDN layer over features of ``num_features`` values per sample.

    Args:
        num_features: features per sample after flattening (``C*H*W`` for conv maps).
        num_confounders: confounder columns ``k``; the design matrix has ``k + 2`` columns.
        forgetting_factor: lambda in (0, 1]; the closer to 1, the less forgetting.
        reg: ``reg * I`` added to ``P`` after every update (>= 0; covariance inflation).
        delta: initial scale, ``P_0 = I / delta`` (> 0).

    Shapes: ``forward(x, design)`` with ``x`` (N, ...) of ``num_features`` values per row and
    ``design`` (N, k + 2) = :func:`design_matrix` ``(y, c)``; returns a tensor shaped like ``x``.
    In eval mode the label column is unused, so any value (e.g. 0) may stand in for ``y``.
    """

    def __init__(
        self,
        num_features: int,
        num_confounders: int = 1,
        forgetting_factor: float = 0.999,
        reg: float = 1e-4,
        delta: float = 0.01,
    ) -> None:
        super().__init__()
        for name, value, minimum in (
            ("num_features", num_features, 1),
            ("num_confounders", num_confounders, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
        for name, value, low, high in (
            ("forgetting_factor", forgetting_factor, 0.0, 1.0),
            ("delta", delta, 0.0, None),
        ):
            try:
                _check_positive(name, value, low, high)
            except ValueError as err:
                raise ValueError(f"{name} {err}") from None
        if (
            isinstance(reg, bool)
            or not isinstance(reg, (int, float))
            or not math.isfinite(reg)
            or reg < 0
        ):
            raise ValueError(f"reg must be a finite float >= 0, got {reg!r}")
        self.num_features = num_features
        self.num_confounders = num_confounders
        self.forgetting_factor = float(forgetting_factor)
        self.reg = float(reg)
        self.delta = float(delta)
        p = num_confounders + 2
        self.register_buffer("beta", torch.zeros(p, num_features))
        self.register_buffer("P", torch.eye(p) / self.delta)

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, num_confounders={self.num_confounders}, "
            f"forgetting_factor={self.forgetting_factor}, reg={self.reg}, delta={self.delta}"
        )

    def _check(self, features: torch.Tensor, design: torch.Tensor) -> None:
        p = self.num_confounders + 2
        if features.shape[1] != self.num_features:
            raise ValueError(
                f"x must have {self.num_features} features per sample, got {features.shape[1]}"
            )
        if design.dim() != 2 or design.shape != (features.shape[0], p):
            raise ValueError(
                f"design must have shape ({features.shape[0]}, {p}) = [y, c..., 1], got {tuple(design.shape)}"
            )

    @torch.no_grad()
    def update(self, features: torch.Tensor, design: torch.Tensor) -> None:
        """One block RLS step on flattened ``features`` (N, d) with ``design`` (N, p).

        Computed in the information form, which equals the reference's Woodbury form by the
        push-through identity: with ``P' = P / lambda``,
        ``P' X^T (I_N + X P' X^T)^-1 = (P'^-1 + X^T X)^-1 X^T`` and
        ``P' - K X P' = (P'^-1 + X^T X)^-1``. The p x p algebra runs in float64 (p = k + 2 is
        tiny), so the step costs O(N p^2 + N p d) instead of an N x N solve.
        """
        x64 = design.to(torch.float64)
        p_scaled = self.P.to(torch.float64) / self.forgetting_factor
        eye = torch.eye(x64.shape[1], dtype=torch.float64, device=x64.device)
        # (P'^-1 + X^T X)^-1 = (I + P' X^T X)^-1 P': one small solve, no inverse of P'
        p_new = torch.linalg.solve(torch.addmm(eye, p_scaled, x64.T @ x64), p_scaled)
        p_new = 0.5 * (p_new + p_new.T)
        gain = (p_new @ x64.T).to(self.beta.dtype)  # (p, N)
        self.P.copy_(torch.add(p_new, eye, alpha=self.reg))
        x = design.to(self.beta.dtype)
        f = features.detach().to(self.beta.dtype)
        self.beta.add_(gain @ torch.addmm(f, x, self.beta, alpha=-1.0))

    def forward(self, x: torch.Tensor, design: torch.Tensor) -> torch.Tensor:
        features = x.reshape(x.shape[0], -1)
        self._check(features, design)
        if self.training:
            self.update(features, design)
        coef = self.beta[1:].to(features.dtype)
        fitted = design[:, 1:].to(features.dtype) @ coef
        return (features - fitted).reshape(x.shape)
