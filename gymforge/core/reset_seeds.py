"""The seeds a reset takes: checked, and expanded to one per instance of a batch.

Torch-free (the SimPy LineFlow engine uses it too). The random streams that these seeds key in
the batched engines are :mod:`gymforge.core.instance_rng`'s.
"""

from __future__ import annotations

import numpy as np

MAX_SEED = 2**63 - 1


def validate_seed(seed: object, field: str = "seed") -> int:
    """Return ``seed`` as an int, or raise ``ValueError`` naming ``field`` and the allowed range."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{field} must be an int in [0, {MAX_SEED}] or None, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ValueError(f"{field} must be in [0, {MAX_SEED}], got {seed}")
    return int(seed)


def instance_seeds(
    seed: int | list[int] | None, num_envs: int, rng: np.random.Generator
) -> list[int]:
    """Expand a reset ``seed`` into one seed per instance.

    ``None`` draws fresh seeds from ``rng``; an int ``s`` gives instances ``s, s+1, …`` (the
    convention of Gymnasium's vector envs, so instance ``i`` of a batch seeded with ``s`` equals a
    single env seeded with ``s+i``); a list gives each instance its own seed.
    """
    if seed is None:
        return [int(s) for s in rng.integers(0, 2**62, size=num_envs)]
    if isinstance(seed, (list, tuple, np.ndarray)):
        if len(seed) != num_envs:
            raise ValueError(f"seed list must have num_envs={num_envs} entries, got {len(seed)}")
        return [validate_seed(s, f"seed[{i}]") for i, s in enumerate(seed)]
    base = validate_seed(seed)
    if base + num_envs - 1 > MAX_SEED:
        raise ValueError(f"seed must be at most {MAX_SEED - num_envs + 1} for num_envs={num_envs}")
    return [base + i for i in range(num_envs)]


def batch_reset_seeds(
    seed: int | list[int] | None, num_envs: int, rng: np.random.Generator
) -> tuple[list[int], int | None]:
    """The seeds of a batched ``reset(seed=...)``, checked before anything changes, and the seed
    to reseed the batch's numpy generator with.

    Returns ``(instance seeds, generator seed)``: :func:`instance_seeds` (``None`` draws them
    from ``rng``), and the first instance's seed when ``seed`` is given (Gymnasium's vector
    convention), else None: ``rng`` goes on. Every batched env (``TorchVectorEnv`` and the
    multi-agent batched games) seeds this way.
    """
    seeds = instance_seeds(seed, num_envs, rng)
    return seeds, None if seed is None else seeds[0]
