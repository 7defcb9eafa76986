"""``MinMaxTuning-v0``: an optimizer agent picks the step size and momentum of heavy-ball GDA.

:class:`MinMaxTuningVecEnv` runs ``B`` games batched in torch, each with its own step size and
momentum per step; ``gym.make("MinMaxTuning-v0")`` is its view at ``B = 1`` (built by the
registry, :mod:`gymforge.entry_points`), over the same code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from gymforge.core.spaces import as_action_tensor
from gymforge.core.vector_env import StepOutput, TorchVectorEnv
from gymforge.envs.minmax import dynamics
from gymforge.envs.minmax.config import GameConfig, check_order, check_positive
from gymforge.envs.minmax.dynamics import HBState, hb_step
from gymforge.envs.minmax.games import make_game

OBS_CLIP = 1e6

_DOC = """MinMaxTuning: choose the step size and momentum of heavy-ball gradient descent–ascent.

    ## Description
    A min-max game ``min_x max_y f(x, y)`` (see ``MinMax-<Game>-v0``) is solved by heavy-ball
    GDA, simultaneous (Sim-HB) or alternating (Alt-HB, ``order="alternating"``)::

        x' = P(x − h ∇_x f(x, y) + β (x − x_prev))
        y' = y + h ∇_y f(x or x', y) + β (y − y_prev)

    Each step the agent sets the step size ``h`` and momentum ``β`` (which may be negative).
    Following Feng et al. (ICML 2025), Sim-HB diverges on bilinear games for every ``h > 0``
    and ``β``, while Alt-HB with negative momentum converges; a good tuner discovers this.
    The vector env runs ``num_envs`` games with per-game ``h`` and ``β``.

    ## Action Space
    ``Box([0, beta_min], [h_max, beta_max], (2,), float32)``: ``(h, β)``. Out-of-range or
    non-finite values raise ``ValueError`` naming the entry.

    ## Observation Space
    ``Box(−1e6, 1e6, (3(m + n) + 1,), float32)`` (entries clipped to ±1e6):

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | 0 … m−1 | x | – | −1e6 | 1e6 |
    | m … m+n−1 | y | – | −1e6 | 1e6 |
    | m+n … 2m+n−1 | x − x_prev (velocity) | – | −1e6 | 1e6 |
    | 2m+n … 2(m+n)−1 | y − y_prev | – | −1e6 | 1e6 |
    | 2(m+n) … 3m+2n−1 | ∇_x f(x, y) | – | −1e6 | 1e6 |
    | 3m+2n … 3(m+n)−1 | ∇_y f(x, y) | – | −1e6 | 1e6 |
    | 3(m+n) | elapsed steps ÷ max_steps | fraction | 0 | 1 |

    ## Rewards
    The decrease of the progress measure, ``min(d_t, D) − min(d_{t+1}, D)`` with
    ``D = divergence``: ``d`` is the distance to the set of equilibria (bilinear, quadratic,
    xy2) or the gradient norm ``sqrt(‖∇_x f‖² + ‖∇_y f‖²)`` where none is known (sextic). The
    return of an episode is ``d_0 − min(d_T, D)``.

    ## Starting State
    ``x``, ``y`` uniform in ``[−init_scale, init_scale]`` (``x ≥ 0`` for xy2), at rest
    (``x_prev = x``).

    ## Episode End
    Terminated when ``d`` exceeds ``divergence`` or stops being finite (the run diverged);
    truncated after ``max_steps`` steps.

    ## Arguments
    | Parameter | Type | Default | Description |
    |---|---|---|---|
    | game | str | ``"bilinear"`` | ``bilinear``, ``quadratic``, ``xy2`` or ``sextic`` |
    | game_params | dict | ``{}`` | the game's parameters (``A``; ``a``, ``B``, ``c``; ``shift``) |
    | order | str | ``"simultaneous"`` | ``"simultaneous"`` or ``"alternating"`` |
    | max_steps | int | 100 | steps per episode |
    | init_scale | float | 1.0 | half-width of the starting box |
    | h_max | float | 0.5 | largest step size |
    | beta_min, beta_max | float | −0.9, 0.9 | momentum range |
    | divergence | float | 1000.0 | progress measure beyond which the run counts as diverged |

    ## Version History
    - v0: initial version.
    """


@dataclass
class TuningState:
    """State of ``B`` heavy-ball runs under tuning."""

    hb: HBState  # iterates (x, y, x_prev, y_prev), each (B, ·) float64
    steps: torch.Tensor  # (B,) int64, steps taken in the episode
    measure: torch.Tensor  # (B,) float64, progress measure d at the current iterate


class MinMaxTuningVecEnv(TorchVectorEnv):
    __doc__ = _DOC
    #: peak memory per instance (about 0.5 KiB measured on the default game)
    bytes_per_instance = 2 * 1024

    def __init__(
        self,
        num_envs: int = 1,
        device: torch.device | str = "cpu",
        autoreset: bool = True,
        game: str = "bilinear",
        game_params: Mapping[str, Any] | None = None,
        order: str = "simultaneous",
        max_steps: int = 100,
        init_scale: float = 1.0,
        h_max: float = 0.5,
        beta_min: float = -0.9,
        beta_max: float = 0.9,
        divergence: float = 1000.0,
    ) -> None:
        self.config = GameConfig(game, dict(game_params or {}), max_steps, init_scale)
        check_order(order)
        check_positive("h_max", h_max)
        check_positive("divergence", divergence)
        for name, value in (("beta_min", beta_min), ("beta_max", beta_max)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1 < value < 1:
                raise ValueError(f"{name} must be a number in (-1, 1), got {value!r}")
        if beta_min >= beta_max:
            raise ValueError(f"beta_min must be < beta_max, got {beta_min} >= {beta_max}")
        self.order = order
        self.h_max, self.beta_min, self.beta_max = float(h_max), float(beta_min), float(beta_max)
        self.divergence = float(divergence)
        self.game = make_game(game, self.config.game_params, device=torch.device(device))
        if self.game.batch != 1:
            raise ValueError(
                f"game_params must describe one game (batch 1), got batch {self.game.batch}"
            )
        d = self.game.x_dim + self.game.y_dim
        low = np.full(3 * d + 1, -OBS_CLIP, np.float32)
        high = np.full(3 * d + 1, OBS_CLIP, np.float32)
        low[-1], high[-1] = 0.0, 1.0
        observation_space = spaces.Box(low, high, dtype=np.float32)
        action_space = spaces.Box(
            np.array([0.0, beta_min], np.float32),
            np.array([h_max, beta_max], np.float32),
            dtype=np.float32,
        )
        super().__init__(num_envs, observation_space, action_space, device, autoreset)
        # the bounds of (h, β) as their float32 values, on the device once (not per step)
        self._action_range = tuple(
            torch.as_tensor(bound.astype(np.float64), device=self.device)
            for bound in (action_space.low, action_space.high)
        )
        self.state = self._fresh(None)

    def _fresh(self, where: torch.Tensor | None) -> TuningState:
        x, y = dynamics.starting_point(self.game, self.config, self.rng, where=where)
        steps = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
        measure = dynamics.progress_measure(self.game, x, y)
        return TuningState(HBState.at_rest(x, y), steps, measure)

    def _reset_instances(self, mask: torch.Tensor) -> None:
        fresh = self._fresh(mask)
        old = self.state
        col = mask[:, None]
        self.state = TuningState(
            HBState(
                torch.where(col, fresh.hb.x, old.hb.x),
                torch.where(col, fresh.hb.y, old.hb.y),
                torch.where(col, fresh.hb.x_prev, old.hb.x_prev),
                torch.where(col, fresh.hb.y_prev, old.hb.y_prev),
            ),
            torch.where(mask, fresh.steps, old.steps),
            torch.where(mask, fresh.measure, old.measure),
        )

    def _checked_action(self, actions: Any) -> torch.Tensor:
        """The batch of ``(h, β)`` after its shape check and one range check with named errors
        (one host read for a valid batch; the space's own range check would repeat it)."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        action = as_action_tensor(actions, self.device)
        self._action_checker().check_shape(action)
        v = action.to(torch.float64)
        low, high = self._action_range
        bad = ~torch.isfinite(v) | (v < low) | (v > high)
        if bool(bad.any()):
            i, col = (int(n) for n in torch.nonzero(bad)[0])
            name, lo, hi = (
                ("step size h", 0.0, self.h_max)
                if col == 0
                else ("momentum beta", self.beta_min, self.beta_max)
            )
            raise ValueError(
                f"action[{i}][{col}] ({name}) must be finite and in [{lo}, {hi}], "
                f"got {float(v[i, col])}"
            )
        return action

    def _step_instances(self, action: torch.Tensor) -> StepOutput:
        h = action[:, :1].to(torch.float64)
        beta = action[:, 1:].to(torch.float64)
        hb = hb_step(self.game, self.state.hb, h, beta, self.order)
        measure = dynamics.progress_measure(self.game, hb.x, hb.y)
        measure = torch.nan_to_num(measure, nan=float("inf"))
        cap = self.divergence
        reward = (self.state.measure.clamp_max(cap) - measure.clamp_max(cap)).to(torch.float32)
        steps = self.state.steps + 1
        terminated = ~(measure <= cap)
        truncated = (steps >= self.config.max_steps) & ~terminated
        f = torch.nan_to_num(self.game.value(hb.x, hb.y), nan=0.0).clamp(-OBS_CLIP, OBS_CLIP)
        self.state = TuningState(hb, steps, measure)
        info = {"distance": measure.clamp_max(cap).to(torch.float32), "f": f.to(torch.float32)}
        return StepOutput(reward, terminated, truncated, info)

    def _observe(self) -> torch.Tensor:
        hb = self.state.hb
        gx, gy = self.game.grads(hb.x, hb.y)
        elapsed = (self.state.steps.to(torch.float64) / self.config.max_steps)[:, None]
        obs = torch.cat([hb.x, hb.y, hb.x - hb.x_prev, hb.y - hb.y_prev, gx, gy, elapsed], 1)
        obs = torch.nan_to_num(obs, nan=0.0).clamp(-OBS_CLIP, OBS_CLIP)
        return obs.to(torch.float32)
