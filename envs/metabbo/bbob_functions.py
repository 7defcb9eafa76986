"""Batched kernels of the 24 noiseless BBOB functions (float64 torch).

Each kernel takes :class:`KernelArgs` (the instance parameters of ``b`` instances of *one*
function) and a population ``x`` of shape ``[b, P, D]``; it returns ``f - f_opt`` of shape
``[b, P]``. They are the plain definitions: :func:`gymforge.envs.metabbo.bbob.evaluate` runs a
mixed batch through the shared stages of :mod:`.bbob_stages`, which compute the same values
bit for bit (tests compare the two), and adds ``f_opt``.

The formulas follow the BBOB definitions (Hansen et al., 2009, "Real-parameter black-box
optimization benchmarking 2009: noiseless functions definitions") as the COCO platform
(``numbbo/coco``, ``code-experiments/src/f_*.c``) implements them, including COCO's legacy
details (which rotation goes where, Bueche-Rastrigin's ``|x_opt|`` on even coordinates, Schwefel's
``x_hat``, the Gallagher peak layout). Notation, with ``e_i = i / (D - 1)`` for ``i = 0..D-1``:

- ``R``, ``Q``: the two orthogonal matrices of an instance (``KernelArgs.rot_r``/``rot_q``);
  ``R v`` is a matrix-vector product applied to the last axis.
- ``L(a)``: the diagonal matrix with entries ``sqrt(a) ** e_i`` (``L(10)`` is BBOB's
  ``Lambda^10``).
- ``T_osz``, ``T_asy(beta)``: BBOB's oscillation and asymmetry transforms; ``f_pen(x) =
  sum(max(0, |x_i| - 5) ** 2)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor

from gymforge.core.host_guards import guards_enabled
from gymforge.envs.metabbo.workspace import row_block, temporary

__all__ = ["FUNCTION_NAMES", "KERNELS", "KernelArgs"]

FUNCTION_NAMES: dict[int, str] = {
    1: "Sphere",
    2: "Ellipsoidal (separable)",
    3: "Rastrigin (separable)",
    4: "Bueche-Rastrigin",
    5: "Linear slope",
    6: "Attractive sector",
    7: "Step ellipsoidal",
    8: "Rosenbrock (original)",
    9: "Rosenbrock (rotated)",
    10: "Ellipsoidal (rotated)",
    11: "Discus",
    12: "Bent cigar",
    13: "Sharp ridge",
    14: "Different powers",
    15: "Rastrigin (rotated)",
    16: "Weierstrass",
    17: "Schaffers F7",
    18: "Schaffers F7 (moderately ill-conditioned)",
    19: "Composite Griewank-Rosenbrock F8F2",
    20: "Schwefel x*sin(x)",
    21: "Gallagher 101 peaks",
    22: "Gallagher 21 peaks",
    23: "Katsuura",
    24: "Lunacek bi-Rastrigin",
}

# Constants of the definitions (COCO's values, digits as in the C sources).
SCHWEFEL_CONST = 418.9828872724339
LUNACEK_MU0 = 2.5
WEIERSTRASS_TERMS = 12
KATSUURA_TERMS = 32


class KernelArgs(NamedTuple):
    """Instance parameters of ``b`` instances of one function (see ``BBOBInstances``)."""

    x_opt: Tensor  # [b, D]
    rot_r: Tensor  # [b, D, D]
    rot_q: Tensor  # [b, D, D]
    peak_centers: Tensor  # [b, K, D] Gallagher peak centres in the rotated frame (R y_k)
    peak_scales: Tensor  # [b, K, D] Gallagher per-peak diagonal conditioning
    peak_weights: Tensor  # [b, K] Gallagher peak heights (0 for padding peaks)


# ----------------------------------------------------------------------------- helpers


def _pick(mask: Tensor, a: float, b: float, like: Tensor) -> Tensor:
    """``a`` where ``mask`` else ``b``, in ``like``'s dtype (two bare floats would give float32)."""
    return torch.where(mask, torch.tensor(a, dtype=like.dtype, device=like.device), b)


def _exponents(x: Tensor) -> Tensor:
    """``e_i = i / (D - 1)``, shape ``[D]`` (a cached tensor: do not modify it)."""
    return _constant_exponents(x.shape[-1], x.dtype, x.device)


