"""Reusable scratch buffers for the large matrices and temporaries of a MetaBBO generation.

Crowding's nearest-neighbour scores and the mean pairwise distance feature each fill one
``[B, P, P]`` matrix per generation (2.5 MB in float32 at ``B = 64``, ``P = 100``). Allocated
afresh every time, such blocks come from new pages that the kernel must map and zero (several
hundred microseconds, more than the matrix product itself); kept here and reused, they stay
mapped and cached. :func:`block_size` splits a batch so that one block's largest matrix stays
below :data:`MAX_BLOCK_BYTES`, which bounds the memory held whatever the batch size, and keeps a
block's passes (product, clamp, square root, float64 copy and sum; or the argmin passes) within
the core's L2 cache: a 2.5 MB matrix streams each pass through the shared L3 instead. Every
instance is its own matrix product and reduction, so the blocking does not change any bits.
:func:`temporary` does the same for the ``[B, P, D]``-sized temporaries of a generation (donor
rows, trial vectors, the objective's work tensors), up to :data:`MAX_TEMPORARY_ELEMENTS` each,
and :func:`row_block` splits the objective's element-wise passes over a large batch into blocks
of instances whose work tensors stay in cache (:data:`ROW_BLOCK_BYTES`).

A buffer is scratch for the duration of one call: callers must not keep views of it. Buffers are
per thread, so concurrent environments in different threads do not share them.
"""

from __future__ import annotations

import math
import threading

import torch
from torch import Tensor

__all__ = [
    "MAX_BLOCK_BYTES",
    "MAX_TEMPORARY_ELEMENTS",
    "ROW_BLOCK_BYTES",
    "block_size",
    "row_block",
    "scratch",
    "temporary",
]

#: largest ``[b, P, P]`` block (bytes) that one scratch matrix holds: 6 instances at ``P = 100``
#: for the float64 copy of the pairwise distances, 13 for crowding's float32 scores
MAX_BLOCK_BYTES = 1 << 19
#: largest temporary (elements) that :func:`temporary` keeps in scratch memory
MAX_TEMPORARY_ELEMENTS = 1 << 20
#: largest work tensor (bytes) of one block of the objective's element-wise passes on a CPU
ROW_BLOCK_BYTES = 1 << 20

_LOCAL = threading.local()


def scratch(name: str, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> Tensor:
    """A contiguous ``shape`` tensor of scratch memory (contents undefined), reused across calls
    with the same ``name``, dtype and device (it grows as needed, never shrinks).

    The view of each shape is kept too, so that a repeated call (every generation asks for the
    same shapes) is one dictionary lookup.
    """
    views: dict[tuple, Tensor] = _LOCAL.__dict__.setdefault("views", {})
    key = (name, shape, dtype, device)
    view = views.get(key)
    if view is not None:
        return view
    buffers: dict[tuple[str, torch.dtype, torch.device], Tensor] = _LOCAL.__dict__.setdefault(
        "buffers", {}
    )
    numel = math.prod(shape)
    buf = buffers.get((name, dtype, device))
    if buf is None or buf.numel() < numel:
        buf = buffers[(name, dtype, device)] = torch.empty(numel, dtype=dtype, device=device)
        # views of a smaller buffer of this name would keep it alive: drop them
        for old in [k for k in views if k[0] == name and k[2] == dtype and k[3] == device]:
            del views[old]
    view = views[key] = buf[:numel].view(shape)
    return view


def temporary(
    name: str, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device
) -> Tensor:
    """Memory for a temporary of one call: :func:`scratch` memory when it holds at most
    :data:`MAX_TEMPORARY_ELEMENTS` elements (the usual batch sizes, where fresh blocks of a few
    hundred kilobytes per generation cost more in page faults than in arithmetic), a fresh
    tensor above (so that the memory held stays bounded whatever the batch size)."""
    if math.prod(shape) <= MAX_TEMPORARY_ELEMENTS:
        return scratch(name, shape, dtype, device)
    return torch.empty(shape, dtype=dtype, device=device)


def block_size(per_instance: int, itemsize: int, limit: int = MAX_BLOCK_BYTES) -> int:
    """Instances per block so that a block of ``per_instance`` elements of ``itemsize`` bytes per
    instance holds at most ``limit`` bytes (at least one instance per block).

    A byte budget, not an element count: crowding's scores are float32 only, so their blocks
    hold twice the instances of the pairwise distances' float64 copies, with half the block
    iterations for the same cache footprint. ``t.split(block_size(...))`` gives the blocks of a
    batch ``t`` as views in one call, cheaper than slicing block by block in Python."""
    return max(1, limit // max(per_instance * itemsize, 1))


def row_block(per_instance: int, like: Tensor) -> int:
    """Instances per block of the objective's element-wise passes (rotations, term series) over
    tensors of ``per_instance`` elements per instance, shaped and typed like ``like``.

    On a CPU, a pass over a whole large batch streams each of its work tensors through the
    shared L3 cache or memory (a rotation of 850 instances took twice as long per instance as one
    of 52); blocks of at most :data:`ROW_BLOCK_BYTES` per work tensor stay in the core's cache.
    Elsewhere (a GPU) one block: more, smaller kernels would only add launches."""
    if like.device.type != "cpu":
        return max(1, like.shape[0])
    return block_size(per_instance, like.element_size(), ROW_BLOCK_BYTES)
