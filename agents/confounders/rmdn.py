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

A batch holding NaN or inf (in the features or the design), or finite values so large that the
step overflows (e.g. 3e38 in float32), never reaches ``beta`` and ``P``: one such batch would
make every later output NaN. With ``nonfinite="skip"`` (the default) the batch
is not fitted (``skipped_batches`` counts it) and its output uses the coefficients as they are;
with ``nonfinite="raise"`` it raises a ``ValueError`` before any state changes.

The update has two implementations of the same algebra, tested against each other: a torch one
(any device, dtype and number of confounders) and, for one confounder on CPU, one on zero-copy
NumPy views (cached while the buffers keep their storage) with a written-out closed-form 3 x 3
step, which cuts the layer's cost at fc widths, where the fixed per-call cost of a dozen tiny
operations dominates, to about 1.2-1.3x a BatchNorm layer's (``benchmarks/confounders/speed.py``).
"""

from __future__ import annotations

import math
from typing import Any

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
#: what R-MDN does with a batch holding NaN or inf.
NONFINITE_MODES = ("skip", "raise")


def all_finite(values: torch.Tensor) -> bool:
    """True when every entry is finite (a finite sum proves it; an overflowing one is rechecked)."""
    if bool(torch.isfinite(values.sum())):
        return True
    return bool(torch.isfinite(values).all())


def _p_update_3x3(p: list[list[float]], gram: list[list[float]], lam: float) -> list[list[float]]:
    """``(I + P' G)^-1 P'`` with ``P' = P / lam`` for 3 x 3 ``P`` and ``G``, symmetrised.

    The common case (one confounder) in plain float64 Python, written out: at fc-layer widths the
    update's cost is the fixed per-call cost of its tiny operations, and a closed-form 3 x 3
    inverse (adjugate over determinant) is cheaper than tensor kernels. Same algebra as the
    general path of :meth:`RecursiveMetadataNorm.update`.
    """
    (p00, p01, p02), (p10, p11, p12), (p20, p21, p22) = p
    (g00, g01, g02), (g10, g11, g12), (g20, g21, g22) = gram
    p00, p01, p02 = p00 / lam, p01 / lam, p02 / lam
    p10, p11, p12 = p10 / lam, p11 / lam, p12 / lam
    p20, p21, p22 = p20 / lam, p21 / lam, p22 / lam
    # a = I + P' G
    a00 = p00 * g00 + p01 * g10 + p02 * g20 + 1.0
    a01 = p00 * g01 + p01 * g11 + p02 * g21
    a02 = p00 * g02 + p01 * g12 + p02 * g22
    a10 = p10 * g00 + p11 * g10 + p12 * g20
    a11 = p10 * g01 + p11 * g11 + p12 * g21 + 1.0
    a12 = p10 * g02 + p11 * g12 + p12 * g22
    a20 = p20 * g00 + p21 * g10 + p22 * g20
    a21 = p20 * g01 + p21 * g11 + p22 * g21
    a22 = p20 * g02 + p21 * g12 + p22 * g22 + 1.0
    # cofactors (the adjugate of a), then a^-1 = adj / det
    c00, c01, c02 = a11 * a22 - a12 * a21, a02 * a21 - a01 * a22, a01 * a12 - a02 * a11
    c10, c11, c12 = a12 * a20 - a10 * a22, a00 * a22 - a02 * a20, a02 * a10 - a00 * a12
    c20, c21, c22 = a10 * a21 - a11 * a20, a01 * a20 - a00 * a21, a00 * a11 - a01 * a10
    scale = 1.0 / (a00 * c00 + a01 * c10 + a02 * c20)
    c00, c01, c02 = c00 * scale, c01 * scale, c02 * scale
    c10, c11, c12 = c10 * scale, c11 * scale, c12 * scale
    c20, c21, c22 = c20 * scale, c21 * scale, c22 * scale
    # a^-1 P', symmetrised
    o00 = c00 * p00 + c01 * p10 + c02 * p20
    o01 = c00 * p01 + c01 * p11 + c02 * p21
    o02 = c00 * p02 + c01 * p12 + c02 * p22
    o10 = c10 * p00 + c11 * p10 + c12 * p20
    o11 = c10 * p01 + c11 * p11 + c12 * p21
    o12 = c10 * p02 + c11 * p12 + c12 * p22
    o20 = c20 * p00 + c21 * p10 + c22 * p20
    o21 = c20 * p01 + c21 * p11 + c22 * p21
    o22 = c20 * p02 + c21 * p12 + c22 * p22
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
        nonfinite: ``"skip"`` (default) or ``"raise"``: what a training batch with NaN or inf
            does (see the module docstring); ``beta`` and ``P`` stay unchanged either way.

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
        nonfinite: str = "skip",
    ) -> None:
        super().__init__()
        if nonfinite not in NONFINITE_MODES:
            raise ValueError(f"nonfinite must be one of {NONFINITE_MODES}, got {nonfinite!r}")
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
        self.nonfinite = nonfinite
        #: training batches not fitted because they held NaN or inf.
        self.skipped_batches = 0
        p = num_confounders + 2
        self.register_buffer("beta", torch.zeros(p, num_features))
        self.register_buffer("P", torch.eye(p) / self.delta)
        self._numpy_cache: tuple | None = None

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, num_confounders={self.num_confounders}, "
            f"forgetting_factor={self.forgetting_factor}, reg={self.reg}, delta={self.delta}, "
            f"nonfinite={self.nonfinite!r}"
        )

    def _fits(self, features: torch.Tensor, design: torch.Tensor) -> bool:
        """True for a batch of finite values; otherwise count it as skipped, or raise."""
        if all_finite(features) and all_finite(design):
            return True
        self._reject("holds NaN or inf in x or design")
        return False

    def _reject(self, what: str) -> None:
        """A batch that cannot be fitted: raise (``nonfinite="raise"``) or count it as skipped."""
        if self.nonfinite == "raise":
            raise ValueError(
                f"R-MDN batch {what}; beta and P are unchanged (nonfinite='skip' skips such "
                "batches)"
            )
        self.skipped_batches += 1

    def _overflowed(self, features: torch.Tensor | np.ndarray, design: Any) -> None:
        """Reject a finite batch whose update overflowed (values near the dtype's maximum)."""
        largest = max(float(abs(features).max()), float(abs(design).max()))
        self._reject(
            f"has finite values too large to fit (largest magnitude {largest:.3g} in x or "
            "design: their products overflow)"
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
        if not self._fits(features, design):
            return
        views = self._numpy_buffers(features, design)
        if views is not None:
            self._update_numpy(features.numpy(), design.numpy(), *views)
        else:
            self._update_torch(features, design)

    def _update_torch(self, features: torch.Tensor, design: torch.Tensor) -> bool:
        """:meth:`update` in torch, any device, dtype and number of confounders; False (state
        unchanged) when the step overflows."""
        x64 = design.to(torch.float64)
        p_scaled = self.P.to(torch.float64) / self.forgetting_factor
        eye = torch.eye(x64.shape[1], dtype=torch.float64, device=x64.device)
        try:
            p_new = torch.linalg.solve(torch.addmm(eye, p_scaled, x64.T @ x64), p_scaled)
        except torch.linalg.LinAlgError:  # singular in floating point: values too large
            self._overflowed(features, design)
            return False
        p_new = 0.5 * (p_new + p_new.T)
        x = design.to(self.beta.dtype)
        gain = p_new.to(self.beta.dtype) @ x.T  # (p, N)
        residual = torch.addmm(features.to(self.beta.dtype), x, self.beta, alpha=-1.0)
        step = gain @ residual
        if not (all_finite(p_new) and all_finite(step)):
            self._overflowed(features, design)
            return False
        self.P.copy_(torch.add(p_new, eye, alpha=self.reg))
        self.beta.add_(step)
        return True

    def _numpy_buffers(
        self, features: torch.Tensor, design: torch.Tensor
    ) -> tuple[np.ndarray, np.ndarray] | None:
        """NumPy views of ``beta`` and ``P`` when :meth:`_update_numpy` applies, else None.

        It applies for one confounder on CPU with one float dtype throughout (features, design and
        both buffers). The views share memory with the buffers and are cached for as long as the
        buffers keep their tensor objects and storage (``.to()``, ``.double()`` or assigning
        ``.data`` make new views; ``load_state_dict`` copies in place and keeps them).
        """
        buffers = self._buffers
        beta, p = buffers["beta"], buffers["P"]
        cache = self._numpy_cache
        if (
            cache is None
            or cache[0] is not beta
            or cache[1] is not p
            or cache[2] != beta.data_ptr()
            or cache[3] != p.data_ptr()
        ):
            usable = (
                self.num_confounders == 1
                and beta.is_cpu
                and beta.dtype in _NUMPY_DTYPES
                and p.dtype is beta.dtype
            )
            views = (beta.numpy(), p.numpy()) if usable else None
            cache = self._numpy_cache = (beta, p, beta.data_ptr(), p.data_ptr(), views)
        views = cache[4]
        if views is None:
            return None
        dtype = beta.dtype
        if features.dtype is not dtype or design.dtype is not dtype:
            return None
        if not (features.is_cpu and design.is_cpu):
            return None
        return views

    def __getstate__(self) -> dict:
        """Pickle and deepcopy without the cached NumPy views (a copy would not share memory)."""
        return {**super().__getstate__(), "_numpy_cache": None}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self.__dict__.setdefault("_numpy_cache", None)  # pickles from before the cache
        self.__dict__.setdefault("nonfinite", "skip")  # pickles from before the option
        self.__dict__.setdefault("skipped_batches", 0)

    def _update_numpy(
        self, features: np.ndarray, x: np.ndarray, beta: np.ndarray, p_buffer: np.ndarray
    ) -> np.ndarray | None:
        """The same step on NumPy views of CPU tensors; returns the fitted part ``X[:, 1:] beta[1:]``
        (None, state unchanged, when the step overflows).

        At fc-layer widths (the reference's R-MDN(84)) the step is a dozen tiny operations whose
        cost is their fixed per-call overhead, several times lower in NumPy than through the torch
        dispatcher; the 3 x 3 algebra is a closed form in float64 Python, and the coefficient step
        uses ``K (F - X beta) = P_new (X^T F - X^T X beta)`` so no (p, N) gain is formed.
        """
        x64 = x if x.dtype == np.float64 else x.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is checked below
            gram = x64.T @ x64
            try:
                rows = _p_update_3x3(p_buffer.tolist(), gram.tolist(), self.forgetting_factor)
            except ZeroDivisionError:  # singular in floating point: values too large
                self._overflowed(features, x)
                return None
            cross = x.T @ features
            step = np.array(rows, dtype=beta.dtype) @ (cross - gram.astype(beta.dtype) @ beta)
            total = step.sum() + sum(map(sum, rows))
        if not (np.isfinite(total) or (np.isfinite(step).all() and np.isfinite(rows).all())):
            self._overflowed(features, x)
            return None
        beta += step
        reg = self.reg
        (o00, s01, s02), (_, o11, s12), (_, _, o22) = rows
        p_buffer[...] = [[o00 + reg, s01, s02], [s01, o11 + reg, s12], [s02, s12, o22 + reg]]
        return x[:, 1:] @ beta[1:]

    def forward(self, x: torch.Tensor, design: torch.Tensor) -> torch.Tensor:
        features = x if x.dim() == 2 else x.reshape(x.shape[0], -1)
        self._check(features, design)
        if self.training and self._fits(features.detach(), design.detach()):
            views = self._numpy_buffers(features, design)
            if views is None:
                self._update_torch(features.detach(), design.detach())
            else:
                out = self._forward_numpy(x, features, design, views)
                if out is not None:
                    return out
        coef = self.beta[1:].to(features.dtype)
        residual = torch.addmm(features, design[:, 1:].to(features.dtype), coef, alpha=-1.0)
        return residual.reshape(x.shape)

    def _forward_numpy(
        self,
        x: torch.Tensor,
        features: torch.Tensor,
        design: torch.Tensor,
        views: tuple[np.ndarray, np.ndarray],
    ) -> torch.Tensor | None:
        """Training-mode forward through :meth:`_update_numpy` (None when it skipped the batch).

        Without autograd the residual is formed in NumPy as well; with it, one torch subtraction
        keeps the graph through the features (the fitted part is a constant).
        """
        tracked = features.requires_grad
        f = (features.detach() if tracked else features).numpy()
        d = (design.detach() if design.requires_grad else design).numpy()
        fitted = self._update_numpy(f, d, *views)
        if fitted is None:
            return None
        if tracked:
            residual = features - torch.from_numpy(fitted)
        else:
            residual = torch.from_numpy(np.subtract(f, fitted, out=fitted))
        return residual if residual.shape == x.shape else residual.reshape(x.shape)
