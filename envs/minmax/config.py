"""Configuration of the min-max envs: which game, episode length, starting box, action bounds."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gymforge.envs.minmax.games import GAME_NAMES, GAME_PARAMS

ORDERS: tuple[str, ...] = ("simultaneous", "alternating")


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


def _positive_float(name: str, value: Any) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


@dataclass(frozen=True)
class GameConfig:
    """The game of an env and how episodes start and end.

    Attributes:
        game: one of :data:`~gymforge.envs.minmax.games.GAME_NAMES`.
        game_params: the game's parameters (``A`` for bilinear; ``a``, ``B``, ``c`` for
            quadratic; ``shift`` for sextic); see :data:`~gymforge.envs.minmax.games.GAME_PARAMS`.
        max_steps: steps (rounds of both players) after which an episode is truncated.
        init_scale: starting parameters are uniform in ``[−init_scale, init_scale]`` (``x`` in
            ``[0, init_scale]`` for ``xy2``).
    """

    game: str = "bilinear"
    game_params: Mapping[str, Any] = field(default_factory=dict)
    max_steps: int = 100
    init_scale: float = 1.0

    def __post_init__(self) -> None:
        if self.game not in GAME_NAMES:
            raise ValueError(f"game must be one of {list(GAME_NAMES)}, got {self.game!r}")
        if not isinstance(self.game_params, Mapping):
            raise ValueError(f"game_params must be a mapping, got {self.game_params!r}")
        unknown = sorted(set(self.game_params) - set(GAME_PARAMS[self.game]))
        if unknown:
            raise ValueError(
                f"game_params for {self.game!r} may only contain "
                f"{sorted(GAME_PARAMS[self.game])}, got {unknown}"
            )
        _positive_int("max_steps", self.max_steps)
        _positive_float("init_scale", self.init_scale)


#: the episode length when neither ``max_steps`` nor its alias ``max_cycles`` is given
DEFAULT_MAX_STEPS = 100


def episode_length(max_steps: int | None, max_cycles: int | None) -> int:
    """Rounds per episode from ``max_steps`` or ``max_cycles``, PettingZoo's name for it (which
    ``pettingzoo.test.max_cycles_test`` passes); both given must agree. Unchecked beyond that
    (:class:`GameConfig` checks the value)."""
    if max_cycles is None:
        return DEFAULT_MAX_STEPS if max_steps is None else max_steps
    if max_steps is not None and max_steps != max_cycles:
        raise ValueError(
            f"max_cycles is another name of max_steps: give one, got max_steps={max_steps!r} "
            f"and max_cycles={max_cycles!r}"
        )
    return max_cycles


def check_order(order: Any) -> None:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {list(ORDERS)}, got {order!r}")


def check_positive(name: str, value: Any) -> None:
    """``ValueError`` unless ``value`` is a finite number > 0."""
    _positive_float(name, value)
