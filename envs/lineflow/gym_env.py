"""``LineFlowEnv``: the Gymnasium env over the exact SimPy engine."""

from __future__ import annotations

import inspect
import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gymforge.core.reset_options import check_reset_options
from gymforge.core.reset_seeds import MAX_SEED, validate_seed
from gymforge.envs.lineflow.features import action_nvec, action_slots, observation_features
from gymforge.envs.lineflow.history import StateHistory
from gymforge.envs.lineflow.rewards import check_scrap_factor, make_reward
from gymforge.envs.lineflow.scenarios import SCENARIOS, make_scenario
from gymforge.envs.lineflow.simpy_engine import LineSimulation
from gymforge.envs.lineflow.spec import LineSpec


def resolve_line(
    scenario: str, scenario_kwargs: dict[str, Any] | None, line: LineSpec | None
) -> tuple[LineSpec, str]:
    """The line to run (``line`` wins over ``scenario``) and its description."""
    if line is None:
        if scenario not in SCENARIOS:
            raise ValueError(f"scenario must be one of {sorted(SCENARIOS)}, got {scenario!r}")
        return make_scenario(scenario, **(scenario_kwargs or {})), SCENARIOS[scenario].__doc__ or ""
    if not isinstance(line, LineSpec):
        raise ValueError(f"line must be a LineSpec, got {type(line).__name__}")
    return line, ""


def check_timing(horizon: float, step_size: float) -> None:
    for name, value in (("horizon", horizon), ("step_size", step_size)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not 0 < value < math.inf
        ):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")


