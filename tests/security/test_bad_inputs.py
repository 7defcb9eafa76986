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


@pytest.mark.parametrize("num_confounders", [1, 2])  # the NumPy and the torch update
def test_rmdn_skips_finite_values_whose_products_overflow(num_confounders: int) -> None:
    import torch

    from gymforge.agents.confounders.rmdn import RecursiveMetadataNorm, design_matrix

    layer = RecursiveMetadataNorm(4, num_confounders=num_confounders)
    huge = torch.full((8, 4), 3e38)  # finite in float32; its squares are not
    design = design_matrix(torch.ones(8), torch.full((8, num_confounders), 3e38))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        layer(huge, design)
    assert layer.skipped_batches == 1
    assert bool(torch.isfinite(layer.beta).all()) and bool(torch.isfinite(layer.P).all())
    strict = RecursiveMetadataNorm(4, num_confounders=num_confounders, nonfinite="raise")
    before = strict.beta.clone()
    with pytest.raises(ValueError, match=r"finite values too large.*3e\+38 in x or design"):
        strict(huge, design)
    assert torch.equal(strict.beta, before)


@pytest.mark.parametrize(
    "argv",
    [
        ["OffCMAB-Cascade-v0", "--agent", "uniform", "--n", "100"],
        ["MetaBBO-v1", "--agent", "mix", "--n", "2", "--max-generations", "2"],
    ],
)
def test_dataset_collect_checks_out_is_writable_before_collecting(
    tmp_path, capsys, argv: list[str]
) -> None:
    from gymforge.cli import main

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "dataset"  # its parent is a file: nothing can be written there
    assert main(["dataset", "collect", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--out:" in err and "a-file is not a folder" in err and ".tmp" not in err
