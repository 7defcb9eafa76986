"""The 24 noiseless BBOB functions, batched over instances and populations in torch (float64).

A batch of problem instances is a :class:`BBOBInstances` (tensors with a leading instance axis
``B``; one dimension ``D`` per batch, functions may be mixed). :func:`evaluate` computes
``f(x)`` for a population ``x`` of shape ``[B, P, D]`` in one call, never looping over instances:
the transforms the functions share (shift, rotations, ``T_osz``, ``T_asy``, conditioning) run
once each over the rows that need them (:mod:`.bbob_stages`), then each function present finishes
its own rows.

Functions (ids as in COCO's ``bbob`` suite; formulas in :mod:`.bbob_functions`):

==  ==========================================  ==  ========================================
 1  Sphere                                      13  Sharp ridge
 2  Ellipsoidal (separable)                     14  Different powers
 3  Rastrigin (separable)                       15  Rastrigin (rotated)
 4  Bueche-Rastrigin                            16  Weierstrass
 5  Linear slope                                17  Schaffers F7
 6  Attractive sector                           18  Schaffers F7 (moderately ill-conditioned)
 7  Step ellipsoidal                            19  Composite Griewank-Rosenbrock F8F2
 8  Rosenbrock (original)                       20  Schwefel x*sin(x)
 9  Rosenbrock (rotated)                        21  Gallagher 101 peaks
10  Ellipsoidal (rotated)                       22  Gallagher 21 peaks
11  Discus                                      23  Katsuura
12  Bent cigar                                  24  Lunacek bi-Rastrigin
==  ==========================================  ==  ========================================

Two ways to build instances:

- :func:`coco_instances` reproduces COCO's ``bbob`` instances exactly (same ``x_opt``, ``f_opt``,
  rotations and Gallagher peaks as ``cocoex.Suite("bbob", ...)``, from COCO's seeded legacy
  generator), for ``2 <= D <= 40``.
- :func:`random_instances` draws MetaBox-style instances from seeds: ``x_opt ~ 0.8 U[-5, 5]^D``
  (``U[-4, 4]^D``), Haar-random orthogonal ``R`` and ``Q``, ``f_opt = 100 k`` with ``k`` uniform
  in ``1..25``, for ``2 <= D <= 100``. These are *not* COCO instance ids.
- :func:`counter_instances` draws from the same distribution for a whole batch at once, on the
  instances' device, from counter-based streams (:mod:`.bbob_counter`): no per-instance
  generators, other numbers than :func:`random_instances` for the same seed.

Search domain: ``[-5, 5]^D`` for every function. Non-finite inputs: a row of ``x`` that holds a
NaN or an infinity evaluates to ``+inf``, and so does a finite row whose value overflows; the
result is never NaN. Results are bit-reproducible on CPU and do not depend on the rest of the
batch (an instance evaluated alone gives the same bits); on GPU they may differ from CPU in the
last bits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
import torch
from torch import Tensor

from gymforge.core.host_guards import guards_enabled
from gymforge.envs.metabbo.bbob_counter import counter_parameters
from gymforge.envs.metabbo.bbob_functions import FUNCTION_NAMES, KernelArgs
from gymforge.envs.metabbo.bbob_instances import (
    GALLAGHER_PEAKS,
    coco_parameters,
    random_parameters,
)
from gymforge.envs.metabbo.bbob_stages import evaluate_staged

__all__ = [
    "FUNCTION_IDS",
    "FUNCTION_NAMES",
    "MAX_COCO_DIMENSION",
    "MAX_COCO_INSTANCE_ID",
    "MAX_DIMENSION",
    "MIN_DIMENSION",
    "BBOBInstances",
    "coco_instances",
    "counter_instances",
    "evaluate",
    "evaluate_finite",
    "random_instances",
]

FUNCTION_IDS: tuple[int, ...] = tuple(range(1, 25))
MIN_DIMENSION = 2  # the definitions divide by D - 1
MAX_DIMENSION = 100  # random instances; evaluation itself works for any D >= 2
MAX_COCO_DIMENSION = 40  # largest bbob-suite dimension (COCO's legacy generator stops at 44)
MAX_COCO_INSTANCE_ID = 200_000  # keeps every COCO seed below 2^31, as in COCO's C code
MAX_SEED = 2**53  # random_instances seeds


@dataclass(frozen=True)
class BBOBInstances:
    """``B`` BBOB problem instances of one dimension ``D`` (functions may differ per instance).

    For COCO instances ``rot_r`` is COCO's rotation seeded ``rseed + 1000000`` and ``rot_q`` the
    one seeded ``rseed``, except f9, f19, f21 and f22 whose single rotation (seeded ``rseed``) is
    ``rot_r``. Functions that use fewer rotations ignore the others (identity for COCO instances).
    The Gallagher fields have ``K = 101`` peaks if the batch holds f21, ``21`` if it holds only
    f22, and ``0`` otherwise; padding peaks have weight 0.
    """

    function_id: Tensor  # [B] int64, in 1..24
    instance_id: Tensor  # [B] int64, COCO instance id (coco_instances) or seed (random_instances)
    x_opt: Tensor  # [B, D] float64, a global optimum: f(x_opt) = f_opt
    f_opt: Tensor  # [B] float64, optimal value
    rot_r: Tensor  # [B, D, D] float64, orthogonal
    rot_q: Tensor  # [B, D, D] float64, orthogonal
    peak_centers: Tensor  # [B, K, D] float64, Gallagher peak centres in the rotated frame
    peak_scales: Tensor  # [B, K, D] float64, Gallagher per-peak diagonal conditioning
    peak_weights: Tensor  # [B, K] float64, Gallagher peak heights

    def __post_init__(self) -> None:
        _check_instances(self)

    @property
    def batch_size(self) -> int:
        """Number of instances ``B``."""
        return self.x_opt.shape[0]

    @property
    def dimension(self) -> int:
        """Search-space dimension ``D``."""
        return self.x_opt.shape[1]

    @property
    def device(self) -> torch.device:
        """Device of every tensor."""
        return self.x_opt.device

    def to(self, device: torch.device | str) -> BBOBInstances:
        """A copy with every tensor on ``device``."""
        return BBOBInstances(**{f.name: getattr(self, f.name).to(device) for f in fields(self)})

    def select(self, index: Tensor | Sequence[int]) -> BBOBInstances:
        """The instances at ``index`` (integer indices in that order, or a ``[B]`` bool mask)."""
        idx = torch.as_tensor(index, device=self.device)
        idx = torch.nonzero(idx).squeeze(1) if idx.dtype == torch.bool else idx.long()
        return BBOBInstances(**{f.name: getattr(self, f.name)[idx] for f in fields(self)})

    def kernel_args(self) -> KernelArgs:
        """The parameters of a batch of *one* function as its plain kernel
        (:data:`~.bbob_functions.KERNELS`) takes them, with that function's Gallagher peaks."""
        ids = sorted(set(self.function_id.tolist()))
        if len(ids) != 1:
            raise ValueError(f"kernel_args needs instances of one function, got functions {ids}")
        peaks = GALLAGHER_PEAKS.get(ids[0], 0)
        return KernelArgs(
            self.x_opt,
            self.rot_r,
            self.rot_q,
            self.peak_centers[:, :peaks],
            self.peak_scales[:, :peaks],
            self.peak_weights[:, :peaks],
        )

    @staticmethod
    def cat(parts: Sequence[BBOBInstances]) -> BBOBInstances:
        """Concatenate batches of the same dimension along the instance axis."""
        if not parts:
            raise ValueError("parts must hold at least one BBOBInstances, got an empty sequence")
        dims = {p.dimension for p in parts}
        if len(dims) != 1:
            raise ValueError(f"parts must share one dimension, got dimensions {sorted(dims)}")
        k = max(p.peak_weights.shape[1] for p in parts)
        padded = [_pad_peaks(p, k) for p in parts]
        return BBOBInstances(
            **{
                f.name: torch.cat([getattr(p, f.name) for p in padded])
                for f in fields(BBOBInstances)
            }
        )


