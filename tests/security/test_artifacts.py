"""Submitted and user-given agent files are data: a pickle payload in an SB3 zip never runs.

The payload is real: SB3's own loader runs it (the first test), so every other test here would
fail on a loader that unpickles. The poisoned model otherwise plays exactly like the clean one.
"""

from __future__ import annotations

import base64
import json
import pickle
import sys
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "leaderboards"))
from leaderboard_helpers import ENV_ID, TASK, fixed_wait_model, meta, small_root

from gymforge.baselines.agent_loader import build_agent, parse_agent_spec
from gymforge.baselines.sb3.zip_reader import load_policy


class _Payload:
    """Unpickling this creates the file ``path`` (what a hostile payload could do instead)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def rewrite_data(path: Path, edit) -> None:
    """Rewrite the ``data`` entry of an SB3 zip in place with ``edit(data)``."""
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(entries["data"])
    edit(data)
    entries["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, blob in entries.items():
            archive.writestr(name, blob)


def poison(path: Path, marker: Path) -> Path:
    """Add an entry SB3's loader deserialises (and then ignores) holding the payload."""
    blob = base64.b64encode(pickle.dumps(_Payload(marker))).decode()

    def edit(data):
        data["_extra"] = {":type:": "<class 'object'>", ":serialized:": blob}

    rewrite_data(path, edit)
    return path


@pytest.fixture
def poisoned(tmp_path):
    clean = fixed_wait_model(tmp_path / "clean.zip", 18)
    bad = tmp_path / "bad.zip"
    bad.write_bytes(clean.read_bytes())
    marker = tmp_path / "payload-ran"
    return clean, poison(bad, marker), marker


def test_security__sb3s_own_loader_runs_the_payload(poisoned):
    """The control: the payload is live, so a loader that unpickles is caught below."""
    from stable_baselines3 import PPO

    _, bad, marker = poisoned
    PPO.load(str(bad), device="cpu")
    assert marker.exists()


def test_security__evaluate_reads_the_poisoned_model_as_data(poisoned):
    clean, bad, marker = poisoned
    env = gym.make(ENV_ID, horizon=50)
    agents = [build_agent(parse_agent_spec(str(p), ENV_ID), lambda: env) for p in (clean, bad)]
    assert not marker.exists()
    obs, info = env.reset(seed=3)
    for _ in range(20):  # the poisoned model still plays exactly like the clean one
        actions = [agent.act(obs, info) for agent in agents]
        np.testing.assert_array_equal(actions[0], actions[1])
        obs, _, _, _, info = env.step(actions[0])
    assert int(actions[0][0]) == 18


def test_security__batched_rollout_reads_the_poisoned_model_as_data(poisoned, tmp_path):
    from gymforge.cli import load_agent
    from gymforge.registry import get_spec

    _, bad, marker = poisoned
    env = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "model.zip").write_bytes(bad.read_bytes())
    config = {"format": "gymforge-sb3-agent", "format_version": 1, "algo": "ppo"}
    config |= {"env_id": ENV_ID, "env_kwargs": {}, "frame_stack": 1}
    (folder / "config.json").write_text(json.dumps(config))
    agent = load_agent(get_spec(ENV_ID), str(folder), env, batched=True)
    obs, _ = env.reset(seed=0)
    assert np.asarray(agent.act(np.asarray(obs))).reshape(-1).tolist() == [18, 18]
    assert not marker.exists()


def test_security__submit_and_verify_never_run_the_payload(poisoned, tmp_path):
    from gymforge.leaderboards.submission import submit
    from gymforge.leaderboards.verify import verify

    _, bad, marker = poisoned
    root = small_root(tmp_path / "board")
    submit(root, TASK, str(bad), meta("Wait 18, poisoned"), submission_id="20260101-wait")
    report = verify(root, full={f"{TASK}/*"})
    assert report.episodes_rerun == 3
    assert not marker.exists()
    # the row itself is fine: the reader ignores the payload entry
    assert not [p for p in report.problems if "20260101-wait" in p and "re-ran" in p]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["policy_class"].update({"__module__": "evil.policies"}), "custom code"),
        (
            lambda d: d["policy_kwargs"].update({"features_extractor_class": "<class 'x.Y'>"}),
            "features_extractor_class cannot be read safely",
        ),
        (
            lambda d: d["policy_kwargs"].update({"activation_fn": "<class 'os.system'>"}),
            "activation_fn",
        ),
        (lambda d: d["observation_space"].update({"_shape": "__import__('os')"}), "plain value"),
    ],
)
def test_security__what_cannot_be_read_safely_is_refused_by_name(tmp_path, edit, message):
    path = fixed_wait_model(tmp_path / "model.zip", 18)

    def edit_with_kwargs(data):
        data.setdefault("policy_kwargs", {})
        if not isinstance(data["policy_kwargs"], dict) or ":type:" not in data["policy_kwargs"]:
            data["policy_kwargs"] = {":type:": "<class 'dict'>", **data["policy_kwargs"]}
        edit(data)

    rewrite_data(path, edit_with_kwargs)
    env = gym.make(ENV_ID)
    with pytest.raises(ValueError, match=message):
        load_policy(path, "ppo", env.action_space)


def test_security__oversized_entries_are_refused_before_reading(tmp_path, monkeypatch):
    from gymforge.baselines.sb3 import zip_reader

    path = fixed_wait_model(tmp_path / "model.zip", 18)
    monkeypatch.setattr(zip_reader, "MAX_WEIGHTS_BYTES", 1024)
    with pytest.raises(ValueError, match=r"'policy.pth' is \d+ bytes; at most 1024"):
        load_policy(path, "ppo", gym.make(ENV_ID).action_space)


def test_security__a_zip_whose_weights_are_a_pickle_is_refused(tmp_path):
    path = fixed_wait_model(tmp_path / "model.zip", 18)
    marker = tmp_path / "payload-ran"
    with zipfile.ZipFile(path) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    entries["policy.pth"] = pickle.dumps(_Payload(marker))
    with zipfile.ZipFile(path, "w") as archive:
        for name, blob in entries.items():
            archive.writestr(name, blob)
    with pytest.raises(ValueError, match="cannot be read as a plain state dict"):
        load_policy(path, "ppo", gym.make(ENV_ID).action_space)
    assert not marker.exists()
