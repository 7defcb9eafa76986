"""Several uniform draws of an :class:`~gymforge.core.instance_rng.InstanceRNG` in one pass.

A DE generation draws a few uniform tensors in a row (donor indices, crossover start and run
length, random bound repairs). :func:`uniforms` returns exactly what the same sequence of
``rng.uniform(*shape, where=where)`` calls returns, and advances the counters the same way, but
hashes every draw in one pass over one ``[B, N]`` block, with the lane part of the hash in
32-bit integers (the hash is 32-bit arithmetic; int64 tensors only hold it). So it is the same
random stream, computed with fewer and cheaper tensor operations.

The hash is :mod:`gymforge.core.instance_rng`'s (MurmurHash3's finaliser over ``(key, counter,
lane)``); ``tests/envs/metabbo/test_fast_paths.py`` checks the draws against ``rng.uniform``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import torch
from torch import Tensor

from gymforge.core import instance_rng
from gymforge.core.instance_rng import InstanceRNG

__all__ = ["uniforms"]

_LAYOUTS: dict[tuple[tuple[int, ...], torch.device], tuple[Tensor, list[tuple[int, int]]]] = {}


def _layout(sizes: tuple[int, ...], device: torch.device) -> tuple[Tensor, list[tuple[int, int]]]:
    """Mixed lanes of every draw side by side, ``[1, N]`` int32, and each draw's column range."""
    key = (sizes, device)
    if key not in _LAYOUTS:
        lanes = [instance_rng._mixed_lanes(n, device) for n in sizes]
        ends = torch.tensor(sizes).cumsum(0).tolist()
        spans = [(end - n, end) for n, end in zip(sizes, ends, strict=True)]
        _LAYOUTS[key] = (torch.cat(lanes, dim=1).to(torch.int32), spans)
    return _LAYOUTS[key]


@functools.cache
def _draw_offsets(n: int, device: torch.device) -> Tensor:
    """``[n]`` int64 ``0..n-1`` (a shared constant, never modified)."""
    return torch.arange(n, device=device)


def uniforms(
    rng: InstanceRNG, shapes: Sequence[tuple[int, ...]], where: Tensor | None = None
) -> list[Tensor]:
    """``[rng.uniform(*s, where=where) for s in shapes]``: the same float32 values, the same
    counter updates (each draw advances the instances in ``where``, default all, by one)."""
    sizes = tuple(math.prod(s) for s in shapes)
    lanes, spans = _layout(sizes, rng.seed.device)
    b = rng.seed.shape[0]
    ks = _draw_offsets(len(sizes), rng.counter.device)
    if where is None:  # every instance advances: each draw's counter is counter + s
        step: Tensor | int = len(sizes)
        counter = rng.counter[:, None] + ks  # [B, S]
    else:
        step = where.long()
        counter = rng.counter[:, None] + step[:, None] * ks  # [B, S]: each draw's counter
    # the per-(key, counter) half of the hash, as instance_rng._hash_mixed_lane computes it
    mask = instance_rng._MASK32
    counter_mix = (counter & mask) * 0x165667B1 ^ ((counter >> 32) & mask) * 0xD3A2646C
    head = instance_rng._fmix32(rng.key[:, None] ^ (counter_mix & mask)).to(torch.int32)  # [B, S]
    bits = torch.empty(b, lanes.shape[1], dtype=torch.int32, device=lanes.device)
    for s, (lo, hi) in enumerate(spans):
        torch.bitwise_xor(head[:, s : s + 1], lanes[:, lo:hi], out=bits[:, lo:hi])
    tmp = torch.empty_like(bits)
    instance_rng._fmix32_int32_(bits, tmp)
    # the 24 high bits, exactly representable in float32, scaled into [0, 1)
    bits.bitwise_right_shift_(8).bitwise_and_(0xFFFFFF)
    u = bits.to(torch.float32).mul_(1.0 / 16777216.0)
    rng.counter = rng.counter + (step if where is None else step * len(sizes))
    return [u[:, lo:hi].reshape(b, *s) for (lo, hi), s in zip(spans, shapes, strict=True)]
