"""Ids a board evaluates never print Gymnasium's "out of date, consider upgrading" warning; other
older ids still do, and the list of silenced ids is exactly the boards' pinned older versions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym

from gymforge.leaderboards.protocol import list_tasks, load_protocol
from gymforge.registry import BOARD_PINNED_VERSIONS

ROOT = Path(__file__).resolve().parents[1] / "leaderboards"


def _has_newer_version(env_id: str) -> bool:
    name, _, version = env_id.rpartition("-v")
    return any(
        other.startswith(f"{name}-v") and other.rpartition("-v")[2].isdigit()
        and int(other.rpartition("-v")[2]) > int(version)
        for other in gym.registry
    )  # fmt: skip


def test_board_pinned_versions__are_the_boards_ids_that_have_a_newer_version():
    board_ids = {load_protocol(ROOT, task).env_id for task in list_tasks(ROOT)}
    assert set(BOARD_PINNED_VERSIONS) == {i for i in board_ids if _has_newer_version(i)}


def _make_stderr(env_id: str) -> str:
    code = f"import gymforge, gymnasium as gym; gym.make({env_id!r}).close()"
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_board_pinned_versions__make_without_the_upgrade_warning():
    assert "out of date" not in _make_stderr("MetaBBO-Alg2-v0")


def test_an_archived_boards_old_version__still_warns():
    # ConfounderStream-v0's board was archived when its board moved to v1
    assert "ConfounderStream-v0 is out of date" in _make_stderr("ConfounderStream-v0")
