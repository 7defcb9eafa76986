"""The throughput measurement of ``batched.py``: timed vector steps, the thread-contention
canary, calibration, one measured round per configuration and the per-scenario run.

The timing loop lives here alone so that what is timed can be read in one place.
"""

from __future__ import annotations

import contextlib
import gc
import time
from typing import Any

import torch

from benchmarks.lineflow.batched_profile import profile_engine
from benchmarks.lineflow.batched_setup import (
    ANCHOR_HORIZON,
    ANCHOR_WARM_UP_STEPS,
    BASE_SEED,
    CALIBRATION_MIN_S,
    CANARY_ELEMENTS,
    CANARY_OPS,
    CONTENTION_RATIO,
    LINEFLOW,
    MULTI_THREAD_MIN_BATCH,
    SYNC,
    SYNC_BATCH_SIZES,
    TORCH,
    TORCH_WORKERS,
    WARM_SEED,
    Config,
    EngineCounter,
    Measurement,
    Scenario,
    Settings,
    episode_step,
    field_bytes,
    make_anchor,
    make_sync,
    make_torch,
    synchronize,
    tensor_bytes,
)
from benchmarks.lineflow.warm import sample_action_batches, transplant_state, warm_env, warm_shard


def timed_vector_steps(
    config: Config, steps: int, cap_s: float, device: str, offset: int = 0
) -> tuple[int, float, bool]:
    """Step ``config``'s vector env ``steps`` times (cyclic pre-sampled actions), stopping after
    the step that passes ``cap_s``; returns (steps done, seconds, capped)."""
    env, actions = config.env, config.actions
    count = len(actions)
    synchronize(device)
    start = time.perf_counter()
    done, capped = 0, False
    for i in range(steps):
        env.step(actions[(offset + i) % count])
        done += 1
        if time.perf_counter() - start > cap_s and done < steps:
            capped = True
            break
    synchronize(device)
    return done, time.perf_counter() - start, capped


def thread_canary(threads: int) -> float:
    """Seconds for CANARY_OPS element-wise adds big enough to run in parallel on ``threads``."""
    torch.set_num_threads(threads)
    x = torch.ones(CANARY_ELEMENTS, dtype=torch.float64)
    out = torch.empty_like(x)
    torch.add(x, x, out=out)
    start = time.perf_counter()
    for _ in range(CANARY_OPS):
        torch.add(x, out, out=out)
    return time.perf_counter() - start


def contention_ratio(threads: int) -> float:
    """Canary time with ``threads`` threads over canary time with 1 (CPU only).

    On a machine whose cores are busy with other jobs, every parallel torch op waits for a
    descheduled worker thread (milliseconds each): a step of the engine, ~5000 ops, can then take
    30 s instead of 0.5 s. The canary detects this in well under a second.
    """
    one = thread_canary(1)
    many = thread_canary(threads)
    torch.set_num_threads(1)
    return many / one


def calibrate(config: Config, settings: Settings) -> None:
    """Untimed steps (>= 1 and >= CALIBRATION_MIN_S) that set ``config.steps``."""
    torch.set_num_threads(config.threads)
    done, elapsed = 0, 0.0
    while done == 0 or elapsed < CALIBRATION_MIN_S:
        n, seconds, _ = timed_vector_steps(
            config, max(1, done), settings.cap_seconds, settings.device, offset=done
        )
        done, elapsed = done + n, elapsed + seconds
    per_step = elapsed / done
    config.calibration_s_per_step = per_step
    config.steps = max(1, round(settings.target_seconds / per_step))


def measure(config: Config, round_index: int, settings: Settings) -> Measurement:
    """One timed measurement of a torch or SimPy ``config``.

    A multi-thread configuration is first checked with the thread canary; under contention
    (ratio > CONTENTION_RATIO) it is skipped, since a single step may then take minutes.
    """
    ratio = None
    if config.threads > 1 and settings.device == "cpu":
        ratio = contention_ratio(config.threads)
        if ratio > CONTENTION_RATIO:
            return Measurement(
                scenario=config.scenario,
                system=config.system,
                batch=config.batch,
                threads=config.threads,
                round=round_index,
                vector_steps=0,
                env_steps=0,
                seconds=0.0,
                env_steps_per_s=None,
                capped=False,
                skipped=f"CPU contention: {config.threads}-thread canary {ratio:.0f}x slower "
                "than 1 thread",
                thread_canary_ratio=ratio,
            )
    torch.set_num_threads(config.threads)
    gc.collect()
    start_step = episode_step(config.env) if config.system == TORCH else None
    before = config.counter.snapshot() if config.counter and config.counter.active else None
    done, seconds, capped = timed_vector_steps(
        config, config.steps, settings.cap_seconds, settings.device, offset=round_index
    )
    rounds = sweeps = None
    if before is not None and config.counter is not None:
        events, sweep_count = config.counter.snapshot()
        rounds = (events - before[0] - done) / done  # each advance ends with one empty look
        sweeps = (sweep_count - before[1]) / done
    return Measurement(
        scenario=config.scenario,
        system=config.system,
        batch=config.batch,
        threads=config.threads,
        round=round_index,
        vector_steps=done,
        env_steps=done * config.batch,
        seconds=seconds,
        env_steps_per_s=done * config.batch / seconds,
        capped=capped,
        thread_canary_ratio=ratio,
        episode_step_start=start_step,
        event_rounds_per_step=rounds,
        sweeps_per_step=sweeps,
        workers=config.workers,
    )


