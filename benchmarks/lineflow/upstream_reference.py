"""Upstream's figure for a controller of the LineFlow controllers benchmark, from the anchors.

The anchors (``lineflow_upstream_anchors.json``, measured by ``upstream_anchors.py``
against the installed lineflow-rl) are keyed by line (``WT``, ``PD5``, ...) and upstream's
controller; this module maps the controllers benchmark's (scenario, k, controller name) onto
them, so its "upstream" column is measured, not typed in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ANCHORS_FILE = Path(__file__).resolve().parents[1] / "results" / "lineflow_upstream_anchors.json"
LINE_KEYS = {
    "waiting_time": "WT",
    "waiting_time_jump": "WTJ",
    "part_distribution": "PD",
    "worker_assignment": "WA",
    "complex_line": "CL",
}
#: this benchmark's controller name -> upstream's controller it stands beside, per line
CONTROLLERS = {
    "WT": {"optimal": "optimal", "fixed waiting time 19": "fixed waiting time 19"},
    "WTJ": {
        "heuristic": "heuristic",
        "fixed waiting time 18": "fixed waiting time 18.5",
        "fixed waiting time 19": "fixed waiting time 18.5",
    },
    "PD": {
        "greedy": "greedy",
        "random": "random",
        "routing: round-robin per carrier": "alternate",
    },
    "WA": {
        "best_partition": "partition (2, 3, 4)",
        "partition (2, 3, 4)": "partition (2, 3, 4)",
        "round-robin workers": "round-robin workers",
    },
    "CL": {"heuristic": "heuristic"},
}


def load_anchors(path: Path = ANCHORS_FILE) -> dict[tuple[str, str], dict[str, Any]]:
    """The measured anchors by (line key, upstream controller); empty when not measured."""
    if not path.exists():
        return {}
    document = json.loads(path.read_text())
    return {(row["key"], row["controller"]): row for row in document["anchors"]}


def upstream_reference(
    anchors: dict[tuple[str, str], dict[str, Any]], scenario: str, k: int | None, name: str
) -> str | None:
    """``"158.3 (158–159)"``: upstream's mean return (min–max over seeds) for the controller
    ``name`` on (``scenario``, ``k``), naming upstream's controller where it differs; ``None``
    where upstream has no counterpart."""
    family = LINE_KEYS.get(scenario)
    if family is None:
        return None
    upstream = CONTROLLERS[family].get(name)
    row = anchors.get((f"{family}{k or ''}", upstream)) if upstream else None
    if row is None:
        return None
    figure = f"{row['mean_return']:.1f} ({row['min_return']:.0f}–{row['max_return']:.0f})"
    return figure if upstream == name else f"{upstream}: {figure}"
