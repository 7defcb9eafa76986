"""Offline MetaBBO datasets: collection with behaviour policies, the checked format, Minari export.

``gymforge dataset collect MetaBBO-v0 --behavior NAME|mix --mu 0.5 --episodes N --out PATH`` runs
``N`` episodes at once in the batched env (instance ``i`` seeded ``seed + i``) and writes them with
:mod:`gymforge.core.datasets` (``data.npz`` + ``metadata.json`` with a SHA-256 checksum).
``--behavior mix`` follows Q-Mamba's exploitation/exploration mix: a fraction ``µ`` of the
episodes (chosen by a seeded permutation) is run by an expert-ish policy (``--expert``, by default
the first available of the adaptive DE baselines), the rest by the uniform random policy.
``--minari ID`` additionally exports the episodes as a Minari dataset. The metadata records the
behaviour names, their entry points, the mix, seeds, split and package version, and under
``behavior_provenance`` what a behaviour was built from when that is outside data (the ``sb3``
expert: its model file, sha256, algorithm and greedy or sampled actions; ``ppo_expert``: its
policy file, sha256, training command and validation scores).

The format (its arrays, :func:`load_dataset`, :func:`write_trajectories`) is in
:mod:`.dataset_format`, the Minari export in :mod:`.minari_export`; both are re-exported here.
"""

from __future__ import annotations

import argparse
import inspect
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gymforge.core.limits import check_memory
from gymforge.core.outputs import check_writable
from gymforge.envs.metabbo.dataset_format import (  # (re-exported: they were defined here)
    DATA_FORMAT,
    DATA_FORMAT_VERSION,  # noqa: F401
    MetaBBODataset,
    load_dataset,
    write_trajectories,
)
from gymforge.envs.metabbo.minari_export import export_minari

__all__ = [
    "BEHAVIORS",
    "DATA_FORMAT",
    "MetaBBODataset",
    "collect",
    "collect_cli",
    "export_minari",
    "load_dataset",
    "write_trajectories",
]

#: behaviour policy name -> ``"module:factory"``, ``factory(env) -> agent`` with
#: ``reset(seed)`` and a batched ``act(obs, info)``. Policies whose module is missing are skipped.
BEHAVIORS: dict[str, str] = {
    "random": "gymforge.agents.random_agent:RandomAgent",
    "shade": "gymforge.baselines.metabbo.adaptive:SHADEAgent",
    "jde": "gymforge.baselines.metabbo.adaptive:JDEAgent",
    "static": "gymforge.baselines.metabbo.static:StaticAgent",
    "schedule": "gymforge.baselines.metabbo.schedule:ScheduleAgent",
    "ppo_expert": "gymforge.baselines.metabbo.experts:ppo_expert_agent",
}
#: the expert of ``--behavior mix`` when ``--expert`` is not given: the first available of these
EXPERT_PREFERENCE: tuple[str, ...] = ("shade", "jde", "static")


def available_behaviors() -> dict[str, str]:
    """The behaviour policies whose modules import."""
    import importlib

    found = {}
    for name, entry in BEHAVIORS.items():
        module, _, attr = entry.partition(":")
        try:
            if hasattr(importlib.import_module(module), attr):
                found[name] = entry
        except ImportError:
            continue
    return found


