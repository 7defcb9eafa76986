"""``LineFlowVecEnv``: thousands of LineFlow lines at once on CPU or GPU (the torch engine).

It runs the same ``LineSpec`` as the SimPy env, with the same observation and action spaces, as
a ``TorchVectorEnv`` (SAME_STEP autoreset, ``infos["final_obs"]``). Instance ``i`` of a batch
reset with seed ``s`` follows the stream of seed ``s + i`` whatever else is in the batch; the
SimPy env with the same seed draws from another generator, so the two agree in distribution
(see the parity benchmark), not sample by sample.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from gymforge.core.vector_env import StepOutput, TorchVectorEnv
from gymforge.envs.lineflow.batched.compiled import compile_line
from gymforge.envs.lineflow.batched.engine import GPU_MODE, Engine, initial_state, reset_where
from gymforge.envs.lineflow.batched.observe import Observer
from gymforge.envs.lineflow.features import action_nvec, action_slots, observation_features
from gymforge.envs.lineflow.gym_env import check_timing, resolve_line
from gymforge.envs.lineflow.rewards import check_scrap_factor
from gymforge.envs.lineflow.spec import LineSpec

BATCHED_REWARDS = ("parts",)


def engine_mode(
    device: torch.device, shortcuts: bool | None, guards: bool | None
) -> dict[str, bool]:
    """The engine's settings on ``device``: those given, the rest from the device (the CPU mode
    on a CPU, where a host sync is cheap and skipped work is not; the GPU mode on CUDA)."""
    default = GPU_MODE if device.type == "cuda" else {"shortcuts": True, "guards": True}
    given = {"shortcuts": shortcuts, "guards": guards}
    return {name: default[name] if given[name] is None else bool(given[name]) for name in default}


class LineFlowVecEnv(TorchVectorEnv):
    """Batched LineFlow; arguments as :class:`~gymforge.envs.lineflow.gym_env.LineFlowEnv`.

    Args:
        num_envs: number of lines ``B``.
        device: torch device of the state (``"cpu"``, ``"cuda"``).
        autoreset: SAME_STEP autoreset (the scalar view turns it off).
        scenario, scenario_kwargs, line, horizon, step_size, reward, scrap_factor: as for
            ``LineFlowEnv``; ``reward`` must be ``"parts"`` for now.
        shortcuts: False runs the engine's plain rules, every line-specific shortcut off (the
            same trajectories, slower on a CPU; see ``batched.plain``). None (default): on,
            except on CUDA, where the engine runs in its GPU mode (``engine.GPU_MODE``).
        guards: False runs every rule masked instead of first asking the device whether it has
            work (the same trajectories, fewer host syncs, more ops). None (default): as
            ``shortcuts``.

    Attributes:
        last_action_read: ``(B, A)`` bool, whether the line read each action dimension during
            the last step. A waiting time is read only when its source starts a cycle (about
            one step in twelve at the optimum); the next step's action replaces an unread one,
            so it changed nothing but the observed setting. Dimensions of other kinds (routing,
            magazines, workers) are always marked read. A trainer may leave unread dimensions
            out of its policy gradient (``mask_unread_actions`` of the on-device PPO).
    """

    shared_attributes = ("line", "features", "action_slots", "horizon", "step_size", "max_steps")
    #: peak memory per line (about 13 KiB measured on ComponentAssembly, the largest scenario)
    bytes_per_instance = 32 * 1024

    def __init__(
        self,
        num_envs: int = 1,
        device: torch.device | str = "cpu",
        autoreset: bool = True,
        scenario: str = "waiting_time",
        scenario_kwargs: dict[str, Any] | None = None,
        line: LineSpec | None = None,
        horizon: float = 4000.0,
        step_size: float = 1.0,
        reward: str = "parts",
        scrap_factor: float | None = None,
        shortcuts: bool | None = None,
        guards: bool | None = None,
    ) -> None:
        for name, value in (("shortcuts", shortcuts), ("guards", guards)):
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"{name} must be True, False or None, got {value!r}")
        spec, _ = resolve_line(scenario, scenario_kwargs, line)
        check_timing(horizon, step_size)
        if reward not in BATCHED_REWARDS:
            raise ValueError(
                f"reward must be one of {BATCHED_REWARDS} for the torch engine, got {reward!r}"
            )
        self.line = spec
        self.features = observation_features(spec)
        self.action_slots = action_slots(spec)
        self.horizon = float(horizon)
        self.step_size = float(step_size)
        self.max_steps = math.ceil(self.horizon / self.step_size)
        self.scrap_factor = check_scrap_factor(
            spec.scrap_factor if scrap_factor is None else scrap_factor
        )
        observation_space = spaces.Box(0.0, 1.0, (len(self.features),), np.float32)
        action_space = spaces.MultiDiscrete(action_nvec(spec))
        super().__init__(num_envs, observation_space, action_space, device, autoreset)
        self.compiled = compile_line(spec, self.device)
        self.engine = Engine(self.compiled, **engine_mode(self.device, shortcuts, guards))
        self.observer = Observer(self.compiled, self.horizon)
        self.state = initial_state(self.compiled, self.num_envs)
        kinds = [(kind, row) for kind, row, _ in self.compiled.actions]
        self._read_rows = torch.tensor(
            [row if kind == "waiting_time" else 0 for kind, row in kinds],
            dtype=torch.long,
            device=self.device,
        )
        self._untracked = torch.tensor(
            [kind != "waiting_time" for kind, _ in kinds], dtype=torch.bool, device=self.device
        )
        self.last_action_read = torch.ones(
            self.num_envs, len(kinds), dtype=torch.bool, device=self.device
        )
        self._steps = torch.zeros(self.num_envs, dtype=torch.long, device=self.device)

    def set_scrap_factor(self, factor: float) -> None:
        """Weight of a scrapped part in the reward from now on (>= 0)."""
        self.scrap_factor = check_scrap_factor(factor)

    def _reset_instances(self, mask: torch.Tensor) -> None:
        reset_where(self.compiled, self.state, mask, self.rng)
        self._steps = torch.where(mask, 0, self._steps)

    def _step_instances(self, action: torch.Tensor) -> StepOutput:
        state = self.state
        self.engine.apply_action(state, action)
        parts, scrap = state.n_parts.clone(), state.n_scrap.sum(dim=0)
        self._steps = self._steps + 1
        until = torch.clamp(self._steps.to(torch.float64) * self.step_size, max=self.horizon)
        self.engine.advance(state, until, self.rng)
        read = state.waiting_read.index_select(0, self._read_rows).T
        self.last_action_read = read | self._untracked
        new_scrap = state.n_scrap.sum(dim=0)
        reward = (state.n_parts - parts).to(torch.float32) - self.scrap_factor * (
            new_scrap - scrap
        ).to(torch.float32)
        truncated = self._steps >= self.max_steps
        terminated = torch.zeros_like(truncated)
        info = {"time": until, "n_parts": state.n_parts.clone(), "n_scrap_parts": new_scrap}
        return StepOutput(reward, terminated, truncated, info)

    def _observe(self) -> torch.Tensor:
        return self.observer(self.state)
