"""The controllers of ``controllers.py``: fixed policies built from an env's feature names
and action layout, and which baselines and searches each scenario gets.

Policies read the layout from the env itself, so one class serves every size of a scenario.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from benchmarks.lineflow.controllers_setup import Controller
from gymforge.agents.lineflow import ComplexLineHeuristicAgent
from gymforge.agents.lineflow.workers import balanced_partition, compositions
from gymforge.registry import EnvSpec, load_entry_point

# --------------------------------------------------------------------------------------------
# Policies built from the env's feature names and action layout


class Layout:
    """Feature indices and action slots of a LineFlow env, looked up by name."""

    def __init__(self, env: gym.Env) -> None:
        base = env.unwrapped
        self.line: Any = base.line
        self.features = {f.name: i for i, f in enumerate(base.features)}
        self.slots: list[Any] = list(base.action_slots)
        self.n_actions = len(self.slots)

    def feature(self, name: str) -> int:
        if name not in self.features:
            raise ValueError(f"line {self.line.name!r} has no feature {name!r}")
        return self.features[name]

    def slots_of(self, kind: str) -> list[int]:
        """Indices of the action entries of ``kind``, in action order."""
        return [i for i, slot in enumerate(self.slots) if slot.kind == kind]

    def buffer(self, name: str) -> Any:
        return next(b for b in self.line.buffers if b.name == name)

    def zero_action(self) -> np.ndarray:
        return np.zeros(self.n_actions, dtype=np.int64)


class FixedWaitingTime:
    """Holds the (single) actionable source's waiting time at the choice nearest ``value``."""

    def __init__(self, env: gym.Env, value: float) -> None:
        layout = Layout(env)
        (slot,) = layout.slots_of("waiting_time")
        choices = np.array([float(label) for label in layout.slots[slot].labels])
        self.index = int(np.abs(choices - value).argmin())
        self.value = float(choices[self.index])
        self.action = layout.zero_action()
        self.action[slot] = self.index

    def reset(self, seed: int | None = None) -> None:
        """Stateless."""

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        return self.action.copy()


def worker_slots(layout: Layout) -> list[int]:
    """The worker entries of the (single) pool, ordered by worker index."""
    slots = layout.slots_of("worker")
    return sorted(slots, key=lambda i: layout.slots[i].worker)


def assignment(counts: Sequence[int]) -> np.ndarray:
    """Worker → station index, filling stations in order: (2, 3, 4) → 0 0 1 1 1 2 2 2 2."""
    return np.repeat(np.arange(len(counts)), counts)


class FixedWorkers:
    """Keeps every worker at one station: a partition ``counts`` or round-robin (w mod k)."""

    def __init__(self, env: gym.Env, counts: Sequence[int] | None = None) -> None:
        layout = Layout(env)
        slots = worker_slots(layout)
        k = layout.slots[slots[0]].n
        if counts is None:
            stations = np.arange(len(slots)) % k
        else:
            if sum(counts) != len(slots) or len(counts) != k:
                raise ValueError(f"partition {tuple(counts)} does not fit {len(slots)} workers/{k}")
            stations = assignment(counts)
        self.action = layout.zero_action()
        self.action[slots] = stations

    def reset(self, seed: int | None = None) -> None:
        """Stateless."""

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        return self.action.copy()


DISPATCH_RULES = (
    "least_filled",
    "least_delay",
    "fastest_free",
    "round_robin",
    "rr_carrier",
    "random",
)
COLLECT_RULES = ("most_filled", "round_robin", "rr_carrier", "random")


