"""The Markdown report of ``batched.py``: its tables (throughput, targets, cost model,
memory, profile) rendered from the summary.

Formatting only; every figure it prints was computed by the summary.
"""

from __future__ import annotations

from typing import Any

from benchmarks import common
from benchmarks.common import fmt_rate, fmt_verdict
from benchmarks.lineflow.batched_setup import (
    CONTENTION_RATIO,
    LINEFLOW,
    MEMORY_SMALL_BATCH,
    MEMORY_STEPS,
    SYNC,
    SYSTEM_ORDER,
    TARGET_BATCH,
    TORCH,
)
from benchmarks.lineflow.batched_summary import median_of, setting_label


def fmt_bytes(value: float | None) -> str:
    """Bytes as B / KiB / MiB."""
    if value is None:
        return "–"
    if abs(value) < 1024:
        return f"{value:,.0f} B"
    if abs(value) < 1024**2:
        return f"{value / 1024:,.2f} KiB"
    return f"{value / 1024**2:,.1f} MiB"


def fmt_ratio(value: float | None) -> str:
    """A ratio with precision that fits its size."""
    if value is None:
        return "–"
    if value >= 100:
        return f"{value:,.0f}×"
    if value >= 10:
        return f"{value:.1f}×"
    return f"{value:.2f}×"


def scenario_table(report: dict[str, Any], key: str) -> list[str]:
    """The speed table of one scenario, as Markdown lines."""
    summary = report["summary"]
    details = report["scenario_details"].get(key, {})
    state = details.get("state_memory")
    rss = report["memory"].get(key) if report["memory"] else None
    sync_base = median_of(summary, key, SYNC, 1)
    anchor_base = median_of(summary, key, LINEFLOW, 1)
    memory_text = "–"
    if state is not None:
        memory_text = f"state {fmt_bytes(state['total_bytes_per_instance'])}"
        if rss and rss.get("rss_after_steps_bytes_per_instance") is not None:
            memory_text += f"; RSS +{fmt_bytes(rss['rss_after_steps_bytes_per_instance'])}"
        elif rss and rss.get("cuda_after_steps_bytes_per_instance") is not None:
            memory_text += f"; CUDA +{fmt_bytes(rss['cuda_after_steps_bytes_per_instance'])}"
    lines = [
        "| system | B | CPU | env steps/s, median (min–max) | ms / vector step | "
        "sweeps / step | per-instance memory | × simpy-sync B=1 | × lineflow-rl |",
        "|---|---:|---:|---|---:|---:|---|---:|---:|",
    ]
    rows = [r for r in summary.values() if r["scenario"] == key]
    rows.sort(key=lambda r: (SYSTEM_ORDER.index(r["system"]), r["batch"], r["threads"]))
    for row in rows:
        median = row["median_env_steps_per_s"]
        sweeps = row["median_sweeps_per_step"]
        ms = row["median_ms_per_vector_step"]
        total = row["measurements"] + row["skipped"]
        canary = max(row["thread_canary_ratios"], default=None)
        skipped_text = (
            f"{row['skipped']} of {total} skipped (CPU contention: {row['threads']}-thread "
            f"canary up to {canary:.0f}× slower)"
            if row["skipped"] and canary is not None
            else (f"{row['skipped']} of {total} skipped" if row["skipped"] else "")
        )
        if median is None:
            rate = skipped_text
        else:
            rate = (
                f"{fmt_rate(median)} ({fmt_rate(row['min_env_steps_per_s'])}–"
                f"{fmt_rate(row['max_env_steps_per_s'])})"
                + (" (capped)" if row["any_capped"] else "")
                + (f"; {skipped_text}" if skipped_text else "")
            )
        lines.append(
            f"| {row['system']} | {row['batch']:,} "
            f"| {setting_label(row['system'], row['threads'], row['workers'])} | {rate} "
            f"| {'–' if ms is None else f'{ms:,.2f}'} "
            f"| {'–' if sweeps is None else f'{sweeps:.1f}'} "
            f"| {memory_text if row['system'] == TORCH else '–'} "
            f"| {fmt_ratio(None if sync_base is None or median is None else median / sync_base)} "
            f"| {fmt_ratio(None if anchor_base is None or median is None else median / anchor_base)} |"
        )
    return lines


def target_lines(report: dict[str, Any]) -> list[str]:
    """The verdict table."""
    rows = report["targets"]["scenarios"]
    if not rows:
        return ["No scenario with a target was measured."]
    lines = [
        f"| scenario | target at B={TARGET_BATCH:,} | measured (best setting) | by CPU setting | "
        "of target | speed-up needed | verdict |",
        "|---|---:|---:|---|---:|---:|---|",
    ]
    for key, row in rows.items():
        by_setting = ", ".join(
            f"{n}: {fmt_rate(v)}" for n, v in row["median_by_setting"].items() if v is not None
        )
        fraction = row["fraction_of_target"]
        best_setting = "" if row["best_setting"] is None else f" ({row['best_setting']})"
        lines.append(
            f"| {key} | {fmt_rate(row['target_env_steps_per_s'])} "
            f"| {fmt_rate(row['best_median_env_steps_per_s'])}{best_setting} "
            f"| {by_setting or '–'} "
            f"| {'–' if fraction is None else f'{fraction:.1%}'} "
            f"| {fmt_ratio(row['speed_up_needed'])} | {fmt_verdict(row['passed'])} |"
        )
    return lines


