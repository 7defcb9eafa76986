"""The torch engine's batch-last layout: its random numbers and state are those of the batch-first
formulation, transposed."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.lineflow.batched import compiled, engine, observe, phases, shortcuts, tensor_ops
from gymforge.envs.lineflow.batched.vector_env import LineFlowVecEnv


def test_uniform_lanes__is_uniform_transposed_with_the_same_counters():
    seeds = torch.randint(-(2**62), 2**62, (3000,), generator=torch.Generator().manual_seed(0))
    seeds = [*seeds.tolist(), 0, 1, -1, 2**63 - 1, -(2**63)]
    first, last = InstanceRNG.create(seeds), InstanceRNG.create(seeds)
    first.counter = last.counter = torch.randint(0, 2**40, (len(seeds),))
    where = torch.rand(len(seeds), generator=torch.Generator().manual_seed(1)) < 0.5
    for n in (1, 2, 9, 18, 33):
        expected = first.uniform(n, where=where)
        counter = last.counter
        wide = last.uniform_lanes(n, where=where, dtype=torch.float64)
        last.counter = counter
        got = last.uniform_lanes(n, where=where)
        assert got.shape == (n, len(seeds))
        assert torch.equal(expected, got.T)
        assert torch.equal(expected.to(torch.float64), wide.T)
        assert torch.equal(first.counter, last.counter)


@pytest.mark.parametrize(("n", "step"), [(18, 2), (9, 2), (10, 3), (4, 1)])
def test_uniform_lanes_step__is_every_step_th_lane_of_the_same_draw(n, step):
    seeds = torch.randint(-(2**62), 2**62, (700,), generator=torch.Generator().manual_seed(7))
    full, some = InstanceRNG.create(seeds.tolist()), InstanceRNG.create(seeds.tolist())
    full.counter = some.counter = torch.randint(0, 2**40, (700,))
    where = torch.rand(700, generator=torch.Generator().manual_seed(8)) < 0.5
    expected = full.uniform_lanes(n, where=where, dtype=torch.float64)
    got = some.uniform_lanes(n, where=where, dtype=torch.float64, step=step)
    assert got.shape == (len(range(0, n, step)), 700)
    assert torch.equal(got, expected[::step])
    assert torch.equal(full.counter, some.counter)
    rows = n // 2
    first = tensor_ops._uniform_firsts(some, rows, where)
    assert torch.equal(first, tensor_ops._uniform_pairs(full, rows, where)[:, 0])


def test_state__has_the_batch_axis_last():
    env = LineFlowVecEnv(
        num_envs=5, scenario="worker_assignment", scenario_kwargs={"n_assemblies": 3}
    )
    env.reset(seed=0)
    line = env.compiled
    shapes = {
        "now": (5,),
        "phase": (line.rows, 5),
        "held": (line.n_slots, 5),
        "count": (line.null_buffer + 1, 5),
        "w_station": (line.n_workers, 5),
    }
    for name, shape in shapes.items():
        assert tuple(getattr(env.state, name).shape) == shape, name
    assert line.n_slots == int(line.capacity.sum())  # unpadded slot space


def test_and_not__is_mask_and_not_other_with_broadcasting():
    gen = torch.Generator().manual_seed(2)
    mask = torch.rand(5, 64, generator=gen) < 0.5
    for other in (torch.rand(5, 64, generator=gen) < 0.5, torch.rand(5, 1, generator=gen) < 0.5):
        assert torch.equal(tensor_ops._and_not(mask, other), mask & ~other)


def _drive(
    env: LineFlowVecEnv, seed: int, steps: int, fields: tuple[str, ...], check=None
) -> list[torch.Tensor]:
    """Observations, rewards and the state ``fields`` of ``steps`` random-action steps from
    ``env.reset(seed=seed)`` (actions from seed + 1; ``check(env)`` after each step)."""
    obs, _ = env.reset(seed=seed)
    gen = torch.Generator().manual_seed(seed + 1)
    nvec = torch.as_tensor(env.single_action_space.nvec)
    out = [obs]
    for _ in range(steps):
        action = (torch.rand(env.num_envs, len(nvec), generator=gen) * nvec).long()
        obs, reward, *_ = env.step(action)
        out += [obs, reward, *(getattr(env.state, f) for f in fields)]
        if check is not None:
            check(env)
    return out


def _rollout(monkeypatch, scenario: str, shortcut: str | None) -> list[torch.Tensor]:
    if shortcut is not None:  # the straightforward form: every active instance sweeps
        monkeypatch.setattr(engine.Engine, shortcut, lambda self, state, active, *_: active)
    out = _drive(LineFlowVecEnv(num_envs=48, scenario=scenario), 3, 120, ("wake", "w_station"))
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("shortcut", ["_arrive_walkers_only", "_poll_again_only"])
@pytest.mark.parametrize("scenario", ["worker_assignment", "complex_line"])
def test_advance_shortcuts__equal_full_sweeps(monkeypatch, scenario, shortcut):
    fast = _rollout(monkeypatch, scenario, None)
    slow = _rollout(monkeypatch, scenario, shortcut)
    assert all(torch.equal(a, b) for a, b in zip(fast, slow, strict=True))


# the straightforward forms of the settle shortcuts: claims left to the next sweep like every
# pending rule
_SETTLE_PLAIN = {
    # (with the sweeps drawing their claims' put times themselves, see ``_settle_rollout``)
    "_claim_only": lambda self, state, active, pending, claims, rng, claimed=None: (
        active & (pending | tensor_ops._any_rows(claims))
    ),
    # (and the walkers arriving at the start of ``advance`` left to its first round)
    "_arrive_walkers_now": lambda self, state, until: None,
    # (and the work ends left to the next sweep like every due timer)
    "_work_ends_only": lambda self, state, active, pending, ends, claims, first_held: (
        pending | tensor_ops._any_rows(ends),
        claims,
    ),
}


def _settle_rollout(monkeypatch, scenario: str, plain: tuple[str, ...]) -> tuple[list, int]:
    for name in plain:
        monkeypatch.setattr(engine.Engine, name, _SETTLE_PLAIN[name])
    if "_claim_only" in plain:  # (which no longer draws the sweeps' put times)
        monkeypatch.setattr(engine, "_puts_take_time", lambda *_: False)
    calls = [0]  # sweeps and event rounds

    def counting(method):
        def counted(self, *args, **kwargs):
            calls[0] += 1
            return method(self, *args, **kwargs)

        return counted

    for name in ("_sweep", "next_event"):
        monkeypatch.setattr(engine.Engine, name, counting(getattr(engine.Engine, name)))
    env = LineFlowVecEnv(num_envs=64, scenario=scenario)

    def counter(env: LineFlowVecEnv) -> None:
        counters.append(env.rng.counter)

    counters: list[torch.Tensor] = []
    out = _drive(env, 5, 150, ("wake", "phase", "held"), counter) + counters
    monkeypatch.undo()
    return out, calls[0]


@pytest.mark.parametrize(
    "scenario", ["waiting_time", "complex_line", "worker_assignment", "part_distribution"]
)
def test_settle_shortcuts__equal_full_sweeps_with_fewer_sweeps(monkeypatch, scenario):
    fast, fast_calls = _settle_rollout(monkeypatch, scenario, ())
    slow, slow_calls = _settle_rollout(monkeypatch, scenario, ("_claim_only",))
    assert all(torch.equal(a, b) for a, b in zip(fast, slow, strict=True))
    assert fast_calls < slow_calls  # the shortcuts did settle instances without a sweep


@pytest.mark.parametrize(
    "scenario", ["waiting_time", "complex_line", "worker_assignment", "part_distribution"]
)
def test_sweeps__leave_no_carrier_that_can_move_on_and_arrived_only_in_held_slots(
    monkeypatch, scenario
):
    """``_slots`` moves carriers only after arrivals and ``_pending`` does not look for carriers
    that can move on: both rest on every sweep leaving none (``_move_on``), in every instance
    (active or not, compacted or not). ``_take`` clears ``arrived`` with ``held``: it rests on
    a carrier having arrived only in a held slot."""
    sweep, sweeps = engine.Engine._sweep, [0]

    def checked(self, state, *args, **kwargs):
        sweep(self, state, *args, **kwargs)
        sweeps[0] += 1
        movable = tensor_ops._and_not(state.arrived[:-1], state.held[1:]) & self._passable
        assert not bool(movable.any())
        assert not bool(tensor_ops._and_not(state.arrived, state.held).any())

    monkeypatch.setattr(engine.Engine, "_sweep", checked)
    _drive(LineFlowVecEnv(num_envs=64, scenario=scenario), 5, 150, ())
    assert sweeps[0] > 0


@pytest.mark.parametrize("plain", [("_work_ends_only",), ("_work_ends_only", "_claim_only")])
@pytest.mark.parametrize("scenario", ["waiting_time", "complex_line"])
def test_zero_time_work_ends__equal_full_sweeps_with_fewer_sweeps(monkeypatch, scenario, plain):
    # the WaitingTime sink and main source and the ComplexLine switch work for no time
    assert engine.Engine(LineFlowVecEnv(num_envs=1, scenario=scenario).engine.line)._zero_work
    fast, fast_calls = _settle_rollout(monkeypatch, scenario, ())
    slow, slow_calls = _settle_rollout(monkeypatch, scenario, plain)
    assert all(torch.equal(a, b) for a, b in zip(fast, slow, strict=True))
    assert fast_calls < slow_calls  # the work ends were made without a sweep


def _put_rollout(monkeypatch, scenario: str, defer: str) -> tuple[list, int, int]:
    """``_drive`` with the sweeps' draws left to ``_claim_only`` (``defer``: "all", "puts"
    only, or "none", as on lines where a put or a work may take no time), the number of
    random draws and the number of sweeps and event rounds."""
    if defer == "none":
        monkeypatch.setattr(engine, "_puts_take_time", lambda *_: False)
    if defer != "all":
        monkeypatch.setattr(engine, "_works_take_time", lambda *_: False)
    draws, calls = [0], [0]

    def counting(method, counter):
        def counted(self, *args, **kwargs):
            counter[0] += 1
            return method(self, *args, **kwargs)

        return counted

    monkeypatch.setattr(InstanceRNG, "uniform_lanes", counting(InstanceRNG.uniform_lanes, draws))
    for name in ("_sweep", "next_event"):
        monkeypatch.setattr(engine.Engine, name, counting(getattr(engine.Engine, name), calls))
    env = LineFlowVecEnv(num_envs=64, scenario=scenario)
    assert env.engine._defer_puts == (defer != "none")
    assert env.engine._defer_work == (defer == "all")
    counters: list[torch.Tensor] = []
    out = _drive(env, 5, 150, ("wake", "phase", "held"), lambda e: counters.append(e.rng.counter))
    monkeypatch.undo()
    return out + counters, draws[0], calls[0]


@pytest.mark.parametrize(
    "scenario", ["waiting_time", "complex_line", "worker_assignment", "part_distribution"]
)
def test_deferred_draws__equal_drawing_in_the_sweep_with_fewer_draws(monkeypatch, scenario):
    results = [_put_rollout(monkeypatch, scenario, d) for d in ("all", "puts", "none")]
    (fast, *_), others = results[0], results[1:]
    for slow, *_ in others:
        assert all(torch.equal(a, b) for a, b in zip(fast, slow, strict=True))
    draws = [r[1] for r in results]
    assert draws[0] < draws[1] < draws[2]  # the sweeps' draws shared those after them
    assert len({r[2] for r in results}) == 1  # and left no end of a work due too early


@pytest.mark.parametrize("overlap", ["none", "work and claims", "claims and free", "all"])
def test_draw_undrawn__equals_the_draws_in_order(overlap):
    """``_draw_undrawn`` with works, claims of a sweep and claims of ``_claim_only``: the same
    ends and counters as drawing them one after the other (in one draw where no instance is
    in two)."""
    env = LineFlowVecEnv(num_envs=300, scenario="worker_assignment")
    env.reset(seed=4)
    eng, state, rows = env.engine, env.state, env.engine.line.rows
    gen = torch.Generator().manual_seed(9)
    work, claimed, free = (torch.rand(rows, 300, generator=gen) < 0.1 for _ in range(3))
    started = work | (torch.rand(rows, 300, generator=gen) < 0.1)  # (with works without noise)
    where = [
        tensor_ops._any_rows(started),
        tensor_ops._any_rows(claimed),
        tensor_ops._any_rows(free),
    ]
    keep = {"none": (), "work and claims": ((0, 1),), "claims and free": ((1, 2),)}
    if overlap != "all":
        for a, b in ((0, 1), (0, 2), (1, 2)):
            if (a, b) not in keep[overlap]:
                cut = where[a] & where[b]
                for mask in (claimed, free)[b - 1 : b]:
                    mask &= ~cut[None, :]
                where[b] = where[b] & ~cut
    base = torch.rand(rows, 300, generator=gen, dtype=torch.float64) * 5 + 1
    undrawn = shortcuts._Undrawn(claimed=claimed, work=work, base=base, work_where=where[0])
    results = []
    for merged in (True, False):
        rng = InstanceRNG(env.rng.seed, env.rng.counter.clone(), env.rng.key)
        state.wake = torch.full((rows, 300), float("inf"), dtype=torch.float64)
        if merged:
            eng._draw_undrawn(state, undrawn, free, rng)
        else:
            eng._end_work(state, undrawn, tensor_ops._uniform_firsts(rng, rows, where[0]))
            for mask in (claimed, free):
                eng._draw_put_times(state, mask, tensor_ops._any_rows(mask), rng)
        results.append((state.wake.clone(), rng.counter))
    assert torch.equal(results[0][0], results[1][0])
    assert torch.equal(results[0][1], results[1][1])


def test_puts_take_time__not_where_a_put_can_take_no_time():
    line = LineFlowVecEnv(num_envs=1, scenario="waiting_time").engine.line
    quick = dataclasses.replace(line, put_time=torch.zeros_like(line.put_time))
    assert engine.Engine(line)._defer_puts
    assert not engine.Engine(quick)._defer_puts


@pytest.mark.parametrize("scenario", ["worker_assignment", "complex_line"])
def test_walkers_arriving_at_the_start__equal_a_first_round(monkeypatch, scenario):
    fast, fast_calls = _settle_rollout(monkeypatch, scenario, ())
    slow, slow_calls = _settle_rollout(monkeypatch, scenario, ("_arrive_walkers_now",))
    assert all(torch.equal(a, b) for a, b in zip(fast, slow, strict=True))
    assert fast_calls < slow_calls  # fewer event rounds


def test_walkers_arriving_at_the_start__wait_for_an_until_after_now():
    env = LineFlowVecEnv(
        num_envs=4, scenario="worker_assignment", scenario_kwargs={"n_assemblies": 3}
    )
    env.reset(seed=0)
    state, eng = env.state, env.engine
    state.w_arrive[0] = state.now  # worker 0 of every instance ends its walk now
    state.w_dest[0] = 3
    eng.advance(state, state.now.clone(), env.rng)  # nothing lies before until == now
    assert bool((state.w_arrive[0] == state.now).all())
    eng.advance(state, state.now + 0.5, env.rng)
    assert bool((state.w_station[0] == 3).all())


def _toggled_rollout(
    scenario: str, attribute: str, value: object, seed: int, fields: tuple[str, ...], check=None
) -> list[torch.Tensor]:
    """Observations, rewards and the state ``fields`` of a 100-step random-action rollout of 32
    instances with the engine's ``attribute`` set to ``value`` (``check(env)`` after each step)."""
    env = LineFlowVecEnv(num_envs=32, scenario=scenario)
    setattr(env.engine, attribute, value)
    return _drive(env, seed, 100, fields, check)


