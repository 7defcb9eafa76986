"""Validate the trained MetaBBO experts against random configuration, on the validation split.

The experts (``gymforge.baselines.metabbo.experts``: PPO configurators trained with the
on-device trainer on the easy split's *train* functions, random instances) are compared on the
**validation split** of the reproduction's protocol (``benchmarks/metabbo/protocol.json``): the
same 16 train functions, pinned to instance 2 (a random-instance seed that training, whose
instances come from 64-bit seed draws, does not use), seeds 1..10, full budget (500 generations,
population 100, D = 10). The test split is never touched here.

Rows per preset: uniform random configuration, the best static configuration, SHADE, and the
expert's policy sampling its actions and acting greedily; the registered agent ``ppo_expert``
acts as ``gymforge.baselines.metabbo.experts.ACTING`` says, the rule chosen here. Per row: mean Perf and log10 final error with 95% bootstrap CIs over the runs;
for each non-random row the paired difference to random run by run (same function, instance and
seed) with its 95% bootstrap CI and a two-sided sign-flip permutation p-value.

Run: ``python -m benchmarks.metabbo.experts`` (``--presets alg0``, ``--policy alg0=PATH`` to
validate a candidate policy file instead of the stored expert).
Writes ``benchmarks/results/metabbo_experts.{json,md}`` and, for each stored expert it validated,
``validation.json`` beside its policy file (what a dataset collected with it records).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks import common
from benchmarks.claims import verdict
from gymforge.agents.random_agent import RandomAgent
from gymforge.baselines.metabbo.adaptive import SHADEAgent
from gymforge.baselines.metabbo.experts import ACTING, expert_policy_path
from gymforge.baselines.metabbo.static import StaticAgent
from gymforge.baselines.ondevice.agent import TorchPolicyAgent
from gymforge.envs.metabbo.metrics import evaluate
from gymforge.leaderboards.stats import bootstrap_ci

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
PROTOCOL_FILE = common.REPO_ROOT / "benchmarks" / "metabbo" / "protocol.json"
PERMUTATIONS = 20_000


def load_protocol() -> dict[str, Any]:
    """The reproduction's protocol (validation and test splits, budget, metrics)."""
    return json.loads(PROTOCOL_FILE.read_text(encoding="utf-8"))


def paired_test(diff: np.ndarray) -> dict[str, Any]:
    """Mean of paired differences, its 95% bootstrap CI and a sign-flip permutation p-value."""
    rng = np.random.default_rng(0)
    signs = rng.choice((-1.0, 1.0), size=(PERMUTATIONS, diff.size))
    null = np.abs((signs * diff).mean(axis=1))
    observed = abs(float(diff.mean()))
    p_value = (1 + int((null >= observed - 1e-15).sum())) / (PERMUTATIONS + 1)
    low, high = bootstrap_ci(diff)
    return {"mean": float(diff.mean()), "ci95": [low, high], "p_value": p_value}


def validation_runs(policy: Any, preset: str, split: dict[str, Any]) -> dict[str, np.ndarray]:
    """Per-run Perf and log10 final error of ``policy`` (an agent or ``f(env)``) on the
    validation ``split`` (the protocol's, or one of the same shape), function-major."""
    out = evaluate(
        policy,
        preset=preset,
        split=split["function_ids"],
        subset=split["subset"],
        seeds=len(split["seeds"]),
        instance_id=split["instance_id"],
        with_random_search=False,
    )
    return {m: np.asarray(out["runs"][m]).ravel() for m in ("perf", "log10_error")}


def _policies(preset: str, policy_file: Path) -> dict[str, Callable[[Any], Any]]:
    return {
        "random": lambda env: RandomAgent(env),
        "best_static": lambda env: StaticAgent(env),
        "shade": lambda env: SHADEAgent(env),
        "expert_sampled": lambda env: TorchPolicyAgent(policy_file, stochastic=True),
        "expert_greedy": lambda env: TorchPolicyAgent(policy_file),
    }


def validate(preset: str, split: dict[str, Any], policy_file: Path) -> dict[str, Any]:
    """Every row of one preset on the validation ``split``, with paired tests against random."""
    rows: dict[str, Any] = {}
    runs: dict[str, dict[str, np.ndarray]] = {}
    if split["seeds"] != list(range(1, len(split["seeds"]) + 1)):
        raise ValueError("the validation seeds must be 1..n (metrics.evaluate runs seeds 1..n)")
    for name, policy in _policies(preset, policy_file).items():
        start = time.perf_counter()
        runs[name] = validation_runs(policy, preset, split)
        rows[name] = {
            metric: {"mean": float(values.mean()), "ci95": list(bootstrap_ci(values))}
            for metric, values in runs[name].items()
        }
        rows[name]["seconds"] = round(time.perf_counter() - start, 1)
        print(
            f"{preset} {name}: Perf {rows[name]['perf']['mean']:.4f}, log10 error "
            f"{rows[name]['log10_error']['mean']:.3f} ({rows[name]['seconds']} s)",
            flush=True,
        )
    for name in rows:
        if name != "random":
            rows[name]["vs_random"] = {
                metric: paired_test(runs[name][metric] - runs["random"][metric])
                for metric in ("perf", "log10_error")
            }
    return {
        "policy_file": str(policy_file.relative_to(common.REPO_ROOT))
        if policy_file.is_relative_to(common.REPO_ROOT)
        else policy_file.name,
        "rows": rows,
    }


