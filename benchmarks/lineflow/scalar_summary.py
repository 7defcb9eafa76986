"""The summary of ``scalar.py``: medians per scenario, system and horizon, and the verdicts
against the speed, horizon and memory targets.

Pure functions of the measurements, so the report can be rebuilt from a results file.
"""

from __future__ import annotations

import statistics
from typing import Any

from benchmarks.lineflow.scalar_setup import (
    GYMFORGE,
    HORIZON_TARGET,
    LINEFLOW,
    LONG_HORIZON,
    MEMORY_TARGET,
    SHORT_HORIZON,
    SPEED_TARGET,
    Episode,
)

# --------------------------------------------------------------------------------------------
# Summary and verdicts


def summary_key(scenario: str, system: str, horizon: int, phase: str = "") -> str:
    """The key of one group of episodes in the summary (``phase`` only for "paired")."""
    return f"{scenario}/{system}@{horizon}" + ("/paired" if phase == "paired" else "")


def summarise(episodes: list[Episode]) -> dict[str, dict[str, Any]]:
    """Median, min and max steps/s per ``"scenario/system@horizon"``."""
    groups: dict[str, list[Episode]] = {}
    for episode in episodes:
        key = summary_key(episode.scenario, episode.system, episode.horizon, episode.phase)
        groups.setdefault(key, []).append(episode)
    summary = {}
    for key, group in groups.items():
        rates = [e.steps_per_s for e in group]
        summary[key] = {
            "scenario": group[0].scenario,
            "system": group[0].system,
            "horizon": group[0].horizon,
            "phase": group[0].phase,
            "episodes": len(group),
            "median_steps_per_s": statistics.median(rates),
            "min_steps_per_s": min(rates),
            "max_steps_per_s": max(rates),
            "median_reset_s": statistics.median(e.reset_s for e in group),
            "median_first_1000_steps_per_s": statistics.median(
                e.first_1000_steps_per_s for e in group
            ),
            "median_last_1000_steps_per_s": statistics.median(
                e.last_1000_steps_per_s for e in group
            ),
            "median_first_tenth_steps_per_s": statistics.median(
                e.first_tenth_steps_per_s for e in group
            ),
            "median_last_tenth_steps_per_s": statistics.median(
                e.last_tenth_steps_per_s for e in group
            ),
        }
    return summary


def median_rate(
    summary: dict[str, dict[str, Any]], scenario: str, system: str, horizon: int, phase: str = ""
) -> float | None:
    """The median steps/s of one group, or ``None`` when it was not measured."""
    row = summary.get(summary_key(scenario, system, horizon, phase))
    return None if row is None else row["median_steps_per_s"]


def speed_verdicts(summary: dict[str, dict[str, Any]], scenarios: list[str]) -> dict[str, Any]:
    """Target 1 per scenario: gymforge / lineflow-rl median steps/s at the short horizon."""
    rows = {}
    for key in scenarios:
        ours = median_rate(summary, key, GYMFORGE, SHORT_HORIZON)
        theirs = median_rate(summary, key, LINEFLOW, SHORT_HORIZON)
        ratio = None if ours is None or theirs is None else ours / theirs
        rows[key] = {
            "gymforge_median_steps_per_s": ours,
            "lineflow_median_steps_per_s": theirs,
            "ratio": ratio,
            "passed": None if ratio is None else ratio >= SPEED_TARGET,
        }
    return {"target": f">= {SPEED_TARGET:g}x", "scenarios": rows, "passed": all_passed(rows)}


def horizon_verdicts(summary: dict[str, dict[str, Any]], scenarios: list[str]) -> dict[str, Any]:
    """Target 2 per scenario: gymforge steps/s at the long horizon / at the short one.

    The verdict uses the short episodes paired with (run between the segments of) the long
    episode; the ratio to the target-1 median, measured at another time, is reported too.
    """
    rows = {}
    for key in scenarios:
        short = median_rate(summary, key, GYMFORGE, SHORT_HORIZON)
        paired = median_rate(summary, key, GYMFORGE, SHORT_HORIZON, "paired")
        long = median_rate(summary, key, GYMFORGE, LONG_HORIZON)
        ratio = None if paired is None or long is None else long / paired
        long_row = summary.get(summary_key(key, GYMFORGE, LONG_HORIZON))
        rows[key] = {
            "short_median_steps_per_s": short,
            "paired_short_median_steps_per_s": paired,
            "long_steps_per_s": long,
            "ratio_to_target1_median": None if short is None or long is None else long / short,
            "long_last_over_first_tenth": None
            if long_row is None
            else long_row["median_last_tenth_steps_per_s"]
            / long_row["median_first_tenth_steps_per_s"],
            "ratio": ratio,
            "passed": None if ratio is None else ratio >= HORIZON_TARGET,
        }
    return {"target": f">= {HORIZON_TARGET:g}", "scenarios": rows, "passed": all_passed(rows)}


def memory_verdict(summary: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Target 3: gymforge / lineflow-rl median peak RSS, and torch kept out of gymforge."""
    ours = summary.get(GYMFORGE, {}).get("median_peak_rss_kib")
    theirs = summary.get(LINEFLOW, {}).get("median_peak_rss_kib")
    ratio = None if ours is None or theirs is None else ours / theirs
    torch_imported = summary.get(GYMFORGE, {}).get("torch_imported")
    return {
        "target": f"<= {MEMORY_TARGET:g}",
        "gymforge_median_peak_rss_kib": ours,
        "lineflow_median_peak_rss_kib": theirs,
        "ratio": ratio,
        "passed": None if ratio is None else ratio <= MEMORY_TARGET,
        "gymforge_torch_imported": torch_imported,
        "torch_check_passed": None if torch_imported is None else not torch_imported,
    }


def all_passed(rows: dict[str, dict[str, Any]]) -> bool | None:
    """``False`` if any row failed, ``True`` if all passed, else ``None`` (not all measured)."""
    verdicts = [row["passed"] for row in rows.values()]
    if False in verdicts:
        return False
    if None in verdicts or not verdicts:
        return None
    return True
