"""One on-device training run: build the vector env and trainer, train, save resumable artifacts.

Layout of a run folder ``OUT`` (as the SB3 backend's, with ``policy.pt`` for ``model.zip``)::

    OUT/policy.pt            the run's policy: weights, network spec, observation statistics;
                             the final one, or with ``eval.keep_best`` the best-evaluated one
    OUT/policy_last.pt       (``eval.keep_best`` only) the final policy
    OUT/policy_best.pt       (``eval.keep_best`` only) the best-evaluated policy so far
    OUT/config.json          what the run was: algo, env id and kwargs, seed, steps, settings
    OUT/evaluations.json     periodic held-out evaluations on the exact engine (``gym.make``)
    OUT/checkpoints/step_N/  policy.pt + trainer.pt (optimizer, generator) + config.json
    OUT/tb/                  TensorBoard logs (when tensorboard is installed)

Files are written to temporary names and renamed, ``config.json`` last, so a killed run leaves a
complete artifact or none. Training seeds: the vector env is reset with ``seed`` (instance ``i``
with ``seed + i``) and autoresets continue each instance's own stream; a resumed run resets with
``seed + steps done``. Held-out evaluation uses the seeds ``2**62 + k``, which no training
episode can have, and which the boards' episodes (``2**62 + 1,000,000 + k``) do not reach with
fewer than a million evaluation episodes. Training swings between evaluations (LineFlow's
waiting-time policy moves by tens of points from one to the next), so ``eval.keep_best`` keeps
the policy of the best evaluation (ties: the later) as the run's ``policy.pt``, as a
validation-based checkpoint choice. Every evaluation row holds ``train_s``, the seconds spent
training so far (evaluations excluded), for time-to-score measurements.

:func:`train` runs four stages: :func:`resolve` (the request, checked, as a :class:`Plan`),
:func:`build` (env, trainer, curriculum and outputs, as a :class:`Session`), :func:`loop`
(collect, update, evaluate, checkpoint) and :func:`finish` (final evaluation and artifacts).
Run folders, seeds, configs, evaluation and checkpoint schedules are the shared ones of
:mod:`gymforge.baselines.training`.
"""

from __future__ import annotations

import json
import math
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from gymforge.baselines.ondevice import host
from gymforge.baselines.ondevice.agent import (
    ARTIFACT_FORMAT,
    CONFIG_FILE,
    POLICY_FILE,
    TorchPolicyAgent,
    policy_payload,
    save_policy,
)
from gymforge.baselines.ondevice.config import algo_config, from_mapping, load_config
from gymforge.baselines.ondevice.ppo import PPO
from gymforge.baselines.ondevice.ppo_config import PPOConfig
from gymforge.baselines.training.checkpoints import Schedule, checkpoint_folders, write_checkpoint
from gymforge.baselines.training.config import TrainConfig
from gymforge.baselines.training.evaluation import run_episodes, summarize
from gymforge.baselines.training.runs import (
    RunPlan,
    TrainRequest,
    TrainResult,
    check_count,
    fresh_or_resumed,
    previous_evaluations,
    run_folder,
    run_record,
    write_evaluations,
    write_json,
)
from gymforge.baselines.training.seeds import check_train_seed, eval_seeds
from gymforge.core.devices import check_device
from gymforge.registry import get_spec

TRAINER_FILE = "trainer.pt"
LAST_POLICY_FILE = "policy_last.pt"
BEST_POLICY_FILE = "policy_best.pt"
ARTIFACT_FORMAT_VERSION = 1


def _read_config(folder: Path) -> dict[str, Any]:
    path = folder / CONFIG_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not readable JSON ({error})") from None
    if data.get("format") != ARTIFACT_FORMAT:
        raise ValueError(f"{path}: format must be {ARTIFACT_FORMAT!r}")
    return data


