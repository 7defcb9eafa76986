"""Counter-based episode draws of the confounder stream (``draws="counter"``, the v1 ids).

The version-0 draws give every instance its own ``torch.Generator`` and keep its pixel noise in
memory: a Python loop over the instances at reset, ``2N x 1024`` normals per instance (1 GiB of
noise at B = 1024 with the defaults), and different numbers on CPU and GPU. Here everything is
drawn for the whole batch at once from the env's counter-based per-instance streams
(:class:`~gymforge.core.instance_rng.InstanceRNG`):

- the confounder and main-effect uniforms, as before one per sample;
- each pass's shuffled order, as the stable argsort of one uniform key per sample;
- the pixel noise as rows of a **shared noise table** (as in evolution strategies at scale):
  ``M x 1024`` standard normals drawn once from a fixed seed on the CPU (so identical on every
  device), of which instance ``i`` reads rows ``(o_i + s_i j) mod M`` for its samples
  ``j < 2N``, with a random offset ``o_i`` and a random odd stride ``s_i`` (``M`` a power of
  two, so the rows of one instance are distinct). An instance's noise is still ``2N`` independent
  standard normal images; two instances may share rows, which only correlates them, not the
  statistics each one sees.

Reset is then a few batched tensor ops (no per-instance loop, no host reads) and the state per
instance is ``O(N)`` numbers; a step gathers its noise rows from the table.
"""

from __future__ import annotations

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.confounders.config import IMAGE_SIZE

PIXELS = IMAGE_SIZE * IMAGE_SIZE

#: seed of the shared noise table (fixed: part of the v1 ids' definition)
TABLE_SEED = 20_241_231
#: least number of rows of the noise table (a power of two)
MIN_TABLE_ROWS = 4096

_TABLES: dict[tuple[int, str], torch.Tensor] = {}


def table_rows(samples_per_stage: int) -> int:
    """Rows ``M`` of the noise table for ``2N`` samples: a power of two, at least ``2N``."""
    rows = MIN_TABLE_ROWS
    while rows < samples_per_stage:
        rows *= 2
    return rows


def noise_table(rows: int, device: torch.device) -> torch.Tensor:
    """The ``(rows, 1024)`` float32 standard normal table, drawn on the CPU from
    :data:`TABLE_SEED` and copied to ``device`` (cached: one per size and device)."""
    key = (rows, str(device))
    if key not in _TABLES:
        generator = torch.Generator(device="cpu").manual_seed(TABLE_SEED)
        table = torch.randn(rows, PIXELS, generator=generator, dtype=torch.float32)
        _TABLES[key] = table.to(device)
    return _TABLES[key]


def draw(
    rng: InstanceRNG, where: torch.Tensor, samples_per_stage: int, passes: int, rows: int
) -> dict[str, torch.Tensor]:
    """Fresh episode draws for every instance (only those of ``where`` advance their streams).

    Returns ``u_cf``, ``u_mf`` (B, 2N) float32, ``order`` (B, passes, 2N) int64 and
    ``noise_rows`` (B, 2N) int64 table rows.
    """
    n = samples_per_stage
    u = rng.uniform((2 + passes) * n + 2, where=where)
    keys = u[:, 2 * n : (2 + passes) * n].reshape(-1, passes, n)
    order = torch.argsort(keys, dim=-1, stable=True)
    offset = (u[:, -2].double() * rows).long()
    stride = 2 * (u[:, -1].double() * (rows // 2)).long() + 1  # odd: a unit mod a power of two
    j = torch.arange(n, device=u.device)
    noise_rows = (offset[:, None] + stride[:, None] * j) % rows
    return {"u_cf": u[:, :n], "u_mf": u[:, n : 2 * n], "order": order, "noise_rows": noise_rows}
