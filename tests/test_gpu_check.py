"""The GPU check's CPU dry run: every family runs through it and its files are written."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest


def test_gpu_check_dry_run_on_the_cpu(tmp_path: Path) -> None:
    module = importlib.import_module("benchmarks.gpu_check")
    assert module.main(["--device", "cpu", "--quick", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "gpu_check.json").read_text())
    assert [row["id"] for row in result["ids"]] == list(module.IDS)
    for row in result["ids"]:
        assert row["batch_independence"] == "same"
        assert all(v["equal_fraction"] == 1.0 for v in row["agreement"].values())  # CPU vs CPU
        assert list(row["steps_per_s"]) == [str(b) for b in module.QUICK["batches"]]
    qmamba = result["qmamba"]
    assert qmamba["seconds_per_batch"] > 0 and qmamba["horizon"] == 20  # the quick shapes
    # 10,000 trajectories in batches of 64: 157 minibatches per epoch, 300 epochs
    assert qmamba["seconds_per_paper_epoch"] == qmamba["seconds_per_batch"] * 157
    assert (
        abs(qmamba["hours_for_paper_epochs"] * 3600 - 300 * qmamba["seconds_per_paper_epoch"])
        < 1e-6
    )
    assert "| LineFlow-WaitingTime-v0 |" in (tmp_path / "gpu_check.md").read_text()


def test_gpu_check_refuses_a_device_this_torch_cannot_use(tmp_path: Path, capsys) -> None:
    import torch

    module = importlib.import_module("benchmarks.gpu_check")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present here: the refusal cannot be shown")
    assert module.main(["--device", "cuda", "--quick", "--out", str(tmp_path / "x")]) == 2
    assert "no usable CUDA device" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()  # refused before any work
