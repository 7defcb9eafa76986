"""Submit models trained by ``gymforge train`` to the board of their env id.

``python -m gymforge.leaderboards.trained_rows RUN_DIR [RUN_DIR ...] [--root DIR]`` reads each
run folder's ``config.json`` (algorithm, env id, seed, steps trained, the training command),
finds the one protocol of that env id, and submits the folder's ``model.zip`` through the same
code path as ``gymforge submit`` (its ``evaluations.json`` becomes the row's learning curve);
then it re-renders. Rows of the same algorithm share one ``method``, so the overview's "by
method" table aggregates them across seeds.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.files import read_json
from gymforge.leaderboards.protocol import resolve_task
from gymforge.leaderboards.render import write_all
from gymforge.leaderboards.submission import submit

ALGORITHM_NAMES = {
    "ppo": "PPO",
    "a2c": "A2C",
    "dqn": "DQN",
    "sac": "SAC",
    "recurrentppo": "RecurrentPPO",
    "trpo": "TRPO",
}


def trained_meta(config: dict[str, Any]) -> dict[str, Any]:
    """Submission metadata of a ``gymforge train`` run, from its ``config.json``."""
    algo = str(config["algo"])
    label = ALGORITHM_NAMES.get(algo, algo)
    command = config.get("command")
    return {
        "name": f"{label} seed {config['seed']}",
        "authors": ["gymforge maintainers"],
        "method": f"{label} (Stable-Baselines3, gymforge train)",
        "description": (
            f"{label} trained by gymforge train for {config['steps']:,} env steps with seed "
            f"{config['seed']} ({config.get('n_envs', '?')} envs); configs "
            f"{', '.join(config.get('config_sources', []))}."
        ),
        "training_env_steps": int(config["steps"]),
        "training_seeds": [int(config["seed"])],
        "command": shlex.join(command) if isinstance(command, list) else command,
    }


def submit_run(root: Path, run: Path, submission_id: str | None = None) -> Path:
    """Submit one run folder; returns the new submission folder."""
    config = read_json(run / "config.json", f"{run}/config.json")
    if config.get("format") != "gymforge-sb3-agent":
        raise ValueError(f"{run}/config.json is not a gymforge train run (format)")
    task = resolve_task(root, str(config["env_id"]))
    return submit(root, task, str(run), trained_meta(config), submission_id, progress=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="gymforge train run folders")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    for run in args.runs:
        print(f"added {submit_run(args.root, run).relative_to(args.root)}")
    write_all(args.root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