def _resume_source(path: Path) -> tuple[Path, dict[str, Any], dict[str, Any]]:
    """The newest readable checkpoint of a run (or the checkpoint folder given): its folder,
    config and trainer state. A corrupt checkpoint is skipped, and named if none is left."""
    candidates = (
        [path]
        if (path / TRAINER_FILE).is_file()
        else checkpoint_folders(path, (POLICY_FILE, TRAINER_FILE, CONFIG_FILE))
    )
    if not candidates:
        raise ValueError(f"--resume: no checkpoint with {TRAINER_FILE} under {path}/checkpoints")
    problems = []
    for folder in candidates:
        try:
            config = _read_config(folder)
            state = torch.load(folder / TRAINER_FILE, map_location="cpu", weights_only=True)
            return folder, config, state
        except Exception as error:  # corrupt or truncated: try the previous one
            problems.append(f"{folder}: {error}")
    raise ValueError("--resume: every checkpoint is unreadable: " + "; ".join(problems))


def make_vector_env(
    env_id: str, cfg: TrainConfig, n_envs: int, device: torch.device, num_workers: int | None
) -> gym.vector.VectorEnv:
    """The id's batched torch env (``num_workers`` > 1: split over processes, CPU only)."""
    spec = get_spec(env_id)
    if spec.vector_entry_point is None:
        raise ValueError(
            f"--backend torch needs an id with a batched torch engine; {env_id} has none "
            "(use --backend sb3)"
        )
    kwargs: dict[str, Any] = dict(cfg.env_kwargs)
    if num_workers is not None and num_workers > 1:
        kwargs["num_workers"] = num_workers
    return gym.make_vec(
        env_id,
        num_envs=n_envs,
        vectorization_mode="vector_entry_point",
        device=str(device),
        array_backend="torch",
        **kwargs,
    )


class _Curriculum:
    """The scrap-factor curriculum of :class:`gymforge.baselines.training.config.Curriculum`, fed
    with finished training episodes after every rollout."""

    def __init__(self, env: Any, curriculum: Any, factor: float | None) -> None:
        self.env = env
        self.c = curriculum
        self.factor = curriculum.start if factor is None else float(factor)
        self.window: deque[float] = deque(maxlen=curriculum.look_back)
        env.set_scrap_factor(self.factor)

    def after_rollout(self, returns: list[float]) -> None:
        self.window.extend(returns)
        ready = len(self.window) >= self.c.look_back and np.mean(self.window) >= self.c.threshold
        if ready and self.factor < self.c.factor_max:
            self.factor = min(self.factor + self.c.update, self.c.factor_max)
            self.window.clear()
            self.env.set_scrap_factor(self.factor)