@pytest.mark.parametrize("scenario", ["waiting_time", "complex_line", "worker_assignment"])
def test_fixed_component_slots__equal_the_looked_up_ones(scenario):
    assert LineFlowVecEnv(num_envs=1, scenario=scenario).engine._one_component  # (one buffer each)

    def same_slots(env: LineFlowVecEnv) -> None:
        looked_up = env.engine._lookup_comp_last(env.state)
        assert torch.equal(looked_up, env.engine._fixed_comp_last[:, None].expand_as(looked_up))

    def rollout(one_component: bool) -> list[torch.Tensor]:
        fields = ("wake", "comp_type", "count")
        return _toggled_rollout(scenario, "_one_component", one_component, 9, fields, same_slots)

    fixed, looked_up = rollout(True), rollout(False)
    assert all(torch.equal(a, b) for a, b in zip(fixed, looked_up, strict=True))


@pytest.mark.parametrize(
    ("scenario", "typed"),
    [
        ("worker_assignment", False),
        ("part_distribution", False),
        ("waiting_time", True),
        ("complex_line", True),
        ("component_assembly", True),
        ("part_dependent_process", True),
    ],
)
def test_untyped_lines__equal_tracking_the_types(monkeypatch, scenario, typed):
    """Lines where no carrier type decides anything do not track the types: the same
    trajectories as with them tracked (and lines where types decide do track them)."""
    assert LineFlowVecEnv(num_envs=1, scenario=scenario).engine._typed == typed

    def rollout() -> list[torch.Tensor]:
        env = LineFlowVecEnv(num_envs=48, scenario=scenario)
        return _drive(env, 11, 150, ("wake", "phase", "count", "factor", "n_scrap"))

    untracked = rollout()
    monkeypatch.setattr(engine, "_types_decide", lambda *_: True)
    tracked = rollout()
    assert all(torch.equal(a, b) for a, b in zip(untracked, tracked, strict=True))


