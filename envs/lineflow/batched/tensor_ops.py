"""Tensor operations the batched LineFlow engine's rules are made of, in the forms that are fast
on the CPU (the same results as the plain ops; see ``docs/design/lineflow_engine.md``).
"""

from __future__ import annotations

import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched.phases import (
    N_PHASES,
)

CHOOSE_ARITHMETIC = 8192  # elements from which ``_choose`` computes instead of ``where``


def _uniform_rows(rng: InstanceRNG, rows: int, where: torch.Tensor) -> torch.Tensor:
    """One uniform per row (R, B) float64: ``rng.uniform(rows)`` transposed (same numbers)."""
    return rng.uniform_lanes(rows, where=where, dtype=torch.float64)


def _uniform_firsts(rng: InstanceRNG, rows: int, where: torch.Tensor) -> torch.Tensor:
    """``_uniform_pairs(rng, rows, where)[:, 0]`` (R, B) alone: the same draw (the counters
    advance the same), without computing the second numbers."""
    return rng.uniform_lanes(2 * rows, where=where, dtype=torch.float64, step=2)


def _uniform_pairs(rng: InstanceRNG, rows: int, where: torch.Tensor) -> torch.Tensor:
    """Two uniforms per row (R, 2, B) float64: ``rng.uniform(rows, 2)`` with the batch axis last;
    ``u[:, j]`` is a (R, B) view of contiguous rows."""
    return rng.uniform_lanes(2 * rows, where=where, dtype=torch.float64).view(rows, 2, -1)


