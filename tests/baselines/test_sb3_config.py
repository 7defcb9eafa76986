"""Training configs: the packaged per-task defaults and the validation of user files."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml

from gymforge.baselines.sb3.config import load_config
from gymforge.baselines.training.config import CONFIG_DIR, SCHEMA_VERSION
from gymforge.baselines.training.files import read_file
from gymforge.cli import main
from gymforge.registry import all_specs

LINEFLOW_BENCHMARKS = (
    "LineFlow-WaitingTime-v0",
    "LineFlow-WaitingTimeJump-v0",
    "LineFlow-PartDistribution-v0",
    "LineFlow-WorkerAssignment-v0",
    "LineFlow-ComplexLine-v0",
)


def test_packaged_configs__every_file_is_valid_and_names_a_registered_id():
    ids = {spec.id for spec in all_specs()}
    files = sorted(CONFIG_DIR.glob("*.yaml"))
    assert CONFIG_DIR / "default.yaml" in files
    for path in files:
        data = read_file(path)
        assert data["version"] == SCHEMA_VERSION
        assert isinstance(data["revision"], int) and data["revision"] >= 1
        if path.stem not in ("default", "vectorized"):
            assert path.stem in ids, path.name
            load_config(path.stem)  # validates every layer


@pytest.mark.parametrize("env_id", LINEFLOW_BENCHMARKS)
def test_packaged_configs__lineflow_uses_the_papers_training_settings(env_id):
    """Upstream's training script: 5 envs, n_steps 500, batch 500, 5 epochs, γ 0.99, clip 0.2,
    one deterministic evaluation episode every n_steps·n_envs·10 = 25000 steps."""
    cfg = load_config(env_id)
    assert cfg.n_envs == 5
    assert cfg.algo_kwargs("ppo") == {
        "n_steps": 500, "batch_size": 500, "n_epochs": 5, "gamma": 0.99, "clip_range": 0.2,
    }  # fmt: skip
    assert cfg.eval_every == 500 * 5 * 10 and cfg.eval_episodes == 1
    if env_id == "LineFlow-ComplexLine-v0":
        assert cfg.curriculum is not None
        assert (cfg.curriculum.start, cfg.curriculum.update, cfg.curriculum.look_back) == (
            0,
            0.02,
            5,
        )
        assert cfg.curriculum.factor_max == pytest.approx(1 / 3)
    else:
        assert cfg.curriculum is None


def test_load_config__layers_override_key_by_key(tmp_path):
    user = tmp_path / "u.json"
    user.write_text(json.dumps({"version": 1, "n_envs": 3, "algos": {"ppo": {"n_epochs": 2}}}))
    cfg = load_config("LineFlow-WaitingTime-v0", user, {"eval": {"episodes": 4}})
    assert cfg.n_envs == 3
    assert cfg.algo_kwargs("ppo")["n_epochs"] == 2
    assert cfg.algo_kwargs("ppo")["n_steps"] == 500  # kept from the task file
    assert (cfg.eval_every, cfg.eval_episodes) == (25000, 4)
    assert cfg.sources == ("default.yaml", "LineFlow-WaitingTime-v0.yaml", str(user), "overrides")


def test_load_config__vectorized_runs_get_batched_rollouts_the_user_still_wins(tmp_path):
    """``--vectorized``: 256 instances x 16-step rollouts in 4 minibatches (not upstream's
    5 x 500 with minibatches of 500, a 128k-step rollout at 256 instances); the task's discount
    stays, and a user's file overrides the layer."""
    cfg = load_config("LineFlow-WaitingTime-v0", vectorized=True)
    assert cfg.n_envs == 256
    ppo = cfg.algo_kwargs("ppo")
    assert (ppo["n_steps"], ppo["batch_size"], ppo["n_epochs"]) == (16, 1024, 5)
    assert ppo["n_steps"] * cfg.n_envs == 4 * ppo["batch_size"]
    assert ppo["gamma"] == 0.99
    assert cfg.sources[-1] == "vectorized.yaml"
    user = tmp_path / "u.json"
    user.write_text(json.dumps({"version": 1, "algos": {"ppo": {"n_steps": 64}}}))
    assert (
        load_config("LineFlow-WaitingTime-v0", user, vectorized=True).algo_kwargs("ppo")["n_steps"]
        == 64
    )
    assert load_config("LineFlow-WaitingTime-v0").algo_kwargs("ppo")["n_steps"] == 500


