"""Q-Mamba with averaged weights: the mean of a training run's late checkpoints.

Greedy Q-Mamba's validation Perf swings from one checkpoint to the next
(``qmamba_epochs.py``), so the choice of a single checkpoint is partly luck. Averaging
the weights of the checkpoints from the second half of training (stochastic weight averaging,
without its learning-rate schedule) is the standard way to get a steadier model from one run.
This script writes that average as a model folder, which ``qmamba_epochs.py`` and
``test.py`` evaluate like any other:

    python -m benchmarks.metabbo.qmamba_average runs/qmamba/alg0-long.checkpoints \\
        --out runs/qmamba/alg0-long-average

By default it takes the checkpoints whose epoch is at least half the last checkpoint's epoch
(``--from-epoch`` to change). Every floating-point tensor is averaged in float64 and rounded
once to its dtype. Every other tensor (the valid-bins mask) must be equal in all checkpoints,
as must the network configuration and the dataset. The config keeps the last checkpoint's
record and adds ``averaged_from`` (each checkpoint's folder name and weights' SHA-256) and
the command.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import torch

from benchmarks.metabbo.qmamba_epochs import model_folders
from gymforge.agents.metabbo.agent import WEIGHTS_FILE, load_model, save_model

CHECKPOINT = re.compile(r"epoch_(\d+)$")


def checkpoints(folder: Path) -> dict[int, Path]:
    """``{epoch: model folder}`` of a checkpoints folder (its ``epoch_K`` children)."""
    found = model_folders([folder]) if folder.is_dir() else []
    epochs = {child: CHECKPOINT.match(child.name) for child in found}
    if not found or not all(epochs.values()):
        raise SystemExit(f"{folder}: no epoch_K model folders (a --checkpoint-every run's output)")
    return {int(match.group(1)): child for child, match in epochs.items()}


def second_half(epochs: list[int]) -> int:
    """The first epoch of the second half of training: half the last checkpoint's epoch."""
    return (max(epochs) + 1) // 2


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / WEIGHTS_FILE).read_bytes()).hexdigest()


def average(folders: list[Path]) -> tuple[torch.nn.Module, dict]:
    """The network whose floating-point weights are the mean of ``folders``' weights, and the
    last folder's config record. Refuses checkpoints of different networks or data."""
    nets, records = zip(*(load_model(folder) for folder in folders), strict=True)
    last = records[-1]
    for folder, record in zip(folders, records, strict=True):
        for field in ("config", "dataset", "env_id"):
            if record.get(field) != last.get(field):
                raise SystemExit(f"{folder}: its {field!r} differs from {folders[-1]}'s")
    states = [net.state_dict() for net in nets]
    averaged = {}
    for name, value in states[-1].items():
        if value.is_floating_point():
            total = torch.stack([state[name].double() for state in states]).mean(0)
            averaged[name] = total.to(value.dtype)
        elif all(torch.equal(state[name], value) for state in states):
            averaged[name] = value
        else:
            raise SystemExit(f"{name}: a non-float tensor that differs between checkpoints")
    net = nets[-1]
    net.load_state_dict(averaged)
    return net, last


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", type=Path, help="a run's OUT.checkpoints folder")
    parser.add_argument("--out", type=Path, required=True, help="the averaged model folder")
    parser.add_argument(
        "--from-epoch", type=int, default=None, help="first epoch averaged (default: half way)"
    )
    args = parser.parse_args(argv)
    found = checkpoints(args.checkpoints)
    first = second_half(list(found)) if args.from_epoch is None else args.from_epoch
    chosen = [folder for epoch, folder in found.items() if epoch >= first]
    if len(chosen) < 2:
        raise SystemExit(f"--from-epoch {first}: fewer than two checkpoints to average")
    net, record = average(chosen)
    record = {k: v for k, v in record.items() if k not in ("format", "format_version", "config")}
    record["averaged_from"] = [
        {"checkpoint": folder.name, "sha256": _digest(folder)} for folder in chosen
    ]
    words = sys.argv[1:] if argv is None else argv
    record["average_command"] = " ".join(["python -m benchmarks.metabbo.qmamba_average", *words])
    save_model(net, args.out, extra=record)
    print(f"wrote {args.out}: mean of epochs {[e for e in found if e >= first]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
