"""README and docs figure tables, generated from the recorded results in ``benchmarks/results/``
(and the README's counts of ids and boards, from the registry and the protocols).

``README.md`` and ``docs/figures.md`` hold blocks between ``<!-- BEGIN GENERATED: NAME -->`` and
``<!-- END GENERATED: NAME -->``; this script rewrites each block from its source, so neither can
drift from what was measured or registered. ``tests/test_readme_figures.py`` fails when a block
differs from what this script would write.

    python -m benchmarks.readme_figures          # rewrite the blocks
    python -m benchmarks.readme_figures --check  # exit 1 and name the stale blocks
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
#: the files that hold generated blocks
FILES = (README, ROOT / "docs" / "figures.md")
SCENARIOS = ("WT", "WTJ", "PD5", "WA3", "CL3")
BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- END GENERATED: (?P=name) -->)",
    re.DOTALL,
)


def _load(name: str) -> dict[str, Any]:
    return json.loads((RESULTS / f"{name}.json").read_text())


def _rate(value: float) -> str:
    return f"{value / 1000:,.1f}k" if value < 1e6 else f"{value / 1e6:,.2f}M"


def scalar_speed() -> str:
    """The SimPy env against lineflow-rl, per paper scenario (episode medians at H = 4000), and
    the same pair in the batched benchmark's later side-by-side rows where it has them."""
    scalar = _load("lineflow_scalar")["summary"]
    batched = _load("lineflow_batched")["summary"]
    lines = [
        "| scenario | gymforge SimPy env | lineflow-rl 0.5.0 | ratio | later side-by-side run |",
        "|---|---:|---:|---:|---:|",
    ]
    for scenario in SCENARIOS:
        ours = scalar[f"{scenario}/gymforge@4000"]["median_steps_per_s"]
        theirs = scalar[f"{scenario}/lineflow-rl@4000"]["median_steps_per_s"]
        sync = batched.get(f"{scenario}/simpy-sync/B=1/threads=1")
        anchor = batched.get(f"{scenario}/lineflow-rl/B=1/threads=1")
        later = "–"
        if sync and anchor:
            later = f"{sync['median_env_steps_per_s'] / anchor['median_env_steps_per_s']:.1f}×"
        lines.append(
            f"| {scenario} | {_rate(ours)} | {_rate(theirs)} | {ours / theirs:.1f}× | {later} |"
        )
    return "\n".join(lines) + "\n"


def train_speed() -> str:
    """Training throughput per scenario and system (env steps/s, end to end)."""
    rows = _load("train_speed")["rows"]
    systems = {
        "torch": "on-device, SB3's network",
        "torch-shared": "on-device, shared trunk",
        "torch-workers": "on-device, 2 env workers",
        "sb3": "SB3 PPO, same settings",
        "sb3-default": "SB3, task config (B=256)",
    }
    scenarios = list(dict.fromkeys(row["scenario"] for row in rows))
    by_key = {(row["scenario"], row["system"]): row["steps_per_s"] for row in rows}
    lines = [
        "| trainer | " + " | ".join(scenarios) + " |",
        "|---|" + "---:|" * len(scenarios),
    ]
    for system, label in systems.items():
        cells = [_rate(by_key[(s, system)]) if (s, system) in by_key else "–" for s in scenarios]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    ratios = [by_key[(s, "torch")] / by_key[(s, "sb3")] for s in scenarios]
    lines.append("")
    lines.append(
        f"On-device over SB3 at the same network and settings: "
        f"{min(ratios):.2f}–{max(ratios):.2f}× (median {statistics.median(ratios):.2f}×)."
    )
    return "\n".join(lines) + "\n"


