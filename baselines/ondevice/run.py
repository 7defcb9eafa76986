"""One on-device training run: build the vector env and trainer, train, save resumable artifacts.

Layout of a run folder ``OUT`` (as the SB3 backend's, with ``policy.pt`` for ``model.zip``)::

    OUT/policy.pt            final policy: weights, network spec, observation statistics
    OUT/config.json          what the run was: algo, env id and kwargs, seed, steps, settings
    OUT/evaluations.json     periodic held-out evaluations on the exact engine (``gym.make``)
    OUT/checkpoints/step_N/  policy.pt + trainer.pt (optimizer, generator) + config.json
    OUT/tb/                  TensorBoard logs (when tensorboard is installed)

Files are written to temporary names and renamed, ``config.json`` last, so a killed run leaves a
complete artifact or none. Training seeds: the vector env is reset with ``seed`` (instance ``i``
with ``seed + i``) and autoresets continue each instance's own stream; a resumed run resets with
``seed + steps done``. Held-out evaluation uses the seeds ``2**62 + k``, which no training
episode can have.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shutil
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
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
from gymforge.baselines.sb3.config import TrainConfig
from gymforge.baselines.sb3.envs import EVAL_SEED_BASE, TRAIN_SEED_LIMIT, check_train_seed
from gymforge.baselines.sb3.evaluation import eval_seeds, run_episodes, summarize
from gymforge.baselines.sb3.run import _run_root, write_json
from gymforge.core.devices import check_device
from gymforge.core.outputs import check_writable
from gymforge.registry import get_spec

EVALUATIONS_FILE = "evaluations.json"
TRAINER_FILE = "trainer.pt"
ARTIFACT_FORMAT_VERSION = 1


@dataclass
class TrainResult:
    """What :func:`train` produced."""

    out: Path
    steps: int
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    wall_s: float = 0.0
    steps_per_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def _checkpoints(run: Path) -> list[Path]:
    """Complete checkpoints of a run, newest first (by step)."""
    found = []
    for folder in (run / "checkpoints").glob("step_*"):
        if all((folder / name).is_file() for name in (POLICY_FILE, TRAINER_FILE, CONFIG_FILE)):
            try:
                found.append((int(folder.name.removeprefix("step_")), folder))
            except ValueError:
                continue
    return [folder for _, folder in sorted(found, reverse=True)]


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
    candidates = [path] if (path / TRAINER_FILE).is_file() else _checkpoints(path)
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
        **kwargs,
    )


class _Curriculum:
    """The scrap-factor curriculum of :class:`gymforge.baselines.sb3.config.Curriculum`, fed
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


