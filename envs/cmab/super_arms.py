"""Super arms as item ids: validation and the ``choice`` action encoding.

A super arm of size ``k`` over ``m`` ids is a list of ``k`` distinct ids in ``[0, m)`` (ordered
for ranked lists). Two action formats reach the env:

- ``"ids"``: the action *is* the list of ids, ``MultiDiscrete([m] * k)``. Duplicates are invalid,
  so a point of this space sampled at random is often not a super arm (about 10% for m=100,
  k=5), which breaks random agents and RL policies that sample each entry independently.
- ``"choice"`` (default): entry ``j`` picks the ``a_j``-th smallest id not chosen by entries
  ``0 … j−1``, ``MultiDiscrete([m, m−1, …, m−k+1])`` (a Lehmer code). Every point of this space is
  a valid super arm and every super arm has exactly one encoding, so PPO, ``action_space.sample()``
  and ``check_env`` work unchanged. :func:`encode_choice` and :func:`decode_choice` convert.
"""

from __future__ import annotations

import numpy as np
import torch

ACTION_FORMATS = ("choice", "ids")


def check_action_format(action_format: str) -> str:
    if action_format not in ACTION_FORMATS:
        raise ValueError(f"action_format must be one of {ACTION_FORMATS}, got {action_format!r}")
    return action_format


def validate_super_arm(
    ids: torch.Tensor,
    n_ids: int,
    size: int,
    field: str = "super_arm",
    what: str = "items",
    size_name: str = "list_size",
) -> torch.Tensor:
    """Return ``ids`` as int64 of shape ``(B, size)`` or raise ``ValueError`` naming the problem.

    Accepts one super arm ``(size,)`` or a batch ``(B, size)``. Checks, in this order: integer
    dtype, the size (``size`` distinct {what}), the id range ``[0, n_ids)``, and duplicates.
    """
    ids = torch.as_tensor(np.asarray(ids) if not isinstance(ids, torch.Tensor) else ids)
    if ids.dtype.is_floating_point or ids.dtype == torch.bool or ids.dtype.is_complex:
        raise ValueError(f"{field} must hold integer ids, got dtype {ids.dtype}")
    if ids.dim() == 1:
        ids = ids[None]
    if ids.dim() != 2 or ids.shape[1] != size:
        raise ValueError(
            f"{field} must list exactly {size_name}={size} distinct {what} "
            f"(shape ({size},) or (B, {size})), "
            f"got shape {tuple(ids.shape)}"
        )
    ids = ids.long()
    bad = (ids < 0) | (ids >= n_ids)
    if bool(bad.any()):
        row = int(torch.nonzero(bad.any(1))[0, 0])
        raise ValueError(f"{field}[{row}] ids must be in [0, {n_ids - 1}], got {ids[row].tolist()}")
    check_distinct(ids, n_ids, field, what)
    return ids


def check_distinct(
    ids: torch.Tensor, n_ids: int, field: str = "super_arm", what: str = "items"
) -> None:
    """Raise ``ValueError`` naming the first row of ``ids`` ``(B, k)`` that repeats an id.

    ``ids`` must already lie in ``[0, n_ids)``. Each row writes its positions ``0 … k−1`` into a
    ``(B, n_ids)`` table at its ids and reads them back: a row without repeats reads back its
    own positions, and a row with a repeat cannot (two positions share one cell). Cheaper than
    sorting the rows, and the same for any ``k``.
    """
    batch, size = ids.shape
    dtype = torch.int8 if size <= 128 else torch.int64
    positions = torch.arange(size, dtype=dtype, device=ids.device).expand(batch, size)
    table = torch.zeros(batch, n_ids, dtype=dtype, device=ids.device)
    table.scatter_(1, ids, positions)
    repeats = table.gather(1, ids) != positions
    if bool(repeats.any()):
        row = int(torch.nonzero(repeats.any(1))[0, 0])
        raise ValueError(f"{field}[{row}] must not repeat {what}, got {ids[row].tolist()}")


def choice_nvec(n_ids: int, size: int) -> np.ndarray:
    """The ``MultiDiscrete`` sizes of the ``choice`` encoding: ``[m, m−1, …, m−k+1]``."""
    return np.arange(n_ids, n_ids - size, -1, dtype=np.int64)


def decode_choice(action: torch.Tensor, n_ids: int) -> torch.Tensor:
    """Ids ``(B, k)`` of the ``choice``-encoded ``action`` ``(B, k)`` (entries already in range).

    Decoded right to left: before step ``i`` the entries ``j > i`` hold their rank among the ids
    left after picks ``0 … i``; putting pick ``i`` back raises each of them that is ``>=`` its
    rank ``a_i`` by one. After step 0 every entry is its rank among all ids, i.e. the id itself:
    ``k − 1`` in-place vector operations on shrinking column blocks, no ``(B, m)`` work.
    """
    ids = action.to(torch.int64, copy=True)
    for i in range(ids.shape[1] - 2, -1, -1):
        later = ids[:, i + 1 :]
        later += later >= ids[:, i : i + 1]
    return ids


def encode_choice(ids: torch.Tensor) -> torch.Tensor:
    """The ``choice`` encoding ``(B, k)`` of valid super arms ``ids`` ``(B, k)``."""
    ids = ids.long()
    position = torch.arange(ids.shape[1], device=ids.device)
    earlier = position[None, :] < position[:, None]  # [j, l]: l comes before j
    earlier_smaller = (ids[:, None, :] < ids[:, :, None]) & earlier
    return ids - earlier_smaller.sum(2)


def ids_to_mask(ids: torch.Tensor, n_ids: int) -> torch.Tensor:
    """Boolean membership mask ``(B, n_ids)`` of the super arms ``ids`` ``(B, k)``."""
    mask = torch.zeros(ids.shape[0], n_ids, dtype=torch.bool, device=ids.device)
    return mask.scatter(1, ids, True)