def _lookup(table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``table[index]`` for a 1-D ``table``: an index_select, several times faster on the CPU than
    advanced indexing at these sizes."""
    return table.index_select(0, index.reshape(-1)).view(index.shape)


def _any(mask: torch.Tensor) -> bool:
    """``bool(mask.any())`` for a bool tensor: a max over its bytes, several times faster on the
    CPU than ``any`` (which is not vectorized for bool)."""
    return mask.numel() > 0 and bool(mask.view(torch.uint8).max())


def _any_rows(mask: torch.Tensor) -> torch.Tensor:
    """``mask.any(dim=0)`` for a bool (rows, B) tensor, as ``_any`` a max over bytes."""
    return mask.view(torch.uint8).amax(dim=0).view(torch.bool)


def _and_not(mask: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """``mask & ~other`` for bool tensors in one op instead of two: ``other < mask`` is True
    exactly where ``mask`` is True and ``other`` False."""
    return other < mask


def _at(values: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """``values`` (N, B) at rows ``index``: a gather for an (R, B) index, or whole rows for an
    (R,) index (the same row in every instance), a much cheaper copy of contiguous rows."""
    return values.index_select(0, index) if index.dim() == 1 else values.gather(0, index)


def _add_at(values: torch.Tensor, index: torch.Tensor, mask: torch.Tensor, sign: int) -> None:
    """Add ``sign`` (1 or -1) to ``values`` (N, B) integers at rows ``index`` (as ``_at``) of the
    rows in ``mask`` (R, B), in place (no copy of ``values``: nothing else holds the state's
    tensors, which compactions write back in place too)."""
    if index.dim() == 1:
        values.index_add_(0, index, mask.to(values.dtype), alpha=sign)
    else:
        values.scatter_add_(0, index, mask.to(values.dtype) if sign > 0 else -mask.to(values.dtype))


def _or(mask: torch.Tensor | None, other: torch.Tensor) -> torch.Tensor:
    """``mask | other``, or ``other`` when ``mask`` is None (nothing selected yet: the sweep
    starts its masks as None instead of making all-False tensors to or into)."""
    return other if mask is None else mask | other


def _only(mask: torch.Tensor | None, rows: torch.Tensor) -> torch.Tensor:
    """``mask & rows``, or ``rows`` when ``mask`` is None (every instance active)."""
    return rows if mask is None else mask & rows


def _phase_counts(mask: torch.Tensor | None, phase: torch.Tensor, wide: _Wide) -> list[int]:
    """Number of rows selected by ``mask`` (R, B or 1, B; None: all) in each phase (one host sync).

    The int8 phases are counted as bytes (``bincount`` takes uint8; a widening copy to int64 would
    cost more than the count); the others count as ``N_PHASES`` (``_choose`` with ``wide``'s
    filled tensor: arithmetic from ``CHOOSE_ARITHMETIC`` elements on)."""
    selected = phase if mask is None else _choose(mask, phase, wide.phase(N_PHASES))
    counts = torch.bincount(selected.flatten().view(torch.uint8), minlength=N_PHASES + 1)
    return counts.tolist()[:N_PHASES]  # (sliced in Python: one torch call less)


class _Wide:
    """An engine's constants for one batch size B as contiguous tensors: its bool ``(rows, 1)``
    columns as ``(rows, B)`` attributes (``wide.source``), and each phase as a filled ``(R, B)``
    int8 tensor (``wide.phase(START)``); the int8 ``after_work`` phase column is expanded the
    same way.

    On the CPU an op of a bool or int8 ``(rows, B)`` tensor with a broadcast column or a scalar
    runs an unvectorized loop, about ten times slower than the same op with a contiguous operand.

    ``parent``: a ``_Wide`` of a larger batch, whose tensors this one slices (``[:, :B]``, rows
    of ``B`` contiguous elements, as fast an operand; the compacted batches have new sizes all
    the time, and a slice costs less than making the tensor). The constants are stacked, one
    ``(K, rows, B)`` tensor per row count and dtype (the phases with the int8 columns), and each
    is a view of its stack: a smaller batch slices each stack once and unbinds it into all its
    views at once (two torch calls a stack, instead of a slice, a torch call, per constant it
    uses: about twenty in each compacted batch).
    """

    def __init__(
        self, columns: dict[str, torch.Tensor], rows: int, batch: int, parent: _Wide | None = None
    ) -> None:
        self._columns, self._rows, self._batch, self._parent = columns, rows, batch, parent
        if parent is None:
            device = columns["source"].device
            groups: dict[tuple[int, torch.dtype], list[tuple[str | int, torch.Tensor]]] = {}
            for name, column in columns.items():
                groups.setdefault((column.shape[0], column.dtype), []).append((name, column))
            for value in range(N_PHASES + 1):  # (N_PHASES: for ``_phase_counts``)
                filled = torch.full((rows, 1), value, dtype=torch.int8, device=device)
                groups.setdefault((rows, torch.int8), []).append((value, filled))
            self._stacks = [
                (
                    [key for key, _ in items],
                    torch.stack([c for _, c in items]).expand(-1, -1, batch).contiguous(),
                )
                for items in groups.values()
            ]
        else:
            self._stacks = [(keys, stack[:, :, :batch]) for keys, stack in parent._stacks]
        self._phases: dict[int, torch.Tensor] = {}
        for keys, stack in self._stacks:
            for key, value in zip(keys, stack.unbind(0), strict=True):
                if isinstance(key, int):
                    self._phases[key] = value
                else:
                    setattr(self, key, value)

    def __getattr__(self, name: str) -> torch.Tensor:  # (only for names that are no constant)
        raise AttributeError(name)

    def phase(self, value: int) -> torch.Tensor:
        return self._phases[value]


_SCALARS: dict[tuple[float, torch.dtype, torch.device], torch.Tensor] = {}


def _scalar(value: float, like: torch.Tensor) -> torch.Tensor:
    """``value`` as a 0-d tensor of ``like``'s dtype and device, made once: ``torch.where`` with
    a Python number makes a tensor of it at every call (and converts it to the other operand's
    dtype when they differ, as for the int8 phases), torch calls that cost more than the
    ``where`` itself at the batch sizes of compacted sub-runs. (Not for -0.0, which would share
    0.0's entry.)"""
    key = (value, like.dtype, like.device)
    found = _SCALARS.get(key)
    if found is None:
        found = _SCALARS[key] = torch.tensor(value, dtype=like.dtype, device=like.device)
    return found


def _choose(mask: torch.Tensor, value: torch.Tensor | int, phase: torch.Tensor) -> torch.Tensor:
    """``torch.where(mask, value, phase)`` for int8 phases (and an int8 or int ``value``).

    From ``CHOOSE_ARITHMETIC`` elements on, as exact integer arithmetic: three vectorized ops,
    cheaper on the CPU than one ``where``, which is not vectorized (below, ``where``'s one op is).
    """
    if phase.numel() < CHOOSE_ARITHMETIC:
        return torch.where(mask, _scalar(value, phase) if isinstance(value, int) else value, phase)
    return phase + mask.view(torch.int8) * (value - phase)
