"""Protocols: every committed one loads and is consistent with the registry; bad ones fail clearly."""

from __future__ import annotations

import copy
import json

import pytest
from leaderboard_helpers import TASK, protocol_data

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.files import write_json_atomic
from gymforge.leaderboards.protocol import (
    ProtocolError,
    all_protocols,
    list_tasks,
    load_protocol,
    resolve_task,
)
from gymforge.registry import get_spec

COMMITTED = all_protocols(DEFAULT_ROOT)


@pytest.mark.parametrize("protocol", COMMITTED, ids=lambda p: p.task)
def test_leaderboards__committed_protocol_matches_the_registry(protocol):
    spec = get_spec(protocol.env_id)  # raises for an unknown id
    if spec.capabilities.multi_agent:  # evaluated as PettingZoo parallel agents
        assert spec.parallel_entry_point is not None and protocol.offline_dataset is None
    assert dict(spec.kwargs) == protocol.data["env"]["registry_kwargs"]
    assert protocol.normalisation_scores() is not None, "protocol is not calibrated"
    low, high = protocol.normalisation_scores()
    # the reference agent beats random on every committed task
    assert high > low if protocol.higher_is_better else high < low
    norm = protocol.data["normalisation"]
    offline = protocol.offline_dataset
    if offline is None:
        assert norm["reference"]["agent"] in spec.agents
    else:  # offline boards: the reference is one of the protocol's offline learners
        assert norm["reference"]["agent"] in offline["agents"].values()
        assert spec.capabilities.offline_dataset
        assert offline["sha256"] is not None and len(offline["sha256"]) == len(protocol.seeds)
    train = protocol.data["training_seeds"]
    assert all(not train["start"] <= s < train["stop"] for s in protocol.seeds)


def test_leaderboards__every_lineflow_benchmark_task_has_a_protocol():
    tasks = set(list_tasks(DEFAULT_ROOT))
    for name in ("WaitingTime", "WaitingTimeJump", "PartDistribution", "WorkerAssignment"):
        assert f"lineflow/{name}" in tasks
    assert "lineflow/ComplexLine" in tasks


def test_leaderboards__tasks_are_the_protocol_files(tmp_path):
    write_json_atomic(tmp_path / "protocols" / f"{TASK}.json", protocol_data())
    assert list_tasks(tmp_path) == [TASK]
    assert resolve_task(tmp_path, "ShortWaitingTime") == TASK
    assert resolve_task(tmp_path, "LineFlow-WaitingTime-v0") == TASK
    with pytest.raises(ProtocolError, match="unknown task 'Nope'"):
        resolve_task(tmp_path, "Nope")


def _broken(tmp_path, edit):
    data = copy.deepcopy(protocol_data())
    edit(data)
    path = tmp_path / "protocols" / f"{TASK}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return lambda: load_protocol(tmp_path, TASK)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["evaluation"].update(seeds=[5, 6, 7]), "disjoint from the training seeds"),
        (lambda d: d["evaluation"].update(seeds=[-1, 2**62 + 1, 2**62 + 2]), "non-negative"),
        (lambda d: d["evaluation"].update(episodes=4), "evaluation.episodes"),
        (lambda d: d["evaluation"].update(seeds=[1, 1]), "distinct"),
        (lambda d: d["env"].update(version=1), "env.version"),
        (lambda d: d.pop("tolerance"), "'tolerance' is missing"),
        (lambda d: d.update(extra=1), "'extra' is not a protocol field"),
        (lambda d: d["metric"].update(name="score"), "metric.name"),
        (lambda d: d.update(task="lineflow/Other"), "field 'task'"),
        (lambda d: d["normalisation"]["random"].update(score=1.0), "both scores or neither"),
        (lambda d: d["evaluation"].update(verify_episodes=0), "verify_episodes"),
        (lambda d: d["metric"].update(transform={"kind": "exp"}), "metric.transform"),
        (
            lambda d: d["metric"].update(transform={"kind": "log10", "floor": 0}),
            "metric.transform.floor",
        ),
        (lambda d: d["metric"].update(scale=2), "metric.scale"),
    ],
)
def test_leaderboards__malformed_protocol_is_rejected_naming_the_field(tmp_path, edit, message):
    load = _broken(tmp_path, edit)
    with pytest.raises(ProtocolError, match=message):
        load()


def test_leaderboards__protocol_must_be_json(tmp_path):
    path = tmp_path / "protocols" / f"{TASK}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_protocol(tmp_path, TASK)


def test_leaderboards__normalise_maps_random_to_0_and_reference_to_1(tmp_path):
    data = protocol_data()
    data["normalisation"]["random"]["score"] = 60.0
    data["normalisation"]["reference"]["score"] = 160.0
    write_json_atomic(tmp_path / "protocols" / f"{TASK}.json", data)
    protocol = load_protocol(tmp_path, TASK)
    assert protocol.normalise(60.0) == 0.0
    assert protocol.normalise(160.0) == 1.0
    assert protocol.normalise(135.0) == pytest.approx(0.75)


def test_leaderboards__log10_metric_transform_floors_the_raw_value(tmp_path):
    data = protocol_data()
    data["metric"]["transform"] = {"kind": "log10", "floor": 1e-8}
    write_json_atomic(tmp_path / "protocols" / f"{TASK}.json", data)
    protocol = load_protocol(tmp_path, TASK)
    assert protocol.metric_value(100.0) == pytest.approx(2.0)
    assert protocol.metric_value(0.0) == pytest.approx(-8.0)
    data["metric"].pop("transform")
    write_json_atomic(tmp_path / "protocols" / f"{TASK}.json", data)
    assert load_protocol(tmp_path, TASK).metric_value(0.0) == 0.0