@pytest.mark.parametrize(
    ("scenario", "can_fail"),
    [
        ("worker_assignment", False),
        ("waiting_time", True),
        ("complex_line", True),
        ("component_assembly", True),
    ],
)
def test_assemblies_that_never_fail__equal_checking_the_components(monkeypatch, scenario, can_fail):
    """Lines whose assembly conditions are all infinite do not time the components: the same
    trajectories as with every component checked (and lines with a finite one do check)."""
    assert LineFlowVecEnv(num_envs=1, scenario=scenario).engine._can_fail == can_fail

    def rollout() -> list[torch.Tensor]:
        env = LineFlowVecEnv(num_envs=48, scenario=scenario)
        return _drive(env, 12, 150, ("wake", "phase", "comp_k", "n_scrap"))

    unchecked = rollout()
    monkeypatch.setattr(engine, "_assemblies_can_fail", lambda *_: True)
    checked = rollout()
    assert all(torch.equal(a, b) for a, b in zip(unchecked, checked, strict=True))


def test_wide__of_a_smaller_batch_slices_the_widest_with_the_same_values():
    env = LineFlowVecEnv(num_envs=2, scenario="worker_assignment")
    eng = env.engine
    widest, small = eng._wide(300), eng._wide(37)
    assert small._parent is widest and eng._wide(37) is small
    fresh = tensor_ops._Wide(eng._bool_columns, env.compiled.rows, 37)
    for name in eng._bool_columns:
        got = getattr(small, name)
        assert got.shape == getattr(fresh, name).shape and torch.equal(got, getattr(fresh, name))
        assert got.stride(-1) == 1  # rows of contiguous elements
    for phase in (phases.START, phases.PUT_WAIT, phases.SEQ_ERROR):
        assert torch.equal(small.phase(phase), fresh.phase(phase))
    assert eng._wide(500)._parent is None and eng._widest._batch == 500