def measure_anchor(config: Config, round_index: int, settings: Settings) -> Measurement:
    """One lineflow-rl episode (reset untimed), as in ``scalar.py``."""
    torch.set_num_threads(1)
    sim, actions = config.env, config.actions
    gc.collect()
    sim.reset(seed=BASE_SEED + round_index)
    start = time.perf_counter()
    done, capped = 0, False
    for action in actions:
        _, _, terminated, truncated, _ = sim.step(action)
        done += 1
        if terminated or truncated:
            break
        if time.perf_counter() - start > settings.cap_seconds:
            capped = True
            break
    seconds = time.perf_counter() - start
    return Measurement(
        scenario=config.scenario,
        system=LINEFLOW,
        batch=1,
        threads=1,
        round=round_index,
        vector_steps=done,
        env_steps=done,
        seconds=seconds,
        env_steps_per_s=done / seconds,
        capped=capped,
    )


def log_measurement(m: Measurement, repeats: int) -> None:
    """One progress line."""
    head = (
        f"  {m.scenario:<4} {m.system:<11} B={m.batch:<6} t={m.threads}  round {m.round + 1}/"
        f"{repeats}"
    )
    if m.env_steps_per_s is None:
        print(f"{head}  skipped: {m.skipped}", flush=True)
        return
    extra = ""
    if m.thread_canary_ratio is not None:
        extra += f"  canary {m.thread_canary_ratio:.1f}x"
    if m.episode_step_start is not None:
        extra += f"  from episode step {m.episode_step_start}"
    if m.sweeps_per_step is not None:
        extra += f"  {m.sweeps_per_step:.1f} sweeps/step"
    print(
        f"{head}  {m.env_steps_per_s:>12,.0f} env steps/s  ({m.vector_steps} steps in "
        f"{m.seconds:.2f} s{', capped' if m.capped else ''}){extra}",
        flush=True,
    )


# --------------------------------------------------------------------------------------------
# One scenario


def warm_up_batch(settings: Settings) -> int:
    """B of the warm env whose state the measured envs copy."""
    return min(settings.warm_up_batch, max(settings.batch_sizes))


def warm_state_env(scenario: Scenario, settings: Settings) -> tuple[Any, float]:
    """The torch env of ``--warm-up-batch`` instances stepped ``--warm-up-steps`` times."""
    return warm_env(
        scenario.gym_id,
        warm_up_batch(settings),
        settings.warm_up_steps,
        WARM_SEED,
        settings.action_batches,
        settings.device,
    )


def warm_workers(env: Any, scenario: Scenario, settings: Settings) -> bool:
    """Give each worker's shard of the torch-workers ``env`` the warm state (``warm_shard``)."""
    done = env.apply_to_shards(
        warm_shard,
        scenario.gym_id,
        warm_up_batch(settings),
        settings.warm_up_steps,
        WARM_SEED,
        settings.action_batches,
    )
    return all(done)


def ready_torch_env(
    scenario: Scenario,
    settings: Settings,
    batch: int,
    workers: int,
    warm: Any | None,
    info: dict[str, Any],
) -> tuple[Any, list[Any], list[str]]:
    """A torch env of ``batch`` instances (over ``workers`` processes), reset with BASE_SEED and
    given the warm state, its action batches and notes on how it was warmed."""
    env = make_torch(scenario, batch, settings.device, workers)
    env.reset(seed=BASE_SEED)
    actions = sample_action_batches(env, BASE_SEED, settings.action_batches, settings.device)
    if warm is not None:
        source = f"state from the warm env (B={warm.unwrapped.num_envs})"
        if workers > 1 and warm_workers(env, scenario, settings):
            return env, actions, [f"{source}, rebuilt in each worker"]
        if workers == 1 and transplant_state(env, warm):
            return env, actions, [source]
    notes = [] if warm is None else ["engine state not transplantable; warmed on its own"]
    torch.set_num_threads(1)
    start = time.perf_counter()
    for i in range(settings.warm_up_steps):
        env.step(actions[i % len(actions)])
    synchronize(settings.device)
    info["own_warm_up_s"][f"{batch}/workers={workers}"] = time.perf_counter() - start
    return env, actions, notes


