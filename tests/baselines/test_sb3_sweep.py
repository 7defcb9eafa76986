"""``gymforge sweep``: the grid of jobs, the results table, the local and Ray backends."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from gymforge.baselines.sb3.sweep import expand_jobs, load_sweep, run_sweep
from gymforge.cli import main

SWEEP = {
    "version": 1,
    "name": "tiny",
    "tasks": ["Probe-Match-v0"],
    "algos": ["ppo"],
    "seeds": [0, 1],
    "steps": 128,
    "grid": {"learning_rate": [0.001, 0.01]},
    "config": {"n_envs": 2, "eval": {"every": 0},
               "algos": {"ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 2}}},
    "eval_episodes": 3,
}  # fmt: skip


def _write(tmp_path: Path, data: dict, name: str = "sweep.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def _figures(rows: list[dict]) -> list[tuple]:
    return [
        (r["job"], r["task"], r["algo"], r["seed"], r["hyperparameters"]["learning_rate"],
         r["steps"], r["returns"], r["mean_return"], r["std_return"], r["policy_sha256"])
        for r in rows
    ]  # fmt: skip


def test_expand_jobs__grid_times_seeds(tmp_path):
    sweep = load_sweep(_write(tmp_path, {**SWEEP, "algos": ["ppo", "a2c"]}))
    jobs = expand_jobs(sweep, tmp_path / "out")
    assert len(jobs) == 1 * 2 * 2 * 2
    assert [(j["algo"], j["hyperparameters"]["learning_rate"], j["seed"]) for j in jobs[:4]] == [
        ("ppo", 0.001, 0), ("ppo", 0.001, 1), ("ppo", 0.01, 0), ("ppo", 0.01, 1),
    ]  # fmt: skip
    assert jobs[0]["overrides"]["algos"]["ppo"] == {
        "n_steps": 64, "batch_size": 64, "n_epochs": 2, "learning_rate": 0.001,
    }  # fmt: skip
    assert jobs[5]["overrides"]["algos"]["a2c"] == {"learning_rate": 0.001}
    assert len({j["out"] for j in jobs}) == len(jobs)


def test_sweep__local_backend_writes_one_table(tmp_path, capsys):
    path = _write(tmp_path, SWEEP)
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out)]) == 0
    assert "results in" in capsys.readouterr().out
    with (out / "results.csv").open() as f:
        table = list(csv.DictReader(f))
    assert [r["job"] for r in table] == [
        "0000-Probe-Match-v0-ppo-s0", "0001-Probe-Match-v0-ppo-s1",
        "0002-Probe-Match-v0-ppo-s0", "0003-Probe-Match-v0-ppo-s1",
    ]  # fmt: skip
    assert list(table[0])[:5] == ["job", "task", "algo", "seed", "learning_rate"]
    rows = json.loads((out / "results.json").read_text())["rows"]
    for row, line in zip(rows, table, strict=True):
        assert float(line["mean_return"]) == pytest.approx(row["mean_return"])
        assert len(row["returns"]) == 3
        assert json.loads((Path(row["out"]) / "config.json").read_text())["seed"] == row["seed"]
    # a second run finds every job finished and returns the same rows without training
    again = run_sweep(path, out)
    assert _figures(again["rows"]) == _figures(rows)
    assert [r["train_s"] for r in again["rows"]] == [r["train_s"] for r in rows]


def test_sweep__ray_backend_matches_the_local_backend(tmp_path):
    """Same jobs on a local Ray instance: identical trained policies and figures."""
    ray = pytest.importorskip("ray")
    path = _write(tmp_path, {**SWEEP, "steps": 64, "grid": {"learning_rate": [0.001]}})
    local = run_sweep(path, tmp_path / "local", backend="local")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = run_sweep(path, tmp_path / "ray", backend="ray")
    finally:
        ray.shutdown()
    assert _figures(remote["rows"]) == _figures(local["rows"])
    assert all(Path(r["out"]).is_relative_to(tmp_path / "ray") for r in remote["rows"])
    # the seed matters: the two jobs trained different policies
    assert local["rows"][0]["policy_sha256"] != local["rows"][1]["policy_sha256"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": 2}, "version must be 1"),
        ({"task": ["x"]}, "unknown key 'task'"),
        ({"tasks": []}, "tasks must be a non-empty list"),
        ({"tasks": ["Nope-v0"]}, "Nope-v0"),
        ({"algos": ["ddpg"]}, "algo must be one of"),
        ({"seeds": [-1]}, "seeds must be ints >= 0"),
        ({"steps": 0}, "steps must be an int >= 1"),
        ({"grid": {"learning_rate": 0.1}}, "grid.learning_rate must be a non-empty list"),
        ({"grid": {"n_step": [1]}}, "algos.ppo: unknown argument 'n_step'"),
        ({"config": {"n_envs": 0}}, "n_envs must be an int >= 1"),
        ({"eval_episodes": 0}, "eval_episodes must be an int >= 1"),
    ],
)
def test_sweep_file__errors_before_any_job(change, message, tmp_path, capsys):
    path = _write(tmp_path, {**SWEEP, **change})
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_sweep__backend_and_address_are_checked(tmp_path):
    path = _write(tmp_path, SWEEP)
    with pytest.raises(ValueError, match=r"backend must be one of \['local', 'ray'\]"):
        run_sweep(path, tmp_path / "o", backend="slurm")
    with pytest.raises(ValueError, match="--address needs --backend ray"):
        run_sweep(path, tmp_path / "o", address="auto")
    assert not (tmp_path / "o").exists()


TORCH_SWEEP = {
    "version": 1,
    "name": "tiny-torch",
    "tasks": ["Probe-Match-v0"],
    "algos": ["ppo", "a2c"],
    "seeds": [0, 1],
    "steps": 256,
    "trainer": "torch",
    "config": {"n_envs": 8, "eval": {"every": 0}, "algos": {"ppo": {"n_steps": 16}}},
    "eval_episodes": 2,
    "eval_offset": 1000,
}


def test_sweep__torch_trainer_on_local_and_ray_backends(tmp_path):
    """The on-device trainer's jobs: scored on held-out seeds 2**62 + 1000 + k, identical
    policies from the local pool and from Ray."""
    ray = pytest.importorskip("ray")
    path = _write(tmp_path, TORCH_SWEEP)
    local = run_sweep(path, tmp_path / "local", backend="local", workers=2)
    assert [r["algo"] for r in local["rows"]] == ["ppo", "ppo", "a2c", "a2c"]
    assert all(r["eval_seeds"] == "2**62+1000..1001" for r in local["rows"])
    assert all((Path(r["out"]) / "policy.pt").is_file() for r in local["rows"])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = run_sweep(path, tmp_path / "ray", backend="ray")
    finally:
        ray.shutdown()
    digests = [r["policy_sha256"] for r in local["rows"]]
    assert [r["policy_sha256"] for r in remote["rows"]] == digests
    assert len(set(digests)) == 4
    assert [r["returns"] for r in remote["rows"]] == [r["returns"] for r in local["rows"]]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"trainer": "jax"}, "trainer must be one of ['sb3', 'torch']"),
        ({"algos": ["dqn"]}, "trainer torch trains"),
        ({"config": {"algos": {"ppo": {"n_stepz": 3}}}}, "unknown argument 'n_stepz'"),
        ({"eval_offset": -1}, "eval_offset must be an int >= 0"),
    ],
)
def test_torch_sweep_file__errors_before_any_job(change, message, tmp_path, capsys):
    path = _write(tmp_path, {**TORCH_SWEEP, **change})
    out = tmp_path / "out"
    assert main(["sweep", str(path), "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
