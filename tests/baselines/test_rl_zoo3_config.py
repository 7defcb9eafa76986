"""The shipped rl_zoo3 hyperparameters are the project's own SB3 settings, in rl_zoo3's format."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "baselines" / "configs"
ZOO = CONFIGS / "rl_zoo3" / "ppo.yml"
#: upstream's documented budgets (docs/design/lineflow_upstream_figures.md)
BUDGETS = {
    "LineFlow-WaitingTime-v0": 1e6,
    "LineFlow-WaitingTimeJump-v0": 1e7,
    "LineFlow-PartDistribution-v0": 1e7,
    "LineFlow-WorkerAssignment-v0": 5e5,
    "LineFlow-ComplexLine-v0": 1e8,
}


def _expected(env_id: str) -> dict:
    task = yaml.safe_load((CONFIGS / f"{env_id}.yaml").read_text())
    ppo = dict(task["algos"]["ppo"])
    if env_id == "LineFlow-WaitingTime-v0":  # the tuned layer the stored WT runs used
        tuned = yaml.safe_load((ROOT / "benchmarks" / "lineflow" / "rl_sb3_wt.yaml").read_text())
        ppo |= tuned["algos"]["ppo"]
    return {"n_envs": task["n_envs"], "policy": "MlpPolicy", **ppo}


@pytest.mark.parametrize("env_id", sorted(BUDGETS))
def test_rl_zoo3_settings_are_the_projects_sb3_settings(env_id):
    shipped = yaml.safe_load(ZOO.read_text())[env_id]
    assert shipped.pop("n_timesteps") == BUDGETS[env_id]
    assert shipped == _expected(env_id)


def test_the_rl_zoo3_file_names_only_registered_ids():
    import gymforge  # noqa: F401
    from gymforge.registry import get_spec

    for env_id in yaml.safe_load(ZOO.read_text()):
        get_spec(env_id)
