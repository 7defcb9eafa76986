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

The update has two implementations of the same algebra, tested against each other: a torch one
(any device, dtype and number of confounders) and, for one confounder on CPU, one on zero-copy
NumPy views with a closed-form 3 x 3 step, which halves the layer's cost at fc widths where the
fixed per-call cost of a dozen tiny operations dominates.
"""

from __future__ import annotations

import math

import numpy as np
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


_NUMPY_DTYPES = (torch.float32, torch.float64)


def _mul3(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    """3 x 3 matrix product of nested lists."""
    (a0, a1, a2), (b0, b1, b2) = a, b
    return [[r[0] * b0[j] + r[1] * b1[j] + r[2] * b2[j] for j in range(3)] for r in (a0, a1, a2)]


def _p_update_3x3(p: list[list[float]], gram: list[list[float]], lam: float) -> list[list[float]]:
    """``(I + P' G)^-1 P'`` with ``P' = P / lam`` for 3 x 3 ``P`` and ``G``, symmetrised.

    The common case (one confounder) in plain float64 Python: at fc-layer widths the update's cost
    is the fixed per-call cost of its tiny operations, and a closed-form 3 x 3 inverse is cheaper
    than tensor kernels. Same algebra as the general path of :meth:`RecursiveMetadataNorm.update`.
    """
    ps = [[v / lam for v in row] for row in p]
    (a00, a01, a02), (a10, a11, a12), (a20, a21, a22) = _mul3(ps, gram)
    a00, a11, a22 = a00 + 1.0, a11 + 1.0, a22 + 1.0
    c00, c01, c02 = a11 * a22 - a12 * a21, a02 * a21 - a01 * a22, a01 * a12 - a02 * a11
    c10, c11, c12 = a12 * a20 - a10 * a22, a00 * a22 - a02 * a20, a02 * a10 - a00 * a12
    c20, c21, c22 = a10 * a21 - a11 * a20, a01 * a20 - a00 * a21, a00 * a11 - a01 * a10
    scale = 1.0 / (a00 * c00 + a01 * c10 + a02 * c20)
    adj = [
        [c00 * scale, c01 * scale, c02 * scale],
        [c10 * scale, c11 * scale, c12 * scale],
        [c20 * scale, c21 * scale, c22 * scale],
    ]
    (o00, o01, o02), (o10, o11, o12), (o20, o21, o22) = _mul3(adj, ps)
    s01, s02, s12 = 0.5 * (o01 + o10), 0.5 * (o02 + o20), 0.5 * (o12 + o21)
    return [[o00, s01, s02], [s01, o11, s12], [s02, s12, o22]]


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
        ``P' - K X P' = (P'^-1 + X^T X)^-1 = (I + P' X^T X)^-1 P'``. The p x p algebra runs in
        float64 (p = k + 2 is tiny), so the step costs O(N p^2 + N p d) instead of an N x N solve.
        """
        features, design = features.detach(), design.detach()
        if self._numpy_path(features, design):
            self._update_numpy(features, design)
        else:
            self._update_torch(features, design)

    def _update_torch(self, features: torch.Tensor, design: torch.Tensor) -> None:
        """:meth:`update` in torch, any device, dtype and number of confounders."""
        x64 = design.to(torch.float64)
        p_scaled = self.P.to(torch.float64) / self.forgetting_factor
        eye = torch.eye(x64.shape[1], dtype=torch.float64, device=x64.device)
        p_new = torch.linalg.solve(torch.addmm(eye, p_scaled, x64.T @ x64), p_scaled)
        p_new = 0.5 * (p_new + p_new.T)
        self.P.copy_(torch.add(p_new, eye, alpha=self.reg))
        x = design.to(self.beta.dtype)
        gain = p_new.to(self.beta.dtype) @ x.T  # (p, N)
        residual = torch.addmm(features.to(self.beta.dtype), x, self.beta, alpha=-1.0)
        self.beta.addmm_(gain, residual)

    def _numpy_path(self, features: torch.Tensor, design: torch.Tensor) -> bool:
        """Whether :meth:`_update_numpy` applies: one confounder, CPU, one float dtype throughout."""
        beta = self.beta
        return (
            self.num_confounders == 1
            and beta.is_cpu
            and features.is_cpu
            and design.is_cpu
            and features.dtype is design.dtype is beta.dtype is self.P.dtype
            and beta.dtype in _NUMPY_DTYPES
            and not features.requires_grad
        )

    def _update_numpy(self, features: torch.Tensor, design: torch.Tensor) -> np.ndarray:
        """The same step on zero-copy NumPy views of CPU tensors; returns ``X[:, 1:] beta[1:]``.

        At fc-layer widths (the reference's R-MDN(84)) the step is a dozen tiny operations whose
        cost is their fixed per-call overhead, several times lower in NumPy than through the torch
        dispatcher; the 3 x 3 algebra is a closed form in float64 Python, and the coefficient step
        uses ``K (F - X beta) = P_new (X^T F - X^T X beta)`` so no (p, N) gain is formed.
        """
        x = design.numpy()
        beta = self.beta.numpy()
        p_buffer = self.P.numpy()
        x64 = x if x.dtype == np.float64 else x.astype(np.float64)
        gram = x64.T @ x64
        p_new = np.array(_p_update_3x3(p_buffer.tolist(), gram.tolist(), self.forgetting_factor))
        cross = x.T @ features.numpy()
        beta += p_new.astype(beta.dtype) @ (cross - gram.astype(beta.dtype) @ beta)
        p_new.flat[::4] += self.reg
        p_buffer[...] = p_new
        return x[:, 1:] @ beta[1:]

    def forward(self, x: torch.Tensor, design: torch.Tensor) -> torch.Tensor:
        features = x.reshape(x.shape[0], -1)
        self._check(features, design)
        if self.training:
            detached, design = features.detach(), design.detach()
            if self._numpy_path(detached, design):
                fitted = torch.from_numpy(self._update_numpy(detached, design))
                return (features - fitted).reshape(x.shape)
            self._update_torch(detached, design)
        coef = self.beta[1:].to(features.dtype)
        residual = torch.addmm(features, design[:, 1:].to(features.dtype), coef, alpha=-1.0)
        return residual.reshape(x.shape)
