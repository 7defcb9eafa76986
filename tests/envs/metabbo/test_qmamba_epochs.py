"""Q-Mamba's validation curve over epochs: which folders are read, how rows pair with random and
the expert, and when an earlier row is reused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from benchmarks.metabbo import qmamba_epochs as epochs
from gymforge.agents.metabbo.agent import save_model
from gymforge.agents.metabbo.qmamba import QMambaConfig, QMambaNet

VALIDATION = epochs.load_protocol()["validation"]
N_RUNS = len(VALIDATION["function_ids"]) * len(VALIDATION["seeds"])


def _model(folder: Path, n_epochs: int, seed: int = 0, env_id: str = "MetaBBO-v0") -> Path:
    torch.manual_seed(seed)
    net = QMambaNet(QMambaConfig(obs_dim=9, action_nvec=(16, 16, 16), d_state=4))
    history = [{"loss": 1.0 / (e + 1)} for e in range(n_epochs)]
    return save_model(net, folder, extra={"env_id": env_id, "history": history, "seconds": 1.0})


@pytest.fixture
def fake_evaluation(monkeypatch):
    """Known per-run values: random scores (0.9, -1) on every run, the expert (0.92, -2), and a
    Q-Mamba checkpoint of epoch E (0.9 + 0.001 E, -1 - 0.1 E); the rows evaluated are recorded
    (the references are evaluated first, random then the expert)."""
    calls: list[str] = []
    checkpoint_epoch: dict[int, int] = {}  # id of a loaded agent -> its folder's epoch
    real_load_agent = epochs.load_agent

    def load_agent(model):
        agent = real_load_agent(model)
        checkpoint_epoch[id(agent)] = int(Path(model).name.removeprefix("epoch_"))
        return agent

    def fake(factory, preset, validation):
        assert preset == "alg0" and validation == VALIDATION
        if id(factory) in checkpoint_epoch:
            e = checkpoint_epoch[id(factory)]
            calls.append(f"epoch {e}")
            perf, err = 0.9 + 0.001 * e, -1.0 - 0.1 * e
        else:
            calls.append("expert" if "random" in calls else "random")
            perf, err = (0.92, -2.0) if calls[-1] == "expert" else (0.9, -1.0)
        return {"perf": np.full(N_RUNS, perf), "log10_error": np.full(N_RUNS, err)}

    monkeypatch.setattr(epochs, "validation_runs", fake)
    monkeypatch.setattr(epochs, "load_agent", load_agent)
    return calls


def test_checkpoint_folders_are_read_in_epoch_order_and_bad_paths_refused(tmp_path):
    ckpt = tmp_path / "m.checkpoints"
    for e in (4, 2):
        _model(ckpt / f"epoch_{e:03d}", e)
    final = _model(tmp_path / "m", 5)
    assert epochs.model_folders([ckpt, final]) == [ckpt / "epoch_002", ckpt / "epoch_004", final]
    with pytest.raises(SystemExit, match="neither a Q-Mamba model folder"):
        epochs.model_folders([tmp_path / "missing"])


def test_rows_pair_with_random_and_the_expert_and_unchanged_models_are_reused(
    tmp_path, fake_evaluation
):
    ckpt = tmp_path / "m.checkpoints"
    models = [_model(ckpt / f"epoch_{e:03d}", e) for e in (2, 4)]
    result = epochs.study(models, "alg0", None)
    assert fake_evaluation == ["random", "expert", "epoch 2", "epoch 4"]
    row = result["rows"][str(models[1])]
    assert row["epochs"] == 4 and len(row["runs"]["perf"]) == N_RUNS
    assert row["vs_random"]["perf"]["mean"] == pytest.approx(0.004)
    assert row["vs_random"]["log10_error"]["mean"] == pytest.approx(-0.4)
    assert row["vs_expert"]["perf"]["mean"] == pytest.approx(-0.016)
    assert row["vs_expert"]["log10_error"]["mean"] == pytest.approx(0.6)
    assert "vs_random" not in result["rows"]["random"]
    assert result["rows"]["expert"]["vs_random"]["perf"]["mean"] == pytest.approx(0.02)
    assert "| 4 |" in epochs.render_md({**result, "command": "c", "measured_at": "t"})

    # again with a third checkpoint and one model file changed: only those two are evaluated
    fake_evaluation.clear()
    models.append(_model(ckpt / "epoch_006", 6))
    _model(ckpt / "epoch_002", 2, seed=1)
    again = epochs.study(models, "alg0", result)
    assert fake_evaluation == ["epoch 2", "epoch 6"]
    assert again["rows"][str(models[1])]["runs"] == row["runs"]
    assert again["rows"][str(models[2])]["vs_random"]["perf"]["mean"] == pytest.approx(0.006)


def test_a_model_of_another_preset_is_refused_before_any_evaluation(tmp_path, fake_evaluation):
    other = _model(tmp_path / "epoch_001", 1, env_id="MetaBBO-Alg2-v0")
    with pytest.raises(SystemExit, match="a model of MetaBBO-Alg2-v0, not MetaBBO-v0"):
        epochs.study([_model(tmp_path / "epoch_002", 2), other], "alg0", None)
    assert fake_evaluation == []
