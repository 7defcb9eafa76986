"""The report of ``scalar.py``: the machine facts recorded with the results and the Markdown
tables (speed, horizon, memory, verdicts).

Formatting only; every figure it prints was computed by the summary.
"""

from __future__ import annotations

import platform
import sys
from typing import Any

from benchmarks import common
from benchmarks.common import fmt_rate, fmt_verdict
from benchmarks.lineflow.scalar_setup import (
    BASE_SEED,
    GYMFORGE,
    HORIZON_TARGET,
    LINEFLOW,
    LONG_HORIZON,
    MEMORY_TARGET,
    SHORT_HORIZON,
    SPEED_TARGET,
    VERSIONED_PACKAGES,
    WARM_UP_STEPS,
)
from benchmarks.lineflow.scalar_summary import median_rate, summary_key

# --------------------------------------------------------------------------------------------
# Reporting


def machine_info() -> dict[str, Any]:
    """Platform, CPUs, interpreter, thread settings and package versions."""
    torch = sys.modules.get("torch")
    extra = {
        "python_implementation": platform.python_implementation(),
        "torch_num_threads": None if torch is None else torch.get_num_threads(),
    }
    return common.machine_info(VERSIONED_PACKAGES, extra)


def fmt_mib(kib: float | None) -> str:
    """KiB as MiB with one decimal."""
    return "–" if kib is None else f"{kib / 1024:,.1f}"


def fmt_range(row: dict[str, Any] | None) -> str:
    """``median (min–max)`` of a summary row."""
    if row is None:
        return "–"
    if row["episodes"] == 1:
        return fmt_rate(row["median_steps_per_s"])
    return (
        f"{fmt_rate(row['median_steps_per_s'])} "
        f"({fmt_rate(row['min_steps_per_s'])}–{fmt_rate(row['max_steps_per_s'])})"
    )


def speed_table(report: dict[str, Any]) -> list[str]:
    """Target 1 as Markdown lines."""
    summary = report["summary"]
    lines = [
        f"| scenario | gymforge steps/s, median (min–max) | lineflow-rl steps/s, median "
        f"(min–max) | ratio | ≥ {SPEED_TARGET:g}× |",
        "|---|---|---|---:|---|",
    ]
    for key, row in report["targets"]["speed"]["scenarios"].items():
        ratio = "–" if row["ratio"] is None else f"{row['ratio']:.1f}×"
        lines.append(
            f"| {key} | {fmt_range(summary.get(summary_key(key, GYMFORGE, SHORT_HORIZON)))} "
            f"| {fmt_range(summary.get(summary_key(key, LINEFLOW, SHORT_HORIZON)))} "
            f"| {ratio} | {fmt_verdict(row['passed'])} |"
        )
    return lines


def horizon_table(report: dict[str, Any]) -> list[str]:
    """Target 2 as Markdown lines (plus lineflow-rl's long WT episode, if run)."""
    summary = report["summary"]
    lines = [
        f"| scenario | system | {LONG_HORIZON:,}-step steps/s | paired {SHORT_HORIZON:,}-step "
        f"median steps/s | **long / paired** | ≥ {HORIZON_TARGET:g} | target-1 median steps/s "
        f"| long / target-1 | first / last {LONG_HORIZON // 10:,} steps of the long one |",
        "|---|---|---:|---:|---:|---|---:|---:|---|",
    ]

    def ratio_text(value: float | None) -> str:
        return "–" if value is None else f"{value:.2f}"

    for key, row in report["targets"]["horizon"]["scenarios"].items():
        for system in (GYMFORGE, LINEFLOW):
            long_row = summary.get(summary_key(key, system, LONG_HORIZON))
            if system == LINEFLOW and long_row is None:
                continue
            short = median_rate(summary, key, system, SHORT_HORIZON)
            long = None if long_row is None else long_row["median_steps_per_s"]
            chunks = (
                "–"
                if long_row is None
                else f"{fmt_rate(long_row['median_first_tenth_steps_per_s'])} / "
                f"{fmt_rate(long_row['median_last_tenth_steps_per_s'])}"
            )
            if system == GYMFORGE:
                paired, ratio = row["paired_short_median_steps_per_s"], row["ratio"]
                verdict = fmt_verdict(row["passed"])
            else:
                paired, ratio, verdict = None, None, "(anchor, no target)"
            unpaired = None if short is None or long is None else long / short
            lines.append(
                f"| {key} | {system} | {fmt_rate(long)} | {fmt_rate(paired)} "
                f"| {ratio_text(ratio)} | {verdict} | {fmt_rate(short)} | {ratio_text(unpaired)} "
                f"| {chunks} |"
            )
    return lines


