"""``gymforge sweep FILE``: a grid of train-and-evaluate jobs, on a process pool or on Ray.

Examples::

    gymforge sweep sweeps/lineflow-lr.yaml --workers 2
    gymforge sweep sweeps/lineflow-lr.yaml --backend ray --address ray://head:10001

See :mod:`gymforge.baselines.sb3.sweep` for the file format and the results table.
"""

from __future__ import annotations

import argparse
import json

from gymforge.commands import plain


def cmd_sweep(args: argparse.Namespace) -> int:
    from gymforge.baselines.sb3.sweep import results_table, run_sweep

    progress = not (args.quiet or args.json) if args.progress_bar is None else args.progress_bar
    summary = run_sweep(
        args.file, args.out, args.backend, args.address, args.workers, progress=progress
    )
    if args.json:
        print(json.dumps(summary["rows"], indent=2))
    else:
        print(results_table(summary["rows"], list(summary["sweep"]["grid"])), end="")
        print(f"results in {summary['out']}/results.csv and results.json")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "sweep",
        help="run a grid of train+evaluate jobs (tasks x algos x seeds x hyperparameters)",
        description=plain(__doc__.splitlines()[0]),
    )
    parser.add_argument("file", help="sweep file (YAML or JSON)")
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="run on local processes (default) or a Ray cluster",
    )
    parser.add_argument("--address", help="Ray cluster address (with --backend ray)")
    parser.add_argument("--workers", type=int, default=1, help="local processes (default 1)")
    parser.add_argument("--out", help="output folder (default sweeps/NAME)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON (no bar)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--progress-bar", action=argparse.BooleanOptionalAction, default=None,
        help="show a progress bar, one tick per finished job, on stderr (default: yes, unless "
        "--quiet or --json)",
    )  # fmt: skip
    parser.set_defaults(func=cmd_sweep)