def test_load_config__an_id_without_a_file_gets_the_defaults():
    cfg = load_config("Probe-Match-v0")
    default = yaml.safe_load((CONFIG_DIR / "default.yaml").read_text())
    assert cfg.n_envs == default["n_envs"] and cfg.algos == {}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"n_envs": 2}, "missing key 'version'"),
        ({"version": 2}, "version must be 1, got 2"),
        ({"version": 1, "n_env": 2}, "unknown key 'n_env'; allowed: ['version'"),
        ({"version": 1, "n_envs": 0}, "n_envs must be an int >= 1, got 0"),
        ({"version": 1, "frame_stack": "4"}, "frame_stack must be an int >= 1"),
        ({"version": 1, "eval": {"every": -1}}, "eval.every must be an int >= 0"),
        ({"version": 1, "eval": {"episode": 3}}, "eval: unknown key 'episode'"),
        ({"version": 1, "curriculum": {"update": -0.1}}, "curriculum.update must be a number >= 0"),
        ({"version": 1, "curriculum": {"lookback": 5}}, "curriculum: unknown key 'lookback'"),
        ({"version": 1, "algos": {"ddpg": {}}}, "algos: unknown key 'ddpg'; allowed: ['ppo'"),
        ({"version": 1, "algos": {"ppo": {"n_step": 8}}}, "algos.ppo: unknown argument 'n_step'"),
        ({"version": 1, "algos": {"ppo": {"seed": 8}}}, "algos.ppo.seed is set by gymforge train"),
        ({"version": 1, "env_kwargs": [1]}, "env_kwargs must be a mapping"),
    ],
)
def test_config_file__validation_errors_name_the_file_and_key(content, message, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(content))
    with pytest.raises(ValueError, match=r"bad\.yaml") as error:
        load_config("Probe-Match-v0", path)
    assert message in str(error.value)
    # the command line reports the same, and writes nothing
    out = tmp_path / "run"
    rc = main(["train", "Probe-Match-v0", "--algo", "ppo", "--steps", "64", "--config", str(path),
               "--out", str(out)])  # fmt: skip
    assert rc == 2 and message in capsys.readouterr().err
    assert not out.exists()


def test_config_file__unreadable_files(tmp_path):
    with pytest.raises(ValueError, match=r"must end in .yaml, .yml or .json"):
        load_config("Probe-Match-v0", tmp_path / "c.toml")
    with pytest.raises(ValueError, match="config file not found"):
        load_config("Probe-Match-v0", tmp_path / "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: [1\n")
    with pytest.raises(ValueError, match=r"broken\.yaml: not valid YAML"):
        load_config("Probe-Match-v0", broken)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ValueError, match="the top level must be a mapping"):
        load_config("Probe-Match-v0", listed)


def test_config_file__bad_values_fail_before_training(tmp_path, capsys):
    """SB3 rejects the value itself (batch_size 0) before any file is written."""
    path = tmp_path / "c.yaml"
    path.write_text("version: 1\nalgos:\n  ppo: {n_steps: 1, batch_size: 2}\n")
    out = tmp_path / "run"
    rc = main(["train", "Probe-Match-v0", "--algo", "ppo", "--steps", "64", "--config", str(path),
               "--out", str(out), "--seed", "-1"])  # fmt: skip
    assert rc == 2 and "seed must be in [0, " in capsys.readouterr().err
    assert not out.exists()


def test_packaged_configs__configs_dir_is_package_data():
    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    data = pyproject["tool"]["setuptools"]["package-data"]["gymforge.baselines"]
    assert {"configs/*.yaml", "configs/ondevice/*.yaml"} <= set(data)