def test_wide__of_the_largest_batch_is_kept_past_the_last_few_sizes():
    eng = LineFlowVecEnv(num_envs=2, scenario="waiting_time").engine
    widest = eng._wide(400)
    for batch in range(1, 3 * engine.WIDE_CACHE):  # (more new sizes than are kept)
        assert eng._wide(batch)._parent is widest
    assert eng._wide(400) is widest and len(eng._wides) <= engine.WIDE_CACHE + 1


def _move_with_every_chain(eng, state) -> None:
    """``Engine._move`` (all instances) as it was: the chain recurrence always run."""
    passes = state.arrived[:-1] & eng._passable
    free_now = ~state.held[1:]
    frees = free_now
    for _ in range(eng.line.cmax - 2):
        chained = free_now.clone()
        chained[:-1] |= passes[1:] & frees[1:]
        frees = chained
    move = passes & frees
    state.arrived[:-1] &= ~move
    state.held[:-1] &= ~move
    state.held[1:] |= move
    state.ready[1:] = torch.where(move, state.now[None, :] + eng._slot_time_next, state.ready[1:])
    state.slot_created[1:] = torch.where(move, state.slot_created[:-1], state.slot_created[1:])
    state.slot_type[1:] = torch.where(move, state.slot_type[:-1], state.slot_type[1:])


