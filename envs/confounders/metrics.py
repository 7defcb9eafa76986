"""Metrics of confounded continual learning, in torch.

- :func:`balanced_accuracy`, :func:`group_accuracy`: per batch, batched over leading dimensions.
- :func:`u_distance_correlation_sqr` (bias-corrected dCor², Székely & Rizzo 2014, as
  ``dcor.u_distance_correlation_sqr``), :func:`distance_correlation_sqr` (the V-statistic) and
  :func:`per_class_dcor_sqr` (dCor² computed within each class, as the R-MDN and MDN code do).
- :func:`average_accuracy`, :func:`backward_transfer`, :func:`forgetting` over an accuracy matrix
  ``R[i, j]`` = accuracy on stage ``j`` after training through stage ``i``.
"""

from __future__ import annotations

import torch


def group_accuracy(pred: torch.Tensor, y: torch.Tensor, num_groups: int = 2) -> torch.Tensor:
    """Accuracy within each group (label class) over the last dim: shape (..., num_groups).

    A group absent from a batch gets NaN.
    """
    correct = (pred == y).to(torch.float64)
    onehot = torch.nn.functional.one_hot(y.long(), num_groups).to(torch.float64)  # (..., n, G)
    counts = onehot.sum(dim=-2)
    hits = (onehot * correct[..., None]).sum(dim=-2)
    return torch.where(counts > 0, hits / counts.clamp(min=1), torch.full_like(hits, float("nan")))


def balanced_accuracy(pred: torch.Tensor, y: torch.Tensor, num_groups: int = 2) -> torch.Tensor:
    """Mean of the per-class accuracies over the classes present (over the last dim), float64."""
    per_group = group_accuracy(pred, y, num_groups)
    return torch.nanmean(per_group, dim=-1)


def _distances(x: torch.Tensor) -> torch.Tensor:
    x = x.reshape(x.shape[0], -1).to(torch.float64)
    return torch.cdist(x, x, compute_mode="donot_use_mm_for_euclid_dist")


def _u_centred(a: torch.Tensor) -> torch.Tensor:
    n = a.shape[0]
    rows = a.sum(dim=1, keepdim=True) / (n - 2)
    cols = a.sum(dim=0, keepdim=True) / (n - 2)
    total = a.sum() / ((n - 1) * (n - 2))
    out = a - rows - cols + total
    return out.fill_diagonal_(0.0)


def _double_centred(a: torch.Tensor) -> torch.Tensor:
    return a - a.mean(dim=1, keepdim=True) - a.mean(dim=0, keepdim=True) + a.mean()


def _ratio(xy: torch.Tensor, xx: torch.Tensor, yy: torch.Tensor) -> torch.Tensor:
    denom = torch.sqrt(xx * yy)
    return torch.where(denom > 0, xy / torch.where(denom > 0, denom, 1.0), torch.zeros_like(xy))


def u_distance_correlation_sqr(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """Bias-corrected squared distance correlation of samples ``x`` (n, ...) and ``c`` (n, ...).

    Rows are samples; every other dimension is flattened. Needs n >= 4. Can be negative.
    Returns a float64 scalar; 0 when either U-centred variance is 0.
    """
    n = x.shape[0]
    if n < 4 or c.shape[0] != n:
        raise ValueError(
            f"x and c must have the same number of rows n >= 4, got {n} and {c.shape[0]}"
        )
    a, b = _u_centred(_distances(x)), _u_centred(_distances(c))
    scale = 1.0 / (n * (n - 3))
    return _ratio((a * b).sum() * scale, (a * a).sum() * scale, (b * b).sum() * scale)


def distance_correlation_sqr(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """Squared distance correlation, V-statistic (Székely et al. 2007), float64 scalar."""
    n = x.shape[0]
    if n < 2 or c.shape[0] != n:
        raise ValueError(
            f"x and c must have the same number of rows n >= 2, got {n} and {c.shape[0]}"
        )
    a, b = _double_centred(_distances(x)), _double_centred(_distances(c))
    return _ratio((a * b).mean(), (a * a).mean(), (b * b).mean())


def per_class_dcor_sqr(
    features: torch.Tensor, c: torch.Tensor, y: torch.Tensor, num_classes: int = 2
) -> torch.Tensor:
    """u-dCor²(features | y = k, c | y = k) for each class k: shape (num_classes,), float64.

    A class with fewer than 4 samples gets NaN.
    """
    out = torch.full((num_classes,), float("nan"), dtype=torch.float64)
    for k in range(num_classes):
        mask = y == k
        if int(mask.sum()) >= 4:
            out[k] = u_distance_correlation_sqr(features[mask], c[mask])
    return out


def _check_matrix(r: torch.Tensor) -> torch.Tensor:
    r = torch.as_tensor(r, dtype=torch.float64)
    if r.dim() != 2 or r.shape[0] != r.shape[1] or r.shape[0] < 1:
        raise ValueError(f"accuracy matrix must be square (T, T) with T >= 1, got {tuple(r.shape)}")
    return r


def average_accuracy(r: torch.Tensor) -> float:
    """Mean accuracy over all stages after training on the last one: mean of the last row."""
    return float(_check_matrix(r)[-1].mean())


def backward_transfer(r: torch.Tensor) -> float:
    """BWT (Lopez-Paz & Ranzato, GEM; Avalanche): mean over j < T-1 of ``R[T-1, j] - R[j, j]``.

    Negative when learning later stages hurts earlier ones. 0 for a single stage.
    """
    r = _check_matrix(r)
    t = r.shape[0]
    if t == 1:
        return 0.0
    idx = torch.arange(t - 1)
    return float((r[-1, idx] - r[idx, idx]).mean())


def forgetting(r: torch.Tensor) -> float:
    """Average forgetting (Chaudhry et al.): mean over j < T-1 of ``max_{l<T-1} R[l, j] - R[T-1, j]``.

    Only rows ``l >= j`` (trained on stage j) count towards the maximum. 0 for a single stage.
    """
    r = _check_matrix(r)
    t = r.shape[0]
    if t == 1:
        return 0.0
    values = [float(r[j : t - 1, j].max() - r[-1, j]) for j in range(t - 1)]
    return sum(values) / len(values)