def cost_model_lines(report: dict[str, Any]) -> list[str]:
    """The fixed / per-instance split of a vector step at the target batch (``cost_model``)."""
    rows = report.get("cost_model") or {}
    if not rows:
        return []
    lines = [
        f"Where a vector step's time goes at B={TARGET_BATCH:,}: a two-point fit "
        "`t(B) = fixed + per_instance × B` through the medians at B="
        f"{TARGET_BATCH:,} and the largest B (see `cost_model` in the script). `fixed` is "
        "dispatch and Python (a cost per tensor op), `element work` the part that "
        "grows with B; `budget` is the time per vector step the target allows.",
        "",
        "| scenario | threads | ms / vector step | fixed ms | element work ms (µs / instance) "
        "| budget ms | fixed ≤ budget? | element work ≤ budget? |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in rows.values():
        lines.append(
            f"| {row['scenario']} | {row['threads']} | {row['ms_per_vector_step']:.2f} "
            f"| {row['fixed_ms']:.2f} | {row['element_ms_at_target_batch']:.2f} "
            f"({row['per_instance_us']:.2f}) | {row['budget_ms']:.2f} "
            f"| {'yes' if row['fixed_ms'] <= row['budget_ms'] else 'no'} "
            f"| {'yes' if row['element_ms_at_target_batch'] <= row['budget_ms'] else 'no'} |"
        )
    return lines


def memory_lines(report: dict[str, Any]) -> list[str]:
    """Per-instance memory of the torch engine, per scenario."""
    lines = [
        "| scenario | state tensors / instance | of which RNG | RSS growth / instance after "
        f"reset | after {MEMORY_STEPS} steps | peak (VmHWM) | largest fields |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    on_cuda = report["settings"]["device"].startswith("cuda")
    for key, details in report["scenario_details"].items():
        state = details.get("state_memory")
        rss = (report["memory"] or {}).get(key) or {}
        prefix = "cuda" if on_cuda else "rss"
        peak = "cuda_peak" if on_cuda else "peak_rss"
        fields = []
        if state:
            biggest = sorted(
                state["fields_bytes_per_instance"].items(), key=lambda kv: kv[1], reverse=True
            )[:4]
            fields = [f"`{name}` {fmt_bytes(size)}" for name, size in biggest]
        lines.append(
            f"| {key} | {fmt_bytes(state['total_bytes_per_instance'] if state else None)} "
            f"| {fmt_bytes(state['rng_bytes_per_instance'] if state else None)} "
            f"| {fmt_bytes(rss.get(f'{prefix}_after_reset_bytes_per_instance'))} "
            f"| {fmt_bytes(rss.get(f'{prefix}_after_steps_bytes_per_instance'))} "
            f"| {fmt_bytes(rss.get(f'{peak}_bytes_per_instance'))} | {', '.join(fields) or '–'} |"
        )
    return lines


def profile_lines(profile: dict[str, Any]) -> list[str]:
    """The profile as Markdown lines."""
    tp, cp = profile["torch_profiler"], profile["cprofile"]
    sweeps = tp["sweeps_per_step"]
    structure = profile.get("loop_structure")
    structure_text = ""
    if structure and structure["mean_active_share_per_sweep"] is not None:
        structure_text = (
            f" Loop structure ({structure['steps']} more steps): "
            f"{structure['event_rounds_per_step']:.1f} event rounds and "
            f"{structure['sweeps_per_step']:.1f} sweeps per vector step; on average only "
            f"{structure['mean_active_share_per_sweep']:.0%} of the instances are active in a "
            f"sweep (≈ {structure['mean_events_per_instance_per_step']:.1f} event instants per "
            "instance and step), yet every sweep computes all B instances."
        )
    lines = [
        f"{profile['scenario']}, B={profile['batch']:,}, {profile['threads']} thread, "
        f"{profile['device']}, from the warmed state. `torch.profiler`: {tp['steps']} vector steps, "
        f"{tp['ms_per_step']:,.0f} ms/step, {'–' if sweeps is None else f'{sweeps:.1f}'} sweeps/step, "
        f"{tp['aten_calls_per_step']:,.0f} profiled op calls/step, nested ones included (mean "
        f"{tp['mean_us_per_op']:.1f} µs self time per call); op self time is "
        f"{tp['op_share_of_wall']:.0%} of the wall time (the rest: Python and dispatch)."
        + structure_text,
        "",
        "| op | calls / step | self ms | share of op time | µs / call |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in tp["top_ops"]:
        lines.append(
            f"| `{row['op']}` | {row['calls_per_step']:,.0f} | {row['self_cpu_ms']:,.0f} "
            f"| {row['share_of_op_time']:.1%} | {row['us_per_call']:,.1f} |"
        )
    lines += [
        "",
        f"`cProfile` ({cp['steps']} steps, {cp['wall_s']:.1f} s): gymforge functions by cumulative "
        "time (share of the profiled total). A function's own time includes the tensor "
        "operators it applies (`&`, `|`, `~`, `==`, `*`, `[...]`), which cProfile does not see "
        "as calls; named torch functions (`torch.where`, `.any()`, `.gather()`) are listed "
        "separately:",
        "",
        "| function | calls | cumulative s | share | own s |",
        "|---|---:|---:|---:|---:|",
    ]
    for row in cp["gymforge_by_cumulative_time"][:12]:
        lines.append(
            f"| `{row['function']}` | {row['calls']:,} | {row['cumulative_s']:.2f} "
            f"| {row['cumulative_share']:.0%} | {row['own_s']:.2f} |"
        )
    lines += [
        "",
        "Top callables by own time:",
        "",
        "| callable | calls | own s | share |",
        "|---|---:|---:|---:|",
    ]
    for row in cp["top_by_own_time"][:10]:
        lines.append(
            f"| `{row['function']}` | {row['calls']:,} | {row['own_s']:.2f} "
            f"| {row['own_share']:.0%} |"
        )
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """The human-readable report."""
    machine, settings = report["machine"], report["settings"]
    versions = ", ".join(f"{k} {v}" for k, v in machine["versions"].items() if v is not None)
    device = settings["device"]
    load = machine["load_average_at_start"]
    lines = [
        "# LineFlow, batched: env steps per second of the torch engine, SimPy under "
        "SyncVectorEnv and lineflow-rl 0.5.0",
        "",
        f"Run {report['started_utc']} ({report['wall_s']:.0f} s) on {machine['platform']}, "
        f"{machine['cpu_count']} CPUs ({machine['cpu_model']}), Python {machine['python']}; "
        f"torch engine on `{device}`"
        + (f" ({machine['gpu']})" if machine["gpu"] else "")
        + (f"; load average at start {load[0]:.1f}" if load else "")
        + ". Aggregate env steps/s = B × vector steps / s. Random actions pre-sampled "
        f"({settings['action_batches']} batches reused cyclically); each measurement lasts about "
        f"{settings['target_seconds']:g} s (at least one vector step, stopped after "
        f"{settings['cap_seconds']:g} s); {settings['repeats']} interleaved round(s), median "
        "(min–max). Torch envs start timing from a line "
        f"{settings['warm_up_steps']} steps into its episode "
        + (
            f"(state tiled from one warmed B={settings['warm_up_batch']:,} env, see the module "
            "docstring)"
            if settings["warm_up"] == "tiled"
            else "(each warmed on its own)"
        )
        + "; lineflow-rl runs whole 4000-step episodes. A multi-thread measurement is skipped "
        f"when a thread canary (40 parallel adds) runs over {CONTENTION_RATIO:g}× slower with N "
        "threads than with 1 (other jobs on the cores: one engine step could then take "
        "minutes). `torch-workers` is the same env with `num_workers=K`: the batch split over "
        "K worker processes of one torch thread each, one CPU core each (the same results bit "
        "for bit; its engines run in the workers, so it has no sweep count or memory column). "
        "`sweeps / step` counts the engine's "
        "settle sweeps per vector step. Figures come from a noisy 2-core machine shared with "
        "other jobs: read ratios and orders of magnitude.",
        "",
        "## Targets (torch engine)",
        "",
        *target_lines(report),
        "",
    ]
    cost_lines = cost_model_lines(report)
    if cost_lines:
        lines += [*cost_lines, ""]
    for key in report["scenarios"]:
        scenario = report["scenarios"][key]
        lines += [
            f"## {key}: `{scenario['gym_id']}` (lineflow-rl `{scenario['lineflow']}`)",
            "",
            *scenario_table(report, key),
            "",
        ]
    lines += [
        "## Memory per instance (torch engine)",
        "",
        "State tensors: bytes of every tensor of the env's `state` dataclass plus its "
        "`InstanceRNG` tensors, / B. RSS growth: two fresh processes (B = "
        f"{MEMORY_SMALL_BATCH} and B = {max(settings['batch_sizes']):,}) that import gymforge, "
        f"build the env, reset it and step it {MEMORY_STEPS} times; (difference) / (difference "
        "in B)"
        + (" (CUDA: `torch.cuda.memory_allocated` instead of RSS)" if device != "cpu" else "")
        + ".",
        "",
        *memory_lines(report),
        "",
    ]
    profile = next(
        (d["profile"] for d in report["scenario_details"].values() if "profile" in d), None
    )
    if profile and "torch_profiler" in profile:
        lines += ["## Profile of the torch engine", "", *profile_lines(profile), ""]
    if report["anchor_skipped"]:
        lines += [f"Anchor skipped: {report['anchor_skipped']}.", ""]
    lines += [
        f"Versions: {versions}; git {machine['git_revision']}.",
        "",
        *common.reproduce_lines(report["command"]),
    ]
    return "\n".join(lines)
