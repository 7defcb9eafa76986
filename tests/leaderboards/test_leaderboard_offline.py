"""The offline-dataset track: datasets built by the collector, handed to ``fit``, checked by hash."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from leaderboard_helpers import FITTED, copy_board, meta

from gymforge.baselines.agent_loader import parse_agent_spec
from gymforge.cli import main
from gymforge.envs.cmab.board_dataset import folder_sha256
from gymforge.hashing import sha256_file
from gymforge.leaderboards.calibrate import calibrate
from gymforge.leaderboards.evaluator import episodes_digest, run_episodes
from gymforge.leaderboards.files import read_json, write_json_atomic
from gymforge.leaderboards.protocol import ProtocolError, load_protocol
from gymforge.leaderboards.render import write_all
from gymforge.leaderboards.submission import submit
from gymforge.leaderboards.verify import verify
from gymforge.registry import get_spec

TASK = "cmab/ShortCascadeOffline"
ENV_ID = "OffCMAB-Cascade-v0"
SEEDS = [2**62 + 7_000_000 + i for i in range(3)]
CLCB = "gymforge.agents.cmab.agent:clcb_agent"
N = 50


def offline_protocol(n: int = N) -> dict:
    return {
        "schema": "gymforge.protocol/1",
        "task": TASK,
        "version": 1,
        "title": "Cascade offline, short (test board)",
        "description": "CascadeOffline with 30-step episodes and 50-play datasets, for the tests.",
        "env": {
            "id": ENV_ID,
            "version": 0,
            "kwargs": {"horizon": 30},
            "registry_kwargs": dict(get_spec(ENV_ID).kwargs),
        },
        "evaluation": {"seeds": SEEDS, "episodes": 3, "max_steps": 30, "verify_episodes": 1},
        "training_seeds": {"start": 0, "stop": 2**62},
        "budget": {"train_env_steps": None, "source": "the offline dataset only"},
        "metric": {"name": "return", "higher_is_better": True, "description": "clicks"},
        "record_info": [],
        "normalisation": {
            "random": {"agent": "random", "score": None},
            "reference": {"agent": CLCB, "score": None},
        },
        "tolerance": {"abs": 1e-6},
        "offline_dataset": {
            "kind": "offcmab-logged-plays",
            "logging": "uniform",
            "n": n,
            "options": {},
            "sha256": None,
            "agents": {"clcb": CLCB},
            "description": "50 uniform plays of the episode's instance.",
        },
    }


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A calibrated offline board with a random row and a CLCB row, rendered."""
    root = tmp_path_factory.mktemp("offline")
    write_json_atomic(root / "protocols" / f"{TASK}.json", offline_protocol())
    calibrate(root, TASK)
    submit(root, TASK, "random", meta("Random"), submission_id="20260101-random")
    submit(root, TASK, CLCB, meta("CLCB", method="offline CLCB"), submission_id="20260101-clcb")
    write_all(root)
    return root


@pytest.fixture
def board(pristine, tmp_path):
    return copy_board(pristine, tmp_path)


def _problems(root: Path) -> str:
    report = verify(root)
    assert not report.ok
    return "\n".join(report.problems)


def test_calibrate_records_one_dataset_hash_per_seed(pristine):
    protocol = load_protocol(pristine, TASK)
    hashes = protocol.offline_dataset["sha256"]
    assert len(hashes) == len(SEEDS) and len(set(hashes)) == len(SEEDS)
    assert verify(pristine).ok


def test_dataset_of_each_episode_is_handed_to_fit(pristine):
    protocol = load_protocol(pristine, TASK)
    FITTED.clear()
    record = parse_agent_spec("leaderboard_helpers:RecordingOfflineAgent", ENV_ID)
    episodes = run_episodes(protocol, record)
    # one fit per episode, on the dataset of that episode's instance, without the true params
    assert [m["seed"] for m, _ in FITTED] == SEEDS
    assert all(m["n"] == N and m["logging"] == "uniform" for m, _ in FITTED)
    assert all(params == {} for _, params in FITTED)
    assert [e["dataset_sha256"] for e in episodes] == protocol.offline_dataset["sha256"]
    assert all(e["fit"] is True for e in episodes)
    # CLCB fitted on the data plays the same as the recording wrapper around it
    clcb = run_episodes(protocol, parse_agent_spec(CLCB, ENV_ID))
    assert [e["return"] for e in clcb] == [e["return"] for e in episodes]


def test_agent_without_fit_plays_without_the_data(pristine):
    results = read_json(
        pristine / "cmab/ShortCascadeOffline/submissions/20260101-random/results.json", "results"
    )
    assert all(e["fit"] is False for e in results["episodes"])
    hashes = load_protocol(pristine, TASK).offline_dataset["sha256"]
    assert [e["dataset_sha256"] for e in results["episodes"]] == hashes


def test_collector_command_reproduces_the_protocol_hash(pristine, tmp_path):
    out = tmp_path / "data"
    argv = ["dataset", "collect", ENV_ID, "--logging", "uniform", "--n", str(N)]
    assert main([*argv, "--seed", str(SEEDS[1]), "--out", str(out)]) == 0
    assert folder_sha256(out) == load_protocol(pristine, TASK).offline_dataset["sha256"][1]


def test_verify_rejects_a_protocol_whose_datasets_no_longer_match(board):
    path = board / "protocols" / f"{TASK}.json"
    data = read_json(path, "protocol")
    data["offline_dataset"]["sha256"][0] = "0" * 64
    write_json_atomic(path, data)
    problems = _problems(board)
    assert f"protocol {TASK}: the offline dataset of episode 0 (seed {SEEDS[0]}) hashes to" in (
        problems
    )
    assert f"but the protocol records {'0' * 64}" in problems


def test_verify_rejects_results_on_a_mismatched_dataset(board):
    folder = board / "cmab/ShortCascadeOffline/submissions/20260101-clcb"
    results = read_json(folder / "results.json", "results")
    results["episodes"][1]["dataset_sha256"] = "f" * 64
    results["episodes_sha256"] = episodes_digest(results["episodes"])
    write_json_atomic(folder / "results.json", results)
    submission = read_json(folder / "submission.json", "submission")
    submission["results_sha256"] = sha256_file(folder / "results.json")
    write_json_atomic(folder / "submission.json", submission)
    problems = _problems(board)
    assert "episode 1 was evaluated on offline dataset 'ffff" in problems
    assert "(mismatched dataset)" in problems


def test_evaluation_refuses_an_uncalibrated_offline_protocol(tmp_path):
    write_json_atomic(tmp_path / "protocols" / f"{TASK}.json", offline_protocol())
    protocol = load_protocol(tmp_path, TASK)
    with pytest.raises(
        ValueError, match=re.escape("offline_dataset.sha256 is null; run `gymforge")
    ):
        run_episodes(protocol, parse_agent_spec(CLCB, ENV_ID))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("kind", "minari", "'offline_dataset.kind' must be one of"),
        ("n", 0, "'offline_dataset.n' must be an integer >= 1"),
        ("sha256", ["ab"], "'offline_dataset.sha256' must be null (not calibrated) or a list of 3"),
        ("agents", {"clcb": "no-colon"}, "'offline_dataset.agents' must map names"),
        ("extra", 1, "'offline_dataset.extra' is not an offline_dataset field"),
    ],
)
def test_protocol_checks_the_offline_block(tmp_path, field, value, message):
    data = offline_protocol()
    data["offline_dataset"][field] = value
    path = tmp_path / "protocols" / f"{TASK}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    with pytest.raises(ProtocolError, match=re.escape(message)):
        load_protocol(tmp_path, TASK)
