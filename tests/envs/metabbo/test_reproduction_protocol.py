"""The MetaBBO reproduction's clean protocol: frozen, split cleanly, and every test run ledgered."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from gymforge.envs.metabbo.problems import split_functions

ROOT = Path(__file__).resolve().parents[3]
PROTOCOL = ROOT / "benchmarks" / "metabbo_protocol.json"
LEDGER = ROOT / "benchmarks" / "results" / "metabbo_test_ledger.md"


def test_the_protocol_is_the_one_whose_hash_the_ledger_records():
    digest = hashlib.sha256(PROTOCOL.read_bytes()).hexdigest()
    assert f"`{digest}`" in LEDGER.read_text(encoding="utf-8"), (
        "the protocol changed after its hash was recorded: a changed protocol is a new one "
        "(new file, new ledger section), never an edit"
    )


def test_validation_and_test_splits_do_not_overlap():
    protocol = json.loads(PROTOCOL.read_text(encoding="utf-8"))
    validation, test = protocol["validation"], protocol["test"]
    assert tuple(validation["function_ids"]) == split_functions("easy", "train")
    assert tuple(test["function_ids"]) == split_functions("easy", "test")
    assert not set(validation["function_ids"]) & set(test["function_ids"])
    assert validation["instance_id"] != test["instance_id"]
    assert len(test["function_ids"]) >= 8 and test["seeds"] == list(range(1, 20))


def test_every_recorded_test_split_evaluation_has_a_ledger_row():
    ledger = LEDGER.read_text(encoding="utf-8")
    results = sorted((ROOT / "benchmarks" / "results").glob("metabbo_offline*.json"))
    test_runs = []
    for path in results:
        data = json.loads(path.read_text(encoding="utf-8"))
        test_split = data.get("settings", {}).get("test", {})
        if "results" in data and test_split.get("subset") == "test":
            test_runs.append(path.name)
    assert test_runs, "no test-split results found: the check would be vacuous"
    missing = [name for name in test_runs if f"`{name}`" not in ledger]
    assert not missing, f"test-split evaluations without a ledger row: {missing}"
