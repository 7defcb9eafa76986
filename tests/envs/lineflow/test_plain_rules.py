"""The batched LineFlow engine with every shortcut off (``shortcuts=False``: the plain rules,
full sweeps until a sweep changes nothing), also with every guard taken (the GPU mode), gives
the committed golden trajectories of every batched LineFlow id, and the same trajectories as the
shortcuts where compaction and the rounds that spare a sweep run."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from gymforge.checks import golden
from gymforge.envs.lineflow.batched import compaction, engine, event_loop, rounds
from gymforge.envs.lineflow.batched.vector_env import LineFlowVecEnv, engine_mode

DOCUMENT = json.loads(golden.DEFAULT_FILE.read_text())
BATCHED_LINEFLOW_IDS = sorted(
    env_id
    for env_id, kind in golden.golden_cases()
    if env_id.startswith("LineFlow-") and kind == "vector"
)


def test_every_batched_lineflow_id_is_covered():
    assert len(BATCHED_LINEFLOW_IDS) >= 12
    assert all(f"{env_id}/vector" in DOCUMENT["cases"] for env_id in BATCHED_LINEFLOW_IDS)


MODES = {
    "plain": {"shortcuts": False},
    "unguarded": {"shortcuts": True, "guards": False},
    "gpu": engine.GPU_MODE,
}


@pytest.mark.guard
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("env_id", BATCHED_LINEFLOW_IDS)
def test_plain_rules__reproduce_the_golden_trajectories(env_id, mode):
    case = f"{env_id}/vector"
    actual = {
        "cases": {
            case: {
                str(seed): golden.trajectory(env_id, seed, env_kwargs=MODES[mode])
                for seed in golden.SEEDS
            }
        }
    }
    expected = {"cases": {case: DOCUMENT["cases"][case]}}
    problem = golden.first_difference(expected, actual)
    assert problem is None, problem


# what each shortcut flag is under the plain rules, and a scenario whose line takes it
_FLAGS = {
    "_typed": (True, "worker_assignment"),
    "_can_fail": (True, "worker_assignment"),
    "_defer_puts": (False, "waiting_time"),
    "_defer_work": (False, "worker_assignment"),
    "_fixed_work": (None, "part_distribution"),
    "_fixed_buffers": (False, "waiting_time"),
    "_one_component": (False, "worker_assignment"),
    "_station_skill": (None, "worker_assignment"),
    "_instant_walks": (True, "worker_assignment"),
    "_zero_work": (False, "waiting_time"),
    "_puts_on_null": (True, "waiting_time"),
}


@pytest.mark.parametrize("flag", sorted(_FLAGS))
def test_plain_rules__turn_off_each_shortcut_that_a_line_takes(flag):
    plain_value, scenario = _FLAGS[flag]
    taken = getattr(LineFlowVecEnv(num_envs=1, scenario=scenario).engine, flag)
    plain = getattr(LineFlowVecEnv(num_envs=1, scenario=scenario, shortcuts=False).engine, flag)
    assert plain is plain_value or plain == plain_value
    assert taken is not plain_value and taken != plain_value  # (the line does take it)


def _drive(env: LineFlowVecEnv, seed: int, steps: int) -> list[torch.Tensor | None]:
    """Observations, rewards, random counters and every state tensor that ``env``'s engine
    tracks after ``steps`` random-action steps from ``env.reset(seed=seed)`` (actions from
    seed + 1). The carriers' types and components' creation times are None where the engine
    does not track them (the shortcuts, see ``Engine._typed``, ``Engine._can_fail``)."""
    obs, _ = env.reset(seed=seed)
    gen = torch.Generator().manual_seed(seed + 1)
    nvec = torch.as_tensor(env.single_action_space.nvec)
    out = [obs]
    for _ in range(steps):
        action = (torch.rand(env.num_envs, len(nvec), generator=gen) * nvec).long()
        obs, reward, *_ = env.step(action)
        out += [obs, reward, env.rng.counter.clone()]  # (compaction writes it in place)
    untracked = set()
    if not env.engine._typed:
        untracked |= {"carrier_type", "comp_type", "slot_type"}
    if not env.engine._can_fail:
        untracked |= {"comp_created"}
    return out + [
        getattr(env.state, f.name) if f.name not in untracked else None
        for f in dataclasses.fields(env.state)
    ]


_SHORTCUT_METHODS = (
    "_settle",
    "_advance",
    "_arrive_walkers_now",
    "_arrive_walkers_only",
    "_poll_again_only",
    "_work_ends_only",
    "_claim_only",
    "_move_on",
    "_draw_undrawn",
)


@pytest.mark.parametrize(
    "scenario", ["waiting_time", "complex_line", "worker_assignment", "part_distribution"]
)
def test_plain_rules__equal_the_shortcuts_and_take_none_of_them(monkeypatch, scenario):
    """At a batch where the shortcuts compact sub-batches (checked), the plain rules give the
    same observations, rewards, counters and final state, and call no shortcut."""
    selected = [0]
    select = compaction._select

    def counted(*args):
        selected[0] += 1
        return select(*args)

    monkeypatch.setattr(event_loop, "_select", counted)
    monkeypatch.setattr(rounds, "_select", counted)
    fast = _drive(LineFlowVecEnv(num_envs=160, scenario=scenario), 21, 60)
    assert selected[0] > 0  # (the shortcuts did compact)

    def refuse(name):
        def refused(*args, **kwargs):
            raise AssertionError(f"the plain rules took the shortcut {name}")

        return refused

    for name in _SHORTCUT_METHODS:
        monkeypatch.setattr(engine.Engine, name, refuse(name))
    for name in ("_puts_take_time", "_works_take_time"):  # (whether draws may wait)
        monkeypatch.setattr(engine, name, refuse(name))
    plain = _drive(LineFlowVecEnv(num_envs=160, scenario=scenario, shortcuts=False), 21, 60)
    for a, b in zip(fast, plain, strict=True):
        assert a is None or torch.equal(a, b)


@pytest.mark.parametrize("name", ["shortcuts", "guards"])
@pytest.mark.parametrize("value", ["no", 1])
def test_engine_switches__must_be_a_bool(name, value):
    with pytest.raises(TypeError, match=rf"{name} must be True, False or None"):
        LineFlowVecEnv(num_envs=1, **{name: value})
    line = LineFlowVecEnv(num_envs=1).compiled
    with pytest.raises(TypeError, match=rf"{name} must be True or False"):
        engine.Engine(line, **{name: value})
    with pytest.raises(TypeError, match=rf"{name} must be True or False"):
        engine.Engine(line, **{name: None})


def test_engine_mode__gpu_mode_on_cuda_cpu_mode_elsewhere_unless_given():
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert engine_mode(cpu, None, None) == {"shortcuts": True, "guards": True}
    assert engine_mode(cuda, None, None) == engine.GPU_MODE == {"shortcuts": False, "guards": False}
    assert engine_mode(cuda, True, None) == {"shortcuts": True, "guards": False}
    assert engine_mode(cpu, None, False) == {"shortcuts": True, "guards": False}
    env = LineFlowVecEnv(num_envs=1, guards=False)
    assert (env.engine.shortcuts, env.engine.guards) == (True, False)
