"""Submit models trained by ``gymforge train`` to the board of their env id.

``python -m gymforge.leaderboards.trained_rows RUN_DIR [RUN_DIR ...] [--root DIR]`` reads each
run folder's ``config.json`` (algorithm, env id, seed, steps trained, the training command),
finds the one protocol of that env id, and submits the folder's model (``model.zip`` of the SB3
backend, ``policy.pt`` of the on-device trainer) through the same code path as ``gymforge
submit`` (its ``evaluations.json`` becomes the row's learning curve); then it re-renders. Rows of
the same algorithm and trainer share one ``method``, so the overview's "by method" table
aggregates them across seeds. ``--command`` records how runs without a recorded command line
(jobs of ``gymforge sweep``) were made.
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


#: the ``format`` of a run's ``config.json`` -> how its trainer is named on a board
TRAINERS = {
    "gymforge-sb3-agent": "Stable-Baselines3, gymforge train",
    "gymforge-torch-agent": "on-device trainer, gymforge train --backend torch",
}


def trained_meta(config: dict[str, Any], command: str | None = None) -> dict[str, Any]:
    """Submission metadata of a ``gymforge train`` run, from its ``config.json``.

    ``command`` stands in for the run's own command line when it recorded none.
    """
    algo = str(config["algo"])
    label = ALGORITHM_NAMES.get(algo, algo)
    recorded = config.get("command")
    if recorded is None:
        recorded = command
    trainer = TRAINERS[str(config.get("format"))]
    return {
        "name": f"{label} seed {config['seed']}",
        "authors": ["gymforge maintainers"],
        "method": f"{label} ({trainer})",
        "description": (
            f"{label} trained by {trainer.split(', ')[1]} for {config['steps']:,} env steps with seed "
            f"{config['seed']} ({config.get('n_envs', '?')} envs); configs "
            f"{', '.join(config.get('config_sources', []))}."
        ),
        "training_env_steps": int(config["steps"]),
        "training_seeds": [int(config["seed"])],
        "command": shlex.join(recorded) if isinstance(recorded, list) else recorded,
    }


def submit_run(
    root: Path, run: Path, submission_id: str | None = None, command: str | None = None
) -> Path:
    """Submit one run folder; returns the new submission folder."""
    config = read_json(run / "config.json", f"{run}/config.json")
    if config.get("format") not in TRAINERS:
        raise ValueError(
            f"{run}/config.json is not a gymforge train run: format {config.get('format')!r}, "
            f"expected one of {sorted(TRAINERS)}"
        )
    task = resolve_task(root, str(config["env_id"]))
    meta = trained_meta(config, command)
    return submit(root, task, str(run), meta, submission_id, progress=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="gymforge train run folders")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument(
        "--command", help="how the runs were made, for runs that recorded no command line"
    )
    parser.add_argument(
        "--id-prefix", help="submission ids PREFIX-seed-N (default: the date and the algorithm)"
    )
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    for run in args.runs:
        submission_id = None
        if args.id_prefix:
            seed = read_json(run / "config.json", f"{run}/config.json")["seed"]
            submission_id = f"{args.id_prefix}-seed-{seed}"
        added = submit_run(args.root, run, submission_id, args.command)
        print(f"added {added.relative_to(args.root)}")
    write_all(args.root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