def _pad_peaks(p: BBOBInstances, k: int) -> BBOBInstances:
    """``p`` with ``k`` Gallagher peak slots (extra slots: weight 0, scale 1)."""
    extra = k - p.peak_weights.shape[1]
    if extra == 0:
        return p
    pad3 = torch.nn.functional.pad
    values = {f.name: getattr(p, f.name) for f in fields(p)}
    values["peak_centers"] = pad3(p.peak_centers, (0, 0, 0, extra))
    values["peak_scales"] = pad3(p.peak_scales, (0, 0, 0, extra), value=1.0)
    values["peak_weights"] = pad3(p.peak_weights, (0, extra))
    return BBOBInstances(**values)


# ----------------------------------------------------------------------------- validation


def _check_instances(inst: BBOBInstances) -> None:
    """Type, shape, dtype, device and range checks; raises ``ValueError`` naming the field."""
    for f in fields(inst):
        if not isinstance(getattr(inst, f.name), Tensor):
            raise ValueError(f"{f.name} must be a torch.Tensor, got {type(getattr(inst, f.name))}")
    if inst.x_opt.dim() != 2:
        raise ValueError(f"x_opt must have shape [B, D], got {tuple(inst.x_opt.shape)}")
    b, d = inst.x_opt.shape
    if d < MIN_DIMENSION:
        raise ValueError(f"dimension must be >= {MIN_DIMENSION} (BBOB divides by D - 1), got {d}")
    k = inst.peak_weights.shape[-1] if inst.peak_weights.dim() == 2 else -1
    expected = {
        "function_id": (b,),
        "instance_id": (b,),
        "f_opt": (b,),
        "rot_r": (b, d, d),
        "rot_q": (b, d, d),
        "peak_centers": (b, k, d),
        "peak_scales": (b, k, d),
        "peak_weights": (b, k),
    }
    for name, shape in expected.items():
        got = tuple(getattr(inst, name).shape)
        if got != shape:
            raise ValueError(f"{name} must have shape {shape} (B={b}, D={d}, K={k}), got {got}")
    for f in fields(inst):
        value = getattr(inst, f.name)
        want = torch.int64 if f.name in ("function_id", "instance_id") else torch.float64
        if value.dtype != want:
            raise ValueError(f"{f.name} must have dtype {want}, got {value.dtype}")
        if value.device != inst.x_opt.device:
            raise ValueError(f"{f.name} is on {value.device}, expected {inst.x_opt.device}")
    ids = inst.function_id
    if bool(((ids < 1) | (ids > len(FUNCTION_IDS))).any()):  # one read, no loop over instances
        _check_function_ids(ids.tolist())
    needed = gallagher_peaks_needed(ids)
    if k < needed:
        raise ValueError(f"peak_weights must hold K >= {needed} peaks for this batch, got K={k}")