def _env_kwargs(env_id: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    from gymforge.registry import get_spec

    spec = get_spec(env_id)
    return {**dict(spec.kwargs), **{k: v for k, v in overrides.items() if v is not None}}


def _check_memory(kwargs: Mapping[str, Any], episodes: int, batch_size: int) -> None:
    """Refuse, naming the option, a collection whose trajectories or batched env cannot fit in
    memory, before any env is built: each episode keeps ``max_generations`` steps of
    observations, actions, rewards, errors and flags (twice: the batches and their join)."""
    from gymforge.envs.metabbo.features import NUM_FEATURES
    from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv
    from gymforge.envs.metabbo.presets import get_preset

    defaults = {
        name: p.default for name, p in inspect.signature(MetaBBOVecEnv.__init__).parameters.items()
    }
    settings = {**defaults, **kwargs}
    horizon, k = settings["max_generations"], get_preset(settings["preset"]).num_controlled
    step_bytes = NUM_FEATURES * 4 + k * 8 + 4 + 8 + 2
    if isinstance(horizon, int) and horizon > 0:
        check_memory("episodes (--n)", episodes, 2 * horizon * step_bytes, "episode")
    batch = min(batch_size, episodes)
    check_memory("batch_size (--batch-size, default --n)", batch,
                 MetaBBOVecEnv.instance_bytes(settings), "instance")  # fmt: skip


def _slice_info(info: Mapping[str, Any], idx: np.ndarray, n: int) -> dict[str, Any]:
    out = {}
    for key, value in info.items():
        array = value.cpu().numpy() if hasattr(value, "cpu") else value
        if isinstance(array, np.ndarray) and array.shape[:1] == (n,):
            out[key] = array[idx]
    return out


def _assign_behaviors(
    behavior: str, mu: float | None, expert: str | None, episodes: int, seed: int
) -> tuple[list[str], np.ndarray]:
    """Behaviour names and each episode's index into them."""
    available = available_behaviors()
    if behavior != "mix":
        if behavior not in available:
            raise ValueError(
                f"--behavior must be 'mix' or one of {sorted(available)}, got {behavior!r}"
            )
        return [behavior], np.zeros(episodes, dtype=np.int64)
    if expert is None:
        expert = next((name for name in EXPERT_PREFERENCE if name in available), None)
        if expert is None:
            raise ValueError(
                f"--behavior mix needs an expert policy; none of {EXPERT_PREFERENCE} is available "
                f"(available: {sorted(available)})"
            )
    elif expert not in available or expert == "random":
        allowed = sorted(set(available) - {"random"})
        raise ValueError(f"--expert must be one of {allowed}, got {expert!r}")
    assert mu is not None
    n_expert = round(mu * episodes)
    index = np.ones(episodes, dtype=np.int64)  # 1 = random
    index[np.random.default_rng(seed).permutation(episodes)[:n_expert]] = 0
    return [expert, "random"], index


def collect(
    env_id: str,
    *,
    behavior: str,
    episodes: int,
    seed: int = 0,
    mu: float | None = None,
    expert: str | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    device: str = "cpu",
    batch_size: int | None = None,
    progress: bool = False,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Run ``episodes`` episodes of the behaviour policies; returns ``(arrays, metadata)``.

    Episode ``i`` runs in instance ``i`` of a vector env reset with ``seed`` (so with instance
    seed ``seed + i``); with ``batch_size`` the episodes run in consecutive batches of that many
    instances, with the same seeds. Behaviour agents are reset with ``seed`` and each acts on its
    own fixed subset of the batch. ``progress`` shows a bar of the episodes on stderr, ticking as
    each ends, with the batch's generation (a batch's episodes mostly end together, at its last
    generation, so the generation is what moves in between).
    """
    import gymnasium as gym
    import torch

    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be an integer >= 1, got {episodes!r}")
    if behavior == "mix":
        mu = 0.5 if mu is None else mu
        if not (isinstance(mu, (int, float)) and 0.0 <= mu <= 1.0):
            raise ValueError(f"mu must be in [0, 1], got {mu!r}")
    elif mu is not None:
        raise ValueError("mu (--mu) only applies to --behavior mix")
    batch_size = episodes if batch_size is None else batch_size
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    kwargs = _env_kwargs(env_id, env_kwargs or {})
    _check_memory(kwargs, episodes, batch_size)
    names, assignment = _assign_behaviors(behavior, mu, expert, episodes, seed)
    entries = available_behaviors()
    from gymforge.registry import load_entry_point

    chunks: list[dict[str, np.ndarray]] = []
    nvec: list[int] = []
    provenance: dict[str, Any] = {}
    from tqdm import tqdm

    bar = tqdm(total=episodes, desc=f"collect {env_id}", unit="episode", disable=not progress)
    start_time = time.perf_counter()
    for first in range(0, episodes, batch_size):
        n = min(batch_size, episodes - first)
        env = gym.make_vec(
            env_id, num_envs=n, vectorization_mode="vector_entry_point", device=device, **kwargs
        )
        try:
            nvec = [int(v) for v in env.single_action_space.nvec]
            agents = [load_entry_point(entries[name])(env) for name in names]
            # what a behaviour built from outside data (e.g. a saved model) was built from
            provenance = {
                name: agent.provenance
                for name, agent in zip(names, agents, strict=True)
                if getattr(agent, "provenance", None) is not None
            }
            chunks.append(
                _run_batch(
                    env, agents, assignment[first : first + n], seed, seed + first, torch, bar
                )
            )
        finally:
            env.close()
    bar.close()
    arrays = {name: np.concatenate([c[name] for c in chunks]) for name in chunks[0]}
    arrays["behavior"] = assignment
    arrays["episode_seeds"] = seed + np.arange(episodes, dtype=np.int64)
    returns = (
        arrays["rewards"] * (np.arange(arrays["rewards"].shape[1]) < arrays["lengths"][:, None])
    ).sum(1)
    metadata = {
        "env_id": env_id,
        "family": "metabbo",
        "env_kwargs": kwargs,
        "preset": kwargs.get("preset"),
        "split": kwargs.get("split", "easy"),
        "subset": kwargs.get("subset", "train"),
        "behavior": behavior,
        "behaviors": names,
        "behavior_entry_points": {name: entries[name] for name in names},
        "behavior_provenance": provenance,
        "mu": mu,
        "episodes": episodes,
        "seed": seed,
        "seeding": "episode i: vector-env instance seed = seed + i; behaviour agents reset(seed)",
        "action_nvec": nvec,
        "obs_dim": int(arrays["observations"].shape[-1]),
        "max_generations": int(arrays["observations"].shape[1]),
        "counts": {name: int((assignment == i).sum()) for i, name in enumerate(names)},
        "mean_return": {
            name: float(returns[assignment == i].mean()) if (assignment == i).any() else None
            for i, name in enumerate(names)
        },
        "seconds": time.perf_counter() - start_time,
        "device": device,
    }
    return arrays, metadata


def _run_batch(
    env, agents, assignment: np.ndarray, agent_seed: int, env_seed: int, torch, bar: Any = None
) -> dict:
    """Run every instance of ``env`` to the end of its first episode; ``bar`` (a tqdm bar, or
    ``None``) ticks per ended episode and shows the generation, refreshed at most once a second."""
    n = env.num_envs
    horizon = int(env.config.max_generations)
    k = int(env.single_action_space.shape[0])
    obs_dim = int(env.single_observation_space.shape[0])
    out = {
        "observations": np.zeros((n, horizon, obs_dim), np.float32),
        "actions": np.zeros((n, horizon, k), np.int64),
        "rewards": np.zeros((n, horizon), np.float32),
        "best_errors": np.zeros((n, horizon), np.float64),
        "terminations": np.zeros((n, horizon), bool),
        "truncations": np.zeros((n, horizon), bool),
        "lengths": np.full(n, horizon, np.int64),
        "final_observations": np.zeros((n, obs_dim), np.float32),
        "function_ids": np.zeros(n, np.int64),
        "instance_ids": np.zeros(n, np.int64),
        "initial_error": np.zeros(n, np.float64),
        "final_error": np.zeros(n, np.float64),
        "evaluations": np.zeros(n, np.int64),
    }
    groups = [np.flatnonzero(assignment == b) for b in range(len(agents))]
    for agent in agents:
        agent.reset(seed=agent_seed)
    obs, info = env.reset(seed=env_seed)
    active = np.ones(n, dtype=bool)
    shown = time.monotonic()
    for t in range(horizon):
        obs_np = obs.cpu().numpy()
        action = np.zeros((n, k), np.int64)
        for agent, idx in zip(agents, groups, strict=True):
            if idx.size:
                action[idx] = np.asarray(agent.act(obs_np[idx], _slice_info(info, idx, n)))
        obs, reward, terminated, truncated, info = env.step(torch.as_tensor(action))
        term, trunc = terminated.cpu().numpy(), truncated.cpu().numpy()
        rows = np.flatnonzero(active)
        out["observations"][rows, t] = obs_np[rows]
        out["actions"][rows, t] = action[rows]
        out["rewards"][rows, t] = reward.cpu().numpy()[rows]
        out["best_errors"][rows, t] = info["best_error"].cpu().numpy()[rows]
        out["terminations"][rows, t] = term[rows]
        out["truncations"][rows, t] = trunc[rows]
        ended = active & (term | trunc)
        if ended.any():
            rows = np.flatnonzero(ended)
            final = info.get("final_obs", obs)
            out["final_observations"][rows] = final.cpu().numpy()[rows]
            out["lengths"][rows] = t + 1
            for key, name in (
                ("function_id", "function_ids"),
                ("instance_id", "instance_ids"),
                ("initial_error", "initial_error"),
                ("best_error", "final_error"),
                ("evaluations", "evaluations"),
            ):
                out[name][rows] = info[key].cpu().numpy()[rows]
        active &= ~ended
        if bar is not None:
            bar.set_postfix_str(f"generation {t + 1}/{horizon}", refresh=False)
            bar.update(int(ended.sum()))
            if time.monotonic() - shown >= 1.0:
                bar.refresh()
                shown = time.monotonic()
        if not active.any():
            break
    if active.any():
        raise RuntimeError(f"{int(active.sum())} episodes did not end within {horizon} steps")
    return out


def collect_cli(env_id: str, argv: Sequence[str]) -> int:
    """``gymforge dataset collect MetaBBO-v0 --behavior NAME|mix [--mu 0.5] --episodes N --out PATH``."""
    parser = argparse.ArgumentParser(
        prog=f"gymforge dataset collect {env_id}",
        description="Collect offline MetaBBO trajectories with behaviour policies (all episodes at "
        "once in the batched env) and write a checked dataset folder, optionally also a Minari "
        "dataset.",
    )
    parser.add_argument(
        "--agent",
        "--behavior",
        dest="behavior",
        default=None,
        help=f"'mix' or a behaviour policy: one of {sorted(BEHAVIORS)} (those installed; "
        "--behavior is the older name)",
    )
    parser.add_argument(
        "--mix",
        type=float,
        default=None,
        metavar="MU",
        help="shorthand of --agent mix --mu MU",
    )
    parser.add_argument(
        "--mu",
        type=float,
        default=None,
        help="with --behavior mix: fraction of episodes run by the expert (default 0.5); the rest "
        "are uniform random",
    )
    parser.add_argument(
        "--expert", default=None, help=f"expert of the mix (default: first of {EXPERT_PREFERENCE})"
    )
    parser.add_argument(
        "--episodes", "--n", dest="episodes", type=int, required=True, help="number of episodes"
    )
    parser.add_argument("--out", required=True, help="dataset folder to write")
    parser.add_argument("--seed", type=int, default=0, help="episode i uses instance seed SEED + i")
    parser.add_argument("--preset", default=None, help="optimizer preset (default: the id's)")
    parser.add_argument(
        "--split", default=None, help="easy | difficult | all | comma-separated function ids"
    )
    parser.add_argument(
        "--subset",
        default=None,
        choices=("train", "test"),
        help="problem instances of the train or test split (default: the id's)",
    )
    parser.add_argument(
        "--dimension", type=int, default=None, help="problem dimension (default: the id's)"
    )
    parser.add_argument(
        "--population-size",
        type=int,
        default=None,
        help="optimizer population size (default: the id's)",
    )
    parser.add_argument(
        "--max-generations",
        type=int,
        default=None,
        help="generations per episode (default: the id's)",
    )
    parser.add_argument(
        "--instance-mode",
        default=None,
        choices=("random", "coco"),
        help="how problem instances are drawn (default: the id's)",
    )
    parser.add_argument(
        "--device", default="cpu", help="torch device of the batched env (default cpu)"
    )
    parser.add_argument(
        "--batch-size", type=int, default=None, help="instances per batch (default: all)"
    )
    parser.add_argument(
        "--minari", default=None, metavar="DATASET_ID", help="also export to Minari"
    )
    parser.add_argument("--minari-root", default=None, help="Minari datasets folder")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(list(argv))
    if args.mix is not None:
        if args.behavior not in (None, "mix") or args.mu is not None:
            raise ValueError("--mix MU is --agent mix --mu MU; drop --agent/--mu")
        args.behavior, args.mu = "mix", args.mix
    if args.behavior is None:
        raise ValueError("--agent (a behaviour policy or 'mix') or --mix MU is required")

    import torch

    torch.set_num_threads(args.threads)
    if Path(args.out).exists() and not args.overwrite:
        raise ValueError(f"--out {args.out!r} exists; pass --overwrite to replace it")
    # written through a sibling temporary folder: its parent must take new files
    check_writable(Path(args.out).absolute().parent, "--out")
    split: Any = args.split
    if split is not None and split not in ("easy", "difficult", "all"):
        try:
            split = [int(v) for v in split.split(",")]
        except ValueError:
            raise ValueError(
                f"--split must be easy, difficult, all or comma-separated function ids, got {args.split!r}"
            ) from None
    overrides = {
        "preset": args.preset,
        "split": split,
        "subset": args.subset,
        "dimension": args.dimension,
        "population_size": args.population_size,
        "max_generations": args.max_generations,
        "instance_mode": args.instance_mode,
    }
    arrays, metadata = collect(
        env_id,
        behavior=args.behavior,
        episodes=args.episodes,
        seed=args.seed,
        mu=args.mu,
        expert=args.expert,
        env_kwargs=overrides,
        device=args.device,
        batch_size=args.batch_size,
        progress=not args.quiet,
    )
    path = write_trajectories(args.out, arrays, metadata, overwrite=args.overwrite)
    counts = ", ".join(f"{k}: {v}" for k, v in metadata["counts"].items())
    returns = ", ".join(
        f"{k}: {v:.4f}" for k, v in metadata["mean_return"].items() if v is not None
    )
    print(
        f"wrote {path} ({args.episodes} episodes; {counts}; mean return {returns}; "
        f"{metadata['seconds']:.1f} s)"
    )
    if args.minari is not None:
        export_minari(load_dataset(path), args.minari, args.minari_root)
        print(f"exported Minari dataset {args.minari}")
    return 0
