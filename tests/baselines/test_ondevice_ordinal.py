"""The ordinal head: a discretised Gaussian over ordered choices, checked against its formula,
laid out as the grouped categoricals read it, and stored so that older artifacts still load."""

from __future__ import annotations

import math

import pytest
import torch
from gymnasium import spaces

from gymforge.baselines.ondevice.policy import (
    ActorCritic,
    CategoricalGroups,
    PolicySpec,
    policy_spec,
)


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def test_ordinal_logits__peak_at_the_centre_and_follow_the_gaussian_formula():
    groups = CategoricalGroups((100,))
    centre, width = 18.0, 3.0
    raw = torch.tensor([[_logit(centre / 99), math.log(width / 50)]])
    logits = groups.ordinal_logits(raw)
    assert logits.shape == (1, 100)
    assert int(logits.argmax()) == 18
    expected = torch.tensor([-0.5 * ((k - centre) / width) ** 2 for k in range(100)])
    torch.testing.assert_close(logits[0], expected, atol=1e-3, rtol=1e-4)
    probs = torch.softmax(logits[0], -1)
    # neighbours share the mass; far choices get none (one choice is not learnt in isolation)
    assert float(probs[17]) == pytest.approx(float(probs[19]), rel=1e-3) and probs[17] > 0.1
    assert float(probs[40:].sum()) < 1e-6


def test_ordinal_logits__are_laid_out_per_group_in_the_env_dimension_order():
    nvec = (3, 100, 3)  # grouped as the 3-way dimensions, then the 100-way one
    groups = CategoricalGroups(nvec)
    raw = torch.tensor([[_logit(1.0 / 2 * 0.999), 0.0, _logit(70 / 99), -3.0, -9.0, -4.0]])
    logits = groups.ordinal_logits(raw)
    assert logits.shape == (1, groups.n_logits)
    mode = groups.mode(logits)[0].tolist()
    assert mode == [1, 70, 0]


def test_ordinal_policy__starts_broad_and_its_log_probs_are_consistent():
    spec = policy_spec(spaces.Box(-1, 1, (4,)), spaces.Discrete(100), ordinal=True)
    policy = ActorCritic(spec)
    assert policy.actor_head.out_features == 2
    with torch.no_grad():
        logits, values = policy.heads(torch.randn(32, 4))
        _, entropy = policy.log_prob_entropy(logits, torch.zeros(32, 1, dtype=torch.long))
        action, log_prob = policy.sample(logits, torch.Generator().manual_seed(0))
        again, _ = policy.log_prob_entropy(logits, action)
    assert logits.shape == (32, 100) and values.shape == (32,)
    assert float(entropy.min()) > math.log(100) - 0.5  # near uniform at the start
    torch.testing.assert_close(log_prob, again)


def test_ordinal__needs_categorical_actions_and_older_specs_load_without_it():
    with pytest.raises(ValueError, match="ordinal needs Discrete or MultiDiscrete"):
        policy_spec(spaces.Box(-1, 1, (4,)), spaces.Box(-1, 1, (2,)), ordinal=True)
    stored = policy_spec(spaces.Box(-1, 1, (4,)), spaces.Discrete(5)).to_json()
    stored.pop("ordinal")  # an artifact written before the option existed
    assert PolicySpec.from_json(stored).ordinal is False


def test_ordinal_width__sets_the_starting_breadth_and_is_checked():
    narrow = policy_spec(
        spaces.Box(-1, 1, (4,)), spaces.Discrete(100), ordinal=True, ordinal_width=0.1
    )
    logits = ActorCritic(narrow).categorical.ordinal_logits(torch.zeros(1, 2))
    # centre 49.5, width 10: one width away the logit is -1/2
    assert float(logits[0, 59]) == pytest.approx(-0.5 * (9.5 / 10) ** 2, rel=1e-5)
    with pytest.raises(ValueError, match=r"ordinal_width must be a number in \(0, 1\]"):
        policy_spec(spaces.Box(-1, 1, (4,)), spaces.Discrete(100), ordinal=True, ordinal_width=0)
