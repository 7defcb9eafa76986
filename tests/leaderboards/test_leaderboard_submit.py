"""Submit, render and verify: a clean board verifies, and every kind of tampering is rejected."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from leaderboard_helpers import TASK, copy_board, fixed_wait_model, meta, small_root, tree

from gymforge.cli import main
from gymforge.leaderboards.files import write_json_atomic
from gymforge.leaderboards.render import render_all, write_all
from gymforge.leaderboards.submission import STAGING_DIR, list_submissions, submit
from gymforge.leaderboards.verify import verify

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A board with three rows: random (by name), the optimal entry point, an SB3 model file."""
    root = small_root(tmp_path_factory.mktemp("pristine"))
    submit(root, TASK, "random", meta("Random"), submission_id="20260101-random")
    submit(
        root,
        TASK,
        "gymforge.agents.lineflow:OptimalWaitingTimeAgent",
        meta("Optimal controller", method="closed form", training_env_steps=0),
        submission_id="20260101-optimal",
    )
    model = fixed_wait_model(tmp_path_factory.mktemp("artifacts") / "wait18.zip", 18)
    submit(root, TASK, str(model), meta("Fixed wait 18"), submission_id="20260102-wait18")
    write_all(root)
    return root


@pytest.fixture
def board(pristine, tmp_path):
    return copy_board(pristine, tmp_path)


def _problems(root: Path, **kwargs) -> str:
    report = verify(root, **kwargs)
    assert not report.ok, "verify accepted a tampered board"
    return "\n".join(report.problems)


def test_leaderboards__submitted_board_verifies(pristine):
    report = verify(pristine)
    assert report.ok, report.problems
    assert len(report.checked) == 3 and report.episodes_rerun == 3
    folder = pristine / TASK / "submissions" / "20260102-wait18"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "policy/wait18.zip",
        "results.json",
        "submission.json",
    ]
    # ranked best first; the optimal controller beats the fixed waiting time and random
    csv_lines = (pristine / TASK / "leaderboard.csv").read_text().splitlines()
    assert [line.split(",")[1] for line in csv_lines[1:]] == [
        "20260101-optimal",
        "20260102-wait18",
        "20260101-random",
    ]
    markdown = (pristine / TASK / "LEADERBOARD.md").read_text()
    assert "Self-evaluated, CI-verified" in markdown and "Optimal controller" in markdown
    assert (pristine / "site" / "index.html").is_file()
    assert (pristine / "site" / "plots" / "lineflow-ShortWaitingTime.svg").is_file()


def test_leaderboards__render_is_reproducible(pristine):
    assert render_all(pristine) == render_all(pristine)


def test_leaderboards__edited_results_are_rejected(board):
    path = board / TASK / "submissions" / "20260101-random" / "results.json"
    results = json.loads(path.read_text())
    results["aggregate"]["mean"] += 50.0
    path.write_text(json.dumps(results, indent=2) + "\n")
    assert "results edited after submission" in _problems(board, rerun=False)


def _forge_every_episode(board: Path, cpu: str | None = None) -> None:
    """Add 30 to every episode of the random submission and rewrite every hash (and, given
    ``cpu``, the recorded CPU), as a forger would."""
    from gymforge.hashing import sha256_file
    from gymforge.leaderboards.evaluator import episodes_digest, summarise
    from gymforge.leaderboards.protocol import load_protocol

    folder = board / TASK / "submissions" / "20260101-random"
    results = json.loads((folder / "results.json").read_text())
    if cpu is not None:
        results["provenance"]["hardware"]["cpu"] = cpu
    for episode in results["episodes"]:
        episode["return"] += 30.0
        episode["metric"] += 30.0
    results["episodes_sha256"] = episodes_digest(results["episodes"])
    results["aggregate"] = summarise(load_protocol(board, TASK), results["episodes"])
    write_json_atomic(folder / "results.json", results)
    submission = json.loads((folder / "submission.json").read_text())
    submission["results_sha256"] = sha256_file(folder / "results.json")
    write_json_atomic(folder / "submission.json", submission)
    write_all(board)


def test_leaderboards__edited_episodes_with_fixed_up_hashes_fail_the_rerun(board):
    """A forger who also rewrites every hash is caught by re-running the episode."""
    _forge_every_episode(board)
    problems = _problems(board)
    assert "20260101-random: episode" in problems and "re-ran to metric" in problems


