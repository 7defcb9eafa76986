"""Training and held-out evaluation seeds, disjoint for every run of either backend.

A run with seed ``S`` and ``K`` training envs (or batched instances) starts env ``i`` with seed
``S + i``; later training episodes draw their seeds below :data:`TRAIN_SEED_LIMIT` (the SB3
backend from a generator per env, the batched engine from each instance's own stream). Held-out
evaluation uses ``EVAL_SEED_BASE + k``, outside that range, so no evaluation episode was ever
seen in training.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: training seeds lie in [0, TRAIN_SEED_LIMIT); held-out evaluation seeds start at EVAL_SEED_BASE.
TRAIN_SEED_LIMIT = 2**62
EVAL_SEED_BASE = 2**62


def check_train_seed(seed: int, n_envs: int) -> int:
    """``seed`` as an int such that ``seed + n_envs - 1`` stays in the training range."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")
    if not 0 <= int(seed) <= TRAIN_SEED_LIMIT - n_envs:
        raise ValueError(
            f"seed must be in [0, {TRAIN_SEED_LIMIT - n_envs}] (training seeds stay below "
            f"2**62; evaluation seeds start there), got {seed}"
        )
    return int(seed)


def eval_seeds(episodes: int, offset: int = 0) -> list[int]:
    """The held-out seeds ``EVAL_SEED_BASE + offset + k`` for ``k < episodes``."""
    return [EVAL_SEED_BASE + offset + k for k in range(episodes)]


def seeds_record(unit: str) -> dict[str, Any]:
    """The ``seeds`` entry of a run's ``config.json`` (``unit``: ``env`` or ``instance``)."""
    return {
        "train": f"[0, {TRAIN_SEED_LIMIT}): {unit} i starts at seed + i",
        "eval_base": EVAL_SEED_BASE,
    }
