"""``gymforge evaluate --protocol TASK --agent SPEC --out results.json``.

Evaluates an agent under a task's frozen protocol (:mod:`gymforge.leaderboards.evaluator`) and
writes the results document atomically. SPEC is a reference agent name, an entry point
``module:factory``, a saved SB3 model (``PATH.zip`` or ``sb3:ALGO:PATH``) or a TorchScript file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gymforge.commands import plain


def add_root_option(parser: argparse.ArgumentParser) -> None:
    """``--root DIR``: the board root (default: see :mod:`gymforge.leaderboards.roots`)."""
    parser.add_argument(
        "--root",
        type=Path,
        default=None,
        help=(
            "board root for submissions and renders (default: $GYMFORGE_LEADERBOARDS, else the "
            "source checkout's leaderboards/, else ./leaderboards); protocols come from its "
            "protocols/ folder or, without one, from the installed package"
        ),
    )


def board_root(args: argparse.Namespace) -> Path:
    """The board root of a command: ``--root`` or the default root."""
    from gymforge.leaderboards.roots import default_root

    root = args.root or default_root()
    if root.exists() and not root.is_dir():
        raise ValueError(f"--root {root} is not a folder")
    return root


def format_aggregate(results: dict) -> str:
    agg = results["aggregate"]
    text = (
        f"{results['task']}: {results['metric']} {agg['mean']:.2f} ± {agg['std']:.2f} over "
        f"{agg['n']} episodes, 95% CI [{agg['ci95'][0]:.2f}, {agg['ci95'][1]:.2f}]"
    )
    if agg["normalised"] is not None:
        text += f", normalised {agg['normalised']:.3f}"
    return text


def cmd_evaluate(args: argparse.Namespace) -> int:
    from gymforge.baselines.agent_loader import parse_agent_spec
    from gymforge.leaderboards.evaluator import evaluate
    from gymforge.leaderboards.files import write_json_atomic
    from gymforge.leaderboards.protocol import load_protocol, resolve_task

    root = board_root(args)
    protocol = load_protocol(root, resolve_task(root, args.protocol))
    from gymforge.core.outputs import check_writable

    if not Path(args.out).resolve().parent.is_dir():
        raise ValueError(f"--out folder does not exist: {Path(args.out).parent}")
    check_writable(Path(args.out).resolve().parent, "--out")
    record = parse_agent_spec(args.agent, protocol.env_id)
    results = evaluate(protocol, record, progress=not args.quiet)
    write_json_atomic(Path(args.out), results)
    print(format_aggregate(results))
    print(f"results written to {args.out}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "evaluate",
        help="evaluate an agent under a task's frozen leaderboard protocol",
        description=plain(__doc__.splitlines()[0]),
    )
    parser.add_argument(
        "--protocol", required=True, metavar="TASK", help="e.g. lineflow/WaitingTime"
    )
    parser.add_argument(
        "--agent",
        required=True,
        metavar="SPEC",
        help="reference agent name, module:factory, model.zip, sb3:ALGO:PATH or TorchScript file",
    )
    parser.add_argument("--out", required=True, metavar="FILE", help="results JSON to write")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_root_option(parser)
    parser.set_defaults(func=cmd_evaluate)
