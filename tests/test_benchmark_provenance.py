"""Results name the commit that produced them; a dirty tree is recorded as not final."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks import common


def _repo(path: Path) -> Path:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)

    git("init", "-q")
    (path / "a.txt").write_text("a\n")
    git("add", "a.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    return path


def test_a_clean_tree_is_final(tmp_path):
    record = common.provenance(_repo(tmp_path))
    assert record["final"] is True and not record["git_revision"].endswith("+dirty")
    assert common.require_clean_tree(False, tmp_path)["final"] is True


def test_a_dirty_tree_is_not_final_and_refused_unless_allowed(tmp_path):
    repo = _repo(tmp_path)
    (repo / "a.txt").write_text("changed\n")
    record = common.provenance(repo)
    assert record["git_revision"].endswith("+dirty")
    assert record["final"] is False
    with pytest.raises(SystemExit, match="--allow-dirty"):
        common.require_clean_tree(False, repo)
    allowed = common.require_clean_tree(True, repo)
    assert allowed == {**record, "allow_dirty": True}


def test_machine_info_says_whether_the_result_is_final():
    info = common.machine_info([])
    assert info["final"] is (not str(info["git_revision"]).endswith("+dirty"))
    assert list(info)[-2:] == ["git_revision", "final"]


@pytest.mark.parametrize("script", ["metabbo/test", "metabbo/offline", "train_correctness"])
def test_writers_of_final_results_take_allow_dirty(script):
    text = (common.REPO_ROOT / "benchmarks" / f"{script}.py").read_text(encoding="utf-8")
    assert "common.add_allow_dirty(" in text and "require_clean_tree(" in text


def test_train_correctness_names_its_statistics_and_renders_from_json():
    """Three seeds: mean and range, no IQM, no bootstrap CI, no 'as well' claim; the stored
    file is what ``--render`` writes from the JSON."""
    from benchmarks import train_correctness

    results = common.REPO_ROOT / "benchmarks" / "results"
    document = __import__("json").loads((results / "train_correctness.json").read_text())
    text = (results / "train_correctness.md").read_text(encoding="utf-8")
    assert text == train_correctness.render(document)
    assert "| trainer | per-seed scores (11, 174, 2024) | mean | range |" in text
    assert "IQM" not in text and "95% CI" not in text and "overlap: yes" not in text
    readme_row = next(
        line
        for line in (common.REPO_ROOT / "docs" / "figures.md")
        .read_text(encoding="utf-8")
        .splitlines()
        if "`train_correctness.md`" in line
    )
    assert "IQM" not in readme_row and "learns as well" not in readme_row
    assert "139.3 (range 133.5–144.2)" in readme_row