def test_leaderboards__swapped_artifact_is_rejected(board):
    artifact = board / TASK / "submissions" / "20260102-wait18" / "policy" / "wait18.zip"
    fixed_wait_model(artifact, 40)
    assert "does not match its recorded sha256 (swapped artifact)" in _problems(board)


def test_leaderboards__changed_protocol_is_rejected(board):
    path = board / "protocols" / f"{TASK}.json"
    data = json.loads(path.read_text())
    data["tolerance"]["abs"] = 10.0  # a looser tolerance is still a different protocol
    path.write_text(json.dumps(data, indent=2) + "\n")
    problems = _problems(board, rerun=False)
    assert "(the protocol changed)" in problems


def test_leaderboards__stale_render_is_rejected(board):
    shutil.rmtree(board / TASK / "submissions" / "20260101-random")
    assert "LEADERBOARD.md: differs from a fresh render" in _problems(board, rerun=False)


def test_leaderboards__hand_edited_render_is_rejected(board):
    path = board / "site" / "index.html"  # the landing page names the leader
    path.write_text(path.read_text().replace("Optimal controller", "0ptimal controller"))
    assert "site/index.html: differs from a fresh render" in _problems(board, rerun=False)


def test_leaderboards__leftover_plot_is_rejected(board):
    (board / "site" / "plots" / "lineflow-Old.svg").write_text("<svg/>")
    assert "site/plots/lineflow-Old.svg: not produced by a fresh render" in _problems(
        board, rerun=False
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.pop("authors"), "metadata field 'authors' is missing"),
        (lambda m: m.update(authors=[]), "non-empty list"),
        (lambda m: m.update(name=7), "metadata field 'name' must be str"),
        (lambda m: m.update(favourite_colour="blue"), "'favourite_colour' is unknown"),
        (lambda m: m.update(training_env_steps=-5), "training_env_steps"),
    ],
)
def test_leaderboards__malformed_metadata_is_rejected(board, edit, message):
    path = board / TASK / "submissions" / "20260101-optimal" / "submission.json"
    submission = json.loads(path.read_text())
    edit(submission["meta"])
    path.write_text(json.dumps(submission, indent=2) + "\n")
    assert message in _problems(board, rerun=False)


def test_leaderboards__malformed_submission_record_is_rejected(board):
    path = board / TASK / "submissions" / "20260101-optimal" / "submission.json"
    path.write_text("{truncated")
    assert "submission.json is not valid JSON" in _problems(board, rerun=False)


def test_leaderboards__submit_rejects_bad_metadata_before_evaluating(board, tmp_path, capsys):
    before = tree(board)
    meta_file = tmp_path / "meta.json"
    meta_file.write_text(json.dumps({"name": "x", "method": "y"}))
    code = main(
        ["submit", "--root", str(board), "--protocol", TASK, "--agent", "random",
         "--meta", str(meta_file), "--quiet"]
    )  # fmt: skip
    assert code == 2
    assert "metadata field 'authors' is missing" in capsys.readouterr().err
    assert tree(board) == before


def test_leaderboards__submit_refuses_an_existing_id(board):
    with pytest.raises(ValueError, match="already exists"):
        submit(board, TASK, "random", meta("Random"), submission_id="20260101-random")


def test_leaderboards__failing_agent_leaves_the_board_untouched(board, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    before = tree(board)
    with pytest.raises(RuntimeError, match="second episode"):
        submit(board, TASK, "leaderboard_helpers:FailingAgent", meta("Crashes"))
    assert tree(board) == before
    assert verify(board, rerun=False).ok


def test_leaderboards__killed_submission_leaves_no_partial_files(board, tmp_path):
    """SIGKILL a real `gymforge submit` process in the middle of its evaluation."""
    before = tree(board)
    meta_file = tmp_path / "meta.json"
    meta_file.write_text(json.dumps(meta("Slow")))
    marker = tmp_path / "acting"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
        "LB_MARKER": str(marker),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gymforge", "submit", "--root", str(board), "--protocol", TASK,
         "--agent", "leaderboard_helpers:SlowAgent", "--meta", str(meta_file), "--quiet"],
        env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert process.poll() is None, "submit ended before it was killed"
            assert time.monotonic() < deadline, "the agent never started acting"
            time.sleep(0.05)
        time.sleep(0.3)  # well inside the ~5 s evaluation
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert tree(board) == before
    assert not (board / STAGING_DIR).exists() or not any((board / STAGING_DIR).iterdir())
    assert [p.name for p in list_submissions(board, TASK)] == [
        "20260101-optimal",
        "20260101-random",
        "20260102-wait18",
    ]
    assert verify(board, rerun=False).ok


