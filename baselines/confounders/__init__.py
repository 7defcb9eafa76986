"""Baselines of the confounder streams: BatchNorm / MDN / PMDN layers and continual strategies."""

from gymforge.baselines.confounders.norms import (
    BatchNormLayer,
    MetadataNorm,
    PMDNLayer,
    batchnorm_norm,
    mdn_norm,
    pmdn_norm,
    pmdn_penalty,
    set_mdn_training_design,
)
from gymforge.baselines.confounders.strategies import EWC, Naive, Replay

__all__ = [
    "EWC",
    "BatchNormLayer",
    "MetadataNorm",
    "Naive",
    "PMDNLayer",
    "Replay",
    "batchnorm_norm",
    "mdn_norm",
    "pmdn_norm",
    "pmdn_penalty",
    "set_mdn_training_design",
]
