"""``LineFlowEnv``: the Gymnasium env over the exact SimPy engine."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gymforge.core.seeds import MAX_SEED, validate_seed
from gymforge.envs.lineflow.features import action_nvec, action_slots, observation_features
from gymforge.envs.lineflow.scenarios import SCENARIOS, make_scenario
from gymforge.envs.lineflow.simpy_engine import LineSimulation
from gymforge.envs.lineflow.spec import LineSpec

REWARDS = ("parts",)


class LineFlowEnv(gym.Env):
    """LineFlow: control a simulated production line.

    ## Description
    A production line (sources, buffers, processes, assemblies, sinks) runs as an exact
    discrete-event simulation (SimPy). Every ``step_size`` time units the agent sets the line's
    actionable parameters; the line then runs on until the next decision. Follows LineFlow
    (Müller, Wenzel, Windisch, ICML 2025) with the reference's components and defaults.

    ## Action Space
    ``MultiDiscrete(nvec)``, one entry per source with an actionable waiting time, in station
    order: index ``k`` sets that source's waiting time to ``k · waiting_time_step`` (WaitingTime:
    ``MultiDiscrete([100])``, waiting times 0 … 99).

    ## Observation Space
    ``Box(0, 1, (n,), float32)``: every feature normalised to [0, 1], in this order:

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | per station, 3 | ``<station>.mode=working/waiting/failing`` | one-hot | 0 | 1 |
    | per actionable source | ``<source>.waiting_time`` | ÷ largest choice | 0 | 1 |
    | per source with > 1 carrier type | ``<source>.carrier_type=<type>`` | one-hot | 0 | 1 |
    | per process / assembly | ``<station>.processing_time`` (last sampled) | ÷ 4·nominal, clipped | 0 | 1 |
    | per assembly | ``<assembly>.scrap`` (during the last step) | count, clipped | 0 | 1 |
    | per buffer | ``<buffer>.fill`` | ÷ capacity | 0 | 1 |
    | last | ``time`` | ÷ horizon | 0 | 1 |

    ``env.unwrapped.features`` lists the features of the line at hand, and the generated docs
    page of each id has its full table. WaitingTime has 19 features.

    ## Rewards
    ``"parts"``: parts finished minus ``scrap_factor`` × component carriers scrapped during the
    step. ``set_scrap_factor(f)`` changes the factor between episodes or during training (for
    curricula); the default comes from the line (1 for WaitingTime).

    ## Starting State
    An empty line at time 0; every source starts with its configured waiting time. The seed fixes
    every random draw (processing, put and carrier-type times).

    ## Episode End
    Never terminated: the line runs forever. Truncated when the simulation time reaches
    ``horizon`` (4000 time units, i.e. 4000 steps at ``step_size`` 1). A line that runs out of
    events (deadlock) keeps returning zero rewards with ``info["deadlock"] = True``.

    ## Arguments
    - ``scenario``: a registered line name (``"waiting_time"``), ignored when ``line`` is given.
    - ``scenario_kwargs``: overrides of the scenario's parameters, e.g. ``{"processing_time_source": 6}``.
    - ``line``: a user-built :class:`LineSpec` (see :class:`LineBuilder`).
    - ``horizon`` (4000), ``step_size`` (1), ``reward`` (``"parts"``), ``scrap_factor`` (line default).

    ## Info
    ``time``, ``n_parts`` and ``n_scrap_parts`` (cumulative), ``deadlock``.

    ## Version History
    - v0: initial version (WaitingTime line; components Source, Buffer, Process, Assembly, Sink).
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

    def __init__(
        self,
        scenario: str = "waiting_time",
        scenario_kwargs: dict[str, Any] | None = None,
        line: LineSpec | None = None,
        horizon: float = 4000.0,
        step_size: float = 1.0,
        reward: str = "parts",
        scrap_factor: float | None = None,
        render_mode: str | None = None,
    ) -> None:
        if line is None:
            if scenario not in SCENARIOS:
                raise ValueError(f"scenario must be one of {sorted(SCENARIOS)}, got {scenario!r}")
            line = make_scenario(scenario, **(scenario_kwargs or {}))
        elif not isinstance(line, LineSpec):
            raise ValueError(f"line must be a LineSpec, got {type(line).__name__}")
        for name, value in (("horizon", horizon), ("step_size", step_size)):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 < value < math.inf
            ):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        if reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        if render_mode is not None:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes'] + [None]}, got {render_mode!r}"
            )
        self.line = line
        self.horizon = float(horizon)
        self.step_size = float(step_size)
        self.max_steps = math.ceil(self.horizon / self.step_size)
        self.reward_name = reward
        self.render_mode = render_mode
        self.scrap_factor = line.scrap_factor
        if scrap_factor is not None:
            self.set_scrap_factor(scrap_factor)
        self.features = observation_features(line)
        self.observation_space = spaces.Box(0.0, 1.0, (len(self.features),), np.float32)
        self.action_slots = action_slots(line)
        self._nvec = action_nvec(line)
        self.action_space = spaces.MultiDiscrete(self._nvec)
        self._obs = np.zeros(len(self.features), dtype=np.float32)
        self._sim: LineSimulation | None = None
        self._seed = 0
        self._actions: list[np.ndarray] = []  # this episode's actions, for exact pickling by replay

    def set_scrap_factor(self, factor: float) -> None:
        """Weight of a scrapped part in the reward from now on (>= 0)."""
        if (
            isinstance(factor, bool)
            or not isinstance(factor, (int, float))
            or not 0 <= factor < math.inf
        ):
            raise ValueError(f"scrap_factor must be a finite number >= 0, got {factor!r}")
        self.scrap_factor = float(factor)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is not None:
            validate_seed(seed)
        super().reset(seed=seed)
        self._seed = int(seed) if seed is not None else int(self.np_random.integers(0, MAX_SEED))
        self._start_episode()
        return self._observation(), self._info(deadlock=False)

    def _start_episode(self) -> None:
        self._sim = LineSimulation(self.line, self._seed)
        self._step_count = 0
        self._parts = 0
        self._scrap = 0
        self._actions = []

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        if self._step_count >= self.max_steps:
            raise RuntimeError("the episode was truncated; call reset() before step()")
        action = self._validated(action)
        self._actions.append(action)
        return self._advance(action)

    def _advance(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        sim = self._sim
        assert sim is not None
        sim.apply_action(action.tolist())
        self._step_count += 1
        alive = sim.run_until(min(self._step_count * self.step_size, self.horizon))
        parts, scrap = sim.n_parts, sim.n_scrap
        reward = (parts - self._parts) - self.scrap_factor * (scrap - self._scrap)
        self._parts, self._scrap = parts, scrap
        truncated = self._step_count >= self.max_steps
        return self._observation(), float(reward), False, truncated, self._info(deadlock=not alive)

    def _validated(self, action: Any) -> np.ndarray:
        array = np.asarray(action)
        if array.shape != self._nvec.shape:
            raise ValueError(f"action must have shape {self._nvec.shape}, got {array.shape}")
        if not np.issubdtype(array.dtype, np.integer):
            if not np.issubdtype(array.dtype, np.floating) or not np.all(array == np.round(array)):
                raise ValueError(f"action must hold integers, got {action!r}")
            array = array.astype(np.int64)
        if np.any(array < 0) or np.any(array >= self._nvec):
            raise ValueError(
                f"action must lie in [0, {(self._nvec - 1).tolist()}] per entry "
                f"({[slot.name for slot in self.action_slots]}), got {array.tolist()}"
            )
        return array.astype(np.int64)

    def _observation(self) -> np.ndarray:
        assert self._sim is not None
        self._sim.observe(self._obs, self.horizon)
        return self._obs.copy()

    def _info(self, deadlock: bool) -> dict[str, Any]:
        return {
            "time": self._step_count * self.step_size if self._sim else 0.0,
            "n_parts": self._parts,
            "n_scrap_parts": self._scrap,
            "deadlock": deadlock,
        }

    # Pickling: a SimPy simulation holds generators, which cannot be pickled. The env is
    # deterministic given its seed and actions, so it pickles its episode's seed and actions and
    # replays them on unpickling; the copy continues exactly where the original stands.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_sim"] = None
        state["_episode_started"] = self._sim is not None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        started = state.pop("_episode_started")
        actions = state["_actions"]
        self.__dict__.update(state)
        if started:
            self._start_episode()
            for action in actions:
                self._actions.append(action)
                self._advance(action)