def _tensorboard(out: Path, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # tensorboard not installed
        return None
    return SummaryWriter(str(out / "tb"))


def _progress(total: int, initial: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="step", unit_scale=True, dynamic_ncols=True)


@dataclass(kw_only=True)
class Plan(RunPlan):
    """A checked request of the on-device trainer (the shared fields, then its own)."""

    ppo_cfg: PPOConfig
    n_envs: int
    device: torch.device
    threads: int | None
    num_workers: int | None
    target: int
    state: dict[str, Any] | None = None

    @property
    def per_rollout(self) -> int:
        return self.ppo_cfg.n_steps * self.n_envs


@dataclass
class Session:
    """What a run holds while it trains."""

    env: gym.vector.VectorEnv
    trainer: PPO
    curriculum: _Curriculum | None
    evaluations: list[dict[str, Any]]
    writer: Any
    bar: Any
    eval_seconds: float = 0.0


def resolve(
    request: TrainRequest, device: str, threads: int | None, num_workers: int | None
) -> Plan:
    """Check the request (a resumed run takes its run's settings) and make the run folder."""
    torch_device = check_device(device)

    def load(env_id: str) -> TrainConfig:
        get_spec(env_id)
        return load_config(env_id, request.config_file, request.overrides)

    origin = fresh_or_resumed(request, _resume_source, load, from_mapping)
    if origin.previous is not None:
        n_envs = int(origin.previous["n_envs"])
    else:
        n_envs = request.n_envs if request.n_envs is not None else origin.cfg.n_envs
    steps = request.steps
    check_count("n_envs", n_envs)
    check_count("steps", steps)
    check_train_seed(origin.seed, n_envs)
    ppo_cfg = algo_config(origin.cfg, origin.algo)
    if num_workers is not None and num_workers > 1 and torch_device.type != "cpu":
        raise ValueError(f"num_workers > 1 needs device cpu, got {device!r}")
    default = Path("runs") / origin.env_id / f"{origin.algo}-torch-seed{origin.seed}"
    folder = run_folder(request.out, origin.source, default)
    folder.mkdir(parents=True, exist_ok=True)
    done_steps = origin.done_steps
    per_rollout = ppo_cfg.n_steps * n_envs
    target = done_steps + math.ceil((steps - done_steps) / per_rollout) * per_rollout
    return Plan(
        env_id=origin.env_id, algo=origin.algo, seed=origin.seed, steps=steps, cfg=origin.cfg,
        out=folder, done_steps=done_steps, source=origin.source, previous=origin.previous,
        command=request.command, ppo_cfg=ppo_cfg, n_envs=n_envs, device=torch_device,
        threads=threads, num_workers=num_workers, target=target, state=origin.state,
    )  # fmt: skip


def build(plan: Plan, tensorboard: bool, progress_bar: bool) -> Session:
    """Configure the host, build the env and trainer (restored when resuming), reset the env,
    and open the curriculum and the outputs."""
    host.configure(plan.device, plan.threads)
    env = make_vector_env(plan.env_id, plan.cfg, plan.n_envs, plan.device, plan.num_workers)
    trainer = PPO(env, plan.ppo_cfg, seed=plan.seed, frame_stack=plan.cfg.frame_stack)
    if plan.state is not None:
        trainer.load_state_dict(plan.state)
    trainer.start(plan.seed + plan.done_steps if plan.previous else plan.seed)
    curriculum = None
    if plan.cfg.curriculum is not None:
        if not hasattr(env, "set_scrap_factor"):
            raise ValueError(f"{plan.env_id} has no scrap factor for the config's curriculum")
        factor = ((plan.previous or {}).get("curriculum_state") or {}).get("scrap_factor")
        curriculum = _Curriculum(env, plan.cfg.curriculum, factor)
    evaluations = previous_evaluations(plan.out, plan.previous is not None, plan.done_steps)
    writer = _tensorboard(plan.out, tensorboard)
    bar = _progress(plan.target, plan.done_steps, progress_bar)
    return Session(env, trainer, curriculum, evaluations, writer, bar)


def _artifact_config(plan: Plan, run: Session) -> dict[str, Any]:
    trainer = run.trainer
    record = run_record(
        algo=plan.algo,
        env_id=plan.env_id,
        cfg=plan.cfg,
        seed=plan.seed,
        steps=trainer.steps_done,
        target_steps=plan.target,
        n_envs=plan.n_envs,
        scrap_factor=run.curriculum.factor if run.curriculum is not None else None,
        seed_unit="instance",
        command=plan.command,
        source=plan.source,
    )
    return {
        **record,
        "format": ARTIFACT_FORMAT,
        "format_version": ARTIFACT_FORMAT_VERSION,
        "backend": "torch",
        "device": str(plan.device),
        "num_workers": plan.num_workers,
        "threads": torch.get_num_threads(),
        "algo_config": plan.ppo_cfg.to_json(),
        "policy": trainer.spec.to_json(),
    }


def _payload(plan: Plan, run: Session) -> dict[str, Any]:
    trainer = run.trainer
    return policy_payload(trainer.policy, trainer.obs_norm, plan.cfg.frame_stack, plan.algo)


def _best(evaluations: list[dict[str, Any]]) -> dict[str, Any]:
    """The evaluation with the highest mean return (ties: the later one)."""
    return max(evaluations, key=lambda e: (e["mean_return"], e["timesteps"]))


def _evaluate(plan: Plan, run: Session, train_s: float) -> dict[str, Any]:
    """Evaluate the current policy on the validation seeds and record the row; with
    ``eval.keep_best``, a row that is the best so far saves its policy as ``policy_best.pt``."""
    payload = _payload(plan, run)
    cfg = plan.cfg
    episodes = run_episodes(
        TorchPolicyAgent(payload), plan.env_id, cfg.env_kwargs, eval_seeds(cfg.eval_episodes)
    )
    row = {
        "timesteps": run.trainer.steps_done,
        **summarize(episodes),
        "train_s": round(train_s, 3),
        "episodes": episodes,
    }
    run.evaluations.append(row)
    if cfg.eval_keep_best and _best(run.evaluations) is row:
        save_policy(plan.out / BEST_POLICY_FILE, payload)
    return row


def _write_evaluations(plan: Plan, run: Session) -> None:
    header = {"env_id": plan.env_id, "algo": plan.algo, "seed": plan.seed, "backend": "torch"}
    write_evaluations(plan.out, header, run.evaluations)


def _save_checkpoint(plan: Plan, run: Session) -> None:
    def fill(folder: Path) -> None:
        save_policy(folder / POLICY_FILE, _payload(plan, run))
        torch.save(run.trainer.state_dict(), folder / TRAINER_FILE)
        write_json(folder / CONFIG_FILE, _artifact_config(plan, run))

    write_checkpoint(plan.out, run.trainer.steps_done, fill)


def _log_rollout(
    plan: Plan, run: Session, stats: dict[str, float], returns: list[float], step: int
) -> None:
    if run.bar is not None:
        run.bar.update(plan.per_rollout)
        if returns:
            run.bar.set_postfix(ret=f"{np.mean(returns):.1f}", refresh=False)
    if run.writer is not None:
        for key, value in stats.items():
            run.writer.add_scalar(f"train/{key}", value, step)
        if returns:
            run.writer.add_scalar("rollout/ep_return", float(np.mean(returns)), step)
        if run.curriculum is not None:
            run.writer.add_scalar("curriculum/scrap_factor", run.curriculum.factor, step)


def loop(plan: Plan, run: Session, log: Any) -> float:
    """Collect and update until the target step, evaluating and checkpointing when due;
    returns the seconds spent training (evaluations excluded). An interrupt saves a
    checkpoint first."""
    trainer = run.trainer
    evals = Schedule.after(plan.done_steps, plan.cfg.eval_every)
    checkpoints = Schedule.after(plan.done_steps, plan.cfg.checkpoint_every)
    start = time.perf_counter()
    try:
        while trainer.steps_done < plan.target:
            progress = trainer.steps_done / plan.target  # before this rollout: never 1
            trainer.collect(progress)
            stats = trainer.update(progress=progress)
            episodes = trainer.drain_episodes()
            if run.curriculum is not None:
                run.curriculum.after_rollout(episodes.returns)
            step = trainer.steps_done
            _log_rollout(plan, run, stats, episodes.returns, step)
            if evals.due(step):
                t0 = time.perf_counter()
                row = _evaluate(plan, run, t0 - start - run.eval_seconds)
                run.eval_seconds += time.perf_counter() - t0
                _write_evaluations(plan, run)
                if run.writer is not None:
                    run.writer.add_scalar("eval/mean_return", row["mean_return"], step)
            if checkpoints.due(step):
                _save_checkpoint(plan, run)
    except KeyboardInterrupt:
        if trainer.steps_done > plan.done_steps:
            _save_checkpoint(plan, run)
            log(
                f"interrupted at {trainer.steps_done} steps; checkpoint saved. Resume with: "
                f"gymforge train --backend torch --resume {plan.out} --steps {plan.steps}"
            )
        raise
    finally:
        if run.bar is not None:
            run.bar.close()
        if run.writer is not None:
            run.writer.close()
        run.env.close()
    return time.perf_counter() - start - run.eval_seconds


def finish(plan: Plan, run: Session, train_seconds: float) -> TrainResult:
    """The last evaluation (unless one was just made), the run's policy (the final one, or
    with ``eval.keep_best`` the best-evaluated one) and ``config.json``."""
    trainer = run.trainer
    last = run.evaluations[-1]["timesteps"] if run.evaluations else None
    if plan.cfg.eval_every and last != trainer.steps_done:
        _evaluate(plan, run, train_seconds)
    final_payload = _payload(plan, run)
    chosen = None
    if plan.cfg.eval_keep_best and run.evaluations:
        save_policy(plan.out / LAST_POLICY_FILE, final_payload)
        best = _best(run.evaluations)
        if best["timesteps"] != trainer.steps_done:
            final_payload = torch.load(plan.out / BEST_POLICY_FILE, weights_only=True)
        chosen = {
            "rule": "best mean return on the validation seeds (ties: the later)",
            "timesteps": best["timesteps"],
            "mean_return": best["mean_return"],
        }
    save_policy(plan.out / POLICY_FILE, final_payload)
    _write_evaluations(plan, run)
    final = _artifact_config(plan, run)
    if chosen is not None:
        final["policy_chosen"] = chosen
    final["wall_s"] = round(time.perf_counter() - plan.started, 3)
    final["train_steps_per_s"] = round((trainer.steps_done - plan.done_steps) / train_seconds, 1)
    final["timings_s"] = {k: round(v, 3) for k, v in trainer.timings.as_dict().items()}
    write_json(plan.out / CONFIG_FILE, final)
    return TrainResult(
        plan.out,
        trainer.steps_done,
        run.evaluations,
        final["wall_s"],
        final["train_steps_per_s"],
        final["timings_s"],
    )


def train(
    env_id: str | None,
    algo: str | None,
    steps: int,
    *,
    device: str = "cpu",
    seed: int = 0,
    out: str | Path | None = None,
    n_envs: int | None = None,
    threads: int | None = None,
    num_workers: int | None = None,
    config_file: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    resume: str | Path | None = None,
    progress_bar: bool = False,
    tensorboard: bool = True,
    command: list[str] | None = None,
    log: Any = None,
) -> TrainResult:
    """Train ``algo`` (``ppo``, ``a2c``, ``recurrentppo``) on ``env_id``'s batched engine.

    Args:
        env_id, algo: what to train (with ``resume``: ``None`` or the resumed run's values).
        steps: total environment steps of the run (rounded up to whole rollouts, announced).
        seed: the run's seed (network, sampling, minibatches; instance ``i`` starts at
            ``seed + i``).
        out: run folder (default ``runs/<env id>/<algo>-torch-seed<seed>``); must not hold a run.
        n_envs: instances ``B`` (default: the config's).
        device: ``cpu`` or ``cuda[:k]`` (env, rollout storage and network all live there).
        threads: torch threads (default 1 on CPU).
        num_workers: split a CPU env over this many processes (the learner keeps this one).
        config_file, overrides: see :func:`.config.load_config`.
        resume: a run folder or checkpoint to continue (trainer state, step count, curriculum).
        progress_bar, tensorboard: output.
        command: the command line, recorded in ``config.json``.
        log: ``log(message)`` for one-line notices (default: print).
    """
    log = log or print
    request = TrainRequest(
        env_id=env_id, algo=algo, steps=steps, seed=seed, out=out, n_envs=n_envs,
        config_file=config_file, overrides=overrides, resume=resume, command=command,
    )  # fmt: skip
    plan = resolve(request, device, threads, num_workers)
    if plan.target != steps:
        log(
            f"note: {steps} steps is not a whole number of rollouts of {plan.per_rollout} "
            f"({plan.ppo_cfg.n_steps} steps x {plan.n_envs} envs); training {plan.target} steps"
        )
    run = build(plan, tensorboard, progress_bar)
    train_seconds = loop(plan, run, log)
    return finish(plan, run, train_seconds)
