"""The Markdown report of ``parity.py``: per env and policy, each metric's means, difference,
p-value and verdict.

Formatting only; every figure it prints was computed by the statistics.
"""

from __future__ import annotations

from typing import Any

from benchmarks.lineflow.parity_jobs import MIN_CRITERION_SEEDS

# --------------------------------------------------------------------------------------------
# Output


def mean_ci(stats: dict[str, Any]) -> str:
    if stats["mean"] is None:
        return "–"
    return f"{stats['mean']:.1f} ± {stats['ci95']:.1f}"


def delta_text(metric: dict[str, Any]) -> str:
    if metric["delta"] is None:
        return "–"
    if metric["delta_pct"] is None:
        return f"{metric['delta']:+.2f} (abs.)"
    return f"{metric['delta_pct']:+.1f}%"


def p_text(metric: dict[str, Any]) -> str:
    return "–" if metric["welch_p"] is None else f"{metric['welch_p']:.2g}"


def verdict_text(metric: dict[str, Any]) -> str:
    if metric["pass"]:
        return "PASS" + (" (abs. 1)" if metric["rule"].startswith("within abs.") else "")
    return "**FAIL**"


def render_markdown(report: dict[str, Any]) -> str:
    settings, machine, summary = report["settings"], report["machine"], report["summary"]
    n = settings["seeds"]
    lines = [
        "# LineFlow engine parity: torch engine vs. SimPy engine",
        "",
        f"Run {report['date']} ({report['wall_s']:.0f} s) on {machine['platform']}, "
        f"{machine['cpus_usable']} CPUs, Python {machine['python']}, torch "
        f"{machine['versions'].get('torch')}; `{report['command']}`.",
        "",
        f"**{summary['pass']} PASS / {summary['total']} total** (id, policy) rows"
        + (f"; {summary['errors']} job(s) raised, see the JSON" if summary["errors"] else "")
        + ".",
        "",
        f"Criterion: for every batched LineFlow id of the registry and for `random` plus each "
        f"reference agent, the torch engine's mean parts per episode (and mean scrap) lies within "
        f"the 95% CI of the SimPy engine's mean, or within 2% of it; for scrap, when SimPy's mean "
        f'scrap is below 1, within an absolute 1 (marked "abs. 1"). {n} seeds per engine '
        f"(SimPy {settings['simpy_seeds'][0]}–{settings['simpy_seeds'][1]}, one "
        f"`gym.make(id, horizon=H)` episode each; torch {settings['torch_seeds'][0]}–"
        f"{settings['torch_seeds'][1]} per policy, all policies of an id in one "
        f'`gym.make_vec(..., vectorization_mode="vector_entry_point")` batch), '
        f"**horizon {settings['horizon']:g}** (step size 1). CI: mean ± "
        f"t(0.975, n−1)·s/√n ({settings['ci_quantile']}). `random` draws uniform actions from "
        f"`numpy.random.default_rng(seed)` per episode/instance, separately in each engine. "
        f"Δ% = (torch − SimPy) / SimPy.",
        "",
        "Reading the verdicts: the torch mean has its own sampling noise, so even with exact "
        "parity |Δ| exceeds SimPy's CI half-width with probability about 15% (the difference of "
        "two independent means has √2 × SimPy's standard error) wherever the 2% tolerance does "
        "not cover the CI. A lone FAIL of a high-variance row can therefore be chance; the Welch "
        "p-value (information only, not part of the criterion) tells a systematic gap (p ≪ 0.01) "
        "from noise.",
        "",
    ]
    if not settings["meets_seed_requirement"]:
        lines += [
            f"_Smoke run: {n} seeds is below the criterion's {MIN_CRITERION_SEEDS}._",
            "",
        ]
    for env_id, entry in report["ids"].items():
        lines += [
            f"## {env_id}",
            "",
            "| policy | SimPy parts | torch parts | Δ% | parts | SimPy scrap | torch scrap | Δ% "
            "| scrap | verdict | Welch p parts / scrap |",
            "|---|---:|---:|---:|---|---:|---:|---:|---|---|---:|",
        ]
        for row in entry["rows"]:
            p, s = row["metrics"]["parts"], row["metrics"]["scrap"]
            lines.append(
                f"| {row['policy']} | {mean_ci(p['simpy'])} | {mean_ci(p['torch'])} | "
                f"{delta_text(p)} | {verdict_text(p)} | {mean_ci(s['simpy'])} | "
                f"{mean_ci(s['torch'])} | {delta_text(s)} | {verdict_text(s)} | "
                f"{'PASS' if row['pass'] else '**FAIL**'} | {p_text(p)} / {p_text(s)} |"
            )
        lines.append("")
    if report["errors"]:
        lines += ["## Errors", ""]
        lines += [
            f"- {e['engine']} {e['env_id']} {','.join(e['policies'])}: `{e['error']}`"
            for e in report["errors"]
        ]
        lines.append("")
    lines += ["## Jobs", "", "| engine | id | policies | batch | env steps/s | wall s |"]
    lines.append("|---|---|---|---:|---:|---:|")
    for job in report["jobs"]:
        rate = job["env_steps"] / job["wall_s"] if job["wall_s"] else 0.0
        lines.append(
            f"| {job['engine']} | {job['env_id']} | {', '.join(job['policies'])} | "
            f"{job.get('num_envs') or 1} | {rate:,.0f} | {job['wall_s']:.1f} |"
        )
    lines.append("")
    return "\n".join(lines)