def test_leaderboards__calibrate_refuses_a_board_with_rows(board):
    from gymforge.leaderboards.calibrate import calibrate

    with pytest.raises(ValueError, match="already has submissions"):
        calibrate(board, TASK)


def test_leaderboards__reference_rows_come_from_the_registry(tmp_path):
    from gymforge.leaderboards.reference_rows import seed_board

    root = small_root(tmp_path)
    added = seed_board(root, TASK)
    assert sorted(p.name.split("-", 1)[1] for p in added) == [
        "random-uniform-actions",
        "reference-optimal",
    ]
    assert seed_board(root, TASK) == []  # rows already on the board are not submitted twice
    write_all(root)
    assert verify(root).ok


def _run_folder(path: Path) -> Path:
    """A folder as `gymforge train` writes it: model.zip, config.json, evaluations.json."""
    import gymnasium as gym
    from stable_baselines3 import PPO

    path.mkdir()
    PPO("MlpPolicy", gym.make("LineFlow-WaitingTime-v0", horizon=300), seed=0).save(
        path / "model.zip"
    )
    config = {
        "format": "gymforge-sb3-agent",
        "format_version": 1,
        "algo": "ppo",
        "seed": 0,
        "steps": 3000,
        "n_envs": 1,
        "env_id": "LineFlow-WaitingTime-v0",
        "command": ["gymforge", "train", "LineFlow-WaitingTime-v0", "--algo", "ppo"],
    }
    (path / "config.json").write_text(json.dumps(config))
    curve = [{"timesteps": t, "mean_return": r, "std_return": 0.0, "episodes": []}
             for t, r in ((1000, 3.0), (2000, 6.0), (3000, 8.5))]  # fmt: skip
    (path / "evaluations.json").write_text(json.dumps({"algo": "ppo", "evaluations": curve}))
    return path


def test_leaderboards__trained_run_brings_its_learning_curve(board, tmp_path):
    run = _run_folder(tmp_path / "run")
    from gymforge.leaderboards.trained_rows import submit_run

    folder = submit_run(board, run, submission_id="20260103-ppo")
    assert sorted(p.name for p in (folder / "policy").iterdir()) == [
        "config.json",
        "evaluations.json",
        "model.zip",
    ]
    record = json.loads((folder / "submission.json").read_text())
    assert record["agent"]["algorithm"] == "ppo"
    assert record["meta"]["name"] == "PPO seed 0"
    assert record["meta"]["training_env_steps"] == 3000
    assert record["meta"]["command"] == "gymforge train LineFlow-WaitingTime-v0 --algo ppo"
    assert set(record["files"]) == {"policy/config.json", "policy/evaluations.json"}
    write_all(board)
    curves = board / "site" / "plots" / "lineflow-ShortWaitingTime-curves.svg"
    assert curves.is_file() and b"PPO seed 0" in curves.read_bytes()
    page = board / "site" / "boards" / "lineflow-ShortWaitingTime.html"
    assert "../plots/lineflow-ShortWaitingTime-curves.svg" in page.read_text()
    assert verify(board).ok

    (folder / "policy" / "evaluations.json").write_text(json.dumps({"evaluations": []}))
    assert "policy/evaluations.json is missing or does not match its sha256" in _problems(
        board, rerun=False
    )


def test_leaderboards__on_device_policy_submits_renders_and_verifies(tmp_path):
    """A `gymforge train --backend torch` run folder: its policy.pt is the stored artifact (with
    the run's config and evaluations), the board renders, verify re-runs the episode."""
    from gymforge.baselines.ondevice.run import train

    run = train(
        "LineFlow-WaitingTime-v0",
        "ppo",
        64,
        n_envs=4,
        out=tmp_path / "run",
        overrides={"eval": {"every": 0}, "algos": {"ppo": {"n_steps": 16}}},
        tensorboard=False,
        log=lambda message: None,
    )
    root = small_root(tmp_path / "board")
    folder = submit(root, TASK, str(run.out), meta("On-device PPO"), submission_id="20260103-torch")
    stored = json.loads((folder / "submission.json").read_text())["agent"]
    assert stored["kind"] == "torch_policy" and stored["artifact"] == "policy/policy.pt"
    assert (folder / "policy" / "config.json").is_file()
    write_all(root)
    assert "torch policy" in (root / TASK / "LEADERBOARD.md").read_text()
    report = verify(root)
    assert report.ok, report.problems
    assert report.episodes_rerun >= 1