@pytest.mark.parametrize("scenario", ["worker_assignment", "part_distribution", "waiting_time"])
@pytest.mark.parametrize("density", [0.2, 0.6, 0.95])
def test_move__equals_the_full_chain_recurrence(scenario, density):
    env = LineFlowVecEnv(num_envs=256, scenario=scenario)
    env.reset(seed=16)
    state, eng = env.state, env.engine
    gen = torch.Generator().manual_seed(int(density * 100))
    shape = state.held.shape
    state.held = torch.rand(shape, generator=gen) < density
    state.arrived = state.held & (torch.rand(shape, generator=gen) < 0.7)
    state.ready = torch.where(state.held & ~state.arrived, 5.0, torch.inf).double()
    state.slot_created = torch.rand(shape, generator=gen, dtype=torch.float64)
    state.slot_type = torch.randint(0, 3, shape, generator=gen)
    expected = {f: getattr(state, f).clone() for f in ("arrived", "held", "ready")}
    expected |= {f: getattr(state, f).clone() for f in ("slot_created", "slot_type")}
    reference = type("S", (), {k: v for k, v in expected.items()} | {"now": state.now})()
    _move_with_every_chain(eng, reference)
    eng._move(state, None)
    for name in expected:
        if name != "slot_type" or eng._typed:  # (untyped lines do not move the types)
            assert torch.equal(getattr(state, name), getattr(reference, name)), name
    assert not bool((state.arrived[:-1] & eng._passable & ~state.held[1:]).any())


