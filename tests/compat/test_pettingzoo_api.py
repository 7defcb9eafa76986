"""PettingZoo's own test suite on every game id, beyond what
:mod:`tests.test_conformance_multiagent` runs (``parallel_api_test``, ``parallel_seed_test``):
the AEC view's ``api_test`` (through ``pettingzoo.utils.parallel_to_aec``), ``max_cycles_test``
(``max_cycles`` is PettingZoo's name of the games' ``max_steps``) and ``state_test`` (the global
state: both players' iterates)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from pettingzoo.test import api_test, max_cycles_test
from pettingzoo.test.state_test import state_test
from pettingzoo.utils import parallel_to_aec

from gymforge.registry import all_specs, make_parallel

GAMES = [s.id for s in all_specs() if s.capabilities.multi_agent]


def module_of(env_id: str) -> types.SimpleNamespace:
    """The id as the module ``max_cycles_test`` expects: ``parallel_env(**kw)`` and ``env(**kw)``."""
    return types.SimpleNamespace(
        parallel_env=lambda **kwargs: make_parallel(env_id, **kwargs),
        env=lambda **kwargs: parallel_to_aec(make_parallel(env_id, **kwargs)),
    )


@pytest.mark.parametrize("env_id", GAMES)
def test_aec_view_passes_pettingzoos_api_test(env_id):
    api_test(parallel_to_aec(make_parallel(env_id)), num_cycles=50)


@pytest.mark.parametrize("env_id", GAMES)
def test_max_cycles_test_ends_episodes_after_max_cycles(env_id):
    max_cycles_test(module_of(env_id))


@pytest.mark.parametrize("env_id", GAMES)
def test_state_is_both_iterates_and_passes_pettingzoos_state_test(env_id):
    env = make_parallel(env_id)
    state_test(parallel_to_aec(make_parallel(env_id)), env, num_cycles=20)
    obs, _ = env.reset(seed=3)
    state = env.state()
    assert env.state_space.contains(state)
    dims = env.action_space("x").shape[0] + env.action_space("y").shape[0]
    assert state.shape == (dims,)
    np.testing.assert_array_equal(state, obs["x"][:dims])  # observations start with (x, y)


def test_max_cycles_is_an_alias_of_max_steps():
    env = make_parallel(GAMES[0], max_cycles=7)
    assert env._batched.config.max_steps == 7
    assert make_parallel(GAMES[0], max_steps=7, max_cycles=7)._batched.config.max_steps == 7
    with pytest.raises(ValueError, match="max_cycles is another name of max_steps"):
        make_parallel(GAMES[0], max_steps=5, max_cycles=7)