def test_leaderboards__rerun_differences_are_notes_only_within_a_bounded_tolerance():
    from gymforge.leaderboards.verify import CROSS_MACHINE_RTOL, within_cross_machine

    rtol = CROSS_MACHINE_RTOL["MetaBBO-"]
    # a last-bits difference on a BLAS-dependent id is a note ...
    assert within_cross_machine("MetaBBO-Alg2-v0", 10.0, 10.0 * (1 + rtol / 2))
    assert within_cross_machine("ConfounderStream-v0", 30.0, 30.0 + 1e-9)
    # ... a real difference is not, whatever CPU the results claim
    assert not within_cross_machine("ConfounderStream-v0", 30.0, 40.0)
    assert not within_cross_machine("MetaBBO-v0", -2.0, -2.0 - 10 * rtol)
    # a board whose bits do not depend on BLAS takes no cross-machine difference at all
    assert not within_cross_machine("LineFlow-WaitingTime-v0", 150.0, 150.0 + 1e-9)


def test_verify__a_diverged_episode_length_follows_the_rows_status():
    """An untouched row on a kernel-dependent id whose re-run took another path (another
    length) is a note; the same on a row the change adds, or on a CPU-independent id, fails."""
    from types import SimpleNamespace

    from gymforge.leaderboards.verify import compare_episode

    stored = {"index": 1, "seed": 7, "metric": -0.03, "return": 0.968, "length": 283}
    fresh = {"index": 1, "seed": 7, "metric": -0.64, "return": 0.992, "length": 270}
    metabbo = SimpleNamespace(env_id="MetaBBO-Alg2-v0", tolerance=1e-6)
    problems, notes = compare_episode("row", metabbo, fresh, stored, touched=False, host="cpu")
    assert problems == [] and len(notes) == 3 and "re-ran to length 270" in notes[2]
    problems, notes = compare_episode("row", metabbo, fresh, stored, touched=True, host="cpu")
    assert len(problems) == 3 and notes == []
    lineflow = SimpleNamespace(env_id="LineFlow-WaitingTime-v0", tolerance=1e-6)
    same = dict(stored, length=270)
    problems, _ = compare_episode("row", lineflow, same, stored, touched=False, host="cpu")
    assert problems == ["row: episode 1 (seed 7) re-ran to length 270, results.json says 283"]


def test_leaderboards__a_claimed_other_cpu_does_not_excuse_a_forged_rerun(board):
    """On a board whose bits do not depend on the CPU, editing the recorded CPU (and every
    hash) still fails the re-run."""
    _forge_every_episode(board, cpu="Some Other CPU")
    problems = _problems(board)
    assert "20260101-random: episode" in problems and "re-ran to metric" in problems


def test_leaderboards__reference_rows_report_a_trained_agents_steps():
    from gymforge.leaderboards.reference_rows import reference_meta

    expert = reference_meta(
        "metabbo/MetaBBO", "ppo_expert", "gymforge.baselines.metabbo.experts:ppo_expert_agent"
    )
    assert expert["training_env_steps"] == 3_006_464
    from gymforge.baselines.metabbo.experts import expert_policy_path

    for preset in ("alg0", "alg1", "alg2"):  # what each expert's run folder records
        config = json.loads((expert_policy_path(preset).parent / "config.json").read_text())
        assert config["steps"] == expert["training_env_steps"]
    assert expert["description"].endswith("trained for 3,006,464 env steps.")
    jde = reference_meta("metabbo/MetaBBO", "jde", "gymforge.baselines.metabbo.adaptive:JDEAgent")
    assert jde["training_env_steps"] == 0 and jde["description"].endswith("not trained.")


def test_verify__shows_progress_per_board_on_request(board, capsys):
    assert verify(board, rerun=False, progress=True).ok
    err = capsys.readouterr().err
    assert "verify: 100%" in err and "render: 100%" in err
    assert verify(board, rerun=False).ok and capsys.readouterr().err == ""