class Routing:
    """Rule-based routing for a line with one distributing and one collecting switch (PD).

    Dispatch (switch output, ``index_out``):
        ``least_filled``: emptiest output buffer; ``least_delay``: least expected delay
        ``(fill·capacity + offset)·T_i`` with ``T_i`` the downstream station's nominal time;
        ``fastest_free``: fastest downstream station whose buffer is not full; ``round_robin``:
        next output every step; ``rr_carrier``: next output once a carrier has entered the
        current one (emulates upstream's ``alternate=True``); ``random``.
    Collect (switch input, ``index_in``):
        ``most_filled``; ``round_robin`` (every step); ``rr_carrier`` (next input once a carrier
        has left the current one, i.e. waits for it like ``alternate=True``); ``random``.
    """

    def __init__(
        self, env: gym.Env, dispatch: str, collect: str = "most_filled", offset: float = 1.0
    ) -> None:
        if dispatch not in DISPATCH_RULES or collect not in COLLECT_RULES:
            raise ValueError(f"unknown routing rule {dispatch!r}/{collect!r}")
        layout = Layout(env)
        outs, ins = layout.slots_of("index_out"), layout.slots_of("index_in")
        if len(outs) != 1 or len(ins) != 1:
            raise ValueError("routing baselines need exactly one index_out and one index_in slot")
        self.layout, self.dispatch, self.collect, self.offset = layout, dispatch, collect, offset
        self.out_slot, self.in_slot = outs[0], ins[0]
        out_buffers = layout.slots[self.out_slot].labels
        in_buffers = layout.slots[self.in_slot].labels
        self.out_fills = [layout.feature(f"{b}.fill") for b in out_buffers]
        self.in_fills = [layout.feature(f"{b}.fill") for b in in_buffers]
        self.out_capacity = np.array([layout.buffer(b).capacity for b in out_buffers], float)
        self.in_capacity = np.array([layout.buffer(b).capacity for b in in_buffers], float)
        self.times = np.array(
            [
                float(
                    getattr(layout.line.station(layout.buffer(b).downstream), "processing_time", 1)
                )
                for b in out_buffers
            ]
        )
        self.by_speed = np.argsort(self.times, kind="stable")
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.step = 0
        self.out_index = 0
        self.in_index = 0
        self.prev_out: np.ndarray | None = None
        self.prev_in: np.ndarray | None = None

    def _dispatch(self, counts: np.ndarray, fills: np.ndarray) -> int:
        n = len(counts)
        if self.dispatch == "least_filled":
            return int(fills.argmin())
        if self.dispatch == "least_delay":
            return int(((counts + self.offset) * self.times).argmin())
        if self.dispatch == "fastest_free":
            free = [i for i in self.by_speed if fills[i] < 1.0]
            return int(free[0]) if free else int(self.by_speed[0])
        if self.dispatch == "round_robin":
            return self.step % n
        if self.dispatch == "rr_carrier":
            if self.prev_out is not None and counts[self.out_index] > self.prev_out[self.out_index]:
                self.out_index = (self.out_index + 1) % n
            return self.out_index
        return int(self.rng.integers(n))

    def _collect(self, counts: np.ndarray, fills: np.ndarray) -> int:
        n = len(counts)
        if self.collect == "most_filled":
            return int(fills.argmax())
        if self.collect == "round_robin":
            return self.step % n
        if self.collect == "rr_carrier":
            if self.prev_in is not None and counts[self.in_index] < self.prev_in[self.in_index]:
                self.in_index = (self.in_index + 1) % n
            return self.in_index
        return int(self.rng.integers(n))

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs = np.asarray(observation, dtype=np.float64)
        out_fill, in_fill = obs[self.out_fills], obs[self.in_fills]
        out_count = np.rint(out_fill * self.out_capacity)
        in_count = np.rint(in_fill * self.in_capacity)
        action = self.layout.zero_action()
        action[self.out_slot] = self._dispatch(out_count, out_fill)
        action[self.in_slot] = self._collect(in_count, in_fill)
        self.prev_out, self.prev_in = out_count, in_count
        self.step += 1
        return action


class ComplexLineVariant:
    """The registry's ComplexLine heuristic with other waiting times and, optionally, workers."""

    def __init__(
        self,
        env: gym.Env,
        waiting_time: float,
        ramp_up_waiting_time: float,
        counts: Sequence[int] | None = None,
    ) -> None:
        self.agent = ComplexLineHeuristicAgent(
            env, waiting_time=waiting_time, ramp_up_waiting_time=ramp_up_waiting_time
        )
        layout = Layout(env)
        self.worker_slots = worker_slots(layout)
        self.stations = None if counts is None else assignment(counts)

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        action = np.array(self.agent.act(observation, info), dtype=np.int64)
        if self.stations is not None:
            action[self.worker_slots] = self.stations
        return action


class EmptiestComponentBuffer:
    """ComplexLine: fixed workers, route each component to the emptiest component buffer, and a
    fixed source waiting time."""

    def __init__(self, env: gym.Env, waiting_time: float, counts: Sequence[int]) -> None:
        layout = Layout(env)
        (wait_slot,) = layout.slots_of("waiting_time")
        (self.route_slot,) = layout.slots_of("index_out")
        self.fills = [layout.feature(f"{b}.fill") for b in layout.slots[self.route_slot].labels]
        choices = np.array([float(label) for label in layout.slots[wait_slot].labels])
        self.action = layout.zero_action()
        self.action[wait_slot] = int(np.abs(choices - waiting_time).argmin())
        self.action[worker_slots(layout)] = assignment(counts)

    def reset(self, seed: int | None = None) -> None:
        """Stateless."""

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        action = self.action.copy()
        action[self.route_slot] = int(np.asarray(observation)[self.fills].argmin())
        return action


def build_policy(env: gym.Env, spec: EnvSpec, controller: Controller) -> Any:
    """An agent (``reset(seed)``, ``act(obs, info)``) for ``controller`` on ``env``."""
    kw = controller.kwargs
    if controller.kind == "registry":
        return load_entry_point(spec.agents[controller.name])(env)
    if controller.kind == "fixed_waiting_time":
        return FixedWaitingTime(env, **kw)
    if controller.kind == "workers":
        return FixedWorkers(env, **kw)
    if controller.kind == "routing":
        return Routing(env, **kw)
    if controller.kind == "cl_heuristic":
        return ComplexLineVariant(env, **kw)
    if controller.kind == "cl_emptiest":
        return EmptiestComponentBuffer(env, **kw)
    raise ValueError(f"unknown controller kind {controller.kind!r}")