def rl_baselines() -> str:
    """On-device baselines at upstream's budgets: IQM over seeds with its 95% CI."""
    groups = _load("rl_lineflow_torch")["groups"]
    lines = [
        "| task | algo | steps | seeds | IQM | 95% CI | goal | met |",
        "|---|---|---:|---:|---:|---|---:|---|",
    ]
    for group in groups:
        low, high = group["ci95"]
        lines.append(
            f"| {group['task']} | {group['algo']} | {group['steps']:,} | {len(group['scores'])} | "
            f"{group['iqm']:.1f} | [{low:.1f}, {high:.1f}] | {group['goal']:g} | "
            f"{'yes' if group['met'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


#: (env id, this suite's controller, its label, upstream's anchor (line, controller))
REFERENCE_ROWS = (
    ("LineFlow-WaitingTime-v0", "optimal", "WaitingTime | optimal controller", ("WT", "optimal")),
    (
        "LineFlow-WaitingTimeJump-v0",
        "heuristic",
        "WaitingTimeJump | last-observation heuristic",
        ("WTJ", "heuristic"),
    ),
    (
        "LineFlow-PartDistribution-v0",
        "greedy",
        "PartDistribution k=5 | greedy routing",
        ("PD5", "greedy"),
    ),
    (
        "LineFlow-WorkerAssignment-v0",
        "best_partition",
        "WorkerAssignment k=3 | best partition (2,3,4)",
        ("WA3", "partition (2, 3, 4)"),
    ),
    (
        "LineFlow-ComplexLine-v0",
        "heuristic",
        "ComplexLine k=3 | reference heuristic",
        ("CL3", "heuristic"),
    ),
)


def lineflow_reference() -> str:
    """The reference controllers here and upstream's on its own simulator (measured anchors),
    with upstream's documented optimum and the best controller found here."""
    report = _load("lineflow_controllers")
    anchors = {
        (a["key"], a["controller"]): a for a in _load("lineflow_upstream_anchors")["anchors"]
    }
    best = {(f["scenario"], f["k"]): f for f in report["findings"]}
    lines = [
        "| line | policy | gymforge | upstream lineflow-rl 0.5.0 | documented | best found here |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for env_id, name, label, anchor_key in REFERENCE_ROWS:
        entry = report["ids"][env_id]
        row = next(r for r in entry["controllers"] if r["name"] == name)
        anchor = anchors[anchor_key]
        documented = entry["documented_optimum"]
        found = best[(entry["scenario"], entry["k"])]
        lines.append(
            f"| {label} | {row['mean_return']:.1f} | {anchor['mean_return']:.1f} "
            f"({anchor['min_return']:.0f}–{anchor['max_return']:.0f}) | "
            f"{documented[0]:g} | {found['best_mean_return']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def counts() -> str:
    """How many ids (single-agent and PettingZoo) are registered and how many boards exist."""
    from gymforge.leaderboards.protocol import list_tasks
    from gymforge.registry import all_specs

    specs = all_specs()
    games = sum(s.capabilities.multi_agent for s in specs)
    boards = len(list_tasks(ROOT / "leaderboards"))
    return (
        f"{len(specs)} registered ids ({len(specs) - games} single-agent, {games} PettingZoo "
        f"games) and {boards} leaderboards.\n"
    )


def wt_seeds() -> str:
    """What the README's train command gives on the WaitingTime board, per seed."""
    data = _load("rl_lineflow_torch_wt_seeds")
    per_seed = ", ".join(f"{s['held_out_mean']:.1f}" for s in data["seeds"])
    low, high = data["iqm_ci95"]
    target = data["target"]
    lowest = min(s["held_out_mean"] for s in data["seeds"])
    every = "met" if lowest >= target["every_seed"] else "not met"
    iqm = "met" if data["iqm"] >= target["iqm"] else "not met"
    return (
        f"On the board's 20 held-out episodes this command gives, for seeds 0–4: {per_seed} "
        f"(IQM {data['iqm']:.1f} [{low:.1f}, {high:.1f}]; the optimal controller: 157.1). The "
        f"goal of >= {target['every_seed']} on every seed is {every}, that of an IQM >= "
        f"{target['iqm']} {iqm} (`benchmarks/results/rl_lineflow_torch_wt_seeds.md`; "
        f"{data['host_cpu']}, 2 cores).\n"
    )


GENERATORS: dict[str, Callable[[], str]] = {
    "counts": counts,
    "wt-seeds": wt_seeds,
    "lineflow-reference": lineflow_reference,
    "scalar-speed": scalar_speed,
    "train-speed": train_speed,
    "rl-baselines": rl_baselines,
}


def render(text: str) -> str:
    """``text`` with every generated block rewritten; unknown block names are an error."""

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in GENERATORS:
            raise KeyError(f"README block {name!r}: no generator (known: {sorted(GENERATORS)})")
        return match.group(1) + GENERATORS[name]() + match.group(4)

    return BLOCK.sub(replace, text)


def stale_blocks(text: str) -> list[str]:
    """Names of the blocks whose body differs from what the generator writes."""
    return [
        m.group("name")
        for m in BLOCK.finditer(text)
        if GENERATORS[m.group("name")]() != m.group("body")
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale blocks")
    args = parser.parse_args(argv)
    stale = []
    for path in FILES:
        text = path.read_text()
        if args.check:
            stale += [f"{path.relative_to(ROOT)}: {name}" for name in stale_blocks(text)]
            continue
        path.write_text(render(text))
        print(f"rewrote {len(BLOCK.findall(text))} blocks in {path.relative_to(ROOT)}")
    if args.check:
        print(f"stale blocks: {stale}" if stale else "generated blocks match their sources")
        return 1 if stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
