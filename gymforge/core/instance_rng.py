"""Per-instance random numbers for batched torch dynamics.

A batched env must give instance ``i`` the same trajectory whatever else is in the batch, on any
device, without a Python loop over instances. A ``torch.Generator`` per instance would need that
loop, and one generator for the whole batch couples the instances. So batched dynamics draw from a
*counter-based* generator instead: every random number is a hash of ``(seed_i, counter_i, lane)``,
computed with integer tensor ops that run the same on CPU and GPU.

The hash is the 32-bit finaliser of MurmurHash3 applied over the key words; it is not
cryptographic, but its output passes the usual uniformity checks and is ample for simulation.
The seeds that key the streams are checked and expanded by :mod:`gymforge.core.reset_seeds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

_MASK32 = 0xFFFFFFFF
_GOLDEN = 0x9E3779B9


def _fmix32(x: torch.Tensor) -> torch.Tensor:
    """MurmurHash3's 32-bit finaliser on int64 tensors holding values in [0, 2**32)."""
    x = x ^ (x >> 16)
    x = (x * 0x85EBCA6B) & _MASK32
    x = x ^ (x >> 13)
    x = (x * 0xC2B2AE35) & _MASK32
    return x ^ (x >> 16)


def seed_key(seed: torch.Tensor) -> torch.Tensor:
    """Mix an int64 seed (both halves) into a 32-bit stream key."""
    h = _fmix32((seed & _MASK32) ^ _GOLDEN)
    return _fmix32(h ^ (((seed >> 32) & _MASK32) * 0x27D4EB2F & _MASK32))


def hash_uint32(key: torch.Tensor, counter: torch.Tensor, lane: torch.Tensor) -> torch.Tensor:
    """Hash a stream ``key``, an int64 ``counter`` and a ``lane`` (broadcastable) to uint32 in int64.

    The per-instance part (key, counter) is mixed once; each lane then costs one finaliser.
    """
    return _hash_mixed_lane(key, counter, _mix_lane(lane))


def _mix_lane(lane: torch.Tensor) -> torch.Tensor:
    return (lane * 0xFD7046C5 + 0xB55A4F09) & _MASK32


def _hash_mixed_lane(
    key: torch.Tensor, counter: torch.Tensor, lane_mix: torch.Tensor
) -> torch.Tensor:
    """:func:`hash_uint32` with the lane already mixed by :func:`_mix_lane`."""
    counter_mix = (counter & _MASK32) * 0x165667B1 ^ ((counter >> 32) & _MASK32) * 0xD3A2646C
    h = _fmix32(key ^ (counter_mix & _MASK32))
    return _fmix32(h ^ lane_mix)


_LANES: dict[tuple[int, torch.device], torch.Tensor] = {}


def _mixed_lanes(n: int, device: torch.device) -> torch.Tensor:
    """Lanes ``0 .. n-1`` as ``(1, n)`` int64 on ``device``, mixed by :func:`_mix_lane`; made
    once per (n, device)."""
    key = (n, device)
    lane = _LANES.get(key)
    if lane is None:
        lane = torch.arange(n, device=device, dtype=torch.int64)[None, :]
        lane = _LANES[key] = _mix_lane(lane)
    return lane


_HEAD_LANES: dict[tuple[int, torch.device, int], torch.Tensor] = {}


def _head_lanes(n: int, device: torch.device, step: int = 1) -> torch.Tensor:
    """Lanes ``0 .. n-1`` mixed by :func:`_mix_lane` and then by the first xor-shift of
    :func:`_fmix32` (``l ^ (l >> 16)``), as an ``(n, 1)`` int32 column with the same 32 bits; made
    once per (n, device, step). ``step``: only every ``step``-th lane (``0, step, ...``), as a
    ``(ceil(n / step), 1)`` column. See :meth:`InstanceRNG.uniform_lanes` for why."""
    key = (n, device, step)
    lane = _HEAD_LANES.get(key)
    if lane is None:
        mixed = _mixed_lanes(n, device)
        lane = (mixed ^ (mixed >> 16)).to(torch.int32).view(n, 1)
        lane = _HEAD_LANES[key] = lane[::step].contiguous()
    return lane


# fmix32's steps: an xor with the value shifted right, then (but for the last) a multiplication
_FMIX_STEPS = ((16, 0x85EBCA6B), (13, 0xC2B2AE35), (16, None))


def _fmix32_int32_(
    x: torch.Tensor, tmp: torch.Tensor, steps: tuple[tuple[int, int | None], ...] = _FMIX_STEPS
) -> torch.Tensor:
    """:func:`_fmix32` in place on the 32 bits held in an int32 tensor (half the memory traffic
    of int64); ``tmp`` is scratch of ``x``'s shape; ``steps``: a suffix of ``_FMIX_STEPS`` to
    finish a hash whose first steps were taken elsewhere.

    Multiplication wraps modulo 2**32 as on uint32, and ``(x >> k) & (2**(32-k) - 1)`` is the
    logical shift of the bits, so the result has exactly the bits of ``_fmix32``.
    """
    for shift, mul in steps:
        torch.bitwise_right_shift(x, shift, out=tmp).bitwise_and_((1 << (32 - shift)) - 1)
        x.bitwise_xor_(tmp)
        if mul is not None:
            x.mul_(mul - (1 << 32))  # the uint32 constant's bits as an int32
    return x