class LineFlowEnv(gym.Env):
    """LineFlow: control a simulated production line.

    ## Description
    A production line (sources, buffers, processes, assemblies, switches, magazines, worker
    pools, sinks) runs as an exact discrete-event simulation (SimPy). Every ``step_size`` time
    units the agent sets the line's actionable parameters; the line then runs on until the next
    decision. Follows LineFlow (Müller, Wenzel, Windisch, ICML 2025) with the reference's
    components and defaults; ``gymforge.envs.lineflow.scenarios`` holds the paper's lines.

    ``gym.make_vec(id, num_envs=B, vectorization_mode="vector_entry_point", device=...)`` runs the
    same line on the batched torch engine (``LineFlowVecEnv``: same spaces, SAME_STEP autoreset,
    torch tensors); it matches this env in distribution (``benchmarks/lineflow/parity.py``), not
    sample by sample. Every registered line runs there; user lines with NOK parts, return
    buffers or part-dependent times on a line with assemblies are refused with the reason
    (``gymforge.envs.lineflow.batched.compiled.unsupported_reason``).

    ## Action Space
    ``MultiDiscrete(nvec)``, one entry per actionable state, in this order: for each station in
    order, a source's waiting time (index ``k`` sets ``k · waiting_time_step``), a switch's input
    then output buffer, a magazine's stored carrier count; then each worker's station, pool by
    pool. ``env.unwrapped.action_slots`` names every entry and its choices. The full action is
    applied every step (WaitingTime: ``MultiDiscrete([100])``, waiting times 0 … 99).

    ## Observation Space
    ``Box(0, 1, (n,), float32)``: every feature normalised to [0, 1], in this order:

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | per station, 3 | ``<station>.mode=working/waiting/failing`` | one-hot | 0 | 1 |
    | per actionable source | ``<source>.waiting_time`` | ÷ largest choice | 0 | 1 |
    | per source with > 1 carrier type | ``<source>.carrier_type=<type>`` | one-hot | 0 | 1 |
    | per process / assembly | ``<station>.processing_time`` (last) | ÷ 4·nominal, clipped | 0 | 1 |
    | per pooled station | ``<station>.n_workers`` | ÷ pool size | 0 | 1 |
    | per assembly | ``<assembly>.scrap`` (during the last step) | count, clipped | 0 | 1 |
    | per switch with > 1 input / output | ``<switch>.index_in=<i>`` / ``index_out=<i>`` | one-hot | 0 | 1 |
    | per limited magazine | ``<magazine>.stored`` | ÷ max_carriers, clipped | 0 | 1 |
    | per worker | ``<pool>.W<w>=<station>`` | one-hot | 0 | 1 |
    | per buffer | ``<buffer>.fill`` | ÷ capacity | 0 | 1 |
    | last | ``time`` | ÷ horizon | 0 | 1 |

    ``env.unwrapped.features`` lists the features of the line at hand, and the generated docs
    page of each id has its full table.

    ## Rewards
    ``reward="parts"`` (default): parts finished minus ``scrap_factor`` × component carriers
    scrapped during the step. ``"uptime"``: the mean over stations of the fraction of the last
    ``uptime_lookback`` steps (0: since the episode started) they were working.
    ``"parts-sparse"``: 0 except at the last step, which gets the episode's parts − scrap.
    ``set_scrap_factor(f)`` changes the factor at any time, e.g. from a curriculum callback via
    ``vec_env.env_method("set_scrap_factor", f)``; the default comes from the line.

    ## Starting State
    An empty line at time 0; sources start with their configured waiting times, magazines with
    their carriers, workers round-robin over their pool's stations. The seed fixes every random
    draw (processing, put, carrier-type, error and slowdown times).

    ## Episode End
    Never terminated: the line runs forever. Truncated when the simulation time reaches
    ``horizon`` (4000 time units, i.e. 4000 steps at ``step_size`` 1), with
    ``info["truncation_reason"] = "horizon"``, or earlier when no event is left (a deadlocked
    line), with ``"deadlock"``.

    ## Arguments
    - ``scenario``: a line name from ``SCENARIOS``, ignored when ``line`` is given.
    - ``scenario_kwargs``: the scenario's parameters, e.g. ``{"n_processes": 3}``.
    - ``line``: a user-built :class:`LineSpec` (see :class:`LineBuilder`).
    - ``horizon`` (4000), ``step_size`` (1), ``reward`` (``"parts"``), ``scrap_factor`` (line
      default), ``uptime_lookback`` (0), ``record_history`` (False: see ``history_frame()``),
      ``render_mode`` (``None``, ``"rgb_array"`` or ``"human"``).

    ## Info
    ``time``, ``n_parts`` and ``n_scrap_parts`` (cumulative); ``truncation_reason`` at the end.

    ## Version History
    - v0: initial version.
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array", "human"], "render_fps": 20}  # noqa: RUF012

    def __init__(
        self,
        scenario: str = "waiting_time",
        scenario_kwargs: dict[str, Any] | None = None,
        line: LineSpec | None = None,
        horizon: float = 4000.0,
        step_size: float = 1.0,
        reward: str = "parts",
        scrap_factor: float | None = None,
        uptime_lookback: int = 0,
        record_history: bool = False,
        render_mode: str | None = None,
    ) -> None:
        line, self._line_doc = resolve_line(scenario, scenario_kwargs, line)
        check_timing(horizon, step_size)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(
                f"render_mode must be one of {[None, *self.metadata['render_modes']]}, got {render_mode!r}"
            )
        self.line = line
        self.horizon = float(horizon)
        self.step_size = float(step_size)
        self.max_steps = math.ceil(self.horizon / self.step_size)
        self.reward_name = reward
        self.render_mode = render_mode
        self._reward = make_reward(reward, line.scrap_factor, len(line.stations), uptime_lookback)
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
        # This episode's actions (preallocated: O(1) per step, bounded memory) and station
        # switches (step, name, on), for exact pickling by replay.
        self._actions = np.zeros((self.max_steps, len(self._nvec)), dtype=np.int32)
        self._switches: list[tuple[int, str, bool]] = []
        self.history = StateHistory(line, self.max_steps) if record_history else None
        self._renderer: Any = None
        self._viewer: Any = None

    @property
    def scrap_factor(self) -> float:
        """Weight of a scrapped part in the ``parts`` and ``parts-sparse`` rewards."""
        return self._reward.scrap_factor

    def set_scrap_factor(self, factor: float) -> None:
        """Weight of a scrapped part in the reward from now on (>= 0)."""
        self._reward.scrap_factor = check_scrap_factor(factor)

    def set_station_on(self, name: str, on: bool) -> None:
        """Switch station ``name`` on or off; an off station stops before its next cycle."""
        if self._sim is None:
            raise RuntimeError("call reset() before set_station_on()")
        self._sim.set_station_on(name, bool(on))
        self._switches.append((self._step_count, name, bool(on)))

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        check_reset_options(options)  # none are used, but a non-dict is a caller's mistake
        if seed is not None:
            seed = validate_seed(seed)  # numpy integers become Python ints
        super().reset(seed=seed)
        self._seed = int(seed) if seed is not None else int(self.np_random.integers(0, MAX_SEED))
        self._start_episode()
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info(truncation=None)

    def _start_episode(self) -> None:
        self._sim = LineSimulation(self.line, self._seed)
        self._step_count = 0
        self._done = False
        self._reward.reset()
        self._switches = []
        if self.history is not None:
            self.history.clear()
            self.history.record(self._sim, None)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._sim is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode was truncated; call reset() before step()")
        action = self._validated(action)
        self._actions[self._step_count] = action
        result = self._advance(action)
        if self.render_mode == "human":
            self.render()
        return result

    def _advance(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        sim = self._sim
        assert sim is not None
        sim.apply_action(action.tolist())
        self._step_count += 1
        alive = sim.run_until(min(self._step_count * self.step_size, self.horizon))
        truncation = None
        if self._step_count >= self.max_steps:
            truncation = "horizon"
        elif not alive and all(station.is_on for station in sim.stations.values()):
            truncation = "deadlock"  # no event left and no station paused: nothing can move again
        self._done = truncation is not None
        reward = self._reward(sim, last_step=self._done)
        if self.history is not None:
            self.history.record(sim, action)
        return self._observation(), reward, False, self._done, self._info(truncation)

    def describe_variant(self) -> str:
        """Markdown for this env's docs page: the line's description and its action entries."""
        doc = inspect.cleandoc(self._line_doc) if self._line_doc else "A user-built line."
        rows = [f"## Line `{self.line.name}`", "", doc, "", "### Action entries", ""]
        rows += ["| Index | Name | Choices | Meaning |", "|---|---|---|---|"]
        for i, slot in enumerate(self.action_slots):
            labels = list(slot.labels)
            shown = (
                ", ".join(labels)
                if len(labels) <= 6
                else f"{labels[0]}, {labels[1]}, …, {labels[-1]}"
            )
            rows.append(f"| {i} | `{slot.name}` | {slot.n} | {shown} |")
        return "\n".join(rows) + "\n"

    def history_frame(self) -> Any:
        """This episode's recorded states as a pandas DataFrame (needs ``record_history=True``)."""
        if self.history is None:
            raise RuntimeError("history is off; create the env with record_history=True")
        return self.history.to_frame()

    def render(self) -> np.ndarray | None:
        """An RGB image of the line (``rgb_array``), or that image shown in a window (``human``)."""
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='rgb_array'")
            return None
        if self._sim is None:
            raise RuntimeError("call reset() before render()")
        if self._renderer is None:
            from gymforge.envs.lineflow.render import LineRenderer

            self._renderer = LineRenderer(self.line)
        frame = self._renderer.draw(self._sim)
        if self.render_mode == "rgb_array":
            return frame
        if self._viewer is None:
            from gymforge.envs.lineflow.viewer import HumanViewer

            self._viewer = HumanViewer(fps=self.metadata["render_fps"])
        self._viewer.show(frame)
        return None

    def close(self) -> None:
        if self._viewer is not None:
            self._viewer.close()
            self._viewer = None

    def _validated(self, action: Any) -> np.ndarray:
        array = np.asarray(action)
        if array.shape != self._nvec.shape:
            raise ValueError(f"action must have shape {self._nvec.shape}, got {array.shape}")
        if not np.issubdtype(array.dtype, np.integer) and (
            not np.issubdtype(array.dtype, np.floating) or not np.all(array == np.round(array))
        ):
            raise ValueError(f"action must hold integers, got {action!r}")
        # compared as given, before any cast: inf or nan would become a garbage integer
        if not np.all(np.isfinite(array)) or np.any(array < 0) or np.any(array >= self._nvec):
            raise ValueError(
                f"action must lie in [0, {(self._nvec - 1).tolist()}] per entry "
                f"({[slot.name for slot in self.action_slots]}), got {array.tolist()}"
            )
        return array.astype(np.int64)

    def _observation(self) -> np.ndarray:
        assert self._sim is not None
        self._sim.observe(self._obs, self.horizon)
        return self._obs.copy()

    def _info(self, truncation: str | None) -> dict[str, Any]:
        assert self._sim is not None
        info: dict[str, Any] = {
            "time": self._step_count * self.step_size,
            "n_parts": self._sim.n_parts,
            "n_scrap_parts": self._sim.n_scrap,
        }
        if truncation is not None:
            info["truncation_reason"] = truncation
        return info

    # Pickling: a SimPy simulation holds generators, which cannot be pickled. The env is
    # deterministic given its seed and actions, so it pickles its episode's seed and actions and
    # replays them on unpickling; the copy continues exactly where the original stands.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_sim"] = None
        state["_viewer"] = None
        state["_episode_started"] = self._sim is not None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        started = state.pop("_episode_started")
        steps, switches = state.get("_step_count", 0), state["_switches"]
        self.__dict__.update(state)
        if started:
            self._start_episode()
            sim = self._sim
            assert sim is not None
            for k in range(steps + 1):
                for _, name, on in (entry for entry in switches if entry[0] == k):
                    sim.set_station_on(name, on)
                if k < steps:
                    self._advance(self._actions[k].astype(np.int64))
            self._switches = switches
