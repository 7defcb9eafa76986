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


def changed_paths(root: Path, base: str) -> list[str]:
    """Paths under ``root`` (relative to it) that differ from ``base`` or are untracked."""
    root = Path(root).resolve()
    top = Path(_git(root, "rev-parse", "--show-toplevel").strip()).resolve()
    _git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{tree}}")
    diff = _git(root, "diff", "--name-only", "--no-renames", base, "--", ".")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "--full-name", ".")
    paths = []
    for line in [*diff.splitlines(), *untracked.splitlines()]:
        full = top / line.strip()
        if line.strip() and (full == root or root in full.parents):
            paths.append(full.relative_to(root).as_posix())
    return sorted(set(paths))


def changed_submissions(root: Path, base: str, tasks: list[str]) -> set[str]:
    """``"task/id"`` of every submission new or changed since ``base``.

    A changed protocol file marks every submission of its board.
    """
    marked: set[str] = set()
    for path in changed_paths(root, base):
        parts = path.split("/")
        if parts[0] == "protocols" and path.endswith(".json"):
            task = path.removeprefix("protocols/").removesuffix(".json")
            if task in tasks:
                marked.add(f"{task}/*")
        elif len(parts) >= 5 and parts[2] == "submissions":
            task = f"{parts[0]}/{parts[1]}"
            if task in tasks and (Path(root) / task / "submissions" / parts[3]).is_dir():
                marked.add(f"{task}/{parts[3]}")  # (a removed submission is not re-run)
    return marked
