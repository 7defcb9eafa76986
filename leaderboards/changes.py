"""Which submissions a change touches, and the sample seed nobody can know in advance.

``gymforge leaderboard verify --changed --base REV`` re-runs every episode of the submissions
that are new or changed relative to ``REV`` (what a pull request adds), and a sample of the
others drawn from :func:`fresh_sample_seed`: fresh randomness at verify time, printed so that a
run can be reproduced with ``--sample-seed``. A submitter cannot know which episodes the sample
will hold, and every episode of their own submission is re-run anyway.
"""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path


def fresh_sample_seed() -> int:
    """A 63-bit seed from the operating system's randomness."""
    return secrets.randbits(63)


def _git(root: Path, *args: str) -> str:
    """Run git in ``root``; a failure raises ``ValueError`` with git's first line."""
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    except OSError as error:  # git itself missing
        raise ValueError(f"--changed needs git: {error}") from error
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["unknown error"])[0]
        raise ValueError(f"--base: git {' '.join(args[:2])} failed: {first}")
    return done.stdout


def _nul_separated(text: str) -> list[str]:
    return [part for part in text.split("\0") if part]


def changed_paths(root: Path, base: str) -> list[str]:
    """Paths under ``root`` (relative to it) that differ from ``base`` or are untracked.

    Git is read with ``-z``: names come NUL-separated and unquoted, so a name with a newline or
    any other unusual character is seen as it is (git quotes such names otherwise).
    """
    root = Path(root).resolve()
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip()).resolve()
    _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{tree}}")
    diff = _git(root, "diff", "-z", "--name-only", "--no-renames", base, "--", ".")
    untracked = _git(root, "ls-files", "-z", "--others", "--exclude-standard", "--full-name", ".")
    paths = []
    for line in [*_nul_separated(diff), *_nul_separated(untracked)]:
        full = top / line
        if full == root or root in full.parents:
            paths.append(full.relative_to(root).as_posix())
    return sorted(set(paths))


def _submission_folders(root: Path, tasks: list[str]) -> dict[Path, str]:
    """Resolved path of every entry of every board's ``submissions/`` -> ``"task/id"``."""
    folders: dict[Path, str] = {}
    for task in tasks:
        submissions = Path(root) / task / "submissions"
        for entry in submissions.iterdir() if submissions.is_dir() else []:
            folders[entry.resolve()] = f"{task}/{entry.name}"
    return folders


def changed_submissions(root: Path, base: str, tasks: list[str]) -> set[str]:
    """``"task/id"`` of every submission new or changed since ``base``.

    A changed path marks the submission it lies in by name (``<task>/submissions/<id>/...``,
    the entry itself included) and the one it resolves into (a file reached through a link);
    a changed protocol file marks every submission of its board. Links on a board are refused
    by verify anyway; this keeps a linked row from escaping the full re-run.
    """
    marked: set[str] = set()
    folders = _submission_folders(root, tasks)
    for path in changed_paths(root, base):
        parts = path.split("/")
        if parts[0] == "protocols" and path.endswith(".json"):
            task = path.removeprefix("protocols/").removesuffix(".json")
            if task in tasks:
                marked.add(f"{task}/*")
            continue
        if len(parts) >= 4 and parts[2] == "submissions":
            task = f"{parts[0]}/{parts[1]}"
            if task in tasks and (Path(root) / task / "submissions" / parts[3]).exists():
                marked.add(f"{task}/{parts[3]}")  # (a removed submission is not re-run)
        resolved = (Path(root) / path).resolve()
        for folder, name in folders.items():
            if resolved == folder or folder in resolved.parents:
                marked.add(name)
    return marked