# --------------------------------------------------------------------------------------------
# Which baselines and searches each scenario gets


def scenario_of(spec: EnvSpec) -> tuple[str, dict[str, Any]]:
    kwargs = dict(spec.kwargs)
    return str(kwargs.get("scenario", "")), dict(kwargs.get("scenario_kwargs", {}) or {})


def size_of(scenario: str, env: gym.Env) -> int | None:
    """k: parallel processes (PD) or pool stations (WA, CL); None otherwise."""
    layout = Layout(env)
    if scenario == "part_distribution":
        return layout.slots[layout.slots_of("index_out")[0]].n
    if scenario in ("worker_assignment", "complex_line"):
        return layout.slots[worker_slots(layout)[0]].n
    return None


def baseline_controllers(scenario: str, env: gym.Env, quick: bool) -> list[Controller]:
    """Fixed policies evaluated on all seeds."""
    out: list[Controller] = []
    if scenario in ("waiting_time", "waiting_time_jump"):
        values = [0, *range(15, 23)] if scenario == "waiting_time" else list(range(15, 23))
        if quick:
            values = [v for v in values if v in (0, 18, 19)]
        for v in values:
            out.append(
                Controller(
                    f"fixed waiting time {v:g}", "fixed_waiting_time", (("value", v),), "baseline"
                )
            )
    elif scenario == "part_distribution":
        variants: list[tuple[str, str, str, float]] = [
            ("routing: least delay (n+1)·T, most-filled in", "least_delay", "most_filled", 1.0),
            ("routing: least delay (n+0.5)·T, most-filled in", "least_delay", "most_filled", 0.5),
            ("routing: least delay (n+2)·T, most-filled in", "least_delay", "most_filled", 2.0),
            ("routing: fastest non-full, most-filled in", "fastest_free", "most_filled", 1.0),
            ("routing: least-filled out, round-robin in", "least_filled", "round_robin", 1.0),
            ("routing: least-filled out, random in", "least_filled", "random", 1.0),
            ("routing: random out, most-filled in", "random", "most_filled", 1.0),
            ("routing: round-robin per step", "round_robin", "round_robin", 1.0),
            ("routing: round-robin per carrier", "rr_carrier", "rr_carrier", 1.0),
        ]
        if quick:
            variants = [variants[0], variants[-1]]
        for name, dispatch, collect, offset in variants:
            params = (("dispatch", dispatch), ("collect", collect), ("offset", offset))
            out.append(Controller(name, "routing", params, "baseline"))
    elif scenario == "worker_assignment":
        out.append(Controller("round-robin workers", "workers", (("counts", None),), "baseline"))
    return out


def search_controllers(scenario: str, env: gym.Env, quick: bool) -> list[Controller]:
    """Controllers searched on the search seeds; the best are re-evaluated on all seeds."""
    out: list[Controller] = []
    if scenario == "worker_assignment":
        layout = Layout(env)
        slots = worker_slots(layout)
        for counts in compositions(len(slots), layout.slots[slots[0]].n):
            c = tuple(int(x) for x in counts)
            out.append(Controller(f"partition {c}", "workers", (("counts", c),), "search:workers"))
    elif scenario == "complex_line":
        layout = Layout(env)
        slots = worker_slots(layout)
        k = layout.slots[slots[0]].n
        times = [
            float(layout.line.station(s).processing_time) for s in layout.slots[slots[0]].labels
        ]
        balanced = tuple(int(x) for x in balanced_partition(times, len(slots)))
        waits = [5, 10, 15, 20] if quick else [5, 7.5, 10, 12.5, 15, 17.5, 20, 25, 30]
        ramps = [10] if quick else [0, 10, 20]
        for w in waits:
            for r in ramps:
                params = (("waiting_time", w), ("ramp_up_waiting_time", r), ("counts", None))
                name = f"heuristic w={w:g} r={r:g}"
                out.append(Controller(name, "cl_heuristic", params, "search:complex_line"))
        if not quick:
            partitions = [c for c in compositions(len(slots), k) if min(c) >= 1]
            for counts in partitions:
                c = tuple(int(x) for x in counts)
                if c == balanced or max(c) - min(c) > 3:
                    continue
                for w in (10, 15, 20):
                    params = (("waiting_time", w), ("ramp_up_waiting_time", 10), ("counts", c))
                    name = f"heuristic w={w:g} r=10 workers {c}"
                    out.append(Controller(name, "cl_heuristic", params, "search:complex_line"))
        for w in [2, 3] if quick else [1.5, 2, 2.5, 3, 3.5, 4, 5]:
            params = (("waiting_time", w), ("counts", balanced))
            name = f"emptiest buffer, fixed wait {w:g}, workers {balanced}"
            out.append(Controller(name, "cl_emptiest", params, "search:complex_line"))
    return out
