"""Shared report helpers of ``benchmarks`` rebuild the recorded reports from their JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import common

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


@pytest.mark.parametrize(
    ("name", "title", "draws_header", "ratio"),
    [
        (
            "metabbo_reset",
            "MetaBBO reset: v1 counter draws vs v0 per-instance generators",
            "problem draws alone",
            "draws_s",
        ),
        (
            "confounders_reset",
            "Confounder stream reset: v1 counter draws vs v0 generators",
            "draws alone",
            "reset_s",
        ),
    ],
)
def test_reset_table_rebuilds_the_recorded_report(name, title, draws_header, ratio):
    result = json.loads((RESULTS / f"{name}.json").read_text())
    lines = common.reset_table(title, result, draws_header, ratio)
    recorded = (RESULTS / f"{name}.md").read_text().splitlines()
    assert recorded[: len(lines)] == lines
    # the ratio column: v0 / v1 of the named figure at the same batch size
    v1 = next(r for r in result["rows"] if r["env_id"].endswith("-v1"))
    v0 = next(
        r for r in result["rows"] if r["env_id"].endswith("-v0") and r["num_envs"] == v1["num_envs"]
    )
    row = next(
        line for line in lines if line.startswith(f"| `{v1['env_id']}` | {v1['num_envs']} |")
    )
    assert row.endswith(f"| {v0[ratio] / v1[ratio]:.1f}x |")
