"""Hostile and careless input on the boards: forgeries verify must catch, faults it must survive.

The forger here knows everything public: the protocol, the code, the hash functions. They
inflate the episodes they expect verify not to re-run and recompute every hash.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from leaderboard_helpers import TASK, copy_board, meta, small_root, tree

from gymforge.cli import main
from gymforge.hashing import sha256_file
from gymforge.leaderboards.evaluator import episodes_digest, summarise
from gymforge.leaderboards.files import write_json_atomic
from gymforge.leaderboards.protocol import load_protocol
from gymforge.leaderboards.render import write_all
from gymforge.leaderboards.submission import submit
from gymforge.leaderboards.verify import sample_indices, verify

SID = "20260101-random"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A board with one random row."""
    root = small_root(tmp_path_factory.mktemp("pristine"))
    submit(root, TASK, "random", meta("Random"), submission_id=SID)
    write_all(root)
    return root


@pytest.fixture
def board(pristine, tmp_path):
    return copy_board(pristine, tmp_path)


def forge(root: Path, sid: str = SID, gain: float = 30.0) -> list[int]:
    """Inflate every episode but the one the old seed-0 sample re-runs; fix up every hash."""
    protocol = load_protocol(root, TASK)
    spared = sample_indices(protocol, sid, protocol.verify_episodes, 0)
    folder = root / TASK / "submissions" / sid
    results = json.loads((folder / "results.json").read_text())
    inflated = []
    for episode in results["episodes"]:
        if episode["index"] not in spared:
            episode["return"] += gain
            episode["metric"] += gain
            inflated.append(episode["index"])
    results["episodes_sha256"] = episodes_digest(results["episodes"])
    results["aggregate"] = summarise(protocol, results["episodes"])
    write_json_atomic(folder / "results.json", results)
    submission = json.loads((folder / "submission.json").read_text())
    submission["results_sha256"] = sha256_file(folder / "results.json")
    write_json_atomic(folder / "submission.json", submission)
    write_all(root)
    return inflated


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_board_faults__forgery_fails_when_every_episode_of_a_changed_row_is_rerun(board):
    inflated = forge(board)
    assert inflated and verify(board, seed=0).ok  # the forgery beats a public-seed sample
    report = verify(board, seed=0, full={f"{TASK}/{SID}"})
    assert not report.ok
    assert report.fully_rerun == [f"{TASK}/{SID}"]
    assert report.episodes_rerun == len(inflated) + 1
    problems = "\n".join(report.problems)
    for index in inflated:
        assert f"{SID}: episode {index} " in problems


def test_board_faults__forged_commit_fails_ci_verify_changed(board, capsys):
    """CI's path: the forgery arrives in a commit; `verify --changed --base` re-runs all of it."""
    git(board, "init", "-q", "-b", "main")
    git(board, "add", "-A")
    git(board, "commit", "-q", "-m", "base")
    base = git(board, "rev-parse", "HEAD")
    forge(board)
    git(board, "add", "-A")
    git(board, "commit", "-q", "-m", "forged")
    argv = ["leaderboard", "verify", "--root", str(board), "--changed", "--base", base]
    assert main([*argv, "--sample-seed", "0"]) == 1
    out, err = capsys.readouterr()
    assert f"{TASK}/{SID}" in out and "re-ran to metric" in err
    assert "--sample-seed 0" in out


def test_board_faults__changed_protocol_marks_its_whole_board(board):
    from gymforge.leaderboards.changes import changed_submissions

    git(board, "init", "-q", "-b", "main")
    git(board, "add", "-A")
    git(board, "commit", "-q", "-m", "base")
    assert changed_submissions(board, "HEAD", [TASK]) == set()
    path = board / "protocols" / f"{TASK}.json"
    path.write_text(path.read_text() + "\n")
    assert changed_submissions(board, "HEAD", [TASK]) == {f"{TASK}/*"}


def test_board_faults__unknown_base_is_one_line_naming_it(board, capsys):
    git(board, "init", "-q", "-b", "main")
    git(board, "add", "-A")
    git(board, "commit", "-q", "-m", "base")
    argv = ["leaderboard", "verify", "--root", str(board), "--changed", "--base", "nope"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gymforge: error: --base:") and len(err.splitlines()) == 1


def test_board_faults__default_sample_seed_is_fresh_and_printed(board, capsys):
    """Nobody can compute the sample in advance; the printed seed reproduces it."""
    seeds = {verify(board, rerun=False).sample_seed for _ in range(3)}
    assert len(seeds) == 3
    argv = ["leaderboard", "verify", "--root", str(board)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "reproduce this sample with --sample-seed " in out


def test_board_faults__submit_interrupted_while_rendering_stores_nothing(
    board, tmp_path, monkeypatch, capsys
):
    """Storing and rendering are one transaction: a render that fails withdraws the row."""
    import gymforge.leaderboards.render as render

    real = render.write_all
    calls = []

    def interrupted(root):
        calls.append(root)
        if len(calls) == 1:
            real(root)  # the renders are half-written with the new row ...
            raise KeyboardInterrupt  # ... when Ctrl-C arrives
        return real(root)

    monkeypatch.setattr(render, "write_all", interrupted)
    before = tree(board)
    meta_file = tmp_path / "meta.json"
    meta_file.write_text(json.dumps(meta("Another random")))
    argv = ["submit", "--root", str(board), "--protocol", TASK, "--agent", "random",
            "--meta", str(meta_file), "--id", "20260301-another", "--quiet"]  # fmt: skip
    assert main(argv) == 130
    assert "nothing was added to the board" in capsys.readouterr().err
    after = {k: v for k, v in tree(board).items() if not k.startswith(".staging/")}
    assert after == before
    assert verify(board, rerun=False).ok


def test_board_faults__unwritable_root_fails_before_evaluating(board, tmp_path, capsys):
    meta_file = tmp_path / "meta.json"
    meta_file.write_text(json.dumps(meta("Another random")))
    blocked = board / TASK
    shutil.rmtree(blocked)
    blocked.write_text("a file where the board folder should be")
    argv = ["submit", "--root", str(board), "--protocol", TASK, "--agent", "random",
            "--meta", str(meta_file), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    assert f"--root: {blocked} is not a folder" in capsys.readouterr().err
