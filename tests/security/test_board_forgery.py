"""Forged rows a hostile pull request could add are refused by ``leaderboard verify``.

Each case is built as a forger would build it (hashes rewritten, git history real) on a small
LineFlow board, and each must be a problem, never a note.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "leaderboards"))
from leaderboard_helpers import TASK, copy_board, meta, small_root

from gymforge.hashing import sha256_bytes, sha256_file
from gymforge.leaderboards import verify as verify_module
from gymforge.leaderboards.changes import changed_submissions
from gymforge.leaderboards.evaluator import episodes_digest, summarise
from gymforge.leaderboards.files import write_json_atomic
from gymforge.leaderboards.protocol import load_protocol
from gymforge.leaderboards.render import write_all
from gymforge.leaderboards.results import check_plausible
from gymforge.leaderboards.submission import submit
from gymforge.leaderboards.verify import verify

ROW = "20260101-random"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = small_root(tmp_path_factory.mktemp("pristine"))
    submit(root, TASK, "random", meta("Random"), submission_id=ROW)
    write_all(root)
    return root


@pytest.fixture
def board(pristine, tmp_path):
    root = copy_board(pristine, tmp_path)
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q", str(root)], check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "board"], cwd=root, check=True)
    return root


def forge(folder: Path, add: float = 10.0, cpu: str | None = None, agent: dict | None = None):
    """Change every episode (and optionally the CPU claim or the agent), fixing every hash."""
    board = folder.parents[3] if folder.parent.name == "submissions" else None
    assert board is not None
    results = json.loads((folder / "results.json").read_text())
    for episode in results["episodes"]:
        episode["return"] += add
        episode["metric"] += add
    if cpu is not None:
        results["provenance"]["hardware"]["cpu"] = cpu
    if agent is not None:
        results["agent"] = agent
    results["episodes_sha256"] = episodes_digest(results["episodes"])
    results["aggregate"] = summarise(load_protocol(board, TASK), results["episodes"])
    write_json_atomic(folder / "results.json", results)
    submission = json.loads((folder / "submission.json").read_text())
    submission["results_sha256"] = sha256_file(folder / "results.json")
    submission["id"] = folder.name
    if agent is not None:
        submission["agent"] = agent
    write_json_atomic(folder / "submission.json", submission)


def changed_verify(root: Path):
    """What CI runs on a pull request: every changed row re-run in full."""
    full = changed_submissions(root, "HEAD", [TASK])
    return full, verify(root, full=full, sample=1, seed=0)


def test_security__a_claimed_other_cpu_never_widens_the_tolerance(board, monkeypatch):
    """Even on an id whose bits depend on BLAS kernels, a changed row beyond the bounded
    cross-machine tolerance fails, whatever CPU it claims."""
    monkeypatch.setattr(verify_module, "CROSS_MACHINE_RTOL", {"LineFlow-": 1e-4})
    forge(board / TASK / "submissions" / ROW, add=10.0, cpu="Some Other CPU")
    write_all(board)
    full, report = changed_verify(board)
    assert full == {f"{TASK}/{ROW}"}
    assert not report.ok
    assert sum("re-ran to metric" in p for p in report.problems) == 3
    assert not any("re-ran" in n for n in report.notes)


def test_security__a_last_bits_difference_is_a_note_within_the_bound(board, monkeypatch):
    monkeypatch.setattr(verify_module, "CROSS_MACHINE_RTOL", {"LineFlow-": 1e-4})
    forge(board / TASK / "submissions" / ROW, add=1e-5)  # returns ~100: 1e-7 relative
    write_all(board)
    _, report = changed_verify(board)
    assert report.ok, report.problems
    assert sum("within the cross-machine bound" in n for n in report.notes) >= 3


def test_security__a_row_linked_in_from_outside_submissions_is_seen_and_refused(board):
    source = board / TASK / "submissions" / ROW
    outside = board / TASK / "forged"
    shutil.copytree(source, outside)
    (board / TASK / "submissions" / "20260105-forged").symlink_to(outside)
    full, report = changed_verify(board)
    assert f"{TASK}/20260105-forged" in full
    problems = "\n".join(report.problems)
    assert "submissions/20260105-forged: a symbolic link" in problems
    assert f"{TASK}/forged: belongs to no row" in problems


def test_security__a_newline_in_a_folder_name_is_seen_and_refused(board):
    source = board / TASK / "submissions" / ROW
    odd = board / TASK / "submissions" / "20261207-nl\n"
    shutil.copytree(source, odd)
    forge(odd, add=-50.0)
    full, report = changed_verify(board)
    assert f"{TASK}/20261207-nl\n" in full
    assert any("20261207-nl\\n" in p and "submission id" in p for p in report.problems)


def test_security__files_that_belong_to_no_row_are_problems(board):
    (board / TASK / "submissions" / ROW / "notes.txt").write_text("hello")
    (board / "site" / "boards" / "extra.html").write_text("<script>alert(1)</script>")
    (board / TASK / "submissions" / "README").write_text("x")
    report = verify(board, rerun=False)
    problems = "\n".join(report.problems)
    assert f"{TASK}/submissions/{ROW}/notes.txt: belongs to no row" in problems
    assert "site/boards/extra.html: belongs to no board" in problems
    assert "submissions/'README': not a submission folder" in problems


def test_security__an_unregistered_entry_point_is_refused_without_importing_it(
    board, tmp_path, monkeypatch
):
    marker = tmp_path / "imported"
    module = tmp_path / "mods" / "forged_agent_module.py"
    module.parent.mkdir()
    module.write_text(f"open({str(marker)!r}, 'w').close()\ndef factory(env):\n    return None\n")
    monkeypatch.syspath_prepend(str(module.parent))
    entry = "forged_agent_module:factory"
    agent = {"kind": "entry_point", "entry_point": entry, "sha256": sha256_bytes(entry.encode())}
    forge(board / TASK / "submissions" / ROW, add=0.0, agent=agent)
    _, report = changed_verify(board)
    assert any("not a registered agent" in p for p in report.problems)
    assert not marker.exists() and "forged_agent_module" not in sys.modules


def test_security__a_torchscript_program_is_not_submittable(pristine, tmp_path):
    class Wait(torch.nn.Module):
        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return torch.full((obs.shape[0], 1), 18, dtype=torch.int64)

    script = tmp_path / "wait.pt"
    torch.jit.script(Wait()).save(str(script))
    root = copy_board(pristine, tmp_path)
    before = sorted(p.name for p in (root / TASK / "submissions").iterdir())
    with pytest.raises(ValueError, match="TorchScript module is a program"):
        submit(root, TASK, str(script), meta("Wait"), submission_id="20260102-wait")
    assert sorted(p.name for p in (root / TASK / "submissions").iterdir()) == before


@pytest.mark.parametrize(
    "metric, value",
    [("info:regret", -0.5), ("info:best_error", -9.0), ("info:distance", 4.0)],
)
def test_security__impossible_metric_values_are_refused(metric, value):
    with pytest.raises(ValueError, match="impossible"):
        check_plausible(value, metric, "results.json: episode 0")
    check_plausible(0.0 if metric != "info:best_error" else -8.0, metric, "ok")