def gallagher_peaks_needed(function_ids: Tensor) -> int:
    """Peaks a batch of these functions needs: 101 with f21, 21 with f22 only, else 0."""
    present = torch.isin(
        torch.tensor(list(GALLAGHER_PEAKS), device=function_ids.device), function_ids
    ).tolist()
    return max((k for k, p in zip(GALLAGHER_PEAKS.values(), present, strict=True) if p), default=0)


def _check_function_ids(ids: Sequence[int]) -> None:
    bad = sorted({i for i in ids if i not in FUNCTION_IDS})
    if bad:
        raise ValueError(f"function_ids must be integers in 1..24, got invalid ids {bad}")


def _as_int_list(name: str, values: int | Sequence[int] | Tensor | np.ndarray) -> list[int]:
    """Integers from a scalar, a sequence, a numpy array or a tensor (no floats, no bools)."""
    arr = np.asarray(values.cpu() if isinstance(values, Tensor) else values)
    if arr.ndim == 1 and arr.size == 0:
        return []
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.ndim > 1:
        raise ValueError(f"{name} must be an integer or a 1-D sequence of integers, got {values!r}")
    return [int(v) for v in arr.reshape(-1)]


def _broadcast(a_name: str, a: list[int], b_name: str, b: list[int]) -> tuple[list[int], list[int]]:
    """Repeat a length-1 list to the other's length; the lengths must then agree."""
    if len(a) == 1 and len(b) > 1:
        a = a * len(b)
    if len(b) == 1 and len(a) > 1:
        b = b * len(a)
    if len(a) != len(b):
        raise ValueError(
            f"{a_name} and {b_name} must have the same length, got {len(a)} and {len(b)}"
        )
    return a, b


def _check_dimension(dimension: object, upper: int) -> int:
    """``dimension`` as an int in ``MIN_DIMENSION..upper``."""
    if isinstance(dimension, bool) or not isinstance(dimension, int | np.integer):
        raise ValueError(
            f"dimension must be an integer in {MIN_DIMENSION}..{upper}, got {dimension!r}"
        )
    if not MIN_DIMENSION <= int(dimension) <= upper:
        raise ValueError(f"dimension must be in {MIN_DIMENSION}..{upper}, got {dimension}")
    return int(dimension)


# ----------------------------------------------------------------------------- evaluation


