"""One SB3 training run: build the env and model, train with callbacks, save resumable artifacts.

Layout of a run folder ``OUT``::

    OUT/model.zip            final model (SB3 ``save``)
    OUT/config.json          what the model is: algo, env id and kwargs, seed, steps, settings
    OUT/evaluations.json     periodic held-out evaluations
    OUT/checkpoints/step_N/  model.zip + config.json (+ replay_buffer.pkl for DQN/SAC)
    OUT/tb/                  TensorBoard logs (when tensorboard is installed)

Every file is written to a temporary name and renamed, ``config.json`` last, so a killed run
leaves either a complete artifact or none.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from gymforge.baselines.sb3.agent import (
    ARTIFACT_FORMAT,
    ARTIFACT_FORMAT_VERSION,
    CONFIG_FILE,
    MODEL_FILE,
    read_artifact_config,
    resolve_artifact,
)
from gymforge.baselines.sb3.algorithms import Algorithm, check_spaces, get_algorithm
from gymforge.baselines.sb3.callbacks import Checkpoints, PeriodicEvaluation, ScrapFactorCurriculum
from gymforge.baselines.sb3.config import from_mapping, load_config
from gymforge.baselines.sb3.envs import make_train_env
from gymforge.baselines.training import runs
from gymforge.baselines.training.checkpoints import checkpoint_folders, write_checkpoint
from gymforge.baselines.training.config import TrainConfig
from gymforge.baselines.training.evaluation import make_single_env
from gymforge.baselines.training.runs import RunPlan, TrainRequest, TrainResult, write_json
from gymforge.baselines.training.seeds import check_train_seed
from gymforge.core.devices import check_device
from gymforge.registry import get_spec

REPLAY_FILE = "replay_buffer.pkl"


def _save_model(model: Any, path: Path) -> None:
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.zip")
    model.save(str(tmp))
    os.replace(tmp, path)


def _artifact_steps(folder: Path) -> int:
    """The step count of a saved artifact; ``ValueError`` naming the corrupt file otherwise."""
    steps = read_artifact_config(folder).get("steps")
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise ValueError(f"{folder / CONFIG_FILE}: 'steps' must be an int, got {steps!r}")
    model = folder / MODEL_FILE
    try:
        with zipfile.ZipFile(model) as archive:
            broken = archive.testzip()
            names = set(archive.namelist())
    except (OSError, zipfile.BadZipFile) as error:
        raise ValueError(f"{model}: corrupt or truncated ({error})") from None
    if broken is not None or not {"data", "policy.pth"} <= names:
        raise ValueError(f"{model}: corrupt or truncated (entry {broken or 'policy.pth'})")
    return steps


def _latest_artifact(path: Path) -> Path:
    """The newest complete artifact under a run folder (final model or checkpoint); corrupt
    or truncated ones are skipped, each named on stderr."""
    candidates = []
    corrupt = []
    for folder in [path, *reversed(checkpoint_folders(path, (MODEL_FILE, CONFIG_FILE)))]:
        if (folder / MODEL_FILE).is_file() and (folder / CONFIG_FILE).is_file():
            try:
                candidates.append((_artifact_steps(folder), folder))
            except ValueError as error:
                corrupt.append(str(error))
    for problem in corrupt:
        print(f"--resume: skipping {problem}", file=sys.stderr)
    if not candidates:
        skipped = f" (skipped: {'; '.join(corrupt)})" if corrupt else ""
        raise ValueError(
            f"--resume: no complete model.zip + config.json in {path} or its checkpoints/{skipped}"
        )
    return max(candidates, key=lambda c: c[0])[1]


def _resume_source(path: Path) -> tuple[Path, dict[str, Any], None]:
    """The artifact ``--resume`` names (a run folder's newest, or a model) and its config."""
    source = _latest_artifact(path) if path.is_dir() else resolve_artifact(path)[0].parent
    return source, read_artifact_config(source), None


def rounded_steps(model: Any, steps: int) -> str | None:
    """The note printed when SB3 will train more than ``steps``: an on-policy algorithm collects
    whole rollouts of ``n_steps x n_envs`` steps, so it rounds ``steps`` up to a multiple."""
    n_steps = getattr(model, "n_steps", None)
    if not isinstance(n_steps, int):
        return None  # off-policy: trains exactly
    rollout = n_steps * model.n_envs
    trained = -(-steps // rollout) * rollout
    if trained == steps:
        return None
    return (
        f"note: SB3 collects whole rollouts of n_steps x n_envs = {n_steps} x {model.n_envs} = "
        f"{rollout:,} steps, so {steps:,} steps train {trained:,}; for exactly {steps:,}, pass "
        f"a multiple of {rollout:,} or set a smaller n_steps (--config) or --n-envs"
    )


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("gymforge")
    except Exception:  # not installed (source checkout on sys.path)
        return "unknown"


def _check_request(
    env_id: str, algo_name: str, steps: int, cfg: TrainConfig, seed: int, vectorized: bool
) -> None:
    if env_id not in gym.registry:
        get_spec(env_id)  # raises, listing the registered gymforge ids
    algo = get_algorithm(algo_name)
    runs.check_count("steps", steps)
    check_train_seed(seed, cfg.n_envs)
    env = make_single_env(env_id, cfg.env_kwargs)
    try:
        check_spaces(algo, env.observation_space, env.action_space, env_id)
        if cfg.frame_stack > 1 and not isinstance(env.observation_space, spaces.Box):
            raise ValueError(
                f"frame_stack={cfg.frame_stack} needs a Box observation space; {env_id} has "
                f"{env.observation_space}"
            )
    finally:
        env.close()
    if vectorized and (env_id not in gym.registry or get_spec(env_id).vector_entry_point is None):
        raise ValueError(f"--vectorized needs an id with a batched torch engine; {env_id} has none")


@dataclass(kw_only=True)
class Plan(RunPlan):
    """A checked request of the SB3 backend (the shared fields, then its own)."""

    algorithm: Algorithm
    vectorized: bool
    device: str
    policy_device: str


@dataclass
class Session:
    """What a run holds while it trains."""

    venv: Any
    model: Any
    kwargs: dict[str, Any]
    curriculum: ScrapFactorCurriculum | None
    evaluations: list[dict[str, Any]]


def resolve(request: TrainRequest, vectorized: bool, device: str, policy_device: str) -> Plan:
    """Check the request (a resumed run takes its run's settings) and choose the run folder."""
    origin = runs.fresh_or_resumed(
        request,
        _resume_source,
        lambda env_id: load_config(
            env_id, request.config_file, request.overrides, vectorized=vectorized
        ),
        from_mapping,
    )
    cfg = origin.cfg
    if origin.previous is not None:
        vectorized = bool(origin.previous["vectorized"])
        device = origin.previous.get("env_device", device)
    elif request.n_envs is not None:
        runs.check_count("n_envs", request.n_envs)
        cfg = from_mapping({**cfg.to_json(), "n_envs": request.n_envs}, cfg.sources)
    _check_request(origin.env_id, origin.algo, request.steps, cfg, origin.seed, vectorized)
    check_device(device, "--device")
    check_device(policy_device, "--policy-device")
    default = Path("runs") / origin.env_id / f"{origin.algo}-seed{origin.seed}"
    folder = runs.run_folder(request.out, origin.source, default)
    return Plan(
        env_id=origin.env_id, algo=origin.algo, seed=origin.seed, steps=request.steps, cfg=cfg,
        out=folder, done_steps=origin.done_steps, source=origin.source,
        previous=origin.previous, command=request.command, algorithm=get_algorithm(origin.algo),
        vectorized=vectorized, device=device, policy_device=policy_device,
    )  # fmt: skip


def build(plan: Plan, tensorboard: bool, verbose: int) -> Session:
    """Build the training envs and the model (loaded with SB3's full loader when resuming one's
    own run), make the run folder, and restore the evaluations and the curriculum."""
    venv = make_train_env(
        plan.env_id,
        plan.cfg.env_kwargs,
        plan.cfg.n_envs,
        plan.seed,
        plan.cfg.frame_stack,
        plan.vectorized,
        plan.device,
        start_step=plan.done_steps,
    )
    cls = plan.algorithm.load_class()
    tb_dir = None
    if tensorboard and importlib.util.find_spec("tensorboard") is not None:
        tb_dir = str(plan.out / "tb")
    kwargs = plan.cfg.algo_kwargs(plan.algo)
    if plan.source is not None:
        print(
            f"--resume: loading {plan.source / MODEL_FILE} with SB3's full loader (it unpickles "
            "the file; resume only runs you made yourself)",
            file=sys.stderr,
        )
        model = cls.load(str(plan.source / MODEL_FILE), env=venv, device=plan.policy_device)
        model.tensorboard_log = tb_dir
        if plan.algorithm.off_policy and (plan.source / REPLAY_FILE).is_file():
            model.load_replay_buffer(str(plan.source / REPLAY_FILE))
    else:
        policy = plan.algorithm.policy_for(venv.observation_space)
        model = cls(
            policy,
            venv,
            seed=plan.seed,
            device=plan.policy_device,
            verbose=verbose,
            tensorboard_log=tb_dir,
            **kwargs,
        )
    plan.out.mkdir(parents=True, exist_ok=True)
    evaluations = runs.previous_evaluations(plan.out, plan.previous is not None, plan.done_steps)
    curriculum = None
    if plan.cfg.curriculum is not None:
        state = (plan.previous or {}).get("curriculum_state") or {}
        curriculum = ScrapFactorCurriculum(plan.cfg.curriculum, state.get("scrap_factor"))
    return Session(venv, model, kwargs, curriculum, evaluations)


def artifact_config(plan: Plan, run: Session, num_timesteps: int) -> dict[str, Any]:
    """The run's ``config.json`` at ``num_timesteps`` (also each checkpoint's)."""
    record = runs.run_record(
        algo=plan.algo,
        env_id=plan.env_id,
        cfg=plan.cfg,
        seed=plan.seed,
        steps=num_timesteps,
        target_steps=plan.steps,
        n_envs=plan.cfg.n_envs,
        scrap_factor=run.curriculum.factor if run.curriculum is not None else None,
        seed_unit="env",
        command=plan.command,
        source=plan.source,
    )
    record["versions"].update(
        gymforge=_package_version(),
        stable_baselines3=_version("stable_baselines3"),
        sb3_contrib=_version("sb3_contrib"),
    )
    return {
        **record,
        "format": ARTIFACT_FORMAT,
        "format_version": ARTIFACT_FORMAT_VERSION,
        "algo_class": plan.algorithm.entry_point,
        "policy": plan.algorithm.policy_for(run.model.observation_space),
        "vectorized": plan.vectorized,
        "env_device": plan.device,
        "algo_kwargs": run.kwargs if plan.previous is None else plan.previous["algo_kwargs"],
    }


def save_evaluations(plan: Plan, history: list[dict[str, Any]]) -> None:
    """Write the run's ``evaluations.json``."""
    identity = {"env_id": plan.env_id, "algo": plan.algo, "seed": plan.seed}
    runs.write_evaluations(plan.out, identity, history)


def loop(plan: Plan, run: Session, progress_bar: bool) -> None:
    """Train to the target with the curriculum, periodic evaluations and checkpoints."""
    model, cfg = run.model, plan.cfg

    def fill_checkpoint(folder: Path) -> None:
        model.save(str(folder / MODEL_FILE))
        if plan.algorithm.off_policy:
            model.save_replay_buffer(str(folder / REPLAY_FILE))
        write_json(folder / CONFIG_FILE, artifact_config(plan, run, model.num_timesteps))

    callbacks: list[Any] = []
    if run.curriculum is not None:
        callbacks.append(run.curriculum)
    if cfg.eval_every > 0:
        callbacks.append(
            PeriodicEvaluation(
                plan.env_id,
                cfg.env_kwargs,
                cfg.eval_every,
                cfg.eval_episodes,
                cfg.frame_stack,
                plan.algorithm.recurrent,
                run.evaluations,
                lambda history: save_evaluations(plan, history),
            )
        )
    if cfg.checkpoint_every > 0:
        callbacks.append(
            Checkpoints(
                cfg.checkpoint_every,
                lambda: write_checkpoint(plan.out, model.num_timesteps, fill_checkpoint),
            )
        )
    rounded = rounded_steps(model, plan.steps - plan.done_steps)
    if rounded is not None:
        print(rounded, file=sys.stderr)
    model.learn(
        total_timesteps=plan.steps - plan.done_steps,
        callback=callbacks,
        reset_num_timesteps=plan.previous is None,
        tb_log_name=plan.algo,
        progress_bar=progress_bar,
    )
    run.venv.close()


def finish(plan: Plan, run: Session, save_replay_buffer: bool) -> TrainResult:
    """Save the model (and the replay buffer when asked), the evaluations and ``config.json``."""
    model = run.model
    _save_model(model, plan.out / MODEL_FILE)
    if plan.algorithm.off_policy and save_replay_buffer:
        tmp = plan.out / f".{REPLAY_FILE}.{os.getpid()}.tmp.pkl"
        model.save_replay_buffer(str(tmp))
        os.replace(tmp, plan.out / REPLAY_FILE)
    final = artifact_config(plan, run, model.num_timesteps)
    final["wall_s"] = round(time.perf_counter() - plan.started, 3)
    save_evaluations(plan, run.evaluations)
    write_json(plan.out / CONFIG_FILE, final)
    return TrainResult(plan.out, int(model.num_timesteps), run.evaluations, final["wall_s"])


def train(
    env_id: str | None,
    algo: str | None,
    steps: int,
    seed: int = 0,
    out: str | Path | None = None,
    n_envs: int | None = None,
    vectorized: bool = False,
    device: str = "cpu",
    policy_device: str = "cpu",
    config_file: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    resume: str | Path | None = None,
    progress_bar: bool = False,
    tensorboard: bool = True,
    verbose: int = 0,
    save_replay_buffer: bool = False,
    command: list[str] | None = None,
) -> TrainResult:
    """Train ``algo`` on ``env_id`` for ``steps`` environment steps (in total, when resuming):
    :func:`resolve`, :func:`build`, :func:`loop`, :func:`finish`.

    Args:
        env_id, algo: what to train (with ``resume``: ``None`` or the resumed run's values).
        steps: total environment steps of the run (SB3 rounds up to whole rollouts).
        seed: the run's seed (training envs start at ``seed + i``; see :mod:`.envs`).
        out: run folder (default ``runs/<env id>/<algo>-seed<seed>``); must not hold a run.
        n_envs: parallel training envs (default: the config's).
        vectorized, device: train on the id's batched torch env on ``device``.
        policy_device: torch device of the policy network.
        config_file, overrides: see :func:`gymforge.baselines.sb3.config.load_config`.
        resume: a run folder or checkpoint to continue (model, step count, curriculum state,
            replay buffer; its config and seed). Resuming uses SB3's full loader, which
            unpickles the model and replay buffer: resume only runs you made yourself (every
            other reader of a model file reads it as data, see ``zip_reader``).
        progress_bar, tensorboard, verbose: output.
        save_replay_buffer: also store DQN/SAC's replay buffer beside the final model
            (checkpoints always hold it, so resuming from one continues with it).
        command: the command line, recorded in ``config.json``.
    """
    request = TrainRequest(
        env_id=env_id, algo=algo, steps=steps, seed=seed, out=out, n_envs=n_envs,
        config_file=config_file, overrides=overrides, resume=resume, command=command,
    )  # fmt: skip
    plan = resolve(request, vectorized, device, policy_device)
    run = build(plan, tensorboard, verbose)
    loop(plan, run, progress_bar)
    return finish(plan, run, save_replay_buffer)


def _version(module: str) -> str | None:
    mod = sys.modules.get(module)
    if mod is None and importlib.util.find_spec(module) is not None:
        mod = importlib.import_module(module)
    return getattr(mod, "__version__", None)
