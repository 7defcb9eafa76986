"""Bad inputs refused with one clear line naming the argument, before any state changes."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import gymforge  # noqa: F401 - registers the ids
from gymforge.registry import all_specs

SINGLE_AGENT_IDS = [
    spec.id
    for spec in all_specs()
    if not spec.capabilities.multi_agent and spec.entry_point is not None
]
VECTOR_IDS = ["LineFlow-WaitingTime-v0", "MetaBBO-v1", "OffCMAB-Cascade-v0", "MinMaxTuning-v0"]


def _make(env_id: str) -> gym.Env:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the older ids' deprecation notices
        return gym.make(env_id)


@pytest.mark.parametrize("env_id", SINGLE_AGENT_IDS)
def test_reset_refuses_options_that_are_not_a_dict(env_id: str) -> None:
    env = _make(env_id)
    with pytest.raises(ValueError, match=r"options must be a dict or None, got int 5"):
        env.reset(seed=0, options=5)
    env.reset(seed=0, options=None)  # None (and a dict) still work
    env.close()


@pytest.mark.parametrize("env_id", VECTOR_IDS)
def test_vector_reset_refuses_options_that_are_not_a_dict(env_id: str) -> None:
    env = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match=r"options must be a dict or None, got str 'x'"):
        env.reset(seed=0, options="x")
    env.reset(seed=0, options=[{}, {}])  # SB3's VecEnv: one empty dict per instance
    env.close()


@pytest.mark.parametrize("env_id", ["MinMaxTuning-v0", "MinMaxTuning-Alt-v0"])
def test_minmax_tuning_refuses_a_bad_device_in_one_line_like_the_other_families(
    env_id: str,
) -> None:
    with pytest.raises(ValueError, match=r"device must be one of .*got 'bogus'; allowed here"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", device="bogus")


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_lineflow_reports_an_infinite_action_as_given(bad: float) -> None:
    env = _make("LineFlow-WaitingTime-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=rf"action must lie in \[0, \[99\]\].*got \[{bad}\]"):
        env.step(np.array([bad]))
    env.step(np.array([3.0]))  # an integral float still works, and the line had not moved
