"""The project speaks only of itself: no tracked file points outside the repository.

Code, docs, configs and recorded results must not cite absolute paths of the machine they were
written on, the team's shared notes, or work-log issue numbers: a reader of a clone cannot follow
them. Facts the code relies on are restated in the project's own docs instead.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Built by concatenation so that this file does not match itself.
FORBIDDEN = re.compile(
    "|".join(
        [
            "/" + "work/",  # absolute paths of the development machine
            r"\.\./" + "shared",  # the team's notes beside the checkout
            "shared/" + "reference",
            r"\." + "library/",
            r"\b[Ii]ssue " + r"\d+\b",  # work-log issue numbers (upstream "#123" links are fine)
            r"\bhelper-" + r"\d",
        ]
    )
)
TEXT_SUFFIXES = {
    ".py", ".md", ".json", ".yaml", ".yml", ".toml", ".txt", ".cfg", ".csv", ".html", ".sh",
    ".ini", ".svg",
}  # fmt: skip


def _tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [ROOT / name for name in listed.split("\0") if name]


def test_no_tracked_text_points_outside_the_repository() -> None:
    offenders = []
    for path in _tracked_files():
        is_text = path.suffix in TEXT_SUFFIXES or path.name in {"Makefile", "run", "LICENSE"}
        if not is_text or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = FORBIDDEN.search(line)
            if match:
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r}")
    assert not offenders, "\n".join(offenders[:40])


@pytest.mark.parametrize(
    ("line", "bad"),
    [
        ("see /" + "work/shared/" + "reference/x.md", True),
        ("Target (issue " + "7): a map", True),
        ("SB3 issues #1568 and #1608", False),
        ("the expectation of the paper", False),
    ],
)
def test_pattern_known_answers(line: str, bad: bool) -> None:
    assert bool(FORBIDDEN.search(line)) is bad