def evaluate(instances: BBOBInstances, x: Tensor) -> Tensor:
    """Objective values ``f(x)`` of shape ``[B, P]`` for a population ``x`` of shape ``[B, P, D]``.

    ``x`` may be any floating dtype on ``instances.device``; it is evaluated in float64. Rows with
    a non-finite coordinate, and rows whose value overflows, evaluate to ``+inf``.
    """
    b, d = instances.batch_size, instances.dimension
    if not isinstance(x, Tensor) or x.dim() != 3 or x.shape[0] != b or x.shape[2] != d:
        shape = tuple(x.shape) if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"x must be a tensor of shape [B={b}, P, D={d}], got {shape}")
    if not x.is_floating_point():
        raise ValueError(f"x must have a floating dtype, got {x.dtype}")
    if x.device != instances.device:
        raise ValueError(f"x is on {x.device}, but the instances are on {instances.device}")
    x = x.to(torch.float64)
    # A finite sum means every coordinate is finite (NaN and infinities propagate), so the
    # usual all-finite population skips the masking; a sum that overflows takes the slow path.
    if not guards_enabled():  # the same bits without asking the device which path to take
        finite = torch.isfinite(x).all(-1)  # [B, P]
        out = evaluate_finite(instances, torch.where(finite[..., None], x, 0.0))
        repaired = ~finite | (torch.isnan(out) & ~finite.all())
        return torch.where(repaired, math.inf, out)
    if math.isfinite(float(x.sum())):
        return evaluate_finite(instances, x)
    finite = torch.isfinite(x).all(-1)  # [B, P]
    out = _evaluate_groups(instances, torch.where(finite[..., None], x, 0.0))
    return torch.where(~finite | torch.isnan(out), math.inf, out)


def evaluate_finite(instances: BBOBInstances, x: Tensor) -> Tensor:
    """:func:`evaluate` for a float64 ``x`` of the right shape and device whose coordinates
    are all finite (unchecked: the caller knows it, e.g. a population clipped into the box).
    Values that overflow still evaluate to ``+inf``."""
    out = _evaluate_groups(instances, x)
    # NaN -> +inf, infinities kept: torch.where(torch.isnan(out), math.inf, out), one pass
    return torch.nan_to_num(out, nan=math.inf, posinf=math.inf, neginf=-math.inf)


def _evaluate_groups(instances: BBOBInstances, x: Tensor) -> Tensor:
    """``f(x)`` before the NaN clean-up: stage by stage (:mod:`.bbob_stages`), so the number
    of tensor operations does not grow with the number of distinct functions in the batch."""
    return evaluate_staged(instances, x)


# ----------------------------------------------------------------------------- constructors


def _from_numpy(
    fids: list[int], iids: list[int], parts: dict[str, np.ndarray], device: torch.device | str
) -> BBOBInstances:
    """Build a ``BBOBInstances`` from stacked numpy parameters."""

    def t(a: np.ndarray) -> Tensor:
        return torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float64, device=device)

    return BBOBInstances(
        function_id=torch.tensor(fids, dtype=torch.int64, device=device),
        instance_id=torch.tensor(iids, dtype=torch.int64, device=device),
        **{name: t(value) for name, value in parts.items()},
    )


def coco_instances(
    function_ids: int | Sequence[int] | Tensor,
    dimension: int,
    instance_ids: int | Sequence[int] | Tensor,
    device: torch.device | str = "cpu",
) -> BBOBInstances:
    """COCO's ``bbob`` instances: instance ``i`` is function ``function_ids[i]``, COCO instance
    ``instance_ids[i]`` (a scalar broadcasts), all in ``dimension``-D.

    Matches ``cocoex.Suite("bbob", "instances: ...", ...)`` (COCO 2.x) to rounding error.
    ``2 <= dimension <= 40``; ``1 <= instance_ids <= 200000``.
    """
    fids = _as_int_list("function_ids", function_ids)
    iids = _as_int_list("instance_ids", instance_ids)
    fids, iids = _broadcast("function_ids", fids, "instance_ids", iids)
    _check_function_ids(fids)
    d = _check_dimension(dimension, MAX_COCO_DIMENSION)
    bad = sorted({i for i in iids if not 1 <= i <= MAX_COCO_INSTANCE_ID})
    if bad:
        raise ValueError(f"instance_ids must be in 1..{MAX_COCO_INSTANCE_ID}, got {bad}")
    parts = coco_parameters(np.asarray(fids, dtype=np.int64), d, np.asarray(iids, dtype=np.int64))
    return _from_numpy(fids, iids, parts, device)