def build_torch_configs(
    scenario: Scenario, settings: Settings, warm: Any | None
) -> tuple[list[Config], dict[str, Any]]:
    """Torch configs for every B (thread counts, and worker processes from
    MULTI_THREAD_MIN_BATCH on, on the CPU), their envs reset and warmed."""
    configs: list[Config] = []
    info: dict[str, Any] = {"warm_up": settings.warm_up, "own_warm_up_s": {}}
    for batch in settings.batch_sizes:
        env, actions, notes = ready_torch_env(scenario, settings, batch, 1, warm, info)
        counter = EngineCounter(env)
        threads = [1]
        if batch >= MULTI_THREAD_MIN_BATCH:
            threads = sorted(set(settings.threads))
        for n in threads:
            configs.append(
                Config(scenario.key, TORCH, batch, n, env, actions, counter, notes=list(notes))
            )
        workers = settings.workers
        if batch >= MULTI_THREAD_MIN_BATCH and workers > 1 and settings.device == "cpu":
            env, actions, notes = ready_torch_env(scenario, settings, batch, workers, warm, info)
            configs.append(
                Config(
                    scenario.key,
                    TORCH_WORKERS,
                    batch,
                    1,
                    env,
                    actions,
                    workers=workers,
                    notes=notes,
                )
            )
    return configs, info


def state_memory(config: Config) -> dict[str, Any]:
    """Bytes per instance of the torch env's state dataclass and random streams."""
    env = config.env.unwrapped
    batch = env.num_envs
    state = getattr(env, "state", None)
    rng = getattr(env, "rng", None)
    state_total = tensor_bytes(state) if state is not None else 0
    rng_total = tensor_bytes(rng) if rng is not None else 0
    return {
        "batch": batch,
        "state_bytes_per_instance": state_total / batch,
        "rng_bytes_per_instance": rng_total / batch,
        "total_bytes_per_instance": (state_total + rng_total) / batch,
        "fields_bytes_per_instance": {
            name: size / batch for name, size in field_bytes(state).items()
        },
    }


def run_scenario(
    scenario: Scenario, settings: Settings, anchor: Any, profile: bool
) -> tuple[list[Measurement], dict[str, Any]]:
    """Warm up, calibrate and measure every configuration of ``scenario`` (interleaved)."""
    clock = time.perf_counter()
    details: dict[str, Any] = {}
    configs: list[Config] = []
    warm = None
    try:
        if anchor is not None:
            sim = make_anchor(anchor, scenario)
            sim.reset(seed=0)
            for action in sample_action_batches(sim, 0, ANCHOR_WARM_UP_STEPS, None):
                sim.step(action)
            actions = sample_action_batches(sim, BASE_SEED, ANCHOR_HORIZON + 10, None)
            configs.append(Config(scenario.key, LINEFLOW, 1, 1, sim, actions))
        if settings.sync:
            torch.set_num_threads(1)
            for batch in SYNC_BATCH_SIZES:
                env = make_sync(scenario, batch)
                env.reset(seed=BASE_SEED)
                actions = sample_action_batches(env, BASE_SEED, settings.action_batches, None)
                for i in range(settings.warm_up_steps):
                    env.step(actions[i % len(actions)])
                configs.append(Config(scenario.key, SYNC, batch, 1, env, actions))
        if settings.warm_up == "tiled":
            warm, warm_s = warm_state_env(scenario, settings)
            details["warm_env"] = {
                "batch": warm.unwrapped.num_envs,
                "steps": settings.warm_up_steps,
                "seconds": warm_s,
            }
            print(
                f"  {scenario.key:<4} warm torch env: B={warm.unwrapped.num_envs}, "
                f"{settings.warm_up_steps} steps in {warm_s:.1f} s",
                flush=True,
            )
        torch_configs, details["torch_setup"] = build_torch_configs(scenario, settings, warm)
        configs += torch_configs
        if warm is not None:
            warm.close()
            warm = None
        for config in configs:
            if config.system != LINEFLOW and config.threads == 1:
                calibrate(config, settings)
        for config in configs:  # never calibrate with N threads: see contention_ratio
            if config.threads > 1:
                single = next(
                    c
                    for c in configs
                    if c.system == config.system and c.batch == config.batch and c.threads == 1
                )
                config.steps = single.steps
                config.calibration_s_per_step = None
                config.notes.append("steps per measurement from the 1-thread calibration")
        details["calibration"] = [
            {
                "system": c.system,
                "batch": c.batch,
                "threads": c.threads,
                "s_per_step": c.calibration_s_per_step,
                "steps_per_measurement": c.steps if c.system != LINEFLOW else ANCHOR_HORIZON,
                "notes": c.notes,
            }
            for c in configs
        ]
        measurements: list[Measurement] = []
        for round_index in range(settings.repeats):
            for config in configs:
                if config.system == LINEFLOW:
                    m = measure_anchor(config, round_index, settings)
                else:
                    m = measure(config, round_index, settings)
                measurements.append(m)
                log_measurement(m, settings.repeats)
        torch_rows = [c for c in configs if c.system == TORCH]
        if torch_rows:
            details["state_memory"] = state_memory(max(torch_rows, key=lambda c: c.batch))
        if profile:
            details["profile"] = profile_engine(scenario, configs, settings)
    finally:
        torch.set_num_threads(1)
        if warm is not None:
            warm.close()
        for env in {id(c.env): c.env for c in configs}.values():
            with contextlib.suppress(Exception):
                env.close()
    details["wall_s"] = time.perf_counter() - clock
    return measurements, details