def memory_table(report: dict[str, Any]) -> list[str]:
    """Target 3 as Markdown lines."""
    memory = report["memory"]
    lines = [
        "| system (fresh process, import + one WT episode) | runs | peak RSS MiB, median "
        "(min–max) | after import MiB | `torch` in `sys.modules` |",
        "|---|---:|---|---:|---|",
    ]
    for system, row in memory["summary"].items():
        if not row["runs"]:
            lines.append(f"| {system} | 0 ({row['errors']} failed) | – | – | – |")
            continue
        lines.append(
            f"| {system} | {row['runs']} | {fmt_mib(row['median_peak_rss_kib'])} "
            f"({fmt_mib(row['min_peak_rss_kib'])}–{fmt_mib(row['max_peak_rss_kib'])}) "
            f"| {fmt_mib(row['median_import_peak_rss_kib'])} | {row['torch_imported']} |"
        )
    return lines


def verdict_lines(report: dict[str, Any]) -> list[str]:
    """One line per target."""
    targets = report["targets"]
    lines = []
    speed = targets.get("speed")
    if speed is not None:
        why = ""
        if speed["passed"] is None:
            why = f" (anchor skipped: {report['anchor_skipped']})"
        lines.append(
            f"- Target 1, gymforge ≥ {SPEED_TARGET:g}× lineflow-rl steps/s on every scenario: "
            f"{fmt_verdict(speed['passed'])}{why}."
        )
    horizon = targets.get("horizon")
    if horizon is not None:
        lines.append(
            f"- Target 2, gymforge {LONG_HORIZON:,}-step steps/s ≥ {HORIZON_TARGET:g}× the "
            f"{SHORT_HORIZON:,}-step figure on every scenario: {fmt_verdict(horizon['passed'])}."
        )
    else:
        lines.append("- Target 2: skipped (--skip-long).")
    memory = targets.get("memory")
    if memory is not None:
        ratio = "" if memory["ratio"] is None else f" (ratio {memory['ratio']:.2f})"
        lines.append(
            f"- Target 3, gymforge peak RSS ≤ {MEMORY_TARGET:.0%} of lineflow-rl's: "
            f"{fmt_verdict(memory['passed'])}{ratio}; torch not imported by gymforge: "
            f"{fmt_verdict(memory['torch_check_passed'])}."
        )
    else:
        lines.append("- Target 3: skipped (--skip-memory).")
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable report."""
    machine = report["machine"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v is not None)
    episodes = report["method"]["episodes_per_system"]
    lines = [
        "# LineFlow, scalar env: steps per second and memory, gymforge vs. lineflow-rl 0.5.0",
        "",
        f"Run {report['started_utc']} ({report['wall_s']:.0f} s) on {machine['platform']}, "
        f"{machine['cpu_count']} CPUs, Python {machine['python']}. Random actions pre-sampled with "
        "`action_space.sample()`, step loop timed, episodes interleaved gymforge / lineflow-rl "
        f"with the same seeds, {WARM_UP_STEPS}-step warm-up, `torch.set_num_threads(1)` "
        "(lineflow-rl imports torch). Figures are medians on a noisy 2-core machine: compare "
        "ratios, not absolute rates.",
        "",
        *verdict_lines(report),
        "",
        f"## Target 1: steps/s at horizon {SHORT_HORIZON:,} ({episodes} episode(s) per system)",
        "",
        *speed_table(report),
        "",
    ]
    if report["anchor_skipped"]:
        lines += [f"Anchor skipped: {report['anchor_skipped']}.", ""]
    if "horizon" in report["targets"]:
        lines += [
            f"## Target 2: gymforge steps/s at horizon {LONG_HORIZON:,} vs. {SHORT_HORIZON:,}",
            "",
            f"One {LONG_HORIZON:,}-step episode per scenario (`gym.make(id, horizon="
            f"{LONG_HORIZON})`, seed {BASE_SEED}), timed in {SHORT_HORIZON:,}-step segments; "
            f"between two segments (clock stopped) one {SHORT_HORIZON:,}-step episode of the "
            "same scenario is timed, so the long episode and these paired short ones share the "
            "machine's noise. The verdict is long / median of the paired short episodes; the "
            "ratio to the target-1 median (measured earlier) is shown for reference.",
            "",
            *horizon_table(report),
            "",
        ]
    if report["memory"] is not None:
        lines += [
            "## Target 3: peak RSS of a fresh process",
            "",
            "Each child imports its package and runs one WT episode with random actions, then "
            "prints its peak RSS (`VmHWM` of `/proc/self/status`; `ru_maxrss` is not used because "
            "Linux carries it over from the spawning process across `execve`); median of "
            f"{report['memory']['runs_per_system']} interleaved children per system. gymforge: `import gymforge`, "
            '`gym.make("LineFlow-WaitingTime-v0")`. lineflow-rl: `import lineflow.simulation, '
            "lineflow.examples`, `LineSimulation(WaitingTime(), simulation_end=4001)`.",
            "",
            *memory_table(report),
            "",
        ]
    lines += [
        "Systems:",
        "",
        *(
            f"- {scenario}: {', '.join(f'{name} `{text}`' for name, text in systems.items())}"
            for scenario, systems in report["systems"].items()
        ),
        "",
        f"Versions: {versions}.",
        "",
        *common.reproduce_lines(report["command"]),
    ]
    return "\n".join(lines)