def random_instances(
    function_ids: int | Sequence[int] | Tensor,
    dimension: int,
    seeds: int | Sequence[int] | Tensor,
    device: torch.device | str = "cpu",
) -> BBOBInstances:
    """MetaBox-style random instances: instance ``i`` is function ``function_ids[i]`` drawn from
    ``seeds[i]`` (a scalar broadcasts), all in ``dimension``-D.

    Each instance has its own CPU ``torch.Generator`` seeded with ``100 seeds[i] +
    function_ids[i]``, so it depends neither on the rest of the batch nor on ``device``. It draws,
    in order: ``shift = 0.8 U[-5, 5]^D``; ``R`` and ``Q`` (Gram-Schmidt of standard normal
    matrices, i.e. Haar-random orthogonal); ``f_opt = 100 k``, ``k`` uniform in 1..25; for
    f21/f22 the Gallagher peaks (BBOB recipe, peak 0 at ``x_opt``). ``x_opt`` is the shift,
    except f5 (``5 sign(shift)``), f20 (``4.2096874637 / 2 sign(shift)``), f24
    (``1.25 sign(shift)``) and f4 (``|shift|`` on even coordinates, as COCO).
    ``2 <= dimension <= 100``; ``0 <= seeds <= 2^53``.
    """
    fids = _as_int_list("function_ids", function_ids)
    seed_list = _as_int_list("seeds", seeds)
    fids, seed_list = _broadcast("function_ids", fids, "seeds", seed_list)
    _check_function_ids(fids)
    d = _check_dimension(dimension, MAX_DIMENSION)
    bad = sorted({s for s in seed_list if not 0 <= s <= MAX_SEED})
    if bad:
        raise ValueError(f"seeds must be integers in 0..2^53, got {bad}")
    parts = random_parameters(np.asarray(fids, dtype=np.int64), d, seed_list)
    return _from_numpy(fids, seed_list, parts, device)


def _as_index_tensor(name: str, values: object, device: torch.device | str) -> Tensor:
    """An int64 ``[N]`` tensor on ``device`` from a tensor (kept there, no host loop) or from
    what :func:`_as_int_list` takes."""
    if isinstance(values, Tensor):
        if values.dtype == torch.bool or values.is_floating_point() or values.is_complex():
            raise ValueError(f"{name} must hold integers, got dtype {values.dtype}")
        if values.dim() > 1:
            raise ValueError(
                f"{name} must be an integer or a 1-D tensor, got shape {tuple(values.shape)}"
            )
        return values.reshape(-1).to(device=device, dtype=torch.int64)
    return torch.tensor(_as_int_list(name, values), dtype=torch.int64, device=device)


def counter_instances(
    function_ids: int | Sequence[int] | Tensor,
    dimension: int,
    seeds: int | Sequence[int] | Tensor,
    device: torch.device | str = "cpu",
) -> BBOBInstances:
    """Random instances with :func:`random_instances`' distribution, drawn for the whole batch
    from counter-based streams on ``device`` (:mod:`.bbob_counter`): instance ``i`` reads the
    stream keyed ``100 seeds[i] + function_ids[i]``, so it depends neither on the rest of the
    batch nor on the device (up to the last bits of the rotations' arithmetic on a GPU).
    Tensors are used where they are, without a loop over the instances; a scalar broadcasts.
    ``2 <= dimension <= 100``; ``0 <= seeds <= 2^53``.
    """
    fids = _as_index_tensor("function_ids", function_ids, device)
    seed_t = _as_index_tensor("seeds", seeds, fids.device)
    if fids.shape[0] == 1 and seed_t.shape[0] > 1:
        fids = fids.expand(seed_t.shape[0])
    if seed_t.shape[0] == 1 and fids.shape[0] > 1:
        seed_t = seed_t.expand(fids.shape[0])
    if fids.shape[0] != seed_t.shape[0]:
        raise ValueError(
            f"function_ids and seeds must have the same length, got {fids.shape[0]} and "
            f"{seed_t.shape[0]}"
        )
    d = _check_dimension(dimension, MAX_DIMENSION)
    if bool(((fids < 1) | (fids > len(FUNCTION_IDS))).any()):
        _check_function_ids(fids.tolist())
    if bool(((seed_t < 0) | (seed_t > MAX_SEED)).any()):
        bad = sorted({int(s) for s in seed_t.tolist() if not 0 <= s <= MAX_SEED})
        raise ValueError(f"seeds must be integers in 0..2^53, got {bad}")
    fids, seed_t = fids.contiguous(), seed_t.contiguous()
    return BBOBInstances(
        function_id=fids, instance_id=seed_t, **counter_parameters(fids, d, seed_t)
    )
