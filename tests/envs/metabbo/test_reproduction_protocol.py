"""The MetaBBO reproduction's clean protocol: frozen, split cleanly, and every test run ledgered."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from gymforge.envs.metabbo.problems import split_functions

ROOT = Path(__file__).resolve().parents[3]
PROTOCOL = ROOT / "benchmarks" / "metabbo" / "protocol.json"
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
    folder = ROOT / "benchmarks" / "results"
    # the archived exploratory runs evaluated on the test split too: they keep their rows
    results = sorted(
        [*folder.glob("metabbo_offline*.json"), *folder.glob("archive/metabbo_offline*.json")]
    )
    test_runs = []
    for path in results:
        data = json.loads(path.read_text(encoding="utf-8"))
        test_split = data.get("settings", {}).get("test", {})
        if "results" in data and test_split.get("subset") == "test":
            test_runs.append(path.name)
    assert test_runs, "no test-split results found: the check would be vacuous"
    missing = [name for name in test_runs if f"`{name}`" not in ledger]
    assert not missing, f"test-split evaluations without a ledger row: {missing}"


def test_every_protocol_test_evaluation_has_a_ledger_row_and_the_frozen_protocol():
    ledger = LEDGER.read_text(encoding="utf-8")
    digest = hashlib.sha256(PROTOCOL.read_bytes()).hexdigest()
    for path in sorted((ROOT / "benchmarks" / "results" / "metabbo_test").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        assert f"`{path.name}`" in ledger, f"{path.name} has no ledger row"
        assert record["protocol_sha256"] == digest
        assert record["split"]["n_seeds"] == 19 and len(record["runs"]["best_error"]) == 152


def test_the_test_evaluation_refuses_a_second_run_of_a_row_and_pairs_runs(tmp_path, capsys):
    """A smoke-size run (2 functions, 2 seeds, 10 generations) into a scratch folder."""
    from benchmarks.metabbo import test as metabbo_test

    args = ["--quick", "--out", str(tmp_path), "--presets", "alg0", "--rows", "random,shade"]
    assert metabbo_test.main([*args, "--references"]) == 0
    names = sorted(p.name for p in tmp_path.glob("*.json"))
    assert names == [
        "alg0-random.json",
        "alg0-shade.json",
        "any-cmaes.json",
        "any-random_search.json",
    ]
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    # a repeated row is refused before any work, even behind a new one
    with pytest.raises(SystemExit, match="evaluates each row's final model once"):
        metabbo_test.main([*args[:-1], "jde,shade"])
    with pytest.raises(SystemExit, match="needs --qmamba alg0=MODEL_FOLDER"):
        metabbo_test.main([*args[:-1], "qmamba"])
    for row in ("qmamba_chosen_epochs", "qmamba_regularised_chosen_epochs"):
        flag = "--" + row.replace("_", "-")
        with pytest.raises(SystemExit, match=f"needs {flag} alg0=MODEL_FOLDER"):
            metabbo_test.main([*args[:-1], row])
    # the Alg0 expert is registered sampling: its sampled row is its ppo_expert row
    with pytest.raises(SystemExit, match="registered sampling"):
        metabbo_test.main([*args[:-1], "ppo_expert_sampled"])
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before
    summary = metabbo_test.summarise(tmp_path)["alg0"]
    shade = json.loads((tmp_path / "alg0-shade.json").read_text())
    random = json.loads((tmp_path / "alg0-random.json").read_text())
    # known answer: the paired Perf difference is the mean of run-by-run differences
    e0 = np.asarray(random["runs"]["initial_error"])
    diff = (1 - np.asarray(shade["runs"]["best_error"]) / e0) - (
        1 - np.asarray(random["runs"]["best_error"]) / e0
    )
    assert summary["shade"]["vs_random"]["perf"]["mean"] == pytest.approx(diff.mean())
    # per function: the runs are function-major, two seeds per function
    log10 = [np.log10(np.maximum(r["runs"]["best_error"], 1e-8)) for r in (shade, random)]
    by_function = summary["shade"]["log10_vs_random_by_function"]
    assert list(by_function) == [1, 15]
    assert by_function[15].mean() == pytest.approx((log10[0] - log10[1])[2:].mean())
    assert "vs_random" not in summary["random"]
    # random search against itself scores AEI exp(0 + 0) = 1 on every function
    assert summary["random_search"]["aei"] == (
        pytest.approx(1.0),
        (pytest.approx(1.0), pytest.approx(1.0)),
    )
    text = (tmp_path / "metabbo_test.md").read_text()
    assert text.count("| shade |") == 5  # three metric tables, one paired, one per function
    assert "| alg0 | f1 | f15 |" in text
    assert "python -m benchmarks.metabbo.test --quick" in text


def _test_split_tasks() -> list[str]:
    """Boards whose frozen protocol evaluates on the test functions (env kwarg subset='test')."""
    tasks = []
    for path in sorted((ROOT / "leaderboards" / "protocols" / "metabbo").glob("*.json")):
        protocol = json.loads(path.read_text(encoding="utf-8"))
        if protocol["env"].get("kwargs", {}).get("subset") == "test":
            tasks.append(protocol["task"])
    return tasks


def test_every_board_row_on_a_test_split_board_has_a_ledger_row():
    from benchmarks.metabbo.ledger import board_rows, test_split_boards

    ledger = LEDGER.read_text(encoding="utf-8")
    tasks = _test_split_tasks()
    assert tasks and test_split_boards() == tasks
    keys = []
    for task in tasks:
        board = ROOT / "leaderboards" / task / "submissions"
        keys += [f"{task}/{folder.name}" for folder in sorted(board.iterdir())]
    assert len(keys) == len(board_rows()) >= 27
    missing = [key for key in keys if f"`{key}`" not in ledger]
    assert not missing, f"board rows on the test split without a ledger row: {missing}"


def test_the_epoch_22_board_row_has_its_submission_date_and_figures():
    row = next(
        line
        for line in LEDGER.read_text(encoding="utf-8").splitlines()
        if "epoch-22-chosen-on-validation`" in line
    )
    assert "| 2026-12-07 | −2.67 [−3.99, −1.47] | −2.36 [−3.77, −1.10] |" in row


def test_ledger_rows_are_written_once_by_one_function(tmp_path):
    from benchmarks.metabbo.ledger import record_board_row, record_protocol_evaluation

    ledger = tmp_path / "ledger.md"
    ledger.write_text(LEDGER.read_text(encoding="utf-8"), encoding="utf-8")
    task_folder = ROOT / "leaderboards" / "metabbo" / "MetaBBO" / "submissions"
    folder = tmp_path / "metabbo" / "MetaBBO" / "submissions" / "20261208-new-row"
    folder.mkdir(parents=True)
    source = task_folder / "20261207-q-mamba-greedy-alg0-data-epoch-22-chosen-on-validation"
    submission = json.loads((source / "submission.json").read_text())
    submission["id"] = folder.name
    (folder / "submission.json").write_text(json.dumps(submission))
    (folder / "results.json").write_text((source / "results.json").read_text())
    number = record_board_row(folder, ledger)
    assert number == 62
    assert record_board_row(folder, ledger) is None
    text = ledger.read_text(encoding="utf-8")
    rows = text.split("| # | board row |", 1)[1].split("\n\n", 1)[0].splitlines()
    assert rows[-1].startswith("| 62 | `metabbo/MetaBBO/20261208-new-row` ")
    evaluation = tmp_path / "alg0-new.json"
    evaluation.write_text(
        json.dumps(
            {"preset": "alg0", "row": "new", "model": None, "evaluated_at": "2026-12-08 10:00 UTC"}
        )
    )
    assert record_protocol_evaluation(evaluation, ledger) == 63
    rows = ledger.read_text().split("| # | evaluation file", 1)[1].split("\n\n", 1)[0]
    assert rows.splitlines()[-1] == "| 63 | `alg0-new.json` | 2026-12-08 | alg0 | new |"
