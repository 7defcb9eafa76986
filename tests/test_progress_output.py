"""Long-running commands show a progress bar on stderr, and --quiet or --json hides it.

Each command runs on tiny sizes: the bar's label is what is checked, not the time it takes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gymforge.cli import main

METABBO_TINY = ["--dimension", "2", "--population-size", "6", "--max-generations", "4"]


def _stderr_of(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run the command (it must succeed) and return what it wrote to stderr."""
    assert main(argv) == 0
    return capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, bar",
    [
        (["rollout", "Probe-Match-v0", "--episodes", "2"], "rollout Probe-Match-v0"),
        (["rollout", "MinMax-Bilinear-v0", "--agent", "gda", "--episodes", "2"],
         "rollout MinMax-Bilinear-v0"),
    ],
)  # fmt: skip
def test_rollout__scalar_and_parallel_show_a_bar_per_episode(capsys, argv, bar):
    err = _stderr_of(capsys, argv)
    assert bar in err and "2/2" in err
    for hide in ("--quiet", "--json"):
        assert bar not in _stderr_of(capsys, [*argv, hide])


def test_rollout__batched_says_the_work_up_front_and_counts_every_episode(capsys):
    argv = ["rollout", "Probe-Match-v0", "--num-envs", "3", "--episodes", "2"]
    err = _stderr_of(capsys, argv)
    assert "3 instances x 2 episode(s) each = 6 episodes" in err
    assert "rollout Probe-Match-v0" in err and "6/6" in err
    for hide in ("--quiet", "--json"):
        err = _stderr_of(capsys, [*argv, hide])
        assert "rollout Probe-Match-v0" not in err and "instances x" not in err


def test_rollout__threads_must_be_positive(capsys):
    assert main(["rollout", "Probe-Match-v0", "--threads", "0"]) == 2
    assert "--threads must be >= 1" in capsys.readouterr().err


def test_dataset_collect__metabbo_shows_a_bar_per_episode(tmp_path, capsys):
    argv = ["dataset", "collect", "MetaBBO-v0", "--agent", "random", "--n", "3", *METABBO_TINY]
    err = _stderr_of(capsys, [*argv, "--out", str(tmp_path / "a")])
    assert "collect MetaBBO-v0" in err and "3/3" in err and "generation" in err
    err = _stderr_of(capsys, [*argv, "--out", str(tmp_path / "b"), "--quiet"])
    assert "collect MetaBBO-v0" not in err


def test_dataset_collect__offcmab_shows_a_bar_of_the_plays(tmp_path, capsys):
    argv = ["dataset", "collect", "OffCMAB-Cascade-v0", "--agent", "uniform", "--n", "50"]
    err = _stderr_of(capsys, [*argv, "--out", str(tmp_path / "a")])
    assert "collect" in err and "50/50" in err and "play" in err
    err = _stderr_of(capsys, [*argv, "--out", str(tmp_path / "b"), "--quiet"])
    assert "play" not in err


def test_dataset_collect__the_minari_collector_shows_a_bar_per_episode(tmp_path, capsys):
    pytest.importorskip("minari")
    argv = ["dataset", "collect", "Probe-Match-v0", "--agent", "random", "--n", "3"]
    root = ["--minari-root", str(tmp_path)]
    err = _stderr_of(capsys, [*argv, "--minari", "bar-a-v0", *root])
    assert "collect Probe-Match-v0" in err and "3/3" in err and "episode" in err
    err = _stderr_of(capsys, [*argv, "--minari", "bar-b-v0", *root, "--quiet"])
    assert "collect Probe-Match-v0" not in err


def test_sweep__shows_a_bar_per_job_unless_quiet_or_json(tmp_path, capsys):
    sweep = {
        "version": 1,
        "name": "bar",
        "tasks": ["Probe-Match-v0"],
        "algos": ["ppo"],
        "seeds": [0],
        "steps": 64,
        "grid": {"learning_rate": [0.001]},
        "config": {"n_envs": 1, "eval": {"every": 0},
                   "algos": {"ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1}}},
        "eval_episodes": 1,
    }  # fmt: skip
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(sweep))
    argv = ["sweep", str(path), "--out", str(tmp_path / "out")]
    assert "sweep bar" in _stderr_of(capsys, argv)
    # the second and third runs find the job finished: no training, the same rows
    assert "sweep bar" not in _stderr_of(capsys, [*argv, "--quiet"])
    assert main([*argv, "--json"]) == 0
    captured = capsys.readouterr()
    assert "sweep bar" not in captured.err and json.loads(captured.out)[0]["job"]
    assert Path(tmp_path / "out" / "results.csv").is_file()
