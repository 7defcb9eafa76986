"""The entry points the registry builds from each batched family's vector class.

``gym.make`` of a batched id gives the batch-of-one view of the id's ``TorchVectorEnv`` (on the
id's ``scalar_base``), ``gym.make_vec`` gives ``make_vector`` over the class; both are named by
strings, so Gymnasium can serialise the spec, and the view pickles by name.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

import gymnasium as gym
import pytest

from gymforge import entry_points
from gymforge.core.scalar_env import TorchScalarEnv
from gymforge.envs.probe.gym_env import ProbeVecEnv
from gymforge.registry import EnvSpec, add_specs, all_specs, load_entry_point, remove_specs

VIEWED = [
    s
    for s in all_specs()
    if s.vector_env is not None and s.entry_point.startswith("gymforge.entry_points:")
]


class RuntimeProbeVecEnv(ProbeVecEnv):
    """A vector class of a runtime id (the probe's dynamics under another name)."""


@pytest.mark.parametrize("spec", VIEWED, ids=[s.id for s in VIEWED])
def test_entry_points__the_scalar_env_is_the_view_of_the_vector_class(spec: EnvSpec) -> None:
    env = gym.make(spec.id)
    view = type(env.unwrapped)
    vector_class = load_entry_point(spec.vector_env)
    base = TorchScalarEnv if spec.scalar_base is None else load_entry_point(spec.scalar_base)
    assert issubclass(view, base) and view.vector_env_cls is vector_class
    assert view.__name__ == vector_class.__name__.removesuffix("VecEnv") + "Env"
    assert view.__doc__ == vector_class.__doc__
    assert getattr(entry_points, view.__name__) is view  # where pickle finds it
    assert isinstance(env.spec.to_json(), str)  # string entry points: Minari and records work
    venv = gym.make_vec(spec.id, num_envs=2, vectorization_mode="vector_entry_point")
    assert type(venv) is vector_class
    assert isinstance(venv.spec.to_json(), str)


def test_entry_points__a_view_pickled_here_loads_in_a_fresh_process() -> None:
    env = gym.make("Probe-Match-v0")
    env.reset(seed=3)
    code = (
        "import pickle, sys\n"
        "env = pickle.loads(sys.stdin.buffer.read())\n"
        "print(type(env.unwrapped).__module__, type(env.unwrapped).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(env), capture_output=True, check=True
    )
    assert out.stdout.decode().split() == ["gymforge.entry_points", "ProbeEnv"]


def test_entry_points__a_spec_takes_a_vector_class_or_a_factory_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        EnvSpec(
            id="Both-v0",
            family="probe",
            summary="",
            vector_env="gymforge.envs.probe.gym_env:ProbeVecEnv",
            vector_entry_point="somewhere:make",
        )
    with pytest.raises(ValueError, match="scalar_base needs a vector_env"):
        EnvSpec(id="Base-v0", family="probe", summary="", scalar_base="somewhere:Base")


def test_entry_points__a_name_built_from_two_classes_is_refused() -> None:
    before = all_specs()
    other = EnvSpec(id="Other-v0", family="probe", summary="", vector_env="elsewhere:ProbeVecEnv")
    with pytest.raises(ValueError, match="would share the entry point"):
        add_specs([other])
    assert all_specs() == before and "Other-v0" not in gym.registry


def test_entry_points__removed_ids_take_their_built_entry_points_along() -> None:
    spec = EnvSpec(
        id="Probe-Renamed-v0",
        family="probe",
        summary="",
        vector_env=f"{__name__}:RuntimeProbeVecEnv",
    )
    add_specs([spec])
    try:
        env = gym.make("Probe-Renamed-v0")
        assert type(env.unwrapped).vector_env_cls is RuntimeProbeVecEnv
        assert "RuntimeProbeEnv" in vars(entry_points)
    finally:
        remove_specs(["Probe-Renamed-v0"])
    assert "RuntimeProbeEnv" not in vars(entry_points)
    assert "make_RuntimeProbeVecEnv" not in vars(entry_points)