def _scales(x: Tensor, alpha: float) -> Tensor:
    """``alpha ** e_i``, shape ``[D]`` (a cached tensor: do not modify it)."""
    return _constant_scales(x.shape[-1], alpha, x.dtype, x.device)


def _cond(x: Tensor, alpha: float) -> Tensor:
    """Diagonal of ``L(alpha)``: ``sqrt(alpha) ** e_i``, shape ``[D]`` (cached, read-only)."""
    return _scales(x, math.sqrt(alpha))


@functools.cache
def _scalar(value: float, dtype: torch.dtype, device: torch.device) -> Tensor:
    """``value`` as a 0-dim tensor, made once per dtype and device (a constant operand)."""
    return torch.tensor(value, dtype=dtype, device=device)


@functools.cache
def _constant_exponents(d: int, dtype: torch.dtype, device: torch.device) -> Tensor:
    """:func:`_exponents`, computed once per dimension, dtype and device."""
    return torch.arange(d, dtype=dtype, device=device) / (d - 1)


@functools.cache
def _constant_scales(d: int, alpha: float, dtype: torch.dtype, device: torch.device) -> Tensor:
    """:func:`_scales`, computed once per dimension, base, dtype and device."""
    return torch.exp(_constant_exponents(d, dtype, device) * math.log(alpha))