def format_ci(entry: dict[str, Any], digits: int) -> str:
    """``mean [low, high]`` of an entry with ``mean`` and ``ci95``."""
    low, high = entry["ci95"]
    return f"{entry['mean']:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def row_cells(row: dict[str, Any]) -> str:
    """A row's Perf and log10 error cells, then its paired tests against random (dashes for
    the random row itself), as Markdown table cells."""
    vs = row.get("vs_random")
    paired = (
        f"{format_ci(vs['perf'], 4)} | {vs['perf']['p_value']:.2g} | "
        f"{format_ci(vs['log10_error'], 3)} | {vs['log10_error']['p_value']:.2g}"
        if vs
        else "– | – | – | –"
    )
    return f"{format_ci(row['perf'], 4)} | {format_ci(row['log10_error'], 3)} | {paired}"


def render_md(result: dict[str, Any]) -> str:
    cfg = result["config"]
    lines = [
        "# MetaBBO experts: trained PPO configurators vs random configuration (validation split)",
        "",
        f"Command: `{result['command']}`, measured at {result['measured_at']} "
        f"({result['wall_time_s']} s, one torch thread).",
        "",
        f"Validation split: the easy split's train functions {cfg['functions']}, instance "
        f"{cfg['instance_id']}, seeds 1..{cfg['seeds']} ({len(cfg['functions']) * cfg['seeds']} "
        "runs per row), D = 10, population 100, 500 generations. The test split is not used. "
        "Paired differences are run by run against random (same function, instance and seed); "
        "Perf higher is better, log10 error lower is better; CIs are 95% percentile bootstraps, "
        f"p-values two-sided sign-flip permutation tests ({PERMUTATIONS:,} flips).",
        "",
    ]
    for preset, entry in result["presets"].items():
        lines += [
            f"## {preset} (policy `{entry['policy_file']}`)",
            "",
            "| row | Perf ↑ | log10 error ↓ | ΔPerf vs random | p | Δlog10 error vs random | p |",
            "|---|---|---|---|---:|---|---:|",
        ]
        for name, row in entry["rows"].items():
            lines.append(f"| {name} | {row_cells(row)} |")
        acting = ACTING[preset]
        expert = entry["rows"][f"expert_{acting}"]["vs_random"]
        perf = verdict(*expert["perf"]["ci95"], higher_is_better=True)
        error = verdict(*expert["log10_error"]["ci95"], higher_is_better=False)
        lines += [
            "",
            f"The registered expert acts **{acting}**. It {perf} random on Perf "
            f"(ΔPerf {format_ci(expert['perf'], 4)}) and {error} random on log10 error "
            f"(Δlog10 error {format_ci(expert['log10_error'], 3)}), by the paired 95% CIs.",
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default="alg0,alg1,alg2")
    parser.add_argument(
        "--policy", action="append", default=[], help="PRESET=PATH: a candidate policy file"
    )
    parser.add_argument("--out", default=str(RESULTS / "metabbo_experts"))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    overrides = dict(item.split("=", 1) for item in args.policy)
    start = time.perf_counter()
    presets = [p for p in args.presets.split(",") if p]
    split = load_protocol()["validation"]
    result: dict[str, Any] = {
        "command": common.command_line(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "config": {
            "functions": split["function_ids"],
            "instance_id": split["instance_id"],
            "seeds": len(split["seeds"]),
        },
        "presets": {
            preset: validate(
                preset, split, Path(overrides.get(preset) or expert_policy_path(preset))
            )
            for preset in presets
        },
    }
    result["wall_time_s"] = round(time.perf_counter() - start, 1)
    result["machine"] = common.machine_info(["torch", "numpy"])
    for preset, entry in result["presets"].items():
        if preset not in overrides:  # the stored expert: its scores travel with it
            record = {
                "protocol_sha256": hashlib.sha256(PROTOCOL_FILE.read_bytes()).hexdigest(),
                "split": result["config"],
                "command": result["command"],
                "measured_at": result["measured_at"],
                "acting": ACTING[preset],
                "expert": entry["rows"][f"expert_{ACTING[preset]}"],
                "random": entry["rows"]["random"],
            }
            common.write_json(
                expert_policy_path(preset).parent / "validation.json", record, indent=2
            )
    out = Path(args.out)
    common.write_result_files(out, result, render_md(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
