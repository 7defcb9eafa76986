"""``gymforge plot RUN [RUN ...] --out curves.png``: learning curves of training runs.

Each RUN is a run folder of ``gymforge train`` (either backend) or its ``evaluations.json``: the
held-out evaluations the trainer made as it went (env steps, mean return). Runs of the same env
id and algorithm are one curve: the mean over the runs (seeds) at each evaluation step they share,
with a band from the lowest to the highest run (the range: with a handful of seeds no interval
estimate is honest). Different ids or algorithms are separate curves on the same axes; ``--title``
names the figure. Needs matplotlib (``pip install 'gymforge[plot]'``).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from gymforge.commands import plain

EVALUATIONS_FILE = "evaluations.json"


def read_run(path: Path) -> dict[str, Any]:
    """The evaluations of one run folder (or file): ``{env_id, algo, seed, steps, returns}``."""
    file = path / EVALUATIONS_FILE if path.is_dir() else path
    if not file.is_file():
        raise ValueError(f"RUN {path}: no {EVALUATIONS_FILE} (a `gymforge train` run folder)")
    try:
        data = json.loads(file.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"RUN {file}: not a JSON file ({error})") from None
    evaluations = data.get("evaluations") if isinstance(data, dict) else None
    if not isinstance(evaluations, list) or not evaluations:
        raise ValueError(f"RUN {file}: holds no evaluations (was the run evaluated? see --eval)")
    try:
        steps = [int(e["timesteps"]) for e in evaluations]
        returns = [float(e["mean_return"]) for e in evaluations]
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"RUN {file}: each evaluation needs 'timesteps' and 'mean_return'"
        ) from None
    return {
        "env_id": str(data.get("env_id", "?")),
        "algo": str(data.get("algo", "?")),
        "seed": data.get("seed"),
        "steps": steps,
        "returns": returns,
    }


def curves(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One curve per (env id, algorithm): mean, min and max over its runs at the steps that
    every one of them evaluated, and the number of runs."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        groups[f"{run['env_id']} {run['algo']}"].append(run)
    result = {}
    for label, members in groups.items():
        shared = sorted(set.intersection(*(set(r["steps"]) for r in members)))
        if not shared:
            raise ValueError(f"the runs of {label} share no evaluation step; plot them apart")
        table = np.array(
            [[dict(zip(r["steps"], r["returns"], strict=True))[s] for s in shared] for r in members]
        )
        result[label] = {
            "steps": shared,
            "mean": table.mean(axis=0),
            "low": table.min(axis=0),
            "high": table.max(axis=0),
            "runs": len(members),
        }
    return result


def draw(lines: dict[str, dict[str, Any]], out: Path, title: str | None) -> Path:
    from gymforge.core.extras import require

    matplotlib = require("matplotlib", "gymforge plot")
    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot", "gymforge plot")
    figure, axes = plt.subplots(figsize=(7, 4.2), dpi=120)
    for label, line in lines.items():
        name = f"{label} ({line['runs']} run{'s' if line['runs'] > 1 else ''})"
        axes.plot(line["steps"], line["mean"], label=name)
        if line["runs"] > 1:
            axes.fill_between(line["steps"], line["low"], line["high"], alpha=0.2)
    axes.set_xlabel("env steps")
    axes.set_ylabel("held-out mean return")
    axes.set_title(title or "learning curves (mean; band: range over runs)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    figure.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp.png")
    figure.savefig(tmp)
    plt.close(figure)
    tmp.replace(out)
    return out


def cmd_plot(args: argparse.Namespace) -> int:
    if args.out.suffix.lower() != ".png":
        raise ValueError(f"--out must be a .png file, got {args.out}")
    from gymforge.core.outputs import check_writable

    check_writable(args.out.parent, "--out")
    lines = curves([read_run(Path(run)) for run in args.runs])
    draw(lines, args.out, args.title)
    for label, line in lines.items():
        print(
            f"{label}: {line['runs']} run(s), final mean {line['mean'][-1]:.2f} "
            f"(range {line['low'][-1]:.2f} .. {line['high'][-1]:.2f}) at {line['steps'][-1]:,} "
            "steps"
        )
    print(f"wrote {args.out}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "plot",
        help="draw learning curves of training runs to a PNG",
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="run folders or evaluations.json")
    parser.add_argument("--out", type=Path, default=Path("curves.png"), help="PNG to write")
    parser.add_argument("--title", default=None, help="figure title")
    parser.set_defaults(func=cmd_plot)
