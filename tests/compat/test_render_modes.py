"""``render_mode`` is checked when an env is built: an id refuses a mode it lacks at
``gym.make`` / ``make_parallel`` in one line naming the modes it has, instead of failing later
inside ``render()``; the modes an env class declares are the ones its id declares."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest

import gymforge  # noqa: F401 - registers the ids
from gymforge.registry import all_specs, load_entry_point, make_parallel

SINGLE = [s for s in all_specs() if not s.capabilities.multi_agent]
WITHOUT_RENDERER = [s for s in SINGLE if not s.capabilities.render_modes]
GAMES = [s for s in all_specs() if s.capabilities.multi_agent]


@pytest.mark.parametrize("spec", SINGLE, ids=[s.id for s in SINGLE])
def test_the_entry_point_declares_the_ids_render_modes(spec):
    declared = load_entry_point(spec.entry_point).metadata["render_modes"]
    assert list(declared) == list(spec.capabilities.render_modes)


@pytest.mark.parametrize("spec", WITHOUT_RENDERER, ids=[s.id for s in WITHOUT_RENDERER])
def test_gym_make_refuses_a_render_mode_the_id_lacks(spec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Gymnasium's own warning comes first
        with pytest.raises(ValueError, match=r"cannot render render_mode='rgb_array': it has no"):
            gym.make(spec.id, render_mode="rgb_array")
    assert gym.make(spec.id, render_mode=None).render_mode is None


@pytest.mark.parametrize("spec", GAMES, ids=[s.id for s in GAMES])
def test_make_parallel_takes_render_mode_and_refuses_modes_the_game_lacks(spec):
    assert make_parallel(spec.id, render_mode=None).render_mode is None
    for num_envs in (None, 2):
        with pytest.raises(ValueError, match=rf"{spec.id} cannot render render_mode='human'"):
            make_parallel(spec.id, num_envs=num_envs, render_mode="human")
