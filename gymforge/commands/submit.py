"""``gymforge submit --protocol TASK --agent SPEC --meta submission.json [--results r.json]``.

``gymforge submit --init-meta submission.json`` writes a metadata file to fill in (every field,
the required ones first). ``--results`` reuses a ``gymforge evaluate`` output of the same agent
under the same protocol instead of evaluating again (it is checked first).

Checks the metadata and the agent, evaluates under the task's frozen protocol, stores the
submission folder on the board in one step, and re-renders the boards. Storing and rendering are
one transaction: if the render fails or is interrupted, the folder is withdrawn again. (A process
killed outright in between leaves a stored row with stale renders: verify reports it and
``gymforge leaderboard render`` or the next submit repairs it.)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
from pathlib import Path

from gymforge.commands import plain
from gymforge.commands.evaluate import add_root_option, board_root, format_aggregate


def cmd_submit(args: argparse.Namespace) -> int:
    from gymforge.core.outputs import check_writable
    from gymforge.leaderboards.files import read_json
    from gymforge.leaderboards.protocol import resolve_task
    from gymforge.leaderboards.render import write_all
    from gymforge.leaderboards.submission import load_meta, submit

    if args.init_meta is not None:
        return write_meta_template(Path(args.init_meta))
    missing = [f"--{k}" for k in ("protocol", "agent", "meta") if getattr(args, k) is None]
    if missing:
        raise ValueError(
            f"submit needs {', '.join(missing)} (or --init-meta FILE to start a metadata file)"
        )
    root = board_root(args)
    task = resolve_task(root, args.protocol)
    meta = load_meta(Path(args.meta))
    results = None if args.results is None else read_json(Path(args.results), "--results")
    check_writable(root / task, "--root")
    folder = submit(
        root,
        task,
        args.agent,
        meta,
        submission_id=args.id,
        progress=not args.quiet,
        results=results,
    )
    try:
        write_all(root)
    except BaseException:
        withdraw(root, folder)
        raise
    print(format_aggregate(read_json(folder / "results.json", "results")))
    print(f"submission stored in {folder}; boards re-rendered under {root}")
    return 0


def write_meta_template(path: Path) -> int:
    """Write the metadata template to ``path`` (never over an existing file)."""
    from gymforge.core.outputs import check_writable
    from gymforge.leaderboards.files import pretty_json, write_bytes_atomic
    from gymforge.leaderboards.submission import META_TEMPLATE

    if path.exists():
        raise ValueError(f"--init-meta: {path} exists; pick a new file name")
    check_writable(path.resolve().parent, "--init-meta")
    write_bytes_atomic(path, pretty_json(META_TEMPLATE).encode())
    print(
        f"wrote {path}: fill in name, authors and method (required); drop or fill the rest, "
        "then: gymforge submit --protocol TASK --agent SPEC --meta " + str(path)
    )
    return 0


def withdraw(root: Path, folder: Path) -> None:
    """Undo a submission whose boards could not be rendered: the folder leaves the board in one
    rename, and the boards are rendered as they were (a failure here is left to
    ``gymforge leaderboard render``, which verify names)."""
    from gymforge.leaderboards.files import new_staging_folder
    from gymforge.leaderboards.render import write_all
    from gymforge.leaderboards.submission import STAGING_DIR

    trash = new_staging_folder(root / STAGING_DIR) / folder.name
    os.rename(folder, trash)
    shutil.rmtree(trash.parent, ignore_errors=True)
    with contextlib.suppress(Exception):
        write_all(root)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "submit",
        help="evaluate an agent and add it to a task's leaderboard",
        description=plain(__doc__.splitlines()[0]),
    )
    parser.add_argument("--protocol", metavar="TASK", help="task, e.g. lineflow/WaitingTime")
    parser.add_argument(
        "--agent",
        metavar="SPEC",
        help="a registered agent's name or entry point, a model.zip (sb3:ALGO:PATH) or an "
        "on-device policy.pt (a board runs no other code)",
    )
    parser.add_argument(
        "--meta", metavar="FILE", help="submission.json: name, authors, method, ..."
    )
    parser.add_argument(
        "--results",
        metavar="FILE",
        help="reuse this gymforge evaluate output of the same agent and protocol",
    )
    parser.add_argument(
        "--init-meta", metavar="FILE", help="write a metadata template to FILE and stop"
    )
    parser.add_argument(
        "--id",
        help="submission id: YYYYMMDD-slug with a real date, lower-case letters, digits and '-', "
        "at most 64 characters (default: today-<slug of the name>)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_root_option(parser)
    parser.set_defaults(func=cmd_submit)
