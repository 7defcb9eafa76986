"""The min-max games of the family, batched over ``B`` games in torch.

Every game is ``min_x max_y f(x, y)`` with ``x`` of shape ``(B, m)`` and ``y`` of shape ``(B, n)``.
A game's parameters carry a leading batch axis of size ``B`` or ``1`` (shared by the whole
batch). Gradients are analytic; ``tests/envs/minmax/test_games.py`` checks them against
``torch.autograd``.

Games (``GAME_NAMES``):

- ``bilinear``: ``f = xᵀAy`` for any ``m × n`` matrix ``A``;
- ``quadratic``: ``f = a‖x‖² + xᵀBy − c‖y‖²`` (convex-concave for ``a, c ≥ 0``);
- ``xy2``: ``f = −x·y²`` on ``x ≥ 0`` (scalar players; ``x`` is projected onto ``[0, ∞)``);
- ``sextic``: ``f = x(y − 0.45) + φ(x) − φ(y)`` with ``φ(z) = z²/4 − z⁴/2 + z⁶/6``, the
  almost-bilinear limit-cycle game of Hsieh, Mertikopoulos & Cevher (2021) (scalar players;
  the exact constants are inferred from the paper's description, not stated there).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import torch

GAME_NAMES: tuple[str, ...] = ("bilinear", "quadratic", "xy2", "sextic")


def _check_finite(name: str, value: torch.Tensor) -> None:
    if not bool(torch.isfinite(value).all()):
        raise ValueError(f"{name} must hold finite values, got {value.tolist()}")


def _as_matrix(name: str, value: Any, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A ``(B, m, n)`` float tensor from an ``(m, n)`` or ``(B, m, n)`` array-like."""
    try:
        t = torch.as_tensor(value, dtype=dtype, device=device)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a numeric matrix, got {value!r}") from err
    if t.dim() == 2:
        t = t[None]
    if t.dim() != 3 or t.shape[1] < 1 or t.shape[2] < 1:
        raise ValueError(f"{name} must have shape (m, n) or (B, m, n), got {tuple(t.shape)}")
    _check_finite(name, t)
    return t


def _as_scalars(
    name: str, value: Any, dtype: torch.dtype, device: torch.device, minimum: float | None
) -> torch.Tensor:
    """A ``(B,)`` float tensor from a float or a length-``B`` array-like, optionally ``≥ minimum``."""
    try:
        t = torch.as_tensor(value, dtype=dtype, device=device)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"{name} must be a number or a 1-D array of numbers, got {value!r}"
        ) from err
    if t.dim() == 0:
        t = t[None]
    if t.dim() != 1:
        raise ValueError(f"{name} must be a number or a 1-D array, got shape {tuple(t.shape)}")
    _check_finite(name, t)
    if minimum is not None and bool((t < minimum).any()):
        raise ValueError(f"{name} must be >= {minimum}, got {t.tolist()}")
    return t


