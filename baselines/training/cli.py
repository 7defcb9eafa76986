"""The ``gymforge train`` options and result report that both trainers share.

Each backend's parser keeps its own options and order (``--help`` lists them as it always
did); the run-folder, evaluation, checkpoint and progress options are added here, and the
result is printed here, as one JSON summary or three lines (what was trained, the last
held-out evaluation, where the artifact is).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gymforge.baselines.training.config import config_overrides


def add_run_options(parser: argparse.ArgumentParser, out_default: str, eval_help: str) -> None:
    """``--config``, ``--out``, ``--resume``, ``--eval-every``, ``--eval-episodes``,
    ``--checkpoint-every`` and ``--progress-bar``, in that order."""
    parser.add_argument("--config", metavar="FILE", help="YAML/JSON overriding the task defaults")
    parser.add_argument("--out", metavar="DIR", help=f"run folder (default {out_default})")
    parser.add_argument("--resume", metavar="DIR", help="continue a run folder or checkpoint")
    parser.add_argument("--eval-every", type=int, metavar="N", help=eval_help)
    parser.add_argument("--eval-episodes", type=int, metavar="K", help="episodes per evaluation")
    parser.add_argument("--checkpoint-every", type=int, metavar="N", help="checkpoint interval")
    parser.add_argument(
        "--progress-bar",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )


def show_progress(args: argparse.Namespace) -> bool:
    """``--progress-bar``, defaulting to whether stderr is a terminal."""
    return sys.stderr.isatty() if args.progress_bar is None else args.progress_bar


def run_options(
    args: argparse.Namespace, env_id: str, algo: str, command: list[str]
) -> dict[str, Any]:
    """The keyword arguments of either backend's ``train`` that come from the shared options
    (``command``: the command line, recorded in the run's ``config.json``)."""
    overrides = config_overrides(args)
    return {
        "env_id": env_id,
        "algo": algo,
        "steps": args.steps,
        "seed": args.seed,
        "out": args.out,
        "n_envs": args.n_envs,
        "config_file": args.config,
        "overrides": overrides or None,
        "resume": args.resume,
        "progress_bar": show_progress(args),
        "command": command,
    }


def report(
    result: Any, as_json: bool, headline: str, saved: str, extra: dict[str, Any] | None = None
) -> None:
    """Print a run's result: ``out``, ``steps``, ``wall_s``, ``extra`` and the last held-out
    evaluation as JSON, or ``headline``, that evaluation and ``saved`` as lines."""
    last = result.evaluations[-1] if result.evaluations else None
    summary = {
        "out": str(result.out),
        "steps": result.steps,
        "wall_s": result.wall_s,
        **(extra or {}),
        "last_eval": {k: last[k] for k in ("timesteps", "mean_return", "std_return")}
        if last
        else None,
    }
    if as_json:
        print(json.dumps(summary, indent=2))
        return
    print(headline)
    if last:
        print(
            f"held-out eval at {last['timesteps']} steps: "
            f"{last['mean_return']:.2f} ± {last['std_return']:.2f}"
        )
    print(saved)