@pytest.mark.parametrize("batch", [5, 3000])  # below and above CHOOSE_ARITHMETIC elements
def test_phase_counts__count_the_selected_rows_phases(batch):
    gen = torch.Generator().manual_seed(13)
    phase = torch.randint(0, phases.N_PHASES, (9, batch), generator=gen).to(torch.int8)
    wide = tensor_ops._Wide({"source": torch.zeros(9, 1, dtype=torch.bool)}, 9, batch)
    for mask in (
        torch.rand(9, batch, generator=gen) < 0.3,
        torch.rand(1, batch, generator=gen) < 0.5,
    ):
        expected = [int(((phase == p) & mask).sum()) for p in range(phases.N_PHASES)]
        assert tensor_ops._phase_counts(mask, phase, wide) == expected
    assert tensor_ops._phase_counts(None, phase, wide) == [
        int((phase == p).sum()) for p in range(phases.N_PHASES)
    ]


@pytest.mark.parametrize("scenario", ["complex_line", "worker_assignment"])
def test_station_skill__equals_the_looked_up_skills(scenario):
    skill = LineFlowVecEnv(num_envs=1, scenario=scenario).engine._station_skill
    assert skill is not None  # (one skill everywhere)

    def rollout(constant: bool) -> list[torch.Tensor]:
        fields = ("factor", "wake", "w_holder")
        return _toggled_rollout(scenario, "_station_skill", skill if constant else None, 14, fields)

    assert all(torch.equal(a, b) for a, b in zip(rollout(True), rollout(False), strict=True))


@pytest.mark.parametrize("scenario", ["complex_line", "worker_assignment"])
def test_walks_without_the_instant_check__equal_with_it(scenario):
    # no worker of these lines walks in zero time, so the engine skips the instant-walk check
    assert not LineFlowVecEnv(num_envs=1, scenario=scenario).engine._instant_walks

    def rollout(instant_walks: bool) -> list[torch.Tensor]:
        fields = ("w_station", "w_arrive", "w_dest")
        return _toggled_rollout(scenario, "_instant_walks", instant_walks, 11, fields)

    assert all(torch.equal(a, b) for a, b in zip(rollout(False), rollout(True), strict=True))


@pytest.mark.parametrize(
    "scenario", ["waiting_time", "complex_line", "worker_assignment", "part_distribution"]
)
def test_after_work__is_the_phase_the_working_rule_chose(scenario):
    # the rule chose, for a row whose WORKING ends: OUT_CHECK at a switch, SEQ_NEXT at a
    # sequential process, START at a sink without output (it counts the part), else PUT_WAIT
    env = LineFlowVecEnv(num_envs=2, scenario=scenario)
    eng, line = env.engine, env.compiled
    kind = line.kind[:, None]  # (R, 1), like the engine's row columns
    has_out = (line.buffer_out != line.null_buffer)[:, None]
    expected = torch.where(eng._sink & ~has_out, phases.START, phases.PUT_WAIT)
    expected = torch.where(eng._sequential, phases.SEQ_NEXT, expected)
    expected = torch.where(kind == compiled.KIND_SWITCH, phases.OUT_CHECK, expected)
    assert torch.equal(eng._after_work, expected.to(torch.int8))
    assert eng._wide(3).after_work.shape == (line.rows, 3)
    assert eng._puts_on_null == (
        eng._has_switch or bool((~has_out & (kind != compiled.KIND_SINK)).any())
    )


@pytest.mark.parametrize("scenario", ["waiting_time", "complex_line", "worker_assignment"])
def test_observer_modes__one_lookup_is_the_one_hot_of_the_station_modes(scenario):
    env = LineFlowVecEnv(num_envs=257, scenario=scenario)
    observer, state = env.observer, env.state
    generator = torch.Generator().manual_seed(0)
    state.phase = torch.randint(
        0, phases.N_PHASES, state.phase.shape, generator=generator, dtype=torch.int8
    )
    expected = observe._one_hot(observer._station_modes(state), 3)
    got = observer._group_modes(state)
    assert got.dtype == torch.float32 and torch.equal(got, expected)
    assert set(observer._station_modes(state).unique().tolist()) == {0, 1, 2}  # (every mode)
