"""Specs added at runtime join the registry and Gymnasium; removing them restores both exactly."""

from __future__ import annotations

import gymnasium as gym
import pytest

from gymforge import registry
from gymforge.registry import EnvSpec, add_specs, all_specs, get_spec, remove_specs

PROBE = "gymforge.envs.probe.gym_env"


def _spec(env_id: str) -> EnvSpec:
    return EnvSpec(
        id=env_id,
        family="probe",
        summary="a runtime copy of the probe id",
        vector_env=f"{PROBE}:ProbeVecEnv",
    )


def test_registry__added_specs_are_listed_made_and_removed_exactly():
    before_specs, before_gym = all_specs(), dict(gym.registry)
    add_specs([_spec("Probe-Runtime-v0")])
    try:
        assert all_specs()[-1].id == "Probe-Runtime-v0"
        assert get_spec("Probe-Runtime-v0").family == "probe"
        assert gym.make("Probe-Runtime-v0").action_space == gym.make("Probe-Match-v0").action_space
    finally:
        remove_specs(["Probe-Runtime-v0"])
    assert all_specs() == before_specs
    assert dict(gym.registry) == before_gym


def test_registry__adding_a_taken_id_changes_nothing():
    before = all_specs()
    with pytest.raises(ValueError, match="already registered"):
        add_specs([_spec("Probe-Extra-v0"), _spec("Probe-Match-v0")])
    with pytest.raises(ValueError, match="given twice"):
        add_specs([_spec("Probe-Extra-v0"), _spec("Probe-Extra-v0")])
    assert all_specs() == before and "Probe-Extra-v0" not in gym.registry


def test_registry__only_added_ids_can_be_removed():
    with pytest.raises(ValueError, match="unknown env ids"):
        remove_specs(["Nope-v0"])
    with pytest.raises(ValueError, match="cannot be removed"):
        remove_specs(["Probe-Match-v0"])
    assert all_specs() == registry.SPECS and "Probe-Match-v0" in gym.registry
