"""Limits checked before work: a setting that cannot fit is refused by name, quickly, before
anything is allocated, trained or written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import gymforge  # noqa: F401 - registers the ids
from gymforge.baselines.sb3.config import load_config
from gymforge.baselines.sb3.sweep import JOB_FILE, RESULT_FILE, expand_jobs, load_sweep, run_sweep
from gymforge.core.limits import max_workers

SWEEP = {
    "version": 1,
    "tasks": ["Probe-Match-v0"],
    "algos": ["ppo"],
    "seeds": [0],
    "steps": 64,
    "config": {"n_envs": 2, "eval": {"every": 0},
               "algos": {"ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1}}},
    "eval_episodes": 1,
}  # fmt: skip


def _write(tmp_path: Path, data: dict, name: str = "sweep.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def _laughs(levels: int = 9, width: int = 9) -> str:
    """A "billion laughs" YAML document: each anchor lists the previous one ``width`` times."""
    lines = ["version: 1", "tasks: [Probe-Match-v0]", "algos: [ppo]", "seeds: [0]", "steps: 1"]
    lines.append("lol0: &l0 [" + ", ".join(["lol"] * width) + "]")
    for level in range(1, levels):
        lines.append(f"lol{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    lines.append(f"grid: {{learning_rate: *l{levels - 1}}}")
    return "\n".join(lines) + "\n"


def test_a_yaml_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_laughs())  # 9**9 (387 million) leaves in about 0.5 kB, 80 aliases
    assert path.stat().st_size < 1500
    with pytest.raises(ValueError, match=r"bomb\.yaml: not valid YAML: .*expand to more than"):
        load_sweep(path)
    with pytest.raises(ValueError, match=r"bomb\.yaml: not valid YAML: .*expand to more than"):
        load_config("Probe-Match-v0", path)  # the config loader reads through the same helper


def test_yaml_with_too_many_aliases_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"
    path.write_text("version: 1\nx: &x 1\nys: [" + ", ".join(["*x"] * 101) + "]\n")
    with pytest.raises(ValueError, match=r"more than 100 aliases"):
        load_config("Probe-Match-v0", path)


def test_a_huge_grid_is_refused_from_its_size_naming_the_fields(tmp_path: Path) -> None:
    grid = {"learning_rate": [1e-4 * k for k in range(1, 101)], "gamma": [0.9] * 100,
            "ent_coef": [0.0] * 100}  # fmt: skip
    path = _write(tmp_path, {**SWEEP, "grid": grid, "seeds": list(range(10))})
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"10,000,000 jobs \(tasks 1 x algos 1 x seeds 10 x "
                       r"grid\.ent_coef 100 .*more than the 10,000"):  # fmt: skip
        run_sweep(path, out)
    assert not out.exists()


def test_sweep_workers_are_capped(tmp_path: Path) -> None:
    path = _write(tmp_path, SWEEP)
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=rf"--workers must be an int in \[1, {max_workers()}\]"):
        run_sweep(path, out, workers=10**9)
    assert not out.exists()


@pytest.mark.parametrize(
    ("algo_kwargs", "n_envs", "field"),
    [
        ({"n_steps": 1, "batch_size": 2}, 1, r"algos\.ppo\.n_steps x n_envs must be > 1"),
        ({"n_steps": 32, "batch_size": 1}, 2, r"algos\.ppo\.batch_size must be > 1"),
    ],
)
def test_sweep_refuses_what_sb3_would_assert_naming_the_job(
    tmp_path: Path, algo_kwargs: dict, n_envs: int, field: str
) -> None:
    config = {"n_envs": n_envs, "eval": {"every": 0}, "algos": {"ppo": algo_kwargs}}
    path = _write(tmp_path, {**SWEEP, "config": config})
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=rf"sweep job 0000-Probe-Match-v0-ppo-s0: .*{field}"):
        run_sweep(path, out)
    assert not out.exists()


def _finished(job: dict, settings: dict | None) -> None:
    """A finished job's folder as an earlier run left it (``settings`` None: an older run, with
    no job file)."""
    folder = Path(job["out"])
    folder.mkdir(parents=True)
    row = {**{k: job[k] for k in ("job", "task", "algo", "seed", "hyperparameters", "steps")},
           "mean_return": 1.0, "std_return": 0.0, "returns": [1.0], "eval_seeds": "",
           "policy_sha256": "0" * 64, "train_s": 0.0, "out": job["out"]}  # fmt: skip
    (folder / RESULT_FILE).write_text(json.dumps(row))
    if settings is not None:
        (folder / JOB_FILE).write_text(json.dumps(settings))


@pytest.mark.parametrize("with_job_file", [True, False])
def test_a_rerun_into_an_out_of_other_settings_is_refused(
    tmp_path: Path, with_job_file: bool
) -> None:
    out = tmp_path / "out"
    old = {**SWEEP, "grid": {"learning_rate": [0.001]}}
    (old_job,) = expand_jobs(load_sweep(_write(tmp_path, old, "old.yaml")), out)
    settings = {k: v for k, v in old_job.items() if k not in ("job", "out")}
    _finished(old_job, settings if with_job_file else None)
    new = _write(tmp_path, {**SWEEP, "grid": {"learning_rate": [0.01]}}, "new.yaml")
    with pytest.raises(
        ValueError,
        match=r"sweep job 0000-Probe-Match-v0-ppo-s0: .*out/jobs/0000-Probe-Match-v0-ppo-s0 "
        r"holds the result of other settings \(changed: hyperparameters.*use a new --out",
    ):
        run_sweep(new, out)
    assert not (out / "results.json").exists()


@pytest.mark.parametrize(
    ("env_id", "num_envs"),
    [("LineFlow-WaitingTime-v0", 2_000_000_000), ("MetaBBO-v1", 10**9), ("Probe-Match-v0", 10**12)],
)
def test_num_envs_beyond_memory_is_refused_before_allocating(env_id: str, num_envs: int) -> None:
    with pytest.raises(ValueError, match=rf"num_envs={num_envs:,} needs about .* per instance\), "
                       r"more than the .* of memory available"):  # fmt: skip
        gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="vector_entry_point")


def test_num_workers_beyond_the_cpus_is_refused() -> None:
    too_many = max_workers() + 1
    with pytest.raises(ValueError, match=rf"num_workers must be an int in \[1, {max_workers()}\]"):
        gym.make_vec("Probe-Match-v0", num_envs=too_many, vectorization_mode="vector_entry_point",
                     num_workers=too_many)  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        (["OffCMAB-Cascade-v0", "--agent", "uniform"], r"n \(--n\)=1,000,000,000,000 needs about"),
        (["MetaBBO-v1", "--agent", "mix"], r"episodes \(--n\)=1,000,000,000,000 needs about"),
    ],
)
def test_dataset_collect_refuses_a_count_beyond_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], field: str
) -> None:
    from gymforge.cli import main

    out = tmp_path / "data"
    assert main(["dataset", "collect", *argv, "--n", str(10**12), "--out", str(out)]) == 2
    assert re.search(field + r".*of memory available", capsys.readouterr().err)
    assert not out.exists() and list(tmp_path.iterdir()) == []
