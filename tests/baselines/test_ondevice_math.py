"""Known answers for the on-device trainer's maths: GAE, the PPO loss, observation statistics,
the grouped categorical distribution and the fast tanh."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gymforge.baselines.ondevice.advantages import gae, ppo_loss
from gymforge.baselines.ondevice.normalization import RunningObsNorm
from gymforge.baselines.ondevice.policy import CategoricalGroups, Tanh


def _gae_by_hand(rewards, values, dones, last_value, gamma, lam):
    """The textbook recursion, one instance at a time, in plain Python floats."""
    steps, batch = len(rewards), len(rewards[0])
    adv = [[0.0] * batch for _ in range(steps)]
    for b in range(batch):
        running, next_value = 0.0, last_value[b]
        for t in reversed(range(steps)):
            nd = 0.0 if dones[t][b] else 1.0
            delta = rewards[t][b] + gamma * nd * next_value - values[t][b]
            running = delta + gamma * lam * nd * running
            adv[t][b] = running
            next_value = values[t][b]
    return adv


def test_gae__two_step_known_answer():
    # one instance: r = (1, 2), V = (0.5, 1.0), bootstrap V = 3, γ = 0.9, λ = 0.8
    # δ1 = 2 + 0.9·3 − 1 = 3.7 ; A1 = 3.7
    # δ0 = 1 + 0.9·1 − 0.5 = 1.4 ; A0 = 1.4 + 0.72·3.7 = 4.064
    rewards = torch.tensor([[1.0], [2.0]])
    values = torch.tensor([[0.5], [1.0]])
    dones = torch.zeros(2, 1, dtype=torch.bool)
    adv, ret = gae(rewards, values, dones, torch.tensor([3.0]), 0.9, 0.8)
    assert adv[:, 0].tolist() == pytest.approx([4.064, 3.7])
    assert ret[:, 0].tolist() == pytest.approx([4.564, 4.7])


def test_gae__a_done_stops_the_bootstrap():
    # the episode ends at step 0: A0 = r0 − V0, nothing from step 1 leaks back
    rewards = torch.tensor([[1.0], [5.0]])
    values = torch.tensor([[0.25], [2.0]])
    dones = torch.tensor([[True], [False]])
    adv, _ = gae(rewards, values, dones, torch.tensor([10.0]), 0.99, 0.95)
    assert adv[0, 0].item() == pytest.approx(0.75)
    assert adv[1, 0].item() == pytest.approx(5.0 + 0.99 * 10.0 - 2.0)


def test_gae__matches_the_textbook_recursion_on_random_data():
    gen = torch.Generator().manual_seed(3)
    rewards = torch.randn(7, 5, generator=gen)
    values = torch.randn(7, 5, generator=gen)
    dones = torch.rand(7, 5, generator=gen) < 0.2
    last = torch.randn(5, generator=gen)
    adv, _ = gae(rewards, values, dones, last, 0.97, 0.9)
    expected = _gae_by_hand(
        rewards.tolist(), values.tolist(), dones.tolist(), last.tolist(), 0.97, 0.9
    )
    assert np.allclose(adv.numpy(), np.array(expected), atol=1e-5)


def _loss(new_lp, old_lp, adv, clip=0.2, clip_value=None, new_v=0.0, old_v=0.0, ret=0.0):
    t = torch.tensor
    return ppo_loss(
        t([new_lp]),
        t([old_lp]),
        t([adv]),
        t([new_v]),
        t([old_v]),
        t([ret]),
        t([0.0]),
        clip,
        clip_value,
        1.0,
        0.0,
    )


def test_ppo_loss__clips_the_ratio_on_the_side_that_helps():
    e = float(np.e)
    # ratio e (log-ratio 1) with A = +2: the surrogate is capped at (1 + 0.2)·2
    _, parts = _loss(1.0, 0.0, 2.0)
    assert parts["policy_loss"].item() == pytest.approx(-1.2 * 2.0)
    # the same ratio with A = −2: min(e·(−2), 1.2·(−2)) = −2e, not clipped
    _, parts = _loss(1.0, 0.0, -2.0)
    assert parts["policy_loss"].item() == pytest.approx(2.0 * e, rel=1e-6)
    # inside the trust region the surrogate is ratio · A
    _, parts = _loss(0.1, 0.0, 3.0)
    assert parts["policy_loss"].item() == pytest.approx(-np.exp(0.1) * 3.0, rel=1e-6)
    assert parts["clip_fraction"].item() == 0.0


def test_ppo_loss__unclipped_is_the_policy_gradient():
    _, parts = _loss(1.0, 0.0, 2.0, clip=None)
    assert parts["policy_loss"].item() == pytest.approx(-np.e * 2.0, rel=1e-6)
    new_lp = torch.tensor([0.0], requires_grad=True)
    loss, _ = ppo_loss(
        new_lp,
        torch.tensor([0.0]),
        torch.tensor([3.0]),
        torch.zeros(1),
        torch.zeros(1),
        torch.zeros(1),
        torch.zeros(1),
        None,
        None,
        0.0,
        0.0,
    )
    loss.backward()
    assert new_lp.grad.item() == pytest.approx(-3.0)  # −A · ∂ratio/∂logp at ratio 1


def test_ppo_loss__value_clipping_takes_the_larger_error():
    # old V = 0, new V = 1, return 2: unclipped error (1−2)² = 1; clipped V = 0.2 → 3.24
    _, parts = _loss(0.0, 0.0, 0.0, clip_value=0.2, new_v=1.0, old_v=0.0, ret=2.0)
    assert parts["value_loss"].item() == pytest.approx(3.24)
    _, parts = _loss(0.0, 0.0, 0.0, clip_value=None, new_v=1.0, old_v=0.0, ret=2.0)
    assert parts["value_loss"].item() == pytest.approx(1.0)


def test_obs_norm__matches_numpy_over_uneven_batches():
    rng = np.random.default_rng(0)
    data = rng.normal(3.0, 2.0, size=(1000, 4)) * np.array([1, 10, 0.1, 5])
    norm = RunningObsNorm(4, "cpu")
    for part in np.split(data, [7, 300, 301, 650]):
        norm.update(torch.tensor(part, dtype=torch.float32))
    assert np.allclose(norm.mean.numpy(), data.mean(0), rtol=1e-5)
    assert np.allclose(norm.var.numpy(), data.var(0), rtol=1e-4)
    assert norm.count.item() == 1000
    z = norm(torch.tensor(data[:3], dtype=torch.float32)).numpy()
    assert np.allclose(z, (data[:3] - data.mean(0)) / np.sqrt(data.var(0) + 1e-8), atol=1e-4)


def test_obs_norm__a_non_finite_batch_changes_nothing_and_is_counted():
    norm = RunningObsNorm(2, "cpu")
    norm.update(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    before = {k: v.clone() for k, v in (("mean", norm.mean), ("var", norm.var))}
    norm.update(torch.tensor([[float("nan"), 0.0], [1.0, float("inf")]]))
    assert torch.equal(norm.mean, before["mean"]) and torch.equal(norm.var, before["var"])
    assert norm.count.item() == 2 and norm.skipped.item() == 1
    norm.update(torch.tensor([[5.0, 6.0]]))
    assert np.allclose(norm.mean.numpy(), [3.0, 4.0])


def test_obs_norm__clips_and_round_trips_its_state():
    norm = RunningObsNorm(1, "cpu", clip=2.0)
    norm.update(torch.tensor([[0.0], [2.0]]))  # mean 1, var 1
    assert norm(torch.tensor([[100.0], [-100.0]])).flatten().tolist() == [2.0, -2.0]
    copy = RunningObsNorm(1, "cpu")
    copy.load_state_dict(norm.state_dict())
    assert torch.equal(copy(torch.tensor([[1.5]])), norm(torch.tensor([[1.5]])))


def test_categorical_groups__log_prob_and_entropy_match_torch_distributions():
    nvec = (3, 5, 3, 2)
    groups = CategoricalGroups(nvec)
    assert groups.n_logits == sum(nvec)
    logits = torch.randn(6, groups.n_logits, generator=torch.Generator().manual_seed(1))
    actions = torch.tensor([[2, 4, 0, 1]] * 6)
    log_prob, entropy = groups.log_prob_entropy(logits, actions)
    # the grouped layout: dims of 2 choices first, then the 3s (dims 0 and 2), then the 5
    layout = {3: [(2, 0), (5, 2)], 2: [(0, 3)], 5: [(8, 1)]}
    expected_lp = torch.zeros(6)
    expected_h = torch.zeros(6)
    for n, places in layout.items():
        for offset, dim in places:
            dist = torch.distributions.Categorical(logits=logits[:, offset : offset + n])
            expected_lp += dist.log_prob(actions[:, dim])
            expected_h += dist.entropy()
    assert torch.allclose(log_prob, expected_lp, atol=1e-5)
    assert torch.allclose(entropy, expected_h, atol=1e-5)


def test_categorical_groups__samples_follow_the_probabilities():
    groups = CategoricalGroups((4,))
    probs = torch.tensor([0.1, 0.2, 0.3, 0.4])
    logits = probs.log().expand(40_000, 4)
    draws = groups.sample(logits, torch.Generator().manual_seed(0))[:, 0]
    freq = torch.bincount(draws, minlength=4).float() / len(draws)
    assert torch.allclose(freq, probs, atol=0.01)
    assert groups.mode(logits[:1]).tolist() == [[3]]


def test_tanh__equals_torch_tanh():
    x = torch.linspace(-20, 20, 10_001)
    assert torch.allclose(Tanh()(x), torch.tanh(x), atol=1e-6)
