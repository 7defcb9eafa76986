"""The guides' code blocks run, in order, as one script per guide, and leave no trace: the
registry (gymforge's and Gymnasium's) and the checkout's files are as they were."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import gymnasium as gym
import pytest

from gymforge.registry import all_specs, remove_specs

ROOT = Path(__file__).resolve().parents[1]
GUIDES = sorted((ROOT / "docs" / "guides").glob("*.md"))


def checkout_status() -> str | None:
    """``git status --porcelain`` of the checkout (untracked files listed one by one), or
    ``None`` outside a git checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return None
    command = ["git", "status", "--porcelain", "--untracked-files=all"]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _restore_registries(specs: tuple, gym_ids: dict) -> None:
    """Take out the ids a guide added and left behind (gymforge's and Gymnasium's)."""
    added = [spec.id for spec in all_specs() if spec not in specs]
    if added:
        remove_specs(added)
    for env_id in set(gym.registry) - set(gym_ids):
        del gym.registry[env_id]


@pytest.mark.parametrize("guide", GUIDES, ids=[g.stem for g in GUIDES])
def test_guides__every_python_block_runs(guide, capsys):
    blocks = re.findall(r"```python\n(.*?)```", guide.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, f"{guide.name} has no python blocks"
    specs, gym_ids, status = all_specs(), dict(gym.registry), checkout_status()
    namespace: dict = {"__name__": f"guide_{guide.stem}"}
    try:
        for number, block in enumerate(blocks, start=1):
            exec(compile(block, f"{guide.name}[block {number}]", "exec"), namespace)
    finally:
        left_specs, left_gym = all_specs(), dict(gym.registry)
        _restore_registries(specs, gym_ids)  # a failing guide must not break the tests after it
    assert "must name a station" in capsys.readouterr().out or guide.stem != "build_your_own_line"
    assert left_specs == specs, f"{guide.name} left the gymforge registry changed"
    assert left_gym == gym_ids, f"{guide.name} left Gymnasium's registry changed"
    assert checkout_status() == status, f"{guide.name} wrote into the checkout"


@pytest.mark.parametrize(("page", "at_least"), [("README.md", 2), ("docs/tour.md", 8)])
def test_guides__every_readme_and_tour_python_block_runs(page, at_least, tmp_path, monkeypatch):
    """The README's and the tour's blocks run in order as one script per page, with the budgets
    they show (each small), after the `# gymforge ...` commands they name in a leading comment."""
    import shlex

    from gymforge.cli import main

    path = Path(__file__).resolve().parents[1] / page
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= at_least
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "readme"}
    for number, block in enumerate(blocks, start=1):
        for command in re.findall(r"^# gymforge (.+)$", block, flags=re.M):
            assert main(shlex.split(command)) == 0, command
        exec(compile(block, f"{page}[block {number}]", "exec"), namespace)
        for value in list(namespace.values()):  # worker processes of sharded envs
            if hasattr(value, "num_workers") and hasattr(value, "close"):
                value.close()
