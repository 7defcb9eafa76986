"""The MetaBBO test-split ledger: one row for every evaluation on the test functions.

``benchmarks/results/metabbo_test_ledger.md`` lists every evaluation of a model on the MetaBBO
test split, so that the number of looks at the test functions is on record. Three kinds of
evaluation reach the test split, and each writes its row through :func:`write_ledger_row`:

- the offline benchmark (``benchmarks.metabbo.offline``, results files whose ``settings.test``
  has ``subset: test``): :func:`record_offline`;
- the protocol's test evaluation (``benchmarks.metabbo.test``, one file per row under
  ``benchmarks/results/metabbo_test/``): :func:`record_protocol_evaluation`;
- leaderboard rows on a board whose protocol sets the env kwarg ``subset: test``
  (``leaderboards/protocols/metabbo/*.json``): :func:`record_board_row`. ``gymforge submit``
  belongs to the package, which does not write into this repository's results, so a board row
  is entered after its submission with ``python -m benchmarks.metabbo.ledger --board-rows``
  (every board row without a ledger row gets one; a test fails while one is missing).

A row is keyed by its evaluation (a file name or a submission id in backticks); writing a key
that already has a row does nothing, so the commands can be re-run.

A board row's key is ``TASK/SUBMISSION_ID`` (the same reference id is on several boards).

Run: ``python -m benchmarks.metabbo.ledger --board-rows`` (``--protocol-file FILE`` enters a
stored protocol evaluation by hand).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from benchmarks import common

LEDGER = common.REPO_ROOT / "benchmarks" / "results" / "metabbo_test_ledger.md"
PROTOCOLS = common.REPO_ROOT / "leaderboards" / "protocols" / "metabbo"
BOARDS = common.REPO_ROOT / "leaderboards"
#: the ledger's tables, by the start of their header row
TABLES = {
    "offline": "| # | results file |",
    "board": "| # | board row |",
    "protocol": "| # | evaluation file",
}
_ROW_NUMBER = re.compile(r"^\|\s*(\d+)[a-z]?\s*\|")


def _next_number(text: str) -> int:
    """One more than the highest row number anywhere in the ledger."""
    numbers = [int(m.group(1)) for line in text.splitlines() if (m := _ROW_NUMBER.match(line))]
    return max(numbers, default=0) + 1


def write_ledger_row(table: str, key: str, cells: list[str], ledger: Path = LEDGER) -> int | None:
    """Append a row for the evaluation ``key`` to the ledger table ``table`` (a key of
    :data:`TABLES`): its number, then ``key`` in backticks followed by the rest of the first
    cell's text in ``cells[0]``, then ``cells[1:]``.

    Returns the row's number, or ``None`` when ``key`` already has a row (nothing written).
    """
    text = ledger.read_text(encoding="utf-8")
    if f"`{key}`" in text:
        return None
    head = TABLES[table]
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(head)), None)
    if start is None:
        raise ValueError(f"{ledger.name} has no table starting {head!r}")
    end = start + 2
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    number = _next_number(text)
    first = f"`{key}`" + (f" {cells[0]}" if cells[0] else "")
    row = "| " + " | ".join([str(number), first, *cells[1:]]) + " |"
    lines.insert(end, row)
    common.write_atomic(ledger, "\n".join(lines) + "\n")
    return number


def _fmt(value: float, digits: int) -> str:
    """A signed figure with a real minus sign, as the ledger writes them."""
    return f"{value:.{digits}f}".replace("-", "−")


def record_offline(path: Path, date: str, variant: str, ledger: Path = LEDGER) -> int | None:
    """The row of an offline benchmark results file that evaluated on the test split."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("settings", {}).get("test", {}).get("subset") != "test":
        return None
    q = data["results"]["qmamba"]
    cells = ["", date, variant, _fmt(q["perf"], 4), _fmt(q["log10_error"], 3)]
    return write_ledger_row("offline", path.name, cells, ledger)


def record_protocol_evaluation(path: Path, ledger: Path = LEDGER) -> int | None:
    """The row of one stored evaluation of ``benchmarks.metabbo.test``."""
    record = json.loads(path.read_text(encoding="utf-8"))
    model = record.get("model")
    what = record["row"] + (f", `{model}`" if model else "")
    cells = ["", record["evaluated_at"][:10], record["preset"], what]
    return write_ledger_row("protocol", path.name, cells, ledger)


def test_split_boards(protocols: Path = PROTOCOLS) -> list[str]:
    """Tasks (``metabbo/NAME``) whose frozen protocol evaluates on the test functions."""
    tasks = []
    for path in sorted(protocols.glob("*.json")):
        protocol = json.loads(path.read_text(encoding="utf-8"))
        if protocol["env"].get("kwargs", {}).get("subset") == "test":
            tasks.append(protocol["task"])
    return tasks


def board_rows(boards: Path = BOARDS, protocols: Path = PROTOCOLS) -> list[Path]:
    """Submission folders of every board row on a test-split board."""
    return [
        folder
        for task in test_split_boards(protocols)
        for folder in sorted((boards / task / "submissions").iterdir())
        if (folder / "submission.json").exists()
    ]


def _aggregate(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))["aggregate"]


def record_board_row(folder: Path, ledger: Path = LEDGER) -> int | None:
    """The row of one board submission: its date, its mean log10 error with the 95% CI from
    its ``results.json``, and the board's random row beside it."""
    submission = json.loads((folder / "submission.json").read_text(encoding="utf-8"))
    aggregate = _aggregate(folder)
    random_rows = [f for f in folder.parent.iterdir() if f.name.endswith("-random-uniform-actions")]

    def figure(agg: dict[str, Any]) -> str:
        low, high = agg["ci95"]
        return f"{_fmt(agg['mean'], 2)} [{_fmt(low, 2)}, {_fmt(high, 2)}]"

    random = figure(_aggregate(random_rows[0])) if random_rows else "–"
    cells = [
        submission["meta"]["name"],
        submission["submitted"][:10],
        figure(aggregate),
        random,
    ]
    key = f"{submission['task']}/{submission['id']}"
    return write_ledger_row("board", key, cells, ledger)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board-rows", action="store_true", help="enter every missing board row")
    p.add_argument("--protocol-file", type=Path, action="append", default=[])
    p.add_argument("--ledger", type=Path, default=LEDGER)
    args = p.parse_args(argv)
    written = []
    if args.board_rows:
        written += [record_board_row(folder, args.ledger) for folder in board_rows()]
    written += [record_protocol_evaluation(path, args.ledger) for path in args.protocol_file]
    numbers = [n for n in written if n is not None]
    print(f"{len(numbers)} ledger rows written: {numbers}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
