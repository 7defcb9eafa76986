"""Q-Mamba: the selective-scan block (recurrent == sequence), decomposed greedy action choice,
the loss on a hand-computed batch, training, saving and the agent protocol."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gymforge.agents.metabbo.agent import QMambaAgent, load_agent, load_model, save_model
from gymforge.agents.metabbo.mamba import MambaBlock, selective_scan
from gymforge.agents.metabbo.qmamba import (
    QMambaConfig,
    QMambaNet,
    autoregressive_decode,
    qmamba_loss,
)
from gymforge.agents.metabbo.train import TrainConfig, fit, trajectory_arrays


def _naive_scan(dt, a, b, c, u, h0):
    """The recurrence written out with autograd, token by token."""
    h, ys = h0, []
    for t in range(dt.shape[1]):
        h = (
            torch.exp(dt[:, t, :, None] * a) * h
            + (dt[:, t] * u[:, t])[..., None] * b[:, t, None, :]
        )
        ys.append((h * c[:, t, None, :]).sum(-1))
    return torch.stack(ys, 1), h


def _scan_inputs(batch=2, length=6, d_inner=3, d_state=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    kw = {"dtype": torch.float64, "generator": g}
    tensors = (
        torch.rand(batch, length, d_inner, **kw),
        -torch.rand(d_inner, d_state, **kw) * 3,
        torch.randn(batch, length, d_state, **kw),
        torch.randn(batch, length, d_state, **kw),
        torch.randn(batch, length, d_inner, **kw),
        torch.randn(batch, d_inner, d_state, **kw),
    )
    return tuple(t.requires_grad_() for t in tensors)


def test_selective_scan_matches_the_written_out_recurrence_and_its_gradient():
    inputs = _scan_inputs()
    y, h = selective_scan(*inputs)
    y_ref, h_ref = _naive_scan(*inputs)
    torch.testing.assert_close(y, y_ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(h, h_ref, rtol=0, atol=1e-12)
    assert torch.autograd.gradcheck(selective_scan, inputs)


def test_selective_scan_rejects_disagreeing_shapes():
    dt, a, b, c, u, h0 = _scan_inputs()
    with pytest.raises(ValueError, match="b must be"):
        selective_scan(dt, a, b[:, :-1], c, u, h0)


def test_mamba_recurrent_steps_reproduce_the_sequence_forward_float64():
    torch.manual_seed(0)
    block = MambaBlock(14, d_state=8, d_conv=4, expand=2).double()
    x = torch.randn(3, 37, 14, dtype=torch.float64)
    y, final = block(x)
    state = block.initial_state(3, dtype=torch.float64)
    steps = []
    for t in range(x.shape[1]):
        out, state = block.step(x[:, t], state)
        steps.append(out)
    assert (torch.stack(steps, 1) - y).abs().max() <= 1e-10
    assert (state.ssm - final.ssm).abs().max() <= 1e-10
    assert (state.conv - final.conv).abs().max() <= 1e-10
    # the sequence forward can also be split, carrying the state
    y1, s1 = block(x[:, :20])
    y2, _ = block(x[:, 20:], s1)
    assert (torch.cat([y1, y2], 1) - y).abs().max() <= 1e-10


def test_qnet_recurrent_tokens_reproduce_the_sequence_q_values_float64():
    torch.manual_seed(1)
    config = QMambaConfig(obs_dim=9, action_nvec=(16, 16, 16), d_state=8)
    net = QMambaNet(config).double()
    obs = torch.randn(2, 7, 9, dtype=torch.float64)
    actions = torch.randint(0, 16, (2, 7, 3))
    q, _ = net(obs, actions)
    state = net.block.initial_state(2, dtype=torch.float64)
    for t in range(7):
        previous = torch.full((2,), -1)
        for i in range(3):
            q_step, state = net.step_token(obs[:, t], previous, state)
            assert (q_step - q[:, t, i]).abs().max() <= 1e-10
            previous = actions[:, t, i]


def test_autoregressive_decode_follows_the_decomposition_on_a_hand_set_table():
    # Q_1 = [0.5, 0.4, 0.0]; Q_2 depends on a^1: after 0 -> [0.1, 0.2, 0.0], after 1 -> [0.9, ...]
    # Q_3 (only 2 bins exist) after a^2 = 1 -> [0.3, 0.7, 9.0]: bin 2 does not exist.
    table = {
        (0, -1): [0.5, 0.4, 0.0],
        (1, 0): [0.1, 0.2, 0.0],
        (1, 1): [0.9, 0.0, 0.0],
        (2, 1): [0.3, 0.7, 9.0],
        (2, 0): [0.8, 0.1, 0.0],
    }
    calls = []

    def q_of(dim, previous):
        calls.append((dim, previous.tolist()))
        return torch.tensor([table[(dim, int(p))] for p in previous])

    chosen = autoregressive_decode(q_of, (3, 3, 2), batch=1)
    assert chosen.tolist() == [[0, 1, 1]]
    assert calls == [(0, [-1]), (1, [0]), (2, [1])]


def test_net_act_picks_the_argmax_of_each_token_given_its_own_previous_choices():
    torch.manual_seed(2)
    net = QMambaNet(QMambaConfig(obs_dim=9, action_nvec=(16, 4, 16), d_state=8)).double()
    obs = torch.randn(5, 4, 9, dtype=torch.float64)
    state = net.initial_state(5)
    state.conv, state.ssm = state.conv.double(), state.ssm.double()
    chosen = []
    for t in range(4):
        a, state = net.act(obs[:, t], state)
        chosen.append(a)
    actions = torch.stack(chosen, 1)  # [5, 4, 3]
    q, _ = net(obs, actions)
    assert (actions[..., 1] < 4).all()
    q = q.masked_fill(~net.valid_bins, -torch.inf)
    assert torch.equal(q.argmax(-1), actions)


def test_loss_on_a_hand_computed_batch():
    config = QMambaConfig(
        obs_dim=1, action_nvec=(3, 3), gamma=0.5, beta=10.0, lam=1.0, target_range=None
    )
    q = torch.tensor([[[[1.0, 2, 3], [0, 1, 0]], [[2, 0, 0], [1, 1, 4]]]], requires_grad=True)
    actions = torch.tensor([[[0, 2], [1, 2]]])
    rewards = torch.tensor([[1.0, 2.0]])
    valid = torch.ones(1, 2, dtype=torch.bool)
    # td_inner: (Q_1(a1) - max Q_2)^2 per step: (1 - 1)^2, (0 - 4)^2 -> mean 8
    # td_last: step 0 target 1 + 0.5 * max Q_1(step 1) = 2, pred 0 -> 4; step 1 (end) target 2,
    #          pred 4 -> 4; mean 4
    # conservative: non-taken bins 2,3 | 0,1 | 2,0 | 1,1 -> squares sum 20 over 8 -> 2.5
    out = qmamba_loss(q, actions, rewards, valid, config)
    assert out["td_inner"].item() == pytest.approx(8.0)
    assert out["td_last"].item() == pytest.approx(4.0)
    assert out["conservative"].item() == pytest.approx(2.5)
    assert out["loss"].item() == pytest.approx(0.5 * (8 + 10 * 4) + 0.5 * 2.5)
    out["loss"].backward()
    # targets are detached: only taken bins get TD gradient; d/dq[0,1,1,2] = 0.5*10*2*(4-2)/2 = 10
    assert q.grad[0, 1, 1, 2].item() == pytest.approx(10.0)
    # a non-taken bin gets only the conservative gradient 0.5 * 2 * q / 8
    assert q.grad[0, 0, 0, 2].item() == pytest.approx(0.5 * 2 * 3 / 8)

    # padding after the episode's end changes nothing
    q_pad = torch.cat([q.detach(), torch.full((1, 1, 2, 3), 7.0)], dim=1)
    out_pad = qmamba_loss(
        q_pad,
        torch.cat([actions, torch.tensor([[[1, 1]]])], dim=1),
        torch.tensor([[1.0, 2.0, 5.0]]),
        torch.tensor([[True, True, False]]),
        config,
    )
    assert out_pad["loss"].item() == pytest.approx(out["loss"].item())

    # with targets clipped to [0, 1]: max Q̂ = 3, 1 | 2, 4 become 1, 1 | 1, 1
    # td_inner: (1 - 1)^2, (0 - 1)^2 -> 0.5; td_last: (0 - (1 + 0.5 * 1))^2 = 2.25, (4 - 2)^2 = 4
    clipped = qmamba_loss(
        q.detach(), actions, rewards, valid, QMambaConfig(obs_dim=1, action_nvec=(3, 3), gamma=0.5)
    )
    assert clipped["td_inner"].item() == pytest.approx(0.5)
    assert clipped["td_last"].item() == pytest.approx(3.125)
    assert clipped["loss"].item() == pytest.approx(0.5 * (0.5 + 10 * 3.125) + 0.5 * 2.5)


def _bandit_data(n=96, steps=4, seed=0):
    """Random logged actions; reward 0.2 for a^1 = 2 plus 0.2 for a^2 = 1 (4 bins each)."""
    rng = np.random.default_rng(seed)
    actions = rng.integers(0, 4, size=(n, steps, 2))
    rewards = 0.2 * (actions[..., 0] == 2) + 0.2 * (actions[..., 1] == 1)
    obs = rng.normal(size=(n, steps, 3)).astype(np.float32)
    obs[..., 0] = np.linspace(0, 1, steps)  # a time feature
    return {"observations": obs, "actions": actions, "rewards": rewards.astype(np.float32)}


def test_training_reduces_the_loss_and_learns_the_rewarded_bins(tmp_path):
    torch.set_num_threads(1)
    data = _bandit_data()
    config = QMambaConfig(obs_dim=3, action_nvec=(4, 4), d_state=4, gamma=0.5, beta=10.0)
    result = fit(data, config, TrainConfig(epochs=60, batch_size=32, lr=5e-3, seed=0))
    first, last = result.history[0]["loss"], result.history[-1]["loss"]
    assert last < 0.5 * first
    agent = result.agent
    obs = _bandit_data(n=8, seed=1)["observations"][:, 0]
    agent.reset()
    actions = agent.act(obs)
    assert actions.shape == (8, 2)
    assert (actions == np.array([2, 1])).all(axis=1).mean() >= 0.75

    # save / load round trip: same parameters, same actions
    path = save_model(agent.net, tmp_path / "model", extra={"note": "test"})
    net, record = load_model(path)
    assert record["note"] == "test" and record["config"]["action_nvec"] == [4, 4]
    loaded = load_agent(path)
    agent.reset()
    assert np.array_equal(loaded.act(obs), agent.act(obs))
    for (name, p), q in zip(agent.net.state_dict().items(), net.state_dict().values(), strict=True):
        assert torch.equal(p, q), name


def test_after_epoch_sees_each_epochs_network_and_changes_nothing():
    torch.set_num_threads(1)
    data = _bandit_data(n=32)
    config = QMambaConfig(obs_dim=3, action_nvec=(4, 4), d_state=4, gamma=0.5)
    seen: dict[int, tuple[dict, int]] = {}

    def keep(epoch, net, history):
        seen[epoch] = ({k: v.clone() for k, v in net.state_dict().items()}, len(history))

    four = fit(data, config, TrainConfig(epochs=4, batch_size=8, seed=3), after_epoch=keep)
    assert sorted(seen) == [0, 1, 2, 3] and [seen[e][1] for e in range(4)] == [1, 2, 3, 4]
    plain = fit(data, config, TrainConfig(epochs=4, batch_size=8, seed=3))
    two = fit(data, config, TrainConfig(epochs=2, batch_size=8, seed=3))
    assert four.history == plain.history
    for name, value in plain.agent.net.state_dict().items():
        assert torch.equal(four.agent.net.state_dict()[name], value), name
        assert torch.equal(seen[3][0][name], value), name
        assert torch.equal(seen[1][0][name], two.agent.net.state_dict()[name]), name
    assert not all(torch.equal(seen[1][0][n], v) for n, v in plain.agent.net.state_dict().items())


def test_agent_restarts_instances_flagged_by_same_step_autoreset():
    torch.manual_seed(3)
    agent = QMambaAgent(QMambaNet(QMambaConfig(obs_dim=4, action_nvec=(16, 16), d_state=4)))
    rng = np.random.default_rng(0)
    history = rng.normal(size=(6, 2, 4)).astype(np.float32)
    fresh = rng.normal(size=(2, 4)).astype(np.float32)
    agent.reset()
    for obs in history:
        agent.act(obs)
    after = agent.act(fresh, {"_final_obs": np.array([True, False])})
    agent.reset()
    restarted = agent.act(fresh)
    assert np.array_equal(after[0], restarted[0])  # instance 0 began a new episode
    single = QMambaAgent(agent.net)
    assert single.act(fresh[0]).shape == (2,)
    with pytest.raises(ValueError, match="observation must be"):
        single.act(np.zeros(5))


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="token_bits"):
        QMambaConfig(action_nvec=(32,), token_bits=5)
    with pytest.raises(ValueError, match="gamma"):
        QMambaConfig(gamma=1.5)
    with pytest.raises(ValueError, match="epochs"):
        TrainConfig(epochs=0)
    data = _bandit_data(n=4)
    with pytest.raises(ValueError, match="rewards must be"):
        trajectory_arrays({**data, "rewards": data["rewards"][:, :-1]})
    with pytest.raises(ValueError, match="actions must lie"):
        fit(data, QMambaConfig(obs_dim=3, action_nvec=(2, 2)), TrainConfig(epochs=1))
    with pytest.raises(ValueError, match="not a Q-Mamba model folder"):
        load_model("/nonexistent/model")


def test_log_error_rewards_on_a_hand_computed_row():
    from gymforge.agents.metabbo.train import log_error_rewards

    # e_0 = 100 -> 10 -> 10 -> 1e-9 (floored to 1e-8): logs 2, 1, 1, -8; span 2 - (-8) = 10
    r = log_error_rewards(
        np.array([[10.0, 10.0, 1e-9], [1e-9, 1e-9, 1e-9]]), np.array([100.0, 1e-9])
    )
    np.testing.assert_allclose(r[0], [0.1, 0.0, 0.9], atol=1e-7)
    assert (r[1] == 0).all()  # e_0 already below the floor
    with pytest.raises(ValueError, match="reward must be one of"):
        TrainConfig(reward="perf")
    with pytest.raises(ValueError, match="needs the arrays best_errors"):
        fit(_bandit_data(n=4), train=TrainConfig(epochs=1, reward="log_error"))


def test_training_device_is_checked_before_any_work():
    with pytest.raises(ValueError, match="device"):
        fit(_bandit_data(n=4), train=TrainConfig(epochs=1), device="tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no usable CUDA device"):
            fit(_bandit_data(n=4), train=TrainConfig(epochs=1), device="cuda")


@pytest.mark.gpu
def test_training_on_a_gpu_learns_the_rewarded_bins_as_on_the_cpu():
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    torch.set_num_threads(1)
    data = _bandit_data()
    config = QMambaConfig(obs_dim=3, action_nvec=(4, 4), d_state=4, gamma=0.5, beta=10.0)
    train = TrainConfig(epochs=60, batch_size=32, lr=5e-3, seed=0)
    on_gpu = fit(data, config, train, device="cuda")
    assert next(on_gpu.agent.net.parameters()).device.type == "cpu"  # returned on the CPU
    # the same initial weights and minibatches as on the CPU: the first epoch's loss agrees up
    # to the devices' float rounding
    first_cpu = fit(data, config, TrainConfig(epochs=1, batch_size=32, lr=5e-3, seed=0))
    assert on_gpu.history[0]["loss"] == pytest.approx(first_cpu.history[0]["loss"], rel=1e-2)
    assert on_gpu.history[-1]["loss"] < 0.5 * on_gpu.history[0]["loss"]
    obs = _bandit_data(n=8, seed=1)["observations"][:, 0]
    on_gpu.agent.reset()
    assert (on_gpu.agent.act(obs) == np.array([2, 1])).all(axis=1).mean() >= 0.75
