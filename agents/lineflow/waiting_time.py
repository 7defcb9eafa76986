"""The optimal waiting-time controller of the WaitingTime line, from the reference's closed form.

The component source should deliver exactly one component per assembly cycle: faster and parts
age in the buffer past their assembly condition (scrap), slower and the assembly starves. With
mean times ``E[T + Exp(std·T)] = (1 + std)·T``::

    assembly cycle = (1 + std_A)·T_A + get_main + get_component + (1 + put_std)·put_out
    source cycle   = (1 + std_S)·T_S + (1 + put_std)·put_component + waiting time

so the waiting time is their difference: 18.5 on the reference line
(``(1.1·20 + 3.1) − (1.1·5 + 1.1)``). As in the reference's ``make_optimal_agent``, the agent
replaces the nominal assembly time by the last processing time it observes, which makes it
dither between neighbouring integer waiting times and track the noise (mean reward ≈ 158).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.agents.lineflow.base import LineController
from gymforge.core.arrays import host_array
from gymforge.envs.lineflow.features import timed_scale
from gymforge.envs.lineflow.spec import AssemblySpec, BufferSpec, LineSpec, SourceSpec


def _waiting_time_layout(line: LineSpec) -> tuple[SourceSpec, AssemblySpec, BufferSpec]:
    """The controllable component source, its assembly and its component buffer."""
    for source in line.actionable_sources:
        for buffer in line.outputs_of(source.name):
            if buffer.kind == "component":
                assembly = line.station(buffer.downstream)
                assert isinstance(assembly, AssemblySpec)
                return source, assembly, buffer
    raise ValueError(
        f"line {line.name!r} has no actionable source feeding an assembly's component input; "
        "the waiting-time controller needs one (e.g. scenario='waiting_time')"
    )


def optimal_waiting_time(line: LineSpec, assembly_time: float | None = None) -> float:
    """The closed-form waiting time of the component source (18.5 on the reference line).

    Args:
        line: a line with an actionable source feeding an assembly's component input.
        assembly_time: an observed assembly processing time to use instead of its mean.
    """
    source, assembly, component = _waiting_time_layout(line)
    (main_in,) = line.inputs_of(assembly.name)
    (out,) = line.outputs_of(assembly.name)
    if assembly_time is None:
        assembly_time = (1 + assembly.processing_std) * assembly.processing_time
    assembly_cycle = (
        assembly_time + main_in.get_time + component.get_time + (1 + out.put_std) * out.put_time
    )
    source_cycle = (1 + source.processing_std) * source.processing_time + (
        1 + component.put_std
    ) * component.put_time
    return assembly_cycle - source_cycle


class OptimalWaitingTimeAgent(LineController):
    """Sets the component source's waiting time to the closed-form optimum each step.

    Args:
        env: a LineFlow env (``gym.make("LineFlow-WaitingTime-v0")``) or its vector version.
        use_observation: use the last observed assembly time (the reference's agent) rather than
            the nominal mean (the fixed closed form).
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv, use_observation: bool = True) -> None:
        super().__init__(env)
        self.use_observation = use_observation
        source, assembly, _ = _waiting_time_layout(self.line)
        self._time_index = self.feature(f"{assembly.name}.processing_time")
        self._time_scale = timed_scale(assembly)
        self._action_index = self.slot(source.name, "waiting_time")
        self._step = source.waiting_time_step
        self._choices = source.waiting_time_choices
        self._nominal = optimal_waiting_time(self.line)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs = host_array(observation, np.float64)
        if self.use_observation:
            observed = obs[..., self._time_index] * self._time_scale
            waiting = optimal_waiting_time(self.line, assembly_time=observed)
        else:
            waiting = np.full(obs.shape[:-1], self._nominal)
        index = np.clip(np.rint(np.asarray(waiting) / self._step), 0, self._choices - 1)
        action = self.zero_action(obs)
        action[..., self._action_index] = index.astype(np.int64)
        return action


class LastObservationAgent(OptimalWaitingTimeAgent):
    """The WaitingTimeJump heuristic: the closed form with the last observed assembly time.

    When the assembly slows down, its observed processing time grows and the waiting time follows
    it (reference: 113–115 on lineflow-rl 0.5.0).
    """

    def __init__(self, env: gym.Env | gym.vector.VectorEnv) -> None:
        super().__init__(env, use_observation=True)
