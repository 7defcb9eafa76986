"""``gymforge leaderboard render|verify|calibrate|list``: generate and check the boards."""

from __future__ import annotations

import argparse
import sys
import time

from gymforge.commands.evaluate import add_root_option, board_root


def cmd_render(args: argparse.Namespace) -> int:
    from gymforge.core.outputs import check_writable
    from gymforge.leaderboards.render import write_all

    root = board_root(args)
    check_writable(root, "--root")
    written = write_all(root, progress=not args.quiet)
    print(f"rendered {len(written)} files under {root}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    import torch

    from gymforge.leaderboards.verify import verify

    torch.set_num_threads(1)
    root = board_root(args)
    if args.sample is not None and args.sample < 1:
        raise ValueError(f"--sample must be >= 1, got {args.sample}")
    if args.base is not None and not args.changed:
        raise ValueError("--base goes with --changed (re-run every episode of changed rows)")
    full: set[str] = set()
    if args.changed:
        from gymforge.leaderboards.changes import changed_submissions
        from gymforge.leaderboards.protocol import list_tasks

        base = args.base or "main"
        full = changed_submissions(root, base, list_tasks(root))
        names = sorted(full) or ["none"]
        print(f"re-running every episode of submissions changed since {base}: {', '.join(names)}")
    start = time.perf_counter()
    report = verify(
        root,
        sample=args.sample,
        seed=args.sample_seed,
        rerun=not args.no_rerun,
        full=full,
        progress=not args.quiet,
    )
    elapsed = time.perf_counter() - start
    if not args.no_rerun:
        print(
            f"sample seed {report.sample_seed} (reproduce this sample with "
            f"--sample-seed {report.sample_seed})"
        )
    for note in report.notes:
        print(f"NOTE {note}")
    for problem in report.problems:
        print(f"FAIL {problem}", file=sys.stderr)
    print(
        f"verified {len(report.checked)} submissions, re-ran {report.episodes_rerun} episodes, "
        f"{len(report.problems)} problem(s), {len(report.notes)} note(s) in {elapsed:.1f} s"
    )
    return 0 if report.ok else 1


def cmd_calibrate(args: argparse.Namespace) -> int:
    from gymforge.leaderboards.calibrate import calibrate
    from gymforge.leaderboards.protocol import resolve_task

    root = board_root(args)
    task = resolve_task(root, args.task)
    low, high = calibrate(root, task, progress=True)
    print(f"{task}: random {low:.4f}, reference {high:.4f} written to its protocol")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from gymforge.leaderboards.protocol import all_protocols
    from gymforge.leaderboards.submission import list_submissions

    root = board_root(args)
    for protocol in all_protocols(root):
        rows = len(list_submissions(root, protocol.task))
        print(f"{protocol.task:<32} {protocol.env_id:<34} v{protocol.version}  {rows} rows")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("leaderboard", help="render, verify or list the leaderboards")
    actions = parser.add_subparsers(dest="action", required=True)

    render = actions.add_parser("render", help="write leaderboard.csv, LEADERBOARD.md, the site")
    render.add_argument("--quiet", action="store_true", help="no progress bar")
    add_root_option(render)
    render.set_defaults(func=cmd_render)

    check = actions.add_parser(
        "verify",
        help="check schemas, hashes and renders; re-run every episode of changed submissions "
        "and an unpredictable sample of the others",
    )
    check.add_argument(
        "--sample", type=int, metavar="N", help="episodes re-run per submission (default: protocol)"
    )
    check.add_argument(
        "--sample-seed",
        type=int,
        metavar="S",
        help="seed of the episode sample (default: fresh randomness, printed)",
    )
    check.add_argument(
        "--changed",
        action="store_true",
        help="re-run every episode of the submissions new or changed since --base",
    )
    check.add_argument(
        "--base", metavar="REV", help="git revision --changed compares with (default: main)"
    )
    check.add_argument("--no-rerun", action="store_true", help="skip re-running episodes")
    check.add_argument("--quiet", action="store_true", help="no progress bar")
    add_root_option(check)
    check.set_defaults(func=cmd_verify)

    cal = actions.add_parser(
        "calibrate", help="measure a new protocol's random and reference scores"
    )
    cal.add_argument("task", help="task to calibrate, e.g. lineflow/WaitingTime")
    add_root_option(cal)
    cal.set_defaults(func=cmd_calibrate)

    listing = actions.add_parser("list", help="list the tasks and their row counts")
    add_root_option(listing)
    listing.set_defaults(func=cmd_list)
