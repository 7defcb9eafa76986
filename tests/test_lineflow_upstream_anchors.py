"""The LineFlow controllers benchmark's upstream column comes from the measured anchors.

``benchmarks/lineflow/upstream_anchors.py`` measures upstream's controllers on upstream's
simulator; ``benchmarks/lineflow/upstream_reference.py`` maps them onto the controllers
benchmark's rows. These tests check the mapping on known answers, that the committed results
cover every anchor, that the committed controllers results carry exactly the figures the anchors
give, and (where lineflow-rl is installed) that an anchor reproduces its recorded episode.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import common
from benchmarks.lineflow import upstream_anchors as lineflow_upstream_anchors
from benchmarks.lineflow import upstream_reference as reference

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"

ANCHORS = {
    "anchors": [
        {
            "key": "PD5",
            "controller": "alternate",
            "mean_return": 332.3,
            "min_return": 325.0,
            "max_return": 339.0,
        }
    ]
}


def test_reference_maps_a_controller_onto_upstreams(tmp_path: Path) -> None:
    path = tmp_path / "anchors.json"
    path.write_text(json.dumps(ANCHORS))
    anchors = reference.load_anchors(path)
    name = "routing: round-robin per carrier"
    assert reference.upstream_reference(anchors, "part_distribution", 5, name) == (
        "alternate: 332.3 (325–339)"
    )
    assert reference.upstream_reference(anchors, "part_distribution", 4, name) is None
    assert reference.upstream_reference(anchors, "part_distribution", 5, "greedy") is None
    assert reference.upstream_reference(anchors, "multi_sink", None, "greedy") is None
    assert reference.load_anchors(tmp_path / "missing.json") == {}


def test_committed_anchors_cover_every_anchor_and_seed() -> None:
    anchors = lineflow_upstream_anchors
    document = json.loads((RESULTS / "lineflow_upstream_anchors.json").read_text())
    recorded = {(row["key"], row["controller"]) for row in document["anchors"]}
    assert recorded == {(a.key, a.controller) for a in anchors.ANCHORS}
    for row in document["anchors"]:
        assert [run["seed"] for run in row["runs"]] == document["seeds"] == [0, 1, 2]
        returns = [run["return"] for run in row["runs"]]
        assert row["mean_return"] == pytest.approx(sum(returns) / len(returns))


def test_controllers_results_carry_the_anchors_figures() -> None:
    anchors = reference.load_anchors()
    report = json.loads((RESULTS / "lineflow_controllers.json").read_text())
    seen = 0
    for entry in report["ids"].values():
        for row in entry["controllers"]:
            expected = reference.upstream_reference(
                anchors, entry["scenario"], entry["k"], row["name"]
            )
            assert row["reference"] == expected, (entry["scenario"], row["name"])
            seen += expected is not None
    assert seen >= 10
    markdown = (RESULTS / "lineflow_controllers.md").read_text()
    assert "158.7 (158–159)" in markdown  # WaitingTime's optimal agent on upstream


def test_an_anchor_reproduces_its_recorded_episode() -> None:
    pytest.importorskip("lineflow")
    pytest.importorskip("gekko")
    anchors = lineflow_upstream_anchors
    loaded, why_not = common.import_lineflow()
    assert loaded is not None, why_not
    document = json.loads((RESULTS / "lineflow_upstream_anchors.json").read_text())
    row = next(r for r in document["anchors"] if (r["key"], r["controller"]) == ("WT", "optimal"))
    anchor = next(a for a in anchors.ANCHORS if (a.key, a.controller) == ("WT", "optimal"))
    run = anchors.run_anchor(loaded[1], anchor, seed=0)
    assert run["return"] == row["runs"][0]["return"]
    assert run["parts"] == row["runs"][0]["parts"]
