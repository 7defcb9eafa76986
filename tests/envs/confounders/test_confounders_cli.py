"""``gymforge confounders continual`` and ``gymforge rollout ConfounderStream-v0 --agent rmdn``."""

from __future__ import annotations

import json

import pytest

from gymforge.cli import main


def test_continual_command_writes_the_accuracy_matrix(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["confounders", "continual", "--samples-per-group", "8", "--batch-size", "8"]
    argv += ["--epochs", "1", "--schedule", "linear", "--stages", "2", "--channels", "2", "2"]
    argv += ["--hidden", "4", "--strategy", "replay", "--out", str(out)]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    assert data["shifts"] == [0.0, 0.5]
    assert len(data["accuracy_matrix"]) == 2 and len(data["dcor2_matrix"][0][0]) == 2
    assert {"average_accuracy", "bwt", "forgetting"} <= set(data)
    assert "dCor² per stage" in capsys.readouterr().out


@pytest.mark.slow
def test_rollout_with_the_online_rmdn_agent(capsys):
    assert main(["rollout", "ConfounderStream-v0", "--agent", "rmdn", "--episodes", "1"]) == 0
    assert "mean return" in capsys.readouterr().out
