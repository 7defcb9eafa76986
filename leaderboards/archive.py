"""Archived board versions: rows of a superseded protocol, kept on disk and readable, not rescored.

When a task's protocol is replaced by a new version (a new metric or new settings), the old
board moves, unchanged, to ``<suite>/<Task>/archive/v<N>/``::

    protocol.json                    the old protocol file, byte for byte (its sha256 is the one
                                     the archived results record)
    submissions/<id>/...             the rows as they were submitted
    LEADERBOARD.md, leaderboard.csv  the board as last rendered under version N

and the new protocol takes the place of the old one under ``protocols/``. ``render`` and
``verify`` only look at the current protocol's board; :func:`load_archived_board` reads an
archived one with the same schema and hash checks as a current board (its rows are never
re-evaluated under the new protocol).
"""

from __future__ import annotations

import re
from pathlib import Path

from gymforge.hashing import sha256_file
from gymforge.leaderboards.board import Board, Row
from gymforge.leaderboards.files import read_json
from gymforge.leaderboards.protocol import Protocol, check_protocol_data, list_tasks
from gymforge.leaderboards.results import check_results
from gymforge.leaderboards.submission import check_submission_record

ARCHIVE_DIR = "archive"
_VERSION_RE = re.compile(r"v(\d+)")


def archive_dir(root: Path, task: str, version: int) -> Path:
    """Where version ``version`` of ``task``'s board is archived."""
    return Path(root) / task / ARCHIVE_DIR / f"v{version}"


def archived_versions(root: Path, task: str) -> list[int]:
    """The archived protocol versions of ``task``, ascending."""
    folder = Path(root) / task / ARCHIVE_DIR
    if not folder.is_dir():
        return []
    found = [_VERSION_RE.fullmatch(p.name) for p in folder.iterdir() if p.is_dir()]
    return sorted(int(m.group(1)) for m in found if m is not None)


def load_archived_protocol(root: Path, task: str, version: int) -> Protocol:
    """The archived protocol of ``task`` at ``version``, checked like a current one."""
    path = archive_dir(root, task, version) / "protocol.json"
    data = read_json(path, f"archived protocol {task} v{version}")
    check_protocol_data(data, path, task)
    if data["version"] != version:
        raise ValueError(f"{path}: holds version {data['version']}, not {version}")
    return Protocol(task=task, path=path, sha256=sha256_file(path), data=data)


def load_archived_board(root: Path, task: str, version: int) -> Board:
    """The rows of an archived board version, checked against its archived protocol, best
    first; raises ``ValueError`` on a malformed or edited row."""
    protocol = load_archived_protocol(root, task, version)
    folder = archive_dir(root, task, version) / "submissions"
    rows = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        name = f"{task}/archive/v{version}/{sub.name}"
        submission = read_json(sub / "submission.json", f"{name}/submission.json")
        check_submission_record(submission, f"{name}/submission.json", task, sub.name)
        results = read_json(sub / "results.json", f"{name}/results.json")
        if sha256_file(sub / "results.json") != submission["results_sha256"]:
            raise ValueError(f"{name}/results.json: sha256 differs from submission.json")
        check_results(results, protocol, f"{name}/results.json")
        rows.append(Row(id=sub.name, submission=submission, results=results, folder=sub))
    sign = -1.0 if protocol.higher_is_better else 1.0
    rows.sort(key=lambda r: (sign * r.mean, r.id))
    return Board(protocol=protocol, rows=rows)


def all_archived_boards(root: Path) -> list[Board]:
    """Every archived board version of every task with a current protocol."""
    return [
        load_archived_board(root, task, version)
        for task in list_tasks(root)
        for version in archived_versions(root, task)
    ]
