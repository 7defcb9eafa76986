"""The averaged Q-Mamba model: the mean of a run's late checkpoints, element by element."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from benchmarks.metabbo import qmamba_average as average_script
from gymforge.agents.metabbo.agent import WEIGHTS_FILE, load_model, save_model
from gymforge.agents.metabbo.qmamba import QMambaConfig, QMambaNet

CONFIG = QMambaConfig(obs_dim=9, action_nvec=(16, 16, 16), d_state=4)


def _checkpoint(folder: Path, seed: int, config: QMambaConfig = CONFIG) -> Path:
    torch.manual_seed(seed)
    net = QMambaNet(config)
    extra = {"env_id": "MetaBBO-v0", "dataset": {"path": "data/alg0"}, "history": [{}] * seed}
    return save_model(net, folder, extra=extra)


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return torch.load(folder / WEIGHTS_FILE, weights_only=True)


def test_averages_the_second_half_of_the_checkpoints(tmp_path: Path) -> None:
    run = tmp_path / "run.checkpoints"
    for epoch in (2, 4, 6, 8):
        _checkpoint(run / f"epoch_{epoch:03d}", seed=epoch)
    out = tmp_path / "average"
    assert average_script.main([str(run), "--out", str(out)]) == 0

    # epochs >= 4 (half of the last, 8): three checkpoints, each weight their mean
    states = [_weights(run / f"epoch_{e:03d}") for e in (4, 6, 8)]
    averaged = _weights(out)
    assert set(averaged) == set(states[0])
    for name, value in averaged.items():
        if value.is_floating_point():
            expected = (states[0][name].double() + states[1][name] + states[2][name]) / 3
            torch.testing.assert_close(value, expected.to(value.dtype), rtol=1e-6, atol=1e-7)
        else:
            assert torch.equal(value, states[2][name])

    assert not torch.equal(averaged["ff1.weight"], states[2]["ff1.weight"])
    _, record = load_model(out)  # loads as any model folder, with its provenance
    assert record["history"] == [{}] * 8
    assert [r["checkpoint"] for r in record["averaged_from"]] == [
        "epoch_004",
        "epoch_006",
        "epoch_008",
    ]
    assert record["average_command"].endswith(f"{run} --out {out}")
    assert json.loads((out / "config.json").read_text())["env_id"] == "MetaBBO-v0"


def test_refuses_checkpoints_of_different_networks(tmp_path: Path) -> None:
    run = tmp_path / "run.checkpoints"
    _checkpoint(run / "epoch_002", seed=1)
    _checkpoint(run / "epoch_004", seed=2, config=QMambaConfig(obs_dim=9, d_state=8))
    with pytest.raises(SystemExit, match="'config' differs"):
        average_script.main([str(run), "--out", str(tmp_path / "average"), "--from-epoch", "1"])
    assert not (tmp_path / "average").exists()


def test_refuses_a_folder_without_checkpoints(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="nor a checkpoints folder"):
        average_script.main([str(tmp_path), "--out", str(tmp_path / "average")])
    model = _checkpoint(tmp_path / "model", seed=1)  # one model, not a run's checkpoints
    with pytest.raises(SystemExit, match="no epoch_K model folders"):
        average_script.main([str(model), "--out", str(tmp_path / "average")])
    assert not (tmp_path / "average").exists()
