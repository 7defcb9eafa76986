"""Q-Mamba's optional behaviour head and the behaviour-regularised acting rules (the discrete-BCQ
support filter, sampling from behaviour x exp(Q / T)): the cross-entropy on a hand-computed
batch, the support set and the sampling distribution on hand-set heads, learning the head from
data, seeding, saving, and the errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from gymforge.agents.metabbo.agent import QMambaAgent, load_agent, save_model
from gymforge.agents.metabbo.qmamba import QMambaConfig, QMambaNet, behavior_loss
from gymforge.agents.metabbo.train import TrainConfig, fit


def _net_with_head(nvec=(4, 4), tau=0.0, obs_dim=3) -> QMambaNet:
    torch.manual_seed(0)
    config = QMambaConfig(
        obs_dim=obs_dim, action_nvec=nvec, d_state=4, bc_weight=1.0, support_threshold=tau
    )
    return QMambaNet(config)


def _set_constant_heads(net: QMambaNet, q_bins, behavior_probs) -> None:
    """Make the Q head output ``q_bins`` and the behaviour head ``log behavior_probs`` for every
    token, whatever the input."""
    with torch.no_grad():
        net.ff2.weight.zero_()
        net.ff2.bias.copy_(torch.tensor(q_bins, dtype=torch.float32))
        net.bc2.weight.zero_()
        net.bc2.bias.copy_(torch.log(torch.tensor(behavior_probs, dtype=torch.float32)))


def test_behavior_loss_on_a_hand_computed_batch():
    config = QMambaConfig(obs_dim=3, action_nvec=(4, 2), bc_weight=1.0)
    logits = torch.zeros(1, 2, 2, 4)
    logits[..., 0, 1] = math.log(3.0)  # dimension 0: p = (1/6, 1/2, 1/6, 1/6)
    logits[..., 1, 3] = 50.0  # dimension 1 has 2 bins: bin 3 does not exist, p = (1/2, 1/2)
    actions = torch.tensor([[[1, 0], [0, 1]]])
    valid = torch.tensor([[True, False]])  # the second step is padding
    loss = behavior_loss(logits, actions, valid, config)
    assert loss.item() == pytest.approx((math.log(2.0) + math.log(2.0)) / 2, rel=1e-6)
    valid[0, 1] = True  # now the step with a^0 = 0 (p = 1/6) counts as well
    expected = (math.log(2.0) + math.log(2.0) + math.log(6.0) + math.log(2.0)) / 4
    assert behavior_loss(logits, actions, valid, config).item() == pytest.approx(expected, rel=1e-6)


def test_supported_bins_are_those_within_the_threshold_of_the_most_likely():
    net = _net_with_head(nvec=(4, 3))
    _set_constant_heads(net, [0.0] * 4, [0.8, 0.4, 0.2, 0.1])
    tokens = torch.zeros(2, net.config.d_model)
    assert net.supported_bins(tokens, 0, 1.0).tolist() == [[True, False, False, False]] * 2
    assert net.supported_bins(tokens, 0, 0.5).tolist() == [[True, True, False, False]] * 2
    assert net.supported_bins(tokens, 0, 0.2).tolist() == [[True, True, True, False]] * 2
    _set_constant_heads(net, [0.0] * 4, [0.1, 0.2, 0.4, 0.8])  # bin 3 is absent in dimension 1
    assert net.supported_bins(tokens, 1, 0.5).tolist() == [[False, True, True, False]] * 2


def test_acting_takes_the_argmax_over_the_supported_bins_only():
    net = _net_with_head(nvec=(4, 4), tau=0.5)
    # Q prefers bin 3, then 1; the data mostly played bins 0 and 1
    _set_constant_heads(net, [0.5, 0.6, 0.0, 1.0], [0.45, 0.45, 0.05, 0.05])
    obs = torch.randn(5, 3)
    actions, _ = net.act(obs, net.initial_state(5))
    assert actions.tolist() == [[1, 1]] * 5
    plain, _ = net.act(obs, net.initial_state(5), support_threshold=0.0)
    assert plain.tolist() == [[3, 3]] * 5
    # the agent applies the config's threshold, or its own override
    assert QMambaAgent(net).act(obs.numpy()).tolist() == [[1, 1]] * 5
    assert QMambaAgent(net, support_threshold=0.0).act(obs.numpy()).tolist() == [[3, 3]] * 5


def _schedule_data(n=96, steps=6, seed=0):
    """Logged dimension 0 follows the time feature (bin 3 early, bin 0 late); dimension 1 is
    uniform on 4 bins; reward 0.2 for a^1 = 2, a bin the data never plays."""
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(n, steps, 3)).astype(np.float32)
    obs[..., 0] = np.linspace(0, 1, steps)
    actions = rng.integers(0, 4, size=(n, steps, 2))
    actions[..., 0] = np.where(obs[..., 0] < 0.5, 3, 0)
    rewards = (0.2 * (actions[..., 0] == 2)).astype(np.float32)
    return {"observations": obs, "actions": actions, "rewards": rewards}


def test_training_learns_the_data_support_and_acting_stays_on_it(tmp_path):
    torch.set_num_threads(1)
    data = _schedule_data()
    config = QMambaConfig(
        obs_dim=3, action_nvec=(4, 4), d_state=4, bc_weight=1.0, support_threshold=0.5
    )
    result = fit(data, config, TrainConfig(epochs=60, batch_size=32, lr=5e-3, seed=0))
    history = result.history
    assert "behavior" in history[0]
    assert history[-1]["behavior"] < 0.8 * history[0]["behavior"]
    # dimension 0 is deterministic given time (entropy 0), dimension 1 uniform (log 4):
    # the mean cross-entropy approaches log(4) / 2
    assert history[-1]["behavior"] == pytest.approx(math.log(4.0) / 2, abs=0.15)

    test = _schedule_data(n=8, seed=1)["observations"]
    agent = result.agent
    agent.reset()
    chosen = np.stack([agent.act(test[:, t]) for t in range(test.shape[1])], axis=1)
    logged = np.where(test[..., 0] < 0.5, 3, 0)
    assert (chosen[..., 0] == logged).all()

    path = save_model(agent.net, tmp_path / "model")
    record = json.loads((path / "config.json").read_text())
    assert record["config"]["bc_weight"] == 1.0 and record["config"]["support_threshold"] == 0.5
    loaded = load_agent(path)
    loaded.reset()
    again = np.stack([loaded.act(test[:, t]) for t in range(test.shape[1])], axis=1)
    assert np.array_equal(again, chosen)


def test_model_folders_without_the_new_fields_load_as_the_reference_network(tmp_path):
    torch.manual_seed(1)
    path = save_model(
        QMambaNet(QMambaConfig(obs_dim=3, action_nvec=(4, 4), d_state=4)), tmp_path / "m"
    )
    record = json.loads((path / "config.json").read_text())
    for key in ("bc_weight", "support_threshold"):
        del record["config"][key]  # as written before the behaviour head existed
    (path / "config.json").write_text(json.dumps(record))
    agent = load_agent(path)
    assert not agent.config.has_behavior_head and not hasattr(agent.net, "bc1")


def test_bad_support_settings_are_named():
    with pytest.raises(ValueError, match="needs a behaviour head"):
        QMambaConfig(support_threshold=0.5)
    with pytest.raises(ValueError, match="support_threshold must be"):
        QMambaConfig(bc_weight=1.0, support_threshold=1.5)
    with pytest.raises(ValueError, match="bc_weight must be"):
        QMambaConfig(bc_weight=-1.0)
    with pytest.raises(ValueError, match="temperature must be"):
        QMambaConfig(bc_weight=1.0, temperature=-0.1)
    with pytest.raises(ValueError, match=r"temperature=0\.1 needs a behaviour head"):
        QMambaConfig(temperature=0.1)
    headless = QMambaNet(QMambaConfig(obs_dim=3, action_nvec=(4, 4), d_state=4))
    with pytest.raises(ValueError, match="needs a behaviour head"):
        QMambaAgent(headless, support_threshold=0.3)
    with pytest.raises(ValueError, match="needs a behaviour head"):
        QMambaAgent(headless, temperature=0.3)
    with pytest.raises(ValueError, match="needs a behaviour head"):
        headless.act(torch.zeros(1, 3), headless.initial_state(1), support_threshold=0.3)
    with pytest.raises(ValueError, match="no behaviour head"):
        headless.behavior_logits(torch.zeros(1, headless.config.d_model))


def test_the_behaviour_head_knows_which_dimension_a_token_decides():
    # every step logs (2, 2, 0): tokens 1 and 2 both carry the previous bin 2 with the same
    # observation, so only the dimension's code tells "2 next" from "0 next"
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(64, 4, 3)).astype(np.float32)
    actions = np.broadcast_to(np.array([2, 2, 0]), (64, 4, 3)).copy()
    data = {"observations": obs, "actions": actions, "rewards": np.zeros((64, 4), np.float32)}
    config = QMambaConfig(obs_dim=3, action_nvec=(4, 4, 4), d_state=4, bc_weight=1.0)
    net = fit(data, config, TrainConfig(epochs=40, batch_size=32, seed=0)).agent.net
    tokens = net.tokens(torch.as_tensor(obs[:2]), torch.as_tensor(actions[:2]))
    tokens = tokens.reshape(2, 4, 3, -1)
    for dim, logged in enumerate((2, 2, 0)):
        assert net.supported_bins(tokens[:, :, dim], dim, 0.5).float().argmax(-1).eq(logged).all()
        assert net.supported_bins(tokens[:, :, dim], dim, 0.5).sum(-1).eq(1).all()
    # the sequence form (all dimensions at once) equals the per-dimension form
    together = net.behavior_logits(tokens)
    for dim in range(3):
        assert torch.equal(together[:, :, dim], net.behavior_logits(tokens[:, :, dim], dim))


def test_sampling_follows_behaviour_times_exp_q_over_temperature():
    net = _net_with_head(nvec=(4, 4))
    probs = torch.tensor([0.5, 0.25, 0.125, 0.125])
    q_bins = torch.tensor([0.0, 0.0, 0.0, 1.0])
    _set_constant_heads(net, q_bins.tolist(), probs.tolist())
    n = 40_000
    obs = torch.zeros(n, 3)
    g = torch.Generator().manual_seed(0)
    for temp in (1.0, 0.5):
        actions, _ = net.act(obs, net.initial_state(n), temperature=temp, generator=g)
        expected = probs * torch.exp(q_bins / temp)
        expected /= expected.sum()
        for dim in range(2):
            freq = torch.bincount(actions[:, dim], minlength=4) / n
            assert torch.allclose(freq, expected, atol=0.01), (temp, dim, freq, expected)
    # very low temperature: the greedy bin; with a support threshold that excludes it, the best
    # supported one; very high temperature: the behaviour policy
    actions, _ = net.act(obs[:50], net.initial_state(50), temperature=1e-4, generator=g)
    assert (actions == 3).all()
    actions, _ = net.act(
        obs[:50], net.initial_state(50), support_threshold=0.5, temperature=1e-4, generator=g
    )
    assert (actions <= 1).all()
    actions, _ = net.act(obs, net.initial_state(n), temperature=1e6, generator=g)
    assert torch.allclose(torch.bincount(actions[:, 0], minlength=4) / n, probs, atol=0.01)


def test_sampling_agent_is_reproducible_from_its_seed():
    net = _net_with_head(nvec=(16, 16))
    obs = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
    a = QMambaAgent(net, temperature=0.05, seed=3)
    b = QMambaAgent(net, temperature=0.05, seed=3)
    first = [a.act(obs) for _ in range(5)]
    assert all(np.array_equal(x, b.act(obs)) for x in first)
    a.reset(seed=3)
    assert all(np.array_equal(x, a.act(obs)) for x in first)
    a.reset(seed=4)
    assert not all(np.array_equal(x, a.act(obs)) for x in first)


def test_the_behaviour_head_leaves_the_q_network_training_unchanged():
    torch.set_num_threads(1)
    data = _schedule_data(n=32, steps=4)
    train = TrainConfig(epochs=3, batch_size=16, seed=0)
    plain = fit(data, QMambaConfig(obs_dim=3, action_nvec=(4, 4), d_state=4), train)
    with_head = fit(
        data, QMambaConfig(obs_dim=3, action_nvec=(4, 4), d_state=4, bc_weight=1.0), train
    )
    q_params = plain.agent.net.state_dict()
    for name, value in with_head.agent.net.state_dict().items():
        if name.startswith("bc"):
            continue
        assert torch.equal(value, q_params[name]), name
    for before, after in zip(plain.history, with_head.history, strict=True):
        assert before["td_last"] == after["td_last"] and "behavior" in after
