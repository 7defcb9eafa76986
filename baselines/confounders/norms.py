"""Baseline normalisation layers with the ``module(x, design)`` interface of the R-MDN layer.

- :class:`BatchNormLayer`: BatchNorm (2-D over channels for conv maps, 1-D otherwise).
- :class:`MetadataNorm` (MDN, Lu et al. CVPR 2021): a kernel ``(X^T X)^-1`` precomputed on the
  whole training set; per training batch ``B = kernel X_b^T F_b`` (keeps gradients through F),
  output ``F - (n_train / n_batch) X_b[:, 1:] B[1:]``. The stored coefficients are a running
  average ``beta <- (1 - m) beta + m (n_train / n_batch) B`` used in eval mode as
  ``F - X[:, 1:] beta[1:]``. (The reference stores ``B`` unscaled and rescales by its fixed
  training batch size at eval; storing the scaled value is the same at a constant batch size and
  lets evaluation use any batch size.)
- :class:`PMDNLayer` (PMDN, Vento et al. MICCAI 2022): ``beta`` learned by gradient descent;
  output ``F - X[:, 1:] beta[1:]`` with the penalty ``||F - X[:, 1:] beta[1:]||^2`` added to the
  loss (here divided by ``N * d`` so that one weight suits every layer size).

As in R-MDN, a training batch holding NaN or inf never reaches a stored statistic: BatchNorm's
running mean and variance and MDN's running ``beta`` keep their values (the batch's output is
still computed; PMDN stores nothing but its parameter, which the optimiser owns).

The factories (:func:`batchnorm_norm`, :func:`mdn_norm`, :func:`pmdn_norm`) plug into
:class:`~gymforge.agents.confounders.models.ConfounderCNN` and ``ConfounderViT``.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional

from gymforge.agents.confounders.models import NormFactory
from gymforge.agents.confounders.rmdn import all_finite


class BatchNormLayer(nn.Module):
    """BatchNorm over a feature ``shape``: ``BatchNorm2d`` for (C, H, W), ``BatchNorm1d`` otherwise."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        super().__init__()
        self.shape = shape
        self.bn = nn.BatchNorm2d(shape[0]) if len(shape) == 3 else nn.BatchNorm1d(math.prod(shape))

    def forward(self, x: torch.Tensor, design: torch.Tensor | None = None) -> torch.Tensor:
        flat = x if len(self.shape) == 3 else x.reshape(x.shape[0], -1)
        bn = self.bn
        if self.training and bn.track_running_stats and not all_finite(x):
            # batch statistics only: the running mean and variance keep their values
            out = functional.batch_norm(flat, None, None, bn.weight, bn.bias, True, 0.0, bn.eps)
        else:
            out = bn(flat)
        return out.reshape(x.shape)


class MetadataNorm(nn.Module):
    """MDN layer; call :meth:`set_training_design` with the training set's design matrix first.

    Args:
        num_features: features per sample after flattening.
        num_columns: columns of the design matrix ``[y, c..., 1]``.
        momentum: ``m`` of the stored ``beta``'s running average.
    """

    def __init__(self, num_features: int, num_columns: int = 3, momentum: float = 0.1) -> None:
        super().__init__()
        if not 0.0 < momentum <= 1.0:
            raise ValueError(f"momentum must be in (0, 1], got {momentum!r}")
        self.momentum = momentum
        self.register_buffer("kernel", torch.eye(num_columns))
        self.register_buffer("dataset_size", torch.tensor(0, dtype=torch.int64))
        self.register_buffer("beta", torch.zeros(num_columns, num_features))

    def set_training_design(self, design: torch.Tensor) -> None:
        """Precompute the kernel ``(X^T X)^-1`` on the whole training set's design matrix."""
        x = design.to(torch.float64)
        self.kernel.copy_(torch.linalg.inv(x.T @ x).to(self.kernel.dtype))
        self.dataset_size.fill_(design.shape[0])

    def forward(self, x: torch.Tensor, design: torch.Tensor) -> torch.Tensor:
        if int(self.dataset_size) == 0:
            raise RuntimeError("call set_training_design(X_train) before using an MDN layer")
        features = x.reshape(x.shape[0], -1)
        design = design.to(features.dtype)
        scale = int(self.dataset_size) / features.shape[0]
        if self.training:
            coef = scale * (self.kernel.to(features.dtype) @ design.T @ features)
            with torch.no_grad():  # a batch with NaN or inf leaves beta as it was
                moved = (1.0 - self.momentum) * self.beta + self.momentum * coef.detach()
                self.beta.copy_(torch.where(torch.isfinite(moved).all(), moved, self.beta))
        else:
            coef = self.beta.to(features.dtype)
        residual = features - design[:, 1:] @ coef[1:]
        return residual.reshape(x.shape)


class PMDNLayer(nn.Module):
    """PMDN layer: ``beta`` is a parameter; :attr:`penalty` holds the last forward's penalty."""

    def __init__(self, num_features: int, num_columns: int = 3) -> None:
        super().__init__()
        self.beta = nn.Parameter(torch.zeros(num_columns, num_features))
        self.penalty = torch.zeros(())

    def forward(self, x: torch.Tensor, design: torch.Tensor) -> torch.Tensor:
        features = x.reshape(x.shape[0], -1)
        residual = features - design[:, 1:].to(features.dtype) @ self.beta[1:]
        self.penalty = residual.pow(2).mean()
        return residual.reshape(x.shape)


def batchnorm_norm() -> NormFactory:
    return BatchNormLayer


def mdn_norm(momentum: float = 0.1, num_confounders: int = 1) -> NormFactory:
    return lambda shape: MetadataNorm(math.prod(shape), num_confounders + 2, momentum)


def pmdn_norm(num_confounders: int = 1) -> NormFactory:
    return lambda shape: PMDNLayer(math.prod(shape), num_confounders + 2)


def set_mdn_training_design(model: nn.Module, design: torch.Tensor) -> None:
    """Give every MDN layer of ``model`` the training set's design matrix."""
    for module in model.modules():
        if isinstance(module, MetadataNorm):
            module.set_training_design(design)


def pmdn_penalty(model: nn.Module) -> torch.Tensor:
    """Sum of the penalties of ``model``'s PMDN layers from their last forward (0 if none)."""
    terms = [m.penalty for m in model.modules() if isinstance(m, PMDNLayer)]
    return torch.stack(terms).sum() if terms else torch.zeros(())
