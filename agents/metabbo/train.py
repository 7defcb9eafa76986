"""Offline Q-Mamba training on logged trajectories (CPU or GPU); its ``gymforge train`` entry.

``fit(data)`` takes trajectories as arrays (a mapping, or anything with an ``arrays`` mapping
such as :func:`gymforge.envs.metabbo.dataset.load_dataset`'s result), or a dataset by name: a
dataset folder or ``"minari:NAME"`` (a Minari dataset id)::

    observations  [N, T, obs_dim]  float
    actions       [N, T, K]        int, bins
    rewards       [N, T]           float
    valid         [N, T]           bool, a prefix per row (or ``lengths [N]`` instead)

and runs AdamW over shuffled minibatches of whole trajectories (each cut to its longest valid
prefix), one sequence-mode forward per minibatch, the loss of
:func:`~gymforge.agents.metabbo.qmamba.qmamba_loss` (plus ``bc_weight`` times the behaviour
head's cross-entropy, :func:`~gymforge.agents.metabbo.qmamba.behavior_loss`, when the config
asks for one).

Command line::

    gymforge train MetaBBO-v0 --algo qmamba --dataset PATH --out DIR [--epochs 300] [--device cuda]

The command's default is a short first run of :data:`CLI_EPOCHS` epochs (the paper's 300 take
about 20 hours on one CPU thread with 10,000 trajectories): ``--epochs 300`` asks for the paper's
run, and ``--time-limit`` without ``--epochs`` runs up to the paper's 300 within the limit (as the
recorded reproduction runs did). The command writes the model folder after every epoch
(atomically), so a run stopped or killed keeps its last completed epoch.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from gymforge.agents.metabbo.agent import QMambaAgent, save_model
from gymforge.agents.metabbo.qmamba import QMambaConfig, QMambaNet, behavior_loss, qmamba_loss
from gymforge.core.devices import check_device

__all__ = [
    "TrainConfig",
    "TrainResult",
    "checkpoint_folder",
    "fit",
    "log_error_rewards",
    "train_cli",
    "trajectory_arrays",
]


REWARDS = ("env", "log_error")
ERROR_FLOOR = 1e-8
#: epochs of ``gymforge train ... --algo qmamba`` without ``--epochs`` or ``--time-limit``: a
#: first run of seconds to minutes (the tour's 64-episode dataset: about 2 s an epoch on one CPU
#: thread; 10,000 trajectories: about 4 minutes an epoch), not the paper's 300
CLI_EPOCHS = 5
#: the paper's epochs (:class:`TrainConfig`'s default)
PAPER_EPOCHS = 300


def log_error_rewards(
    best_errors: np.ndarray, initial_error: np.ndarray, floor: float = ERROR_FLOOR
) -> np.ndarray:
    """Per-step log-scale improvements ``[N, T]`` (see :class:`TrainConfig`), 0 where
    ``e_0 <= floor``; each row sums to ``(log10 e_0 - log10 e_T) / (log10 e_0 - log10 floor)``."""
    e = np.log10(np.maximum(np.asarray(best_errors, dtype=np.float64), floor))
    e0 = np.log10(np.maximum(np.asarray(initial_error, dtype=np.float64), floor))
    previous = np.concatenate([e0[:, None], e[:, :-1]], axis=1)
    span = e0 - np.log10(floor)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (previous - e) / span[:, None]
    return np.where(span[:, None] > 0, out, 0.0).astype(np.float32)


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation options (the reference: AdamW, lr 5e-3, 300 epochs, batch 64).

    Attributes:
        epochs: passes over the dataset.
        batch_size: trajectories per gradient step.
        lr, weight_decay: AdamW.
        max_grad_norm: clip the gradient norm (``None``: no clipping, as the reference).
        seed: network initialisation and minibatch order.
        reward: ``"env"`` trains on the logged rewards (Q-Mamba's ``Δe / e_0``);
            ``"log_error"`` on the log-scale improvement
            ``(log10 e_{t-1} - log10 e_t) / (log10 e_0 - log10 1e-8)`` (errors floored at
            ``1e-8``), recomputed from the logged best errors; it also sums to at most 1 but
            values progress at every scale, not just the first generations (an extension, not
            the reference's).
    """

    epochs: int = PAPER_EPOCHS
    batch_size: int = 64
    lr: float = 5e-3
    weight_decay: float = 0.01
    max_grad_norm: float | None = None
    seed: int = 0
    reward: str = "env"

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        for name in ("lr", "weight_decay"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {REWARDS}, got {self.reward!r}")
        if self.max_grad_norm is not None and not self.max_grad_norm > 0:
            raise ValueError(f"max_grad_norm must be > 0 or None, got {self.max_grad_norm!r}")


@dataclass
class TrainResult:
    """What :func:`fit` returns: the trained agent and the per-epoch mean losses."""

    agent: QMambaAgent
    history: list[dict[str, float]]
    seconds: float


def load_named_dataset(name: str) -> Any:
    """A dataset folder, or ``"minari:NAME"``: the Minari dataset ``NAME``."""
    from gymforge.envs.metabbo.dataset import load_dataset
    from gymforge.envs.metabbo.minari_import import PREFIX, load_minari_dataset

    return load_minari_dataset(name) if name.startswith(PREFIX) else load_dataset(name)


def trajectory_arrays(data: Any) -> dict[str, np.ndarray]:
    """Check and normalise trajectory arrays (see the module docstring).

    Raises:
        ValueError: a missing array, or shapes that do not agree, naming the array.
    """
    if isinstance(data, (str, Path)):
        data = load_named_dataset(str(data))
    arrays: Mapping[str, Any] = getattr(data, "arrays", data)
    for name in ("observations", "actions", "rewards"):
        if name not in arrays:
            raise ValueError(f"trajectory data lacks {name!r}; has {sorted(arrays)}")
    obs = np.asarray(arrays["observations"], dtype=np.float32)
    actions = np.asarray(arrays["actions"])
    rewards = np.asarray(arrays["rewards"], dtype=np.float32)
    if obs.ndim != 3:
        raise ValueError(f"observations must be [N, T, obs_dim], got shape {obs.shape}")
    n, t = obs.shape[:2]
    if actions.ndim != 3 or actions.shape[:2] != (n, t):
        raise ValueError(f"actions must be [{n}, {t}, K], got shape {actions.shape}")
    if actions.dtype.kind not in "iu":
        raise ValueError(f"actions must be integer bins, got dtype {actions.dtype}")
    if rewards.shape != (n, t):
        raise ValueError(f"rewards must be [{n}, {t}], got shape {rewards.shape}")
    if "valid" in arrays:
        valid = np.asarray(arrays["valid"], dtype=bool)
        if valid.shape != (n, t):
            raise ValueError(f"valid must be [{n}, {t}], got shape {valid.shape}")
    elif "lengths" in arrays:
        lengths = np.asarray(arrays["lengths"])
        if lengths.shape != (n,) or (lengths < 1).any() or (lengths > t).any():
            raise ValueError(f"lengths must be [{n}] integers in 1..{t}")
        valid = np.arange(t)[None, :] < lengths[:, None]
    else:
        valid = np.ones((n, t), dtype=bool)
    if not (valid[:, :1].all() and (np.diff(valid.astype(np.int8), axis=1) <= 0).all()):
        raise ValueError("valid must be a non-empty prefix of every trajectory")
    out = {
        "observations": obs,
        "actions": actions.astype(np.int64),
        "rewards": rewards,
        "valid": valid,
    }
    if "best_errors" in arrays and "initial_error" in arrays:
        out["best_errors"] = np.asarray(arrays["best_errors"], dtype=np.float64)
        out["initial_error"] = np.asarray(arrays["initial_error"], dtype=np.float64)
        if out["best_errors"].shape != (n, t) or out["initial_error"].shape != (n,):
            raise ValueError(f"best_errors must be [{n}, {t}] and initial_error [{n}]")
    return out


def fit(
    data: Any,
    config: QMambaConfig | None = None,
    train: TrainConfig | None = None,
    *,
    progress: Callable[[int, dict[str, float]], None] | None = None,
    after_epoch: Callable[[int, QMambaNet, list[dict[str, float]]], None] | None = None,
    time_limit: float | None = None,
    device: str | torch.device = "cpu",
) -> TrainResult:
    """Train a Q-Mamba agent on logged trajectories, on the CPU or a GPU.

    Args:
        data: trajectory arrays (see :func:`trajectory_arrays`).
        config: architecture and loss weights; ``obs_dim`` and ``action_nvec`` default to the
            data's (``K`` dimensions of ``max(actions) + 1`` bins, at least 16).
        train: optimisation options.
        progress: called after each epoch with ``(epoch, mean losses)``.
        after_epoch: called after each epoch with ``(epoch, network, history so far)``, e.g. to
            write a checkpoint; it must not change the network (training goes on from it).
        time_limit: stop after the epoch that passes this many seconds (``None``: no limit).
        device: where the network and the dataset's tensors live (checked before any work).
            The network is initialised on the CPU either way, so a seed gives the same initial
            weights everywhere; losses are summed on the device and read once per epoch. The
            returned agent's network is on the CPU.
    """
    device = check_device(device)
    arrays = trajectory_arrays(data)
    obs, actions = arrays["observations"], arrays["actions"]
    train = train or TrainConfig()
    if train.reward == "log_error":
        if "best_errors" not in arrays:
            raise ValueError("reward='log_error' needs the arrays best_errors and initial_error")
        arrays["rewards"] = log_error_rewards(arrays["best_errors"], arrays["initial_error"])
        arrays["rewards"][~arrays["valid"]] = 0.0
    arrays = {k: arrays[k] for k in ("observations", "actions", "rewards", "valid")}
    if config is None:
        k = actions.shape[-1]
        config = QMambaConfig(
            obs_dim=obs.shape[-1], action_nvec=(max(16, int(actions.max()) + 1),) * k
        )
    if obs.shape[-1] != config.obs_dim or actions.shape[-1] != config.num_dims:
        raise ValueError(
            f"data have obs_dim {obs.shape[-1]} and K {actions.shape[-1]}; the config expects "
            f"{config.obs_dim} and {config.num_dims}"
        )
    nvec = np.asarray(config.action_nvec)
    if (actions < 0).any() or (actions >= nvec).any():
        raise ValueError(f"actions must lie in 0..nvec-1 per dimension, nvec={config.action_nvec}")

    torch.manual_seed(train.seed)
    net = QMambaNet(config)
    valid = arrays["valid"]
    flat = obs[valid]
    net.set_normalisation(torch.as_tensor(flat.mean(0)), torch.as_tensor(flat.std(0)))
    optimizer = torch.optim.AdamW(net.parameters(), lr=train.lr, weight_decay=train.weight_decay)
    order_rng = np.random.default_rng(train.seed)
    net.to(device)
    tensors = {name: torch.as_tensor(value).to(device) for name, value in arrays.items()}
    lengths = valid.sum(1)  # each trajectory's valid steps (host copy: no device sync per batch)
    history: list[dict[str, float]] = []
    start = time.perf_counter()
    net.train()
    for epoch in range(train.epochs):
        sums: dict[str, Tensor] = {}
        batches = 0
        order = order_rng.permutation(obs.shape[0])
        for first in range(0, len(order), train.batch_size):
            rows = order[first : first + train.batch_size]
            idx = torch.as_tensor(rows).to(device)
            horizon = int(lengths[rows].max())
            batch = {name: value[idx][:, :horizon] for name, value in tensors.items()}
            q, _ = net(batch["observations"], batch["actions"])
            losses = qmamba_loss(q, batch["actions"], batch["rewards"], batch["valid"], config)
            if config.has_behavior_head:
                tokens = net.tokens(batch["observations"], batch["actions"])
                logits = net.behavior_logits(tokens.reshape(*q.shape[:-1], -1))
                losses["behavior"] = behavior_loss(logits, batch["actions"], batch["valid"], config)
                losses["loss"] = losses["loss"] + config.bc_weight * losses["behavior"]
            optimizer.zero_grad()
            losses["loss"].backward()
            if train.max_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(net.parameters(), train.max_grad_norm)
            optimizer.step()
            for name, value in losses.items():  # float64 sums, as Python floats would add
                total = sums.get(name)
                term = value.detach().to(torch.float64)
                sums[name] = term if total is None else total + term
            batches += 1
        record = {name: float(total) / batches for name, total in sums.items()}
        history.append(record)
        if progress is not None:
            progress(epoch, record)
        if after_epoch is not None:
            after_epoch(epoch, net, history)
        if time_limit is not None and time.perf_counter() - start > time_limit:
            break
    net.eval().cpu()
    return TrainResult(agent=QMambaAgent(net), history=history, seconds=time.perf_counter() - start)


def checkpoint_folder(out: str | Path, every: int) -> Path | None:
    """Where ``--checkpoint-every`` writes (``OUT.checkpoints``, beside the model folder, which
    is replaced as a whole after every epoch), or ``None`` for ``every == 0``. Refused before
    any work: a negative ``every``, or a folder that already holds checkpoints (of another run,
    which would be mixed with this one's)."""
    if every < 0:
        raise ValueError(f"--checkpoint-every must be >= 0 (0: no checkpoints), got {every}")
    if every == 0:
        return None
    folder = Path(f"{Path(out)}.checkpoints")
    if folder.exists() and any(folder.iterdir()):
        raise ValueError(
            f"--checkpoint-every: {str(folder)!r} already holds checkpoints; remove it or "
            "choose another --out"
        )
    return folder


def replace_model(net: QMambaNet, out: str | Path, extra: dict[str, Any]) -> Path:
    """Write ``net`` as the model folder ``out``, replacing a previous one without ever leaving a
    partial folder there: the new folder is written beside it, then swapped in by two renames (a
    run killed between them leaves the previous folder beside ``out`` as ``.NAME.previous-PID``).
    """
    out = Path(out)
    pid = os.getpid()
    staging = out.with_name(f".{out.name}.next-{pid}")
    previous = out.with_name(f".{out.name}.previous-{pid}")
    for leftover in (staging, previous):
        if leftover.exists():
            shutil.rmtree(leftover)
    save_model(net, staging, extra=extra)
    if out.exists():
        os.replace(out, previous)
        os.replace(staging, out)
        shutil.rmtree(previous)
    else:
        os.replace(staging, out)
    return out


def train_cli(env_id: str, argv: list[str]) -> int:
    """``gymforge train ID --algo qmamba --dataset PATH --out DIR [options]``."""
    parser = argparse.ArgumentParser(
        prog=f"gymforge train {env_id} --algo qmamba",
        description=(
            f"Train the Q-Mamba offline agent on a collected MetaBBO dataset. The default is a "
            f"short first run of {CLI_EPOCHS} epochs (on one CPU thread about 2 s an epoch with "
            f"the tour's 64 episodes, about 4 minutes with 10,000); the paper trains "
            f"{PAPER_EPOCHS} epochs: --epochs {PAPER_EPOCHS} (about 20 hours with 10,000 "
            f"episodes). --out is rewritten after every epoch, so a run stopped or killed keeps "
            f"its last completed epoch."
        ),
    )
    defaults = TrainConfig()
    parser.add_argument(
        "--dataset",
        required=True,
        help="dataset folder (gymforge dataset collect) or minari:NAME, a Minari dataset",
    )
    parser.add_argument(
        "--out", required=True, help="model folder to write (model.pt + config.json)"
    )
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help=f"passes over the dataset (default {CLI_EPOCHS}, a first run; {PAPER_EPOCHS} is the "
        f"paper's; with --time-limit and no --epochs, up to {PAPER_EPOCHS} within the limit)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=defaults.batch_size, help="trajectories per minibatch"
    )
    parser.add_argument("--lr", type=float, default=defaults.lr, help="learning rate")
    parser.add_argument(
        "--weight-decay", type=float, default=defaults.weight_decay, help="AdamW weight decay"
    )
    parser.add_argument(
        "--max-grad-norm",
        type=float,
        default=None,
        help="clip gradients to this norm (default: no clipping)",
    )
    parser.add_argument(
        "--seed", type=int, default=defaults.seed, help="seed of the network and the minibatches"
    )
    parser.add_argument(
        "--reward",
        choices=REWARDS,
        default=defaults.reward,
        help="env: the logged rewards (the reference); log_error: log-scale improvement",
    )
    parser.add_argument(
        "--d-state", type=int, default=QMambaConfig.d_state, help="state size of the Mamba block"
    )
    parser.add_argument(
        "--beta", type=float, default=QMambaConfig.beta, help="weight of the last TD term"
    )
    parser.add_argument("--lam", type=float, default=QMambaConfig.lam, help="conservative weight")
    parser.add_argument(
        "--gamma", type=float, default=QMambaConfig.gamma, help="discount of the TD targets"
    )
    parser.add_argument(
        "--bc-weight",
        type=float,
        default=QMambaConfig.bc_weight,
        help="weight of a behaviour head's cross-entropy (0: no head, the reference)",
    )
    parser.add_argument(
        "--support-threshold",
        type=float,
        default=QMambaConfig.support_threshold,
        help="act only on bins with behaviour probability >= this x the most likely bin's "
        "(discrete BCQ's tau; needs --bc-weight > 0; 0: every bin, the reference)",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        default=QMambaConfig.temperature,
        help="sample each bin from behaviour x exp(Q / T) (needs --bc-weight > 0; "
        "0: greedy, the reference)",
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help=f"stop after the epoch that passes this many seconds (without --epochs: up to "
        f"{PAPER_EPOCHS} epochs)",
    )
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=0,
        help="also keep the model of every N-th epoch in OUT.checkpoints/epoch_K (0: none; "
        "OUT itself always holds the last completed epoch)",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument(
        "--device", default="cpu", help="where to train: cpu, cuda or cuda:N (default cpu)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    args = parser.parse_args(argv)
    if args.epochs is None:
        args.epochs = PAPER_EPOCHS if args.time_limit is not None else CLI_EPOCHS
    device = check_device(args.device, "--device")  # before the dataset is read
    checkpoints = checkpoint_folder(args.out, args.checkpoint_every)

    torch.set_num_threads(args.threads)
    if args.dataset.startswith("minari:") and args.reward != "env":
        raise ValueError("a Minari dataset holds the logged rewards only: use --reward env")
    data = load_named_dataset(args.dataset)
    if data.metadata.get("env_id") not in (None, env_id):
        raise ValueError(
            f"dataset {args.dataset!r} was collected on {data.metadata.get('env_id')!r}, not {env_id!r}"
        )
    config = QMambaConfig(
        obs_dim=data.observations.shape[-1],
        action_nvec=tuple(data.metadata["action_nvec"]),
        d_state=args.d_state,
        beta=args.beta,
        lam=args.lam,
        gamma=args.gamma,
        bc_weight=args.bc_weight,
        support_threshold=args.support_threshold,
        temperature=args.temperature,
    )
    train = TrainConfig(
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        weight_decay=args.weight_decay,
        max_grad_norm=args.max_grad_norm,
        seed=args.seed,
        reward=args.reward,
    )

    def report(epoch: int, losses: dict[str, float]) -> None:
        if not args.quiet:
            text = "  ".join(f"{k}={v:.4g}" for k, v in losses.items())
            print(f"epoch {epoch + 1}/{train.epochs}  {text}", flush=True)

    def record(history: list[dict[str, float]], seconds: float, finished: bool) -> dict[str, Any]:
        return {
            "env_id": env_id,
            "train": asdict(train),
            "history": list(history),
            "finished": finished,
            "seconds": seconds,
            "time_limit": args.time_limit,
            "device": str(device),
            "dataset": {"path": str(args.dataset), "sha256": data.metadata.get("sha256")},
        }

    start = time.perf_counter()

    saved: list[int] = []

    def checkpoint(epoch: int, net: QMambaNet, history: list[dict[str, float]]) -> None:
        seconds = time.perf_counter() - start
        if checkpoints is not None and (epoch + 1) % args.checkpoint_every == 0:
            folder = checkpoints / f"epoch_{epoch + 1:03d}"
            save_model(net, folder, extra=record(history, seconds, finished=False))
        replace_model(net, args.out, extra=record(history, seconds, finished=False))
        saved.append(epoch + 1)

    try:
        result = fit(
            data,
            config,
            train,
            progress=report,
            after_epoch=checkpoint,
            time_limit=args.time_limit,
            device=device,
        )
    except KeyboardInterrupt:
        where = (
            f"{args.out} holds the model after epoch {saved[-1]} of {train.epochs}"
            if saved
            else "no epoch was completed, nothing was written"
        )
        print(f"gymforge: interrupted; {where}", file=sys.stderr)
        return 130
    replace_model(
        result.agent.net, args.out, extra=record(result.history, result.seconds, finished=True)
    )
    print(f"wrote {args.out} ({len(result.history)} epochs, {result.seconds:.1f} s)")
    return 0
