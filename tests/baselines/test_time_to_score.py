"""The time-to-score benchmark's arithmetic: the first evaluation at the threshold, medians with
seeds that never reach it, run reuse that ignores the order of a command's options, and
recorded commands without this machine's paths."""

from __future__ import annotations

from pathlib import Path

from benchmarks.lineflow.time_to_score import (
    median,
    options,
    shown_command,
    time_to,
    train_command,
)


def test_time_to_takes_the_first_evaluation_at_or_above_the_threshold():
    rows = [
        {"timesteps": 100, "mean_return": 140.0, "train_s": 10.0},
        {"timesteps": 200, "mean_return": 149.9, "train_s": 20.0},
        {"timesteps": 300, "mean_return": 155.0, "train_s": 30.0},
    ]
    assert time_to(rows, 149.9) == {"steps": 200, "train_s": 20.0, "return": 149.9}
    assert time_to(rows, 160.0)["steps"] is None


def test_median_counts_never_as_infinite():
    assert median([100.0, 300.0, None]) == 300.0
    assert median([100.0, None]) is None
    assert median([None, None]) is None


def test_commands_compare_whatever_the_order_of_their_options(tmp_path: Path):
    recipe = tmp_path / "r.yaml"
    mine = train_command("LineFlow-WaitingTime-v0", recipe, 7, 1000, tmp_path / "run")
    recorded = [
        "gymforge", "train", "LineFlow-WaitingTime-v0", "--algo", "ppo", "--backend", "torch",
        "--steps", "1000", "--seed", "7", "--config", str(recipe), "--out", str(tmp_path / "run"),
        "--threads", "1", "--no-progress-bar",
    ]  # fmt: skip
    assert options(recorded) == options(mine)
    assert options([*recorded[:10], "8", *recorded[11:]]) != options(mine)


def test_recorded_commands_name_paths_as_a_reader_runs_them():
    root = Path(__file__).resolve().parents[2]
    recipe = root / "benchmarks/results/time_to_score_recipes/reads.yaml"
    out = Path("runs/tts/reads-s100")
    job = {"command": train_command("LineFlow-WaitingTime-v0", recipe, 100, 1000, out), "out": out}
    shown = shown_command(job)
    assert shown == (
        "gymforge train LineFlow-WaitingTime-v0 --algo ppo --backend torch --steps 1000 "
        "--seed 100 --config benchmarks/results/time_to_score_recipes/reads.yaml --threads 1 "
        "--out runs/tts/reads-s100 --no-progress-bar"
    )