def _counter_head(key: torch.Tensor, counter: torch.Tensor) -> torch.Tensor:
    """The per-instance half of the hash, :func:`_fmix32` of ``key ^ counter_mix`` (as in
    :func:`_hash_mixed_lane`) stopped before its last xor-shift; int64 in [0, 2**32).

    In int64 the low 32 bits of a product depend only on the factors' low 32 bits, so
    ``counter * C`` and ``(counter >> 32) * C`` need no mask before multiplying (one mask after
    the xors instead of four), and a right shift of a value in [0, 2**32) is the logical one.
    """
    x = counter * 0x165667B1
    x ^= (counter >> 32) * 0xD3A2646C
    x ^= key
    x &= _MASK32
    for shift, mul in _FMIX_STEPS[:-1]:
        x ^= x >> shift
        x.mul_(mul).bitwise_and_(_MASK32)
    return x


_INVERSE_2_24: dict[tuple[torch.dtype, torch.device], torch.Tensor] = {}


def _inverse_2_24(dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """``2**-24`` as a 0-d ``dtype`` tensor on ``device``, made once per (dtype, device)."""
    key = (dtype, device)
    found = _INVERSE_2_24.get(key)
    if found is None:
        found = _INVERSE_2_24[key] = torch.tensor(1.0 / 16777216.0, dtype=dtype, device=device)
    return found


@dataclass
class InstanceRNG:
    """Independent random streams for ``B`` instances, advanced by per-instance counters.

    Attributes:
        seed: int64 tensor of shape ``(B,)``, the seed of each instance.
        counter: int64 tensor of shape ``(B,)``, how many draws each instance has made.
        key: int64 tensor of shape ``(B,)``, the seed mixed once into a 32-bit stream key.
    """

    seed: torch.Tensor  # (B,) int64
    counter: torch.Tensor  # (B,) int64
    key: torch.Tensor  # (B,) int64

    @classmethod
    def create(cls, seeds: list[int], device: torch.device | str = "cpu") -> InstanceRNG:
        seed = torch.tensor(seeds, dtype=torch.int64, device=device)
        return cls(seed=seed, counter=torch.zeros_like(seed), key=seed_key(seed))

    def reseed(self, mask: torch.Tensor, seeds: torch.Tensor) -> None:
        """Give the instances selected by boolean ``mask`` (B,) new ``seeds`` (B,) and zero counters."""
        self.seed = torch.where(mask, seeds, self.seed)
        self.key = torch.where(mask, seed_key(seeds), self.key)
        self.counter = torch.where(mask, torch.zeros_like(self.counter), self.counter)

    def uniform(self, *shape: int, where: torch.Tensor | None = None) -> torch.Tensor:
        """Draw float32 uniforms in [0, 1) of shape ``(B, *shape)``.

        Only the counters of the instances selected by the boolean mask ``where`` (B,) advance
        (all when ``None``); draws for the others are computed but must be discarded by the
        caller. So an instance's stream depends on its own history only, never on the batch.
        """
        lane_mix = _mixed_lanes(math.prod(shape), self.seed.device)
        bits = _hash_mixed_lane(self.key[:, None], self.counter[:, None], lane_mix)
        self.counter = self.counter + (1 if where is None else where.long())
        # 24 high bits give exactly representable float32 values in [0, 1).
        u = (bits >> 8).to(torch.float32) * (1.0 / 16777216.0)
        return u.reshape(self.seed.shape[0], *shape)

    def uniform_lanes(
        self,
        n: int,
        where: torch.Tensor | None = None,
        dtype: torch.dtype = torch.float32,
        step: int = 1,
    ) -> torch.Tensor:
        """:meth:`uniform` with the batch axis last: shape ``(n, B)``, where element ``[j, i]`` is
        the very number ``uniform(n)[i, j]`` would give (same counters, same lanes), as ``dtype``
        (float32 or float64: the values are multiples of 2**-24, exact in both).

        ``step``: compute only every ``step``-th of the ``n`` lanes (``0, step, 2 * step, ...``;
        shape ``(ceil(n / step), B)``), for a caller that would discard the others; the draw is
        still one of ``n`` lanes (the counters advance as with ``step=1``).

        For batch-last state layouts (one contiguous row of ``B`` per lane). The per-instance
        half of the hash is computed once per instance (:func:`_counter_head`), and the lanes'
        hash finishes in int32. The first xor-shift of the lane's finaliser distributes over the
        xor of the two halves, ``(h ^ l) ^ ((h ^ l) >> 16) = (h ^ (h >> 16)) ^ (l ^ (l >> 16))``,
        and ``h ^ (h >> 16)`` undoes the last xor-shift of ``h``'s own finaliser, so the head
        stops before it and the lanes come pre-shifted (:func:`_head_lanes`): the same bits as
        ``uniform`` with fewer torch calls, which dominate at small batches.
        """
        head = _counter_head(self.key, self.counter).to(torch.int32)  # the same 32 bits
        bits = torch.bitwise_xor(head[None, :], _head_lanes(n, self.seed.device, step))
        bits.mul_(_FMIX_STEPS[0][1] - (1 << 32))
        _fmix32_int32_(bits, torch.empty_like(bits), _FMIX_STEPS[1:])
        self.counter = self.counter + (1 if where is None else where)
        bits.bitwise_right_shift_(8).bitwise_and_(0xFFFFFF)  # the 24 high bits, as in uniform
        # (one op converts and scales: an integer tensor times a 0-d ``dtype`` tensor is ``dtype``)
        return torch.mul(bits, _inverse_2_24(dtype, bits.device))

    def integers(self, high: int, *shape: int, where: torch.Tensor | None = None) -> torch.Tensor:
        """Draw int64 values uniformly in ``[0, high)`` of shape ``(B, *shape)``; see :meth:`uniform`."""
        if high < 1:
            raise ValueError(f"high must be >= 1, got {high}")
        return torch.clamp((self.uniform(*shape, where=where) * high).long(), max=high - 1)
