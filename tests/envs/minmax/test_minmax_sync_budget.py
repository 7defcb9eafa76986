"""MinMaxTuning's sync budget: at most two host synchronisations per ``step`` (one range check
of the actions with its named errors, one "did any episode end"), counted on the CPU."""

from __future__ import annotations

import pytest
import torch

import gymforge  # noqa: F401 - registers the ids
from gymforge.checks.batch_and_device import sync_profile
from gymforge.registry import all_specs

MINMAX_VECTOR_IDS = sorted(
    spec.id
    for spec in all_specs()
    if spec.id.startswith("MinMax") and spec.vector_entry_point is not None
)


def test_there_are_batched_minmax_ids() -> None:
    assert "MinMaxTuning-v0" in MINMAX_VECTOR_IDS


@pytest.mark.parametrize("env_id", MINMAX_VECTOR_IDS)
def test_step_stays_within_two_syncs(env_id: str) -> None:
    steps = 12
    counter = sync_profile(env_id, "cpu", batch=64, steps=steps)
    assert counter.total <= 2 * steps, counter.top_sites()
    assert counter.by_kind["to_device"] == 0, counter.top_sites()


def test_the_single_range_check_still_names_the_first_bad_entry() -> None:
    import gymnasium as gym

    env = gym.make_vec("MinMaxTuning-v0", num_envs=3, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    action = torch.tensor([[0.1, 0.0], [0.1, 2.0], [-1.0, 0.0]])
    with pytest.raises(ValueError, match=r"action\[1\]\[1\] \(momentum beta\) must be finite"):
        env.step(action)
    action[1, 1] = float("nan")
    with pytest.raises(ValueError, match=r"action\[1\]\[1\].*got nan"):
        env.step(action)
    action[1, 1] = 0.0
    with pytest.raises(ValueError, match=r"action\[2\]\[0\] \(step size h\).*in \[0.0, 0.5\]"):
        env.step(action)
    obs, *_ = env.step(torch.tensor([[0.1, 0.0]] * 3))
    assert obs.shape[0] == 3
