"""Learners and baselines: MDN/PMDN/BatchNorm layers, CNN and ViT, EWC, replay, the protocol, agent."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401
from gymforge.agents.confounders import (
    ConfounderCNN,
    ConfounderViT,
    TrainConfig,
    design_matrix,
    rmdn_norm,
    run_continual,
)
from gymforge.agents.confounders.online import rmdn_online_agent
from gymforge.baselines.confounders import (
    EWC,
    BatchNormLayer,
    MetadataNorm,
    PMDNLayer,
    Replay,
    batchnorm_norm,
    mdn_norm,
    pmdn_norm,
    pmdn_penalty,
    set_mdn_training_design,
)
from gymforge.envs.confounders import SyntheticConfig, SyntheticStream

F64 = torch.float64


def _data(n=64, d=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 2, (n,), generator=g)
    c = 3 + 2 * torch.rand(n, generator=g, dtype=F64) + y
    f = torch.randn(n, d, generator=g, dtype=F64) + c[:, None] * torch.arange(1.0, d + 1, dtype=F64)
    return f, design_matrix(y, c)


def test_mdn_on_the_whole_set_removes_the_least_squares_fit_of_the_confounder_and_intercept():
    f, x = _data()
    layer = MetadataNorm(5, momentum=1.0).to(F64)
    layer.set_training_design(x)
    out = layer(f, x)  # one batch = the whole training set, scale 1
    coef = torch.linalg.lstsq(x, f).solution
    torch.testing.assert_close(out, f - x[:, 1:] @ coef[1:])
    layer.eval()
    torch.testing.assert_close(layer(f[:10], x[:10]), out[:10])  # stored beta, any batch size


def test_mdn_scales_batch_coefficients_by_dataset_over_batch_size():
    f, x = _data(n=80)
    layer = MetadataNorm(5, momentum=0.5).to(F64)
    layer.set_training_design(x)
    out = layer(f[:20], x[:20])
    coef = 4.0 * torch.linalg.inv(x.T @ x) @ x[:20].T @ f[:20]
    torch.testing.assert_close(out, f[:20] - x[:20, 1:] @ coef[1:])
    torch.testing.assert_close(layer.beta, 0.5 * coef)
    with pytest.raises(RuntimeError, match="set_training_design"):
        MetadataNorm(5)(f, x)


def test_pmdn_penalty_is_the_mean_squared_residual_and_trains_beta():
    f, x = _data()
    layer = PMDNLayer(5).to(F64)
    out = layer(f, x)
    torch.testing.assert_close(layer.penalty, out.pow(2).mean())
    layer.penalty.backward()
    assert layer.beta.grad is not None and float(layer.beta.grad[1:].abs().sum()) > 0
    assert float(layer.beta.grad[0].abs().sum()) == 0.0  # the label column is never used


def test_batchnorm_layer_is_2d_for_conv_maps():
    assert isinstance(BatchNormLayer((4, 6, 6)).bn, torch.nn.BatchNorm2d)
    assert isinstance(BatchNormLayer((7,)).bn, torch.nn.BatchNorm1d)


@pytest.mark.parametrize(
    "norm",
    [None, rmdn_norm(), batchnorm_norm(), mdn_norm(), pmdn_norm()],
    ids=["none", "rmdn", "bn", "mdn", "pmdn"],
)
@pytest.mark.parametrize("arch", ["cnn", "vit"])
def test_models_train_a_step_with_every_norm(norm, arch):
    torch.manual_seed(0)
    model = (
        ConfounderCNN(norm, (2, 4), 8)
        if arch == "cnn"
        else ConfounderViT(norm, dim=8, heads=2, hidden=8)
    )
    x, c, y = SyntheticStream(SyntheticConfig(samples_per_group=8)).stage_data(0)
    design = design_matrix(y, c)
    set_mdn_training_design(model, design)
    logits, feats = model(x, design, return_features=True)
    assert logits.shape == (16,) and feats.shape == (16, 8)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y.float()) + pmdn_penalty(
        model
    )
    loss.backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


def test_reference_sized_cnn_has_the_reference_layer_sizes():
    model = ConfounderCNN(rmdn_norm())
    assert model.norm1.num_features == 16 * 28 * 28
    assert model.norm2.num_features == 32 * 24 * 24
    assert model.fc1.in_features == 18432 and model.norm3.num_features == 84


def test_ewc_penalty_is_zero_at_the_anchor_and_grows_away_from_it():
    torch.manual_seed(0)
    model = ConfounderCNN(None, (2, 2), 4)
    x, c, y = SyntheticStream(SyntheticConfig(samples_per_group=8)).stage_data(0)
    ewc = EWC(lam=10.0)
    assert ewc.penalty(model) is None
    ewc.after_stage(model, x, c, y)
    assert float(ewc.penalty(model).detach()) == 0.0
    assert all(float(f.min()) >= 0 for f in ewc.fisher.values())
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1)
    expected = 5.0 * sum(float((f * 0.01).sum()) for f in ewc.fisher.values())
    assert float(ewc.penalty(model).detach()) == pytest.approx(expected, rel=1e-4)


def test_replay_keeps_a_bounded_reservoir_and_appends_stored_samples():
    replay = Replay(capacity=10, replay_size=4, seed=0)
    x, c, y = torch.randn(32, 1, 2, 2), torch.randn(32, 1), torch.randint(0, 2, (32,))
    assert replay.augment(x[:8], c[:8], y[:8])[0].shape[0] == 8
    for start in range(0, 32, 8):
        replay.after_batch(x[start : start + 8], c[start : start + 8], y[start : start + 8])
    assert replay.x.shape[0] == 10 and replay.seen == 32
    xa, ca, ya = replay.augment(x[:8], c[:8], y[:8])
    assert xa.shape[0] == ca.shape[0] == ya.shape[0] == 12


def test_protocol_fills_the_accuracy_matrix():
    torch.manual_seed(0)
    train = SyntheticStream(SyntheticConfig(samples_per_group=16), shifts=(0.0, 0.5), batch_size=16)
    result = run_continual(
        ConfounderCNN(rmdn_norm(), (2, 2), 4),
        train,
        train.validation(),
        TrainConfig(epochs=1, lr=1e-3),
    )
    assert result.accuracy.shape == (2, 2) and result.dcor2.shape == (2, 2, 2)
    assert float(result.accuracy.min()) >= 0 and float(result.accuracy.max()) <= 1
    assert set(result.summary()) == {"average_accuracy", "bwt", "forgetting"}


def test_online_agent_learns_from_the_revealed_labels():
    env = gym.make("ConfounderStream-v0", samples_per_group=16, batch_size=16)
    agent = rmdn_online_agent(env)
    agent.reset(seed=0)
    obs, info = env.reset(seed=0)
    before = [p.clone() for p in agent.model.parameters()]
    for _ in range(3):
        action = agent.act(obs, info)
        assert action.shape == (16,) and action.dtype == np.float32
        assert env.action_space.contains(action)
        obs, _, _, _, info = env.step(action)
    assert any(not torch.equal(a, b) for a, b in zip(before, agent.model.parameters(), strict=True))
    assert not torch.equal(agent.model.norm3.P, torch.eye(3) / 0.01)  # R-MDN updated online