def _select(mask: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """``torch.where(mask, a, b)`` for floating tensors of one dtype, by bit operations.

    The same bits as ``torch.where`` (every value, NaN and signed zeros included), without its
    per-element branch: torch's CPU ``where`` costs several nanoseconds per element when
    ``mask`` is unpredictable (e.g. the signs of ``z``), bit operations well under one.
    """
    bits = {torch.float64: torch.int64, torch.float32: torch.int32}[a.dtype]
    a, b = torch.broadcast_tensors(a, b)
    ai, bi = a.contiguous().view(bits), b.contiguous().view(bits)
    ones = mask.to(bits).neg_()  # all bits set where mask
    return torch.bitwise_xor(ai, bi).bitwise_and_(ones).bitwise_xor_(bi).view(a.dtype)


def _rot(m: Tensor, z: Tensor, out: Tensor | None = None) -> Tensor:
    """``m z`` for every individual: ``m`` is ``[b, D, D]``, ``z`` is ``[b, P, D]``; written
    into ``out`` (``[b, P, D]``, may be ``z`` itself) when given.

    Summed column by column with element-wise kernels rather than a BLAS ``bmm``, whose rounding
    can depend on the batch size and memory layout: each instance's result must not depend on
    the rest of the batch. The sum runs in a ``[b, D, P]`` layout, where each term is a column
    of ``m`` times a contiguous row of ``z``'s transpose (a vectorised inner loop), then is
    transposed back; the additions are the same, in the same order. A large batch runs in
    blocks of instances (:func:`~.workspace.row_block`) whose work tensors stay in cache.
    """
    b, p, d = z.shape
    step = row_block(p * d, z)
    if b <= step:
        return _rot_block(m, z, out)
    # a large batch block by block (the same bits: each instance is summed on its own)
    out = torch.empty_like(z, memory_format=torch.contiguous_format) if out is None else out
    for lo in range(0, b, step):
        _rot_block(m[lo : lo + step], z[lo : lo + step], out[lo : lo + step])
    return out


def _rot_block(m: Tensor, z: Tensor, out: Tensor | None) -> Tensor:
    """:func:`_rot` of one block of instances."""
    b, p, d = z.shape
    # z's coordinates, D x [b, 1, P]; the sum and every product in reused scratch buffers
    zt = temporary("rot_z", (b, d, p), z.dtype, z.device).copy_(z.transpose(1, 2))
    rows = zt.split(1, dim=1)
    cols = m.unsqueeze(-1).unbind(2)  # D x [b, D, 1]: m's columns
    acc = torch.mul(cols[0], rows[0], out=temporary("rot_acc", (b, d, p), z.dtype, z.device))
    term = temporary("rot_term", (b, d, p), z.dtype, z.device)
    for col, row in zip(cols[1:], rows[1:], strict=True):
        acc.add_(torch.mul(col, row, out=term))
    if out is None:
        return acc.transpose(1, 2).contiguous()
    return out.copy_(acc.transpose(1, 2))


def _pow(base: Tensor, exponent: Tensor | float) -> Tensor:
    """``base ** exponent`` for ``base >= 0`` as ``exp(exponent log(base))``.

    torch's CPU ``pow`` rounds differently in its vectorised and scalar code paths, so an
    element's value would depend on its position in the tensor (and so on the batch).
    """
    return torch.exp(exponent * torch.log(base))


def _shifted(a: KernelArgs, x: Tensor) -> Tensor:
    """``x - x_opt``."""
    return x - a.x_opt[:, None, :]


def _t_osz(z: Tensor, buffers: tuple[Tensor, Tensor, Tensor] | None = None) -> Tensor:
    """BBOB's oscillation ``T_osz`` (element-wise; ``T_osz(0) = 0``).

    ``t = log|z| / 0.1``; ``c1, c2 = (1, 0.79)`` for ``z > 0``, ``(0.55, 0.31)`` otherwise;
    ``sign(z) exp(0.1 (t + 0.49 (sin(c1 t) + sin(c2 t))))``. At ``z = 0`` the intermediate
    values are not finite and the result is masked to 0.

    ``buffers``: three tensors shaped like ``z`` (not ``z``) to compute in, the result lands in
    the last; fresh ones by default.
    """
    if buffers is None:
        buffers = (torch.empty_like(z), torch.empty_like(z), torch.empty_like(z))
    t_buf, pos, wiggle = buffers
    t = torch.abs(z, out=t_buf).log_().div_(0.1)
    torch.gt(z, 0, out=pos)  # 1.0 / 0.0
    # c1 t and c2 t as products with c1 = 0.55 + 0.45 [z > 0] (exactly 1 or 0.55) and c2 =
    # 0.31 + 0.48 [z > 0] (exactly 0.79 or 0.31): the same products as picking per element,
    # without torch.where's per-element branch on the random signs. In place on two buffers
    # (products and sums commute exactly, so the order of the operands does not matter; the
    # scaled [z > 0] is exact, so the additions round once, fused or not).
    torch.add(_scalar(0.55, z.dtype, z.device), pos, alpha=0.45, out=wiggle).mul_(t).sin_()
    c2 = torch.add(_scalar(0.31, z.dtype, z.device), pos, alpha=0.48, out=pos)
    wiggle.add_(c2.mul_(t).sin_()).mul_(0.49)
    # exp(0.1 * (t + w)) == exp(t + w) ** 0.1, without the overflow of the intermediate.
    out = wiggle.add_(t).mul_(0.1).exp_().copysign_(z)
    # When every z is finite (a finite sum), the only NaNs are at z = 0 (log|z| is finite
    # elsewhere and exp overflows to inf, never NaN): one nan_to_num pass then gives the bits
    # of the masked fill, without its slow boolean comparison.
    if guards_enabled() and math.isfinite(float(z.sum())):
        return out.nan_to_num_(nan=0.0, posinf=math.inf, neginf=-math.inf)
    return out.masked_fill_(z == 0, 0.0)


def _t_asy(z: Tensor, beta: float) -> Tensor:
    """BBOB's asymmetry ``T_asy^beta`` (identity on non-positive entries)."""
    pos = z > 0
    zp = z.abs()  # z where it is positive; the other entries are discarded below
    exponent = 1.0 + beta * _exponents(z) * torch.sqrt(zp)
    return _select(pos, _pow(zp, exponent), z)


def _f_pen(x: Tensor, bound: float = 5.0) -> Tensor:
    """Boundary penalty ``sum(max(0, |x_i| - bound) ** 2)``, shape ``[b, P]``."""
    return (x.abs() - bound).clamp_min(0.0).square().sum(-1)


def _rastrigin(z: Tensor) -> Tensor:
    d = z.shape[-1]
    return 10.0 * (d - torch.cos(2.0 * math.pi * z).sum(-1)) + z.square().sum(-1)


def _rosenbrock(z: Tensor) -> Tensor:
    head, tail = z[..., :-1], z[..., 1:]
    return 100.0 * (head.square() - tail).square().sum(-1) + (head - 1.0).square().sum(-1)


def _rosenbrock_scale(x: Tensor) -> float:
    return max(1.0, math.sqrt(x.shape[-1]) / 8.0)


def _signs(x_opt: Tensor) -> Tensor:
    """``+1``/``-1`` per coordinate of ``x_opt`` (``0`` counts as ``+1``), shape ``[b, 1, D]``."""
    return _pick(x_opt < 0, -1.0, 1.0, x_opt)[:, None, :]


# ----------------------------------------------------------------------------- separable


def f1_sphere(a: KernelArgs, x: Tensor) -> Tensor:
    """``||x - x_opt||^2``."""
    return _shifted(a, x).square().sum(-1)


def f2_ellipsoid(a: KernelArgs, x: Tensor) -> Tensor:
    """``sum 10^(6 e_i) z_i^2`` with ``z = T_osz(x - x_opt)``."""
    return _ellipsoid_of(a, _t_osz(_shifted(a, x)), x)


def _ellipsoid_of(a: KernelArgs, z: Tensor, x: Tensor) -> Tensor:
    """f2 and f10 from their ``z`` (a temporary, squared and scaled in place)."""
    return z.square_().mul_(_scales(x, 1e6)).sum(-1)


def f3_rastrigin(a: KernelArgs, x: Tensor) -> Tensor:
    """Rastrigin of ``z = L(10) T_asy^0.2(T_osz(x - x_opt))``."""
    return _f3_of(a, _t_osz(_shifted(a, x)), x)


def _f3_of(a: KernelArgs, z: Tensor, x: Tensor) -> Tensor:
    """f3 from ``z = T_osz(x - x_opt)``."""
    return _rastrigin(_cond(x, 10.0) * _t_asy(z, 0.2))


def f4_bueche_rastrigin(a: KernelArgs, x: Tensor) -> Tensor:
    """Rastrigin of ``z = s * T_osz(x - x_opt)`` plus ``100 f_pen(x)``.

    ``s_i = 10^(e_i / 2)``, times 10 where ``z_i > 0`` and ``i`` is even (0-based).
    """
    return _f4_of(a, _t_osz(_shifted(a, x)), x)


def _f4_of(a: KernelArgs, z: Tensor, x: Tensor) -> Tensor:
    """f4 from ``z = T_osz(x - x_opt)``."""
    even = torch.arange(x.shape[-1], device=x.device) % 2 == 0
    s = _cond(x, 10.0) * ((z > 0) & even).to(z.dtype).mul_(9.0).add_(1.0)  # 10 or 1
    return _rastrigin(s * z) + 100.0 * _f_pen(x)


def f5_linear_slope(a: KernelArgs, x: Tensor) -> Tensor:
    """``sum 5 |s_i| - s_i z_i``, ``s_i = sign(x_opt_i) 10^(e_i)``; ``z_i = x_opt_i`` where
    ``x_i x_opt_i > 25`` (beyond the optimum on the boundary), else ``x_i``."""
    x_opt = a.x_opt[:, None, :]
    z = torch.where(x * x_opt > 25.0, x_opt, x)
    s = _signs(a.x_opt) * _scales(x, 10.0)
    return (5.0 * s.abs() - s * z).sum(-1)


# ----------------------------------------------------------------------------- moderate


def f6_attractive_sector(a: KernelArgs, x: Tensor) -> Tensor:
    """``T_osz(sum (s_i z_i)^2)^0.9`` with ``z = R L(10) Q (x - x_opt)``.

    ``s_i = 100`` where ``z_i x_opt_i > 0`` (COCO compares with the unrotated ``x_opt``), else 1.
    """
    z = _rot(a.rot_r, _cond(x, 10.0) * _rot(a.rot_q, _shifted(a, x)))
    z = z * (z * a.x_opt[:, None, :] > 0).to(z.dtype).mul_(99.0).add_(1.0)  # 100 z or z
    return _pow(_t_osz(z.square().sum(-1)), 0.9)


def f7_step_ellipsoid(a: KernelArgs, x: Tensor) -> Tensor:
    """``0.1 max(|z_hat_0| / 1e4, sum 10^(2 e_i) z_i^2) + f_pen(x)``.

    ``z_hat = L(10) Q (x - x_opt)``, ``z = R round(z_hat)`` where entries with ``|z_hat| > 0.5``
    round to integers and the others to multiples of 0.1 (``round(v) = floor(v + 0.5)``).
    """
    z_hat = _cond(x, 10.0) * _rot(a.rot_q, _shifted(a, x))
    z_tilde = _select(
        z_hat.abs() > 0.5, torch.floor(z_hat + 0.5), torch.floor(10.0 * z_hat + 0.5) / 10.0
    )
    z = _rot(a.rot_r, z_tilde)
    core = (_scales(x, 100.0) * z.square()).sum(-1)
    return 0.1 * torch.maximum(z_hat[..., 0].abs() * 1e-4, core) + _f_pen(x)


def f8_rosenbrock(a: KernelArgs, x: Tensor) -> Tensor:
    """Rosenbrock of ``z = c (x - x_opt) + 1``, ``c = max(1, sqrt(D) / 8)``."""
    return _rosenbrock(_rosenbrock_scale(x) * _shifted(a, x) + 1.0)


def f9_rosenbrock_rotated(a: KernelArgs, x: Tensor) -> Tensor:
    """Rosenbrock of ``z = c R (x - x_opt) + 1``, ``c = max(1, sqrt(D) / 8)``.

    COCO writes ``z = c R x + 1/2``; that is the same with ``x_opt = R^T 1 / (2c)``.
    """
    return _rosenbrock(_rosenbrock_scale(x) * _rot(a.rot_r, _shifted(a, x)) + 1.0)


# ----------------------------------------------------------------------------- ill-conditioned


def f10_ellipsoid_rotated(a: KernelArgs, x: Tensor) -> Tensor:
    """``sum 10^(6 e_i) z_i^2`` with ``z = T_osz(R (x - x_opt))``."""
    return _ellipsoid_of(a, _t_osz(_rot(a.rot_r, _shifted(a, x))), x)


def f11_discus(a: KernelArgs, x: Tensor) -> Tensor:
    """``10^6 z_0^2 + sum_{i>0} z_i^2`` with ``z = T_osz(R (x - x_opt))``."""
    return _f11_of(a, _t_osz(_rot(a.rot_r, _shifted(a, x))), x)


def _f11_of(a: KernelArgs, z: Tensor, x: Tensor) -> Tensor:
    """f11 from ``z = T_osz(R (x - x_opt))``."""
    return 1e6 * z[..., 0].square() + z[..., 1:].square().sum(-1)


def f12_bent_cigar(a: KernelArgs, x: Tensor) -> Tensor:
    """``z_0^2 + 10^6 sum_{i>0} z_i^2`` with ``z = R T_asy^0.5(R (x - x_opt))``."""
    z = _rot(a.rot_r, _t_asy(_rot(a.rot_r, _shifted(a, x)), 0.5))
    return z[..., 0].square() + 1e6 * z[..., 1:].square().sum(-1)


def f13_sharp_ridge(a: KernelArgs, x: Tensor) -> Tensor:
    """``z_0^2 + 100 sqrt(sum_{i>0} z_i^2)`` with ``z = R L(10) Q (x - x_opt)``."""
    z = _rot(a.rot_r, _cond(x, 10.0) * _rot(a.rot_q, _shifted(a, x)))
    return z[..., 0].square() + 100.0 * torch.sqrt(z[..., 1:].square().sum(-1))


def f14_different_powers(a: KernelArgs, x: Tensor) -> Tensor:
    """``sqrt(sum |z_i|^(2 + 4 e_i))`` with ``z = R (x - x_opt)``."""
    z = _rot(a.rot_r, _shifted(a, x))
    return torch.sqrt(_pow(z.abs(), 2.0 + 4.0 * _exponents(x)).sum(-1))


# ----------------------------------------------------------------------------- multi-modal


def f15_rastrigin_rotated(a: KernelArgs, x: Tensor) -> Tensor:
    """Rastrigin of ``z = R L(10) Q T_asy^0.2(T_osz(R (x - x_opt)))``."""
    return _f15_of(a, _t_osz(_rot(a.rot_r, _shifted(a, x))), x)


def _f15_of(a: KernelArgs, z: Tensor, x: Tensor) -> Tensor:
    """f15 from ``z = T_osz(R (x - x_opt))``."""
    inner = _t_asy(z, 0.2)
    return _rastrigin(_rot(a.rot_r, _cond(x, 10.0) * _rot(a.rot_q, inner)))


def _weierstrass_f0() -> float:
    return sum(0.5**k * math.cos(2.0 * math.pi * 3.0**k * 0.5) for k in range(WEIERSTRASS_TERMS))


def f16_weierstrass(a: KernelArgs, x: Tensor) -> Tensor:
    """``10 (mean_i sum_k 2^-k cos(2 pi 3^k (z_i + 1/2)) - f0)^3 + (10 / D) f_pen(x)``.

    ``z = R L(1/100) Q T_osz(R (x - x_opt))``, ``k = 0..11``, ``f0 = sum_k 2^-k cos(pi 3^k)``.
    """
    return _f16_of(a, _t_osz(_rot(a.rot_r, _shifted(a, x))), x)


def _f16_of(a: KernelArgs, inner: Tensor, x: Tensor) -> Tensor:
    """f16 from ``T_osz(R (x - x_opt))``."""
    z = _rot(a.rot_r, _cond(x, 0.01) * _rot(a.rot_q, inner))
    total = torch.zeros_like(z)
    for k in range(WEIERSTRASS_TERMS):
        total = total + torch.cos(2.0 * math.pi * (z + 0.5) * 3.0**k) * 0.5**k
    d = x.shape[-1]
    return 10.0 * (total.sum(-1) / d - _weierstrass_f0()) ** 3 + 10.0 / d * _f_pen(x)


def _schaffers(a: KernelArgs, x: Tensor, condition: float) -> Tensor:
    z = _cond(x, condition) * _rot(a.rot_q, _t_asy(_rot(a.rot_r, _shifted(a, x)), 0.5))
    s2 = z[..., :-1].square() + z[..., 1:].square()
    terms = _pow(s2, 0.25) * (1.0 + torch.sin(50.0 * _pow(s2, 0.1)).square())
    return (terms.sum(-1) / (x.shape[-1] - 1)) ** 2 + 10.0 * _f_pen(x)


def f17_schaffers(a: KernelArgs, x: Tensor) -> Tensor:
    """``(mean_i sqrt(s_i) (1 + sin^2(50 s_i^0.2)))^2 + 10 f_pen(x)``.

    ``s_i = sqrt(z_i^2 + z_{i+1}^2)``, ``z = L(10) Q T_asy^0.5(R (x - x_opt))``.
    """
    return _schaffers(a, x, 10.0)


def f18_schaffers_ill(a: KernelArgs, x: Tensor) -> Tensor:
    """As f17 with ``L(1000)``."""
    return _schaffers(a, x, 1000.0)


def f19_griewank_rosenbrock(a: KernelArgs, x: Tensor) -> Tensor:
    """``10 + 10 / (D - 1) sum (s_i / 4000 - cos(s_i))``.

    ``s_i = 100 (z_i^2 - z_{i+1})^2 + (z_i - 1)^2`` and ``z = c R (x - x_opt) + 1`` with
    ``c = max(1, sqrt(D) / 8)`` (COCO: ``c R x + 1/2``).
    """
    z = _rosenbrock_scale(x) * _rot(a.rot_r, _shifted(a, x)) + 1.0
    head, tail = z[..., :-1], z[..., 1:]
    s = 100.0 * (head.square() - tail).square() + (head - 1.0).square()
    return 10.0 + 10.0 * (s / 4000.0 - torch.cos(s)).sum(-1) / (x.shape[-1] - 1)


# ----------------------------------------------------------------------------- weak structure


def f20_schwefel(a: KernelArgs, x: Tensor) -> Tensor:
    """``0.01 (sum max(0, |z_i| - 500)^2 + 418.98... - mean_i z_i sin(sqrt|z_i|))``.

    ``x_hat = 2 sign(x_opt) x``; ``z_hat_0 = x_hat_0``, ``z_hat_i = x_hat_i + (x_hat_{i-1} -
    2|x_opt_{i-1}|) / 4``; ``z = 100 (L(10) (z_hat - 2|x_opt|) + 2|x_opt|)``.
    """
    x_hat = 2.0 * _signs(a.x_opt) * x
    two_abs_opt = 2.0 * a.x_opt.abs()[:, None, :]
    lagged = torch.nn.functional.pad((x_hat - two_abs_opt)[..., :-1], (1, 0))
    z_hat = x_hat + 0.25 * lagged
    z = 100.0 * (_cond(x, 10.0) * (z_hat - two_abs_opt) + two_abs_opt)
    penalty = _f_pen(z, bound=500.0)
    core = (z * torch.sin(torch.sqrt(z.abs()))).sum(-1) / x.shape[-1]
    return 0.01 * (penalty + SCHWEFEL_CONST - core)


def f21_gallagher(a: KernelArgs, x: Tensor) -> Tensor:
    """``T_osz(10 - max_k w_k exp(-(t - c_k)^T C_k (t - c_k) / (2D)))^2 + f_pen(x)``, ``t = R x``.

    Peaks ``k`` have centres ``c_k`` (``peak_centers``, rotated frame), heights ``w_k`` and
    diagonal conditioning ``C_k`` (``peak_scales``). f21 and f22 differ only in their peaks.
    """
    t = _rot(a.rot_r, x)  # [b, P, D]
    c, y = a.peak_scales[:, None], a.peak_centers[:, None]  # [b, 1, K, D]
    dist = c[..., 0] * (t[..., :1] - y[..., 0]).square()  # [b, P, K]
    for j in range(1, x.shape[-1]):
        dist = dist + c[..., j] * (t[..., j : j + 1] - y[..., j]).square()
    best = (a.peak_weights[:, None, :] * torch.exp(-0.5 / x.shape[-1] * dist)).amax(-1)
    return _t_osz(10.0 - best).square() + _f_pen(x)


def f23_katsuura(a: KernelArgs, x: Tensor) -> Tensor:
    """``10 / D^2 (prod_i (1 + (i+1) t_i)^(10 / D^1.2) - 1) + f_pen(x)``.

    ``t_i = sum_j |2^j z_i - round(2^j z_i)| / 2^j`` for ``j = 1..32`` and
    ``z = R L(100) Q (x - x_opt)``.
    """
    z = _rot(a.rot_r, _cond(x, 100.0) * _rot(a.rot_q, _shifted(a, x)))
    total = torch.zeros_like(z)
    for j in range(1, KATSUURA_TERMS + 1):
        scaled = 2.0**j * z
        total = total + (scaled - torch.floor(scaled + 0.5)).abs() / 2.0**j
    d = x.shape[-1]
    index = torch.arange(1, d + 1, dtype=x.dtype, device=x.device)
    product = torch.prod(1.0 + index * total, dim=-1)
    return 10.0 / d / d * (_pow(product, 10.0 / d**1.2) - 1.0) + _f_pen(x)


def f24_lunacek(a: KernelArgs, x: Tensor) -> Tensor:
    """``min(sum (x_hat - mu0)^2, D + s sum (x_hat - mu1)^2) + 10 (D - sum cos(2 pi z_i))``
    ``+ 1e4 f_pen(x)``.

    ``x_hat = 2 sign(x_opt) x``, ``z = R L(100) Q (x_hat - mu0)``, ``mu0 = 2.5``,
    ``s = 1 - 1 / (2 sqrt(D + 20) - 8.2)``, ``mu1 = -sqrt((mu0^2 - 1) / s)``.
    """
    d = x.shape[-1]
    s = 1.0 - 0.5 / (math.sqrt(d + 20.0) - 4.1)
    mu1 = -math.sqrt((LUNACEK_MU0**2 - 1.0) / s)
    x_hat = 2.0 * _signs(a.x_opt) * x
    z = _rot(a.rot_r, _cond(x, 100.0) * _rot(a.rot_q, x_hat - LUNACEK_MU0))
    sphere0 = (x_hat - LUNACEK_MU0).square().sum(-1)
    sphere1 = d + s * (x_hat - mu1).square().sum(-1)
    multimodal = 10.0 * (d - torch.cos(2.0 * math.pi * z).sum(-1))
    return torch.minimum(sphere0, sphere1) + multimodal + 1e4 * _f_pen(x)


KERNELS: dict[int, Callable[[KernelArgs, Tensor], Tensor]] = {
    1: f1_sphere,
    2: f2_ellipsoid,
    3: f3_rastrigin,
    4: f4_bueche_rastrigin,
    5: f5_linear_slope,
    6: f6_attractive_sector,
    7: f7_step_ellipsoid,
    8: f8_rosenbrock,
    9: f9_rosenbrock_rotated,
    10: f10_ellipsoid_rotated,
    11: f11_discus,
    12: f12_bent_cigar,
    13: f13_sharp_ridge,
    14: f14_different_powers,
    15: f15_rastrigin_rotated,
    16: f16_weierstrass,
    17: f17_schaffers,
    18: f18_schaffers_ill,
    19: f19_griewank_rosenbrock,
    20: f20_schwefel,
    21: f21_gallagher,
    22: f21_gallagher,
    23: f23_katsuura,
    24: f24_lunacek,
}