class Game(ABC):
    """A batch of two-player zero-sum games ``min_x max_y f(x, y)``.

    Attributes:
        name: the game's name in :data:`GAME_NAMES`.
        x_dim: dimension ``m`` of the minimising player's parameter.
        y_dim: dimension ``n`` of the maximising player's parameter.
        batch: number of distinct parameter sets (``1`` means shared by any batch of states).
    """

    name: str
    x_dim: int
    y_dim: int
    batch: int

    @abstractmethod
    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """``f(x, y)`` of shape ``(B,)`` for ``x`` (B, m) and ``y`` (B, n)."""

    @abstractmethod
    def grads(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(∇_x f, ∇_y f)`` of shapes ``(B, m)`` and ``(B, n)``."""

    def project_x(self, x: torch.Tensor) -> torch.Tensor:
        """Project ``x`` onto the minimiser's feasible set (all of ``R^m`` unless overridden)."""
        return x

    def equilibrium_distance(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor | None:
        """Distance ``(B,)`` of ``(x, y)`` to the set of equilibria, or ``None`` if unknown."""
        return None

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> Game:
        """A copy of the game with its parameters on ``device`` (and in ``dtype``)."""
        raise NotImplementedError


class LinearGame(Game):
    """``f = a‖x‖² + xᵀBy − c‖y‖²`` with per-game ``a`` (B,), ``B`` (B, m, n) and ``c`` (B,).

    The gradient is linear in ``z = (x, y)``: ``(∇_x f, −∇_y f) = G z`` with
    ``G = [[2aI, B], [−Bᵀ, 2cI]]``; the descent-ascent field ``v = (−∇_x f, ∇_y f)`` has
    Jacobian ``J = −G`` (the paper's game Jacobian, eigenvalues ``−0.1 ± i`` for
    ``f = 0.05x² + xy − 0.05y²``).
    """

    name = "quadratic"

    def __init__(
        self,
        a: Any,
        b: Any,
        c: Any,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str = "cpu",
        matrix_name: str = "B",
    ) -> None:
        device = torch.device(device)
        self.b = _as_matrix(matrix_name, b, dtype, device)  # (Bg, m, n)
        self.a = _as_scalars("a", a, dtype, device, minimum=0.0)  # (Bg,) or (1,)
        self.c = _as_scalars("c", c, dtype, device, minimum=0.0)  # (Bg,) or (1,)
        sizes = {int(t.shape[0]) for t in (self.b, self.a, self.c)} - {1}
        if len(sizes) > 1:
            raise ValueError(
                f"a, B and c must share one batch size (or 1), got a {tuple(self.a.shape)}, "
                f"B {tuple(self.b.shape)}, c {tuple(self.c.shape)}"
            )
        self.batch = sizes.pop() if sizes else 1
        self.x_dim = int(self.b.shape[1])
        self.y_dim = int(self.b.shape[2])
        self._projector: torch.Tensor | None = None

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> LinearGame:
        dtype = dtype or self.b.dtype
        return type(self)._from_tensors(
            self.a.to(device, dtype), self.b.to(device, dtype), self.c.to(device, dtype)
        )

    @classmethod
    def _from_tensors(cls, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> LinearGame:
        game = cls.__new__(cls)
        LinearGame.__init__(game, a, b, c, dtype=b.dtype, device=b.device)
        return game

    def _bilinear_terms(
        self, x: torch.Tensor, y: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(B y, Bᵀ x)``, with a plain matmul when ``B`` is shared by the batch."""
        if self.b.shape[0] == 1:
            m = self.b[0]
            return y @ m.mT, x @ m
        return (
            torch.bmm(self.b, y[:, :, None])[:, :, 0],
            torch.bmm(self.b.mT, x[:, :, None])[:, :, 0],
        )

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        by, _ = self._bilinear_terms(x, y)
        return self.a * (x * x).sum(-1) + (x * by).sum(-1) - self.c * (y * y).sum(-1)

    def grads(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        by, btx = self._bilinear_terms(x, y)
        return 2.0 * self.a[:, None] * x + by, btx - 2.0 * self.c[:, None] * y

    def operator(self) -> torch.Tensor:
        """``G`` of shape ``(Bg, d, d)``, ``d = m + n``: ``(∇_x f, −∇_y f) = G (x, y)``."""
        m, n = self.x_dim, self.y_dim
        bg = max(self.batch, 1)
        eye_m = torch.eye(m, dtype=self.b.dtype, device=self.b.device)
        eye_n = torch.eye(n, dtype=self.b.dtype, device=self.b.device)
        top = torch.cat(
            [2.0 * self.a.expand(bg)[:, None, None] * eye_m, self.b.expand(bg, m, n)], 2
        )
        bottom = torch.cat(
            [-self.b.expand(bg, m, n).mT, 2.0 * self.c.expand(bg)[:, None, None] * eye_n], 2
        )
        return torch.cat([top, bottom], 1)

    def jacobian(self) -> torch.Tensor:
        """Jacobian ``J = −G`` (Bg, d, d) of the descent-ascent field ``(−∇_x f, ∇_y f)``."""
        return -self.operator()

    def equilibrium_distance(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Distance to the stationary set ``ker G`` (the saddle points of a convex-concave game)."""
        if self._projector is None:
            g = self.operator()
            self._projector = torch.linalg.pinv(g) @ g  # projector onto (ker G)^⊥
        z = torch.cat([x, y], -1)
        p = self._projector
        if p.shape[0] == 1:
            return torch.linalg.vector_norm(z @ p[0].mT, dim=-1)
        return torch.linalg.vector_norm(torch.bmm(p, z[:, :, None])[:, :, 0], dim=-1)


class QuadraticGame(LinearGame):
    """``f = a‖x‖² + xᵀBy − c‖y‖²``; see :class:`LinearGame`."""

    name = "quadratic"


class BilinearGame(LinearGame):
    """``f = xᵀAy`` for an ``m × n`` (or per-game ``B × m × n``) matrix ``A``."""

    name = "bilinear"

    def __init__(
        self, a_matrix: Any, dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu"
    ) -> None:
        super().__init__(0.0, a_matrix, 0.0, dtype=dtype, device=device, matrix_name="A")


class XY2Game(Game):
    """``f = −x·y²`` with scalar players and the constraint ``x ≥ 0``.

    Equilibria: every ``(x, 0)`` with ``x ≥ 0``; the distance to them is ``|y|`` (for ``x ≥ 0``).
    """

    name = "xy2"
    x_dim = 1
    y_dim = 1
    batch = 1

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> XY2Game:
        return self

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return -(x * y * y)[:, 0]

    def grads(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return -y * y, -2.0 * x * y

    def project_x(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp_min(0.0)

    def equilibrium_distance(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sqrt(x.clamp_max(0.0) ** 2 + y * y)[:, 0]


def _phi(z: torch.Tensor) -> torch.Tensor:
    z2 = z * z
    return z2 / 4.0 - z2 * z2 / 2.0 + z2 * z2 * z2 / 6.0


def _dphi(z: torch.Tensor) -> torch.Tensor:
    z2 = z * z
    return z / 2.0 - 2.0 * z * z2 + z * z2 * z2


class SexticGame(Game):
    """``f = x(y − shift) + φ(x) − φ(y)``, ``φ(z) = z²/4 − z⁴/2 + z⁶/6``, scalar players.

    Gradient descent–ascent flows on it are attracted to a cycle around the unstable critical
    point; no equilibrium is known in closed form, so the distance is ``None`` (envs use the
    gradient norm instead).
    """

    name = "sextic"
    x_dim = 1
    y_dim = 1
    batch = 1

    def __init__(self, shift: float = 0.45) -> None:
        if (
            not isinstance(shift, (int, float))
            or isinstance(shift, bool)
            or not math.isfinite(shift)
        ):
            raise ValueError(f"shift must be a finite number, got {shift!r}")
        self.shift = float(shift)

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> SexticGame:
        return self

    def value(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x * (y - self.shift) + _phi(x) - _phi(y))[:, 0]

    def grads(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return (y - self.shift) + _dphi(x), x - _dphi(y)


#: the parameters each game accepts in :func:`make_game` (``params``), with their defaults.
GAME_PARAMS: dict[str, dict[str, Any]] = {
    "bilinear": {"A": [[1.0]]},
    "quadratic": {"a": 0.05, "B": [[1.0]], "c": 0.05},
    "xy2": {},
    "sextic": {"shift": 0.45},
}


def make_game(
    name: str,
    params: Mapping[str, Any] | None = None,
    *,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
) -> Game:
    """Build a game by name from its ``params`` (see :data:`GAME_PARAMS` for names and defaults).

    ``bilinear`` takes ``A`` (m × n or B × m × n); ``quadratic`` takes ``a``, ``B``, ``c``
    (default ``f = 0.05x² + xy − 0.05y²``); ``sextic`` takes ``shift``; ``xy2`` takes none.
    Unknown names or parameters raise ``ValueError`` listing the allowed ones.
    """
    if name not in GAME_NAMES:
        raise ValueError(f"game must be one of {list(GAME_NAMES)}, got {name!r}")
    params = dict(params or {})
    allowed = GAME_PARAMS[name]
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise ValueError(
            f"game_params for {name!r} may only contain {sorted(allowed)}, got {unknown}"
        )
    p = {**allowed, **params}
    if name == "bilinear":
        return BilinearGame(p["A"], dtype=dtype, device=device)
    if name == "quadratic":
        return QuadraticGame(p["a"], p["B"], p["c"], dtype=dtype, device=device)
    if name == "xy2":
        return XY2Game()
    return SexticGame(p["shift"])
