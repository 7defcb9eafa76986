"""``gymforge train MetaBBO-v0 --algo qmamba``: a short first run by default, the paper's epochs
one flag away, and a model folder written after every epoch, so a stopped run keeps its last one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import gymforge.agents.metabbo.train as train_module
from gymforge.agents.metabbo.agent import load_agent, load_model
from gymforge.agents.metabbo.train import CLI_EPOCHS, PAPER_EPOCHS, TrainConfig
from gymforge.cli import main

TINY = ["--dimension", "2", "--population-size", "6", "--max-generations", "4"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    """Four random episodes of four generations."""
    path = tmp_path_factory.mktemp("qmamba") / "data"
    argv = ["dataset", "collect", "MetaBBO-v0", "--agent", "random", "--n", "4", *TINY]
    assert main([*argv, "--out", str(path), "--quiet"]) == 0
    return path


def _train(dataset: Path, out: Path, *options: str) -> int:
    argv = ["train", "MetaBBO-v0", "--algo", "qmamba", "--dataset", str(dataset)]
    return main([*argv, "--out", str(out), "--batch-size", "2", "--d-state", "4", *options])


def test_the_library_keeps_the_papers_epochs_and_the_command_a_short_first_run():
    assert TrainConfig().epochs == PAPER_EPOCHS == 300 and CLI_EPOCHS < 10


def test_default_run_trains_cli_epochs_and_says_the_papers_figure_in_help(
    dataset, tmp_path, capsys
):
    assert _train(dataset, tmp_path / "m", "--quiet") == 0
    _, record = load_model(tmp_path / "m")
    assert len(record["history"]) == record["train"]["epochs"] == CLI_EPOCHS
    assert record["finished"] is True
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left
    with pytest.raises(SystemExit):
        main(["train", "MetaBBO-v0", "--algo", "qmamba", "--help"])
    assert "--epochs 300" in " ".join(capsys.readouterr().out.split())


def test_a_time_limit_without_epochs_runs_the_papers_epochs_within_it(dataset, tmp_path):
    """As the recorded reproduction runs (``--time-limit T`` and no ``--epochs``)."""
    assert _train(dataset, tmp_path / "m", "--time-limit", "0", "--quiet") == 0
    _, record = load_model(tmp_path / "m")
    assert record["train"]["epochs"] == PAPER_EPOCHS and len(record["history"]) == 1


def test_a_run_stopped_after_one_epoch_leaves_that_epochs_model(
    dataset, tmp_path, capsys, monkeypatch
):
    fit = train_module.fit

    def fit_stopped_after_the_first_epoch(*args: Any, after_epoch: Any, **kwargs: Any) -> Any:
        def stop(epoch: int, net: Any, history: list) -> None:
            after_epoch(epoch, net, history)
            raise KeyboardInterrupt  # as Ctrl-C arriving during the second epoch

        return fit(*args, after_epoch=stop, **kwargs)

    out = tmp_path / "m"
    assert _train(dataset, out, "--epochs", "2", "--quiet") == 0  # an earlier run's model
    monkeypatch.setattr(train_module, "fit", fit_stopped_after_the_first_epoch)
    assert _train(dataset, out, "--epochs", "2", "--seed", "1", "--quiet") == 130
    assert f"{out} holds the model after epoch 1 of 2" in capsys.readouterr().err
    _, record = load_model(out)
    assert len(record["history"]) == 1 and record["finished"] is False
    assert record["train"]["seed"] == 1  # this run's epoch, not the earlier run's model
    assert load_agent(out) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no staging left


def test_a_run_stopped_before_any_epoch_says_nothing_was_written(
    dataset, tmp_path, capsys, monkeypatch
):
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "fit", interrupted)
    assert _train(dataset, tmp_path / "m", "--quiet") == 130
    assert "no epoch was completed" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
