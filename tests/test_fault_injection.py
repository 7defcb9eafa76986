"""Hostile and careless input: each case is silently wrong, gameable or loses work without its fix.

Every test drives the real code path with the bad input and asserts the documented outcome: a
one-line error naming the field (raised before any state changes), or the safe behaviour.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import gymforge  # noqa: F401 - registers the ids

# --- datasets bound to their instance ------------------------------------------------------


@pytest.fixture(scope="module")
def cascade_seed7(tmp_path_factory):
    from gymforge.envs.cmab.collect import collect

    return collect("OffCMAB-Cascade-v0", "uniform", 200, tmp_path_factory.mktemp("d") / "d", seed=7)


def test_faults__dataset_of_another_instance_is_refused_naming_both(cascade_seed7):
    from gymforge.agents.cmab.agent import OfflineAgent

    env = gym.make("OffCMAB-Cascade-v0")
    env.reset(seed=0)
    agent = OfflineAgent(env)
    with pytest.raises(ValueError, match=r"seed 7 .*seed 0") as error:
        agent.fit(cascade_seed7)
    assert "reset the env with seed=7" in str(error.value)
    assert agent.super_arm is None  # nothing learned


def test_faults__dataset_checked_again_when_the_env_moves_to_another_instance(cascade_seed7):
    from gymforge.agents.cmab.agent import OfflineAgent

    env = gym.make("OffCMAB-Cascade-v0")
    agent = OfflineAgent(env)
    agent.fit(cascade_seed7)  # no instance chosen yet: accepted
    obs, info = env.reset(seed=7)
    agent.act(obs, info)  # the logged instance
    obs, info = env.reset(seed=1)
    with pytest.raises(ValueError, match=r"instance of seed 7 .*instance of seed 1"):
        agent.act(obs, info)
