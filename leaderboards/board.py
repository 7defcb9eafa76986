"""Read a board: its protocol and the rows of its submissions, ranked."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.leaderboards.files import read_json
from gymforge.leaderboards.protocol import Protocol, all_protocols
from gymforge.leaderboards.results import check_results
from gymforge.leaderboards.submission import (
    check_submission_record,
    learning_curve,
    list_submissions,
)


@dataclass(frozen=True)
class Row:
    """One submission as the tables show it."""

    id: str
    submission: dict[str, Any]
    results: dict[str, Any]
    folder: Path

    @property
    def name(self) -> str:
        return str(self.submission["meta"]["name"])

    def learning_curve(self) -> list[tuple[int, float]] | None:
        """The training-time evaluations of a ``gymforge train`` model, if it brought them."""
        if "policy/evaluations.json" not in self.submission.get("files", {}):
            return None
        return learning_curve(self.folder / "policy" / "evaluations.json")

    @property
    def mean(self) -> float:
        return float(self.results["aggregate"]["mean"])


@dataclass(frozen=True)
class Board:
    """A task's protocol and its ranked rows."""

    protocol: Protocol
    rows: list[Row]


def load_board(root: Path, protocol: Protocol) -> Board:
    """The rows of ``protocol``'s board, best first (ties by id).

    Each submission's record and results are schema-checked; a malformed one raises
    ``ValueError`` (render refuses to publish it; verify reports it).
    """
    rows = []
    for folder in list_submissions(root, protocol.task):
        name = f"{protocol.task}/{folder.name}"
        submission = read_json(folder / "submission.json", f"{name}/submission.json")
        check_submission_record(submission, f"{name}/submission.json", protocol.task, folder.name)
        results = read_json(folder / "results.json", f"{name}/results.json")
        check_results(results, protocol, f"{name}/results.json")
        rows.append(Row(id=folder.name, submission=submission, results=results, folder=folder))
    sign = -1.0 if protocol.higher_is_better else 1.0
    rows.sort(key=lambda r: (sign * r.mean, r.id))
    return Board(protocol=protocol, rows=rows)


def load_boards(root: Path) -> list[Board]:
    """Every board under ``root`` (one per protocol file)."""
    return [load_board(root, p) for p in all_protocols(root)]


#: the mark of a row whose interval overlaps the row above's
TIE_MARK = "≈"
TIE_NOTE = (
    f"{TIE_MARK} marks a row whose 95% CI overlaps the one of the row above: these episodes do "
    "not establish the order of the two."
)


def tied_with_above(fields: list[dict[str, Any]]) -> list[bool]:
    """For each ranked row, whether its 95% CI of the mean overlaps the row above's (the first
    row is never tied)."""
    tied = [False]
    for above, row in itertools.pairwise(fields):
        tied.append(
            max(above["ci95_low"], row["ci95_low"]) <= min(above["ci95_high"], row["ci95_high"])
        )
    return tied[: len(fields)]
