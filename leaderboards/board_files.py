"""What a board may hold on disk, so that nothing belonging to no row can hide on it.

A board folder ``<suite>/<Task>/`` holds its two renders, ``submissions/`` and ``archive/``;
each entry of ``submissions/`` is a real folder named by a valid id, holding
``submission.json``, ``results.json``, the agent's artifact and the files ``submission.json``
lists, and nothing else; ``site/`` holds only what a render writes. Symbolic links are refused
everywhere on a board: a link can make a folder outside ``submissions/`` (which a change check
would not look at) appear as a row. Each function returns problems as one line each.
"""

from __future__ import annotations

import os
from pathlib import Path

from gymforge.leaderboards.files import is_temporary
from gymforge.leaderboards.submission import check_submission_id

#: files and folders a board folder may hold.
BOARD_FILES = ("LEADERBOARD.md", "leaderboard.csv")
BOARD_DIRS = ("archive", "submissions")
#: the folder of the static site (every file in it comes from a render).
SITE_DIR = "site"


def _links_and_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """Symbolic links and regular files under ``folder``, never following a link."""
    links: list[Path] = []
    files: list[Path] = []
    for top, dirs, names in os.walk(folder, followlinks=False):
        for name in [*dirs, *names]:
            path = Path(top) / name
            if path.is_symlink():
                links.append(path)
            elif name in names:
                files.append(path)
    return sorted(links), sorted(files)


def _link_problem(root: Path, path: Path) -> str:
    return (
        f"{path.relative_to(root).as_posix()}: a symbolic link; boards hold plain files and "
        "folders only"
    )


def board_problems(root: Path, task: str) -> list[str]:
    """Entries of a board folder and its ``submissions/`` that are no row (or a link)."""
    root = Path(root)
    board = root / task
    problems: list[str] = []
    if not board.is_dir():
        return problems
    for path in sorted(board.iterdir()):
        relative = f"{task}/{path.name}"
        if path.is_symlink():
            problems.append(_link_problem(root, path))
        elif path.name in BOARD_FILES and path.is_file():
            continue
        elif path.name in BOARD_DIRS and path.is_dir():
            problems += [_link_problem(root, link) for link in _links_and_files(path)[0]]
        else:
            problems.append(
                f"{relative}: belongs to no row of the board (a board folder holds "
                f"{', '.join(BOARD_FILES + BOARD_DIRS)})"
            )
    submissions = board / "submissions"
    for entry in sorted(submissions.iterdir()) if submissions.is_dir() else []:
        relative = f"{task}/submissions/{entry.name!r}"
        if is_temporary(entry) or entry.is_symlink():
            continue  # (leftovers and links are reported once, elsewhere and above)
        if not entry.is_dir():
            problems.append(f"{relative}: not a submission folder (a file)")
            continue
        try:
            check_submission_id(entry.name, relative)
        except ValueError as error:
            problems.append(str(error))
    return problems


def submission_stray_files(root: Path, folder: Path, expected: set[str]) -> list[str]:
    """Files of a submission folder that its record does not list (``expected``, relative
    paths), and any link inside it."""
    links, files = _links_and_files(folder)
    problems = [_link_problem(Path(root), link) for link in links]
    for path in files:
        relative = path.relative_to(folder).as_posix()
        if relative not in expected:
            problems.append(
                f"{path.relative_to(root).as_posix()}: belongs to no row (submission.json does "
                "not list it)"
            )
    return problems


def site_stray_files(root: Path, rendered: set[str]) -> list[str]:
    """Files under ``site/`` that a fresh render does not produce (``rendered``), and links."""
    root = Path(root)
    site = root / SITE_DIR
    if not site.is_dir():
        return []
    links, files = _links_and_files(site)
    problems = [_link_problem(root, link) for link in links]
    for path in files:
        relative = path.relative_to(root).as_posix()
        if relative not in rendered:
            problems.append(f"{relative}: belongs to no board (a render does not produce it)")
    return problems