def train(
    env_id: str | None,
    algo: str | None,
    steps: int,
    seed: int = 0,
    out: str | Path | None = None,
    n_envs: int | None = None,
    device: str = "cpu",
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
    start_time = time.perf_counter()
    torch_device = check_device(device)
    previous: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    source: Path | None = None
    if resume is not None:
        resume = Path(resume)
        if not resume.exists():
            raise ValueError(f"--resume: {resume} does not exist")
        source, previous, state = _resume_source(resume)
        for key, given in (("env_id", env_id), ("algo", algo)):
            if given is not None and given != previous[key]:
                raise ValueError(
                    f"--resume: the run at {source} trained {key} {previous[key]!r}, not {given!r}"
                )
        env_id, algo, seed = previous["env_id"], previous["algo"], int(previous["seed"])
        cfg = from_mapping(previous["train_config"], (str(source / CONFIG_FILE),))
        n_envs = int(previous["n_envs"])
        if steps <= previous["steps"]:
            raise ValueError(
                f"steps must exceed the {previous['steps']} steps already trained at {source}, "
                f"got {steps}"
            )
    else:
        if env_id is None or algo is None:
            raise ValueError("env_id and algo are required unless resuming")
        get_spec(env_id)
        cfg = load_config(env_id, config_file, overrides)
        if n_envs is None:
            n_envs = cfg.n_envs
    assert env_id is not None and algo is not None and n_envs is not None
    if isinstance(n_envs, bool) or not isinstance(n_envs, int) or n_envs < 1:
        raise ValueError(f"n_envs must be an int >= 1, got {n_envs!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an int >= 1, got {steps!r}")
    check_train_seed(seed, n_envs)
    ppo_cfg = algo_config(cfg, algo)
    if num_workers is not None and num_workers > 1 and torch_device.type != "cpu":
        raise ValueError(f"num_workers > 1 needs device cpu, got {device!r}")
    if out is None:
        out = (
            _run_root(source)
            if source is not None
            else Path("runs") / env_id / f"{algo}-torch-seed{seed}"
        )
    out = Path(out)
    if previous is None and (out / CONFIG_FILE).exists():
        raise ValueError(f"{out} already holds a run; pass --resume {out} or another --out")
    check_writable(out, "--out")
    out.mkdir(parents=True, exist_ok=True)
    host.configure(torch_device, threads)

    per_rollout = ppo_cfg.n_steps * n_envs
    done_steps = int(previous["steps"]) if previous else 0
    rollouts = math.ceil((steps - done_steps) / per_rollout)
    target = done_steps + rollouts * per_rollout
    if target != steps:
        log(
            f"note: {steps} steps is not a whole number of rollouts of {per_rollout} "
            f"({ppo_cfg.n_steps} steps x {n_envs} envs); training {target} steps"
        )

    env = make_vector_env(env_id, cfg, n_envs, torch_device, num_workers)
    trainer = PPO(env, ppo_cfg, seed=seed, frame_stack=cfg.frame_stack)
    if state is not None:
        trainer.load_state_dict(state)
    trainer.start(seed + done_steps if previous else seed)
    curriculum = None
    if cfg.curriculum is not None:
        if not hasattr(env, "set_scrap_factor"):
            raise ValueError(f"{env_id} has no scrap factor for the config's curriculum")
        factor = ((previous or {}).get("curriculum_state") or {}).get("scrap_factor")
        curriculum = _Curriculum(env, cfg.curriculum, factor)

    evaluations: list[dict[str, Any]] = []
    if previous is not None and (out / EVALUATIONS_FILE).is_file():
        old = json.loads((out / EVALUATIONS_FILE).read_text())["evaluations"]
        evaluations = [row for row in old if row["timesteps"] <= done_steps]
    writer = _tensorboard(out, tensorboard)
    bar = _progress(target, done_steps, progress_bar)

    def artifact_config(num_steps: int) -> dict[str, Any]:
        return {
            "format": ARTIFACT_FORMAT,
            "format_version": ARTIFACT_FORMAT_VERSION,
            "backend": "torch",
            "algo": algo,
            "env_id": env_id,
            "env_kwargs": cfg.env_kwargs,
            "frame_stack": cfg.frame_stack,
            "seed": seed,
            "steps": int(num_steps),
            "target_steps": int(target),
            "n_envs": n_envs,
            "device": str(torch_device),
            "num_workers": num_workers,
            "threads": torch.get_num_threads(),
            "algo_config": ppo_cfg.to_json(),
            "policy": trainer.spec.to_json(),
            "train_config": cfg.to_json(),
            "config_sources": list(cfg.sources),
            "curriculum_state": (
                {"scrap_factor": curriculum.factor} if curriculum is not None else None
            ),
            "seeds": {
                "train": f"[0, {TRAIN_SEED_LIMIT}): instance i starts at seed + i",
                "eval_base": EVAL_SEED_BASE,
            },
            "command": command,
            "resumed_from": str(source) if source is not None else None,
            "versions": {
                "torch": torch.__version__,
                "gymnasium": gym.__version__,
                "python": platform.python_version(),
            },
            "saved_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }

    def payload() -> dict[str, Any]:
        return policy_payload(trainer.policy, trainer.obs_norm, cfg.frame_stack, algo)

    def evaluate() -> dict[str, Any]:
        agent = TorchPolicyAgent(payload())
        episodes = run_episodes(agent, env_id, cfg.env_kwargs, eval_seeds(cfg.eval_episodes))
        row = {"timesteps": trainer.steps_done, **summarize(episodes), "episodes": episodes}
        return row

    def save_checkpoint() -> None:
        folder = out / "checkpoints" / f"step_{trainer.steps_done}"
        tmp = out / "checkpoints" / f".step_{trainer.steps_done}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        save_policy(tmp / POLICY_FILE, payload())
        torch.save(trainer.state_dict(), tmp / TRAINER_FILE)
        write_json(tmp / CONFIG_FILE, artifact_config(trainer.steps_done))
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)

    def write_evaluations() -> None:
        write_json(
            out / EVALUATIONS_FILE,
            {
                "env_id": env_id,
                "algo": algo,
                "seed": seed,
                "backend": "torch",
                "evaluations": evaluations,
            },
        )

    next_eval = (done_steps // cfg.eval_every + 1) * cfg.eval_every if cfg.eval_every else None
    next_ckpt = (
        (done_steps // cfg.checkpoint_every + 1) * cfg.checkpoint_every
        if cfg.checkpoint_every
        else None
    )
    train_start = time.perf_counter()
    eval_seconds = 0.0
    try:
        while trainer.steps_done < target:
            trainer.collect()
            stats = trainer.update(progress=trainer.steps_done / target)
            episodes = trainer.drain_episodes()
            if curriculum is not None:
                curriculum.after_rollout(episodes.returns)
            step = trainer.steps_done
            if bar is not None:
                bar.update(per_rollout)
                if episodes.returns:
                    bar.set_postfix(ret=f"{np.mean(episodes.returns):.1f}", refresh=False)
            if writer is not None:
                for key, value in stats.items():
                    writer.add_scalar(f"train/{key}", value, step)
                if episodes.returns:
                    writer.add_scalar("rollout/ep_return", float(np.mean(episodes.returns)), step)
                if curriculum is not None:
                    writer.add_scalar("curriculum/scrap_factor", curriculum.factor, step)
            if next_eval is not None and step >= next_eval:
                t0 = time.perf_counter()
                row = evaluate()
                eval_seconds += time.perf_counter() - t0
                evaluations.append(row)
                write_evaluations()
                if writer is not None:
                    writer.add_scalar("eval/mean_return", row["mean_return"], step)
                while next_eval <= step:
                    next_eval += cfg.eval_every
            if next_ckpt is not None and step >= next_ckpt:
                save_checkpoint()
                while next_ckpt <= step:
                    next_ckpt += cfg.checkpoint_every
    except KeyboardInterrupt:
        if trainer.steps_done > done_steps:
            save_checkpoint()
            log(
                f"interrupted at {trainer.steps_done} steps; checkpoint saved. Resume with: "
                f"gymforge train --backend torch --resume {out} --steps {steps}"
            )
        raise
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
        env.close()
    train_seconds = time.perf_counter() - train_start - eval_seconds
    if cfg.eval_every and (not evaluations or evaluations[-1]["timesteps"] != trainer.steps_done):
        evaluations.append(evaluate())
    save_policy(out / POLICY_FILE, payload())
    write_evaluations()
    final = artifact_config(trainer.steps_done)
    final["wall_s"] = round(time.perf_counter() - start_time, 3)
    final["train_steps_per_s"] = round((trainer.steps_done - done_steps) / train_seconds, 1)
    final["timings_s"] = {k: round(v, 3) for k, v in trainer.timings.as_dict().items()}
    write_json(out / CONFIG_FILE, final)
    return TrainResult(
        out,
        trainer.steps_done,
        evaluations,
        final["wall_s"],
        final["train_steps_per_s"],
        final["timings_s"],
    )
