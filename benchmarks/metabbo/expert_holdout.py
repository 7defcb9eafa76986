"""Do trained MetaBBO experts carry over to functions they never saw? Checkpoints evaluated on
held-out functions of the validation split, against random configuration (cross-validation
over functions).

The protocol's validation split (``benchmarks/metabbo/protocol.json``) pins new *instances* of
the 16 training functions, so an expert trained on all 16 is validated on functions it knows,
while the test split asks about 8 functions it has never seen. This benchmark asks that
question without the test split: candidate experts are trained on a part of the training
functions (``gymforge train ... --config`` whose ``env_kwargs.split`` names them), and every
checkpoint of each run is evaluated, sampling and greedy, on the validation functions the run
did *not* train on (the validation split's instance, seeds ``1..N``). The held-out functions
are read from each run's ``config.json``. Given one run per fold (runs whose held-out sets
differ), the folds are also pooled checkpoint by checkpoint: every validation function is then
scored by a policy that never trained on it.

Per row: mean Perf and log10 final error with 95% bootstrap CIs, and the paired difference to
random configuration run by run (same function, instance and seed) with its CI and a sign-flip
permutation p-value. The test split is never touched.

Run: ``python -m benchmarks.metabbo.expert_holdout RUN_DIR [RUN_DIR ...] --preset alg0
--seeds 20`` (writes ``benchmarks/results/metabbo_expert_holdout_PRESET.{json,md}``).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks import common
from benchmarks.metabbo.experts import (
    PERMUTATIONS,
    load_protocol,
    paired_test,
    row_cells,
    validation_runs,
)
from gymforge.agents.random_agent import RandomAgent
from gymforge.baselines.metabbo.experts import EXPERT_IDS
from gymforge.baselines.ondevice.agent import TorchPolicyAgent
from gymforge.leaderboards.stats import bootstrap_ci

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
METRICS = ("perf", "log10_error")
ACTINGS = ("sampled", "greedy")
Runs = dict[str, np.ndarray]  # metric -> per-run values


def _trained_functions(run: Path) -> tuple[list[int], dict[str, Any]]:
    """The functions a run trained on (its ``env_kwargs.split``) and its config."""
    config_file = run / "config.json"
    if not config_file.is_file():
        raise SystemExit(f"{run}: no config.json (not a finished gymforge train run folder)")
    config = json.loads(config_file.read_text())
    split = config.get("env_kwargs", {}).get("split")
    if not isinstance(split, list):
        raise SystemExit(
            f"{run}: env_kwargs.split is {split!r}; a held-out study needs runs trained on a "
            "list of function ids"
        )
    return sorted(int(f) for f in split), config


def _policy_files(run: Path, final_steps: int) -> list[tuple[int, Path]]:
    """``(env steps, policy.pt)`` of every checkpoint of ``run`` and of its final policy
    (trained ``final_steps``)."""
    found = []
    for folder in sorted((run / "checkpoints").glob("step_*")):
        if (folder / "policy.pt").is_file():
            found.append((int(folder.name.removeprefix("step_")), folder / "policy.pt"))
    if (run / "policy.pt").is_file() and final_steps not in {s for s, _ in found}:
        found.append((final_steps, run / "policy.pt"))
    return sorted(found)


def _policy_agent(env: Any, policy: Path, stochastic: bool) -> TorchPolicyAgent:
    return TorchPolicyAgent(policy, stochastic=stochastic)


def _evaluate_row(
    factory: Callable[[Any], Any], preset: str, functions: list[int], seeds: int
) -> Runs:
    """Per-run Perf and log10 error of one agent on ``functions`` (validation instance)."""
    validation = load_protocol()["validation"]
    split = {**validation, "function_ids": functions, "seeds": list(range(1, seeds + 1))}
    return validation_runs(factory, preset, split)


def _summary(values: Runs, random: Runs, functions: list[int]) -> dict[str, Any]:
    """Means with CIs, and (unless ``values`` is ``random``) paired tests against random and
    the mean paired difference per function (runs are in function-major order)."""
    row: dict[str, Any] = {
        m: {"mean": float(v.mean()), "ci95": list(bootstrap_ci(v))} for m, v in values.items()
    }
    if values is not random:
        row["vs_random"] = {m: paired_test(values[m] - random[m]) for m in METRICS}
        row["vs_random_by_function"] = {
            str(f): {m: float(d.mean()) for m, d in zip(METRICS, per_function, strict=True)}
            for f, *per_function in zip(
                functions,
                *(np.split(values[m] - random[m], len(functions)) for m in METRICS),
                strict=True,
            )
        }
    return row


def _concat(parts: list[Runs]) -> Runs:
    return {m: np.concatenate([p[m] for p in parts]) for m in METRICS}


def study(runs: list[Path], preset: str, seeds: int) -> dict[str, Any]:
    """Every checkpoint of ``runs`` (sampled and greedy) and random configuration on the
    validation functions each run did not train on; with one run per fold, the folds pooled."""
    validation = load_protocol()["validation"]
    folds: dict[tuple[int, ...], list[Path]] = {}
    commands, policies = {}, {}
    for run in runs:
        train_fns, config = _trained_functions(run)
        if config["env_id"] != EXPERT_IDS[preset]:
            raise SystemExit(f"{run}: trained on {config['env_id']}, not {EXPERT_IDS[preset]}")
        held_out = tuple(f for f in validation["function_ids"] if f not in train_fns)
        if not held_out:
            raise SystemExit(f"{run}: trained on every validation function")
        policies[run] = _policy_files(run, int(config["steps"]))
        if not policies[run]:
            raise SystemExit(f"{run}: no policy.pt, neither final nor in checkpoints/step_*")
        folds.setdefault(held_out, []).append(run)
        commands[run.name] = config["command"]
    per_fold: list[dict[str, Any]] = []
    by_checkpoint: dict[tuple[int, str], list[Runs]] = {}
    randoms: list[Runs] = []
    for held_out, fold_runs in folds.items():
        functions = list(held_out)
        random = _evaluate_row(lambda env: RandomAgent(env), preset, functions, seeds)
        randoms.append(random)
        rows = {"random": _summary(random, random, functions)}
        for run in fold_runs:
            for steps, policy in policies[run]:
                for acting in ACTINGS:
                    factory = functools.partial(
                        _policy_agent, policy=policy, stochastic=acting == "sampled"
                    )
                    values = _evaluate_row(factory, preset, functions, seeds)
                    by_checkpoint.setdefault((steps, acting), []).append(values)
                    row = {"run": run.name, "steps": steps, "acting": acting}
                    summary = _summary(values, random, functions)
                    rows[f"{run.name}@{steps}/{acting}"] = {**row, **summary}
            print(f"{run.name} on {functions}: done", flush=True)
        per_fold.append({"held_out_functions": functions, "rows": rows})
    pooled: dict[str, Any] = {}
    if len(folds) > 1 and all(len(r) == 1 for r in folds.values()):
        random, every = _concat(randoms), [f for held_out in folds for f in held_out]
        pooled["random"] = _summary(random, random, every)
        for (steps, acting), parts in sorted(by_checkpoint.items()):
            if len(parts) == len(folds):  # a checkpoint every fold's run has
                row = {"steps": steps, "acting": acting}
                pooled[f"{steps}/{acting}"] = {**row, **_summary(_concat(parts), random, every)}
    return {
        "preset": preset,
        "instance_id": validation["instance_id"],
        "seeds": seeds,
        "runs": commands,
        "folds": per_fold,
        "pooled": pooled,
    }


def _table(rows: dict[str, Any]) -> list[str]:
    lines = [
        "| run | env steps | acting | Perf ↑ | log10 error ↓ | ΔPerf vs random | p | "
        "Δlog10 error vs random | p |",
        "|---|---:|---|---|---|---|---:|---|---:|",
    ]
    for row in rows.values():
        head = (
            f"{row.get('run', 'all folds')} | {row['steps']:,} | {row['acting']}"
            if "vs_random" in row
            else "random | – | –"
        )
        lines.append(f"| {head} | {row_cells(row)} |")
    return lines


def _by_function(pooled: dict[str, Any]) -> list[str]:
    """Per function, the last checkpoint's mean paired differences, both actings."""
    last = max(row["steps"] for name, row in pooled.items() if name != "random")
    at_last = {row["acting"]: row for row in pooled.values() if row.get("steps") == last}
    rows = {acting: at_last[acting] for acting in ACTINGS if acting in at_last}
    functions = next(iter(rows.values()))["vs_random_by_function"]
    lines = [
        f"Per function, at {last:,} env steps (mean paired difference vs random over its "
        "seeds; each function scored by the run that held it out):",
        "",
        "| function | " + " | ".join(f"ΔPerf {a} | Δlog10 error {a}" for a in rows) + " |",
        "|---:|" + "---:|---:|" * len(rows),
    ]
    for f in functions:
        cells = [rows[a]["vs_random_by_function"][f] for a in rows]
        text = " | ".join(f"{c['perf']:+.4f} | {c['log10_error']:+.2f}" for c in cells)
        lines.append(f"| f{f} | {text} |")
    return lines


def render_md(result: dict[str, Any]) -> str:
    lines = [
        f"# MetaBBO experts on held-out functions ({result['preset']})",
        "",
        f"Command: `{result['command']}`, measured at {result['measured_at']} "
        f"({result['wall_time_s']} s, one torch thread).",
        "",
        "Each run trained on part of the validation split's functions and is evaluated, every "
        "checkpoint sampling and greedy, on the others: instance "
        f"{result['instance_id']}, seeds 1..{result['seeds']}, D = 10, population 100, 500 "
        "generations. The test split is not used. Paired differences are run by run against "
        "random (positive ΔPerf and negative Δlog10 error are better); CIs are 95% percentile "
        f"bootstraps, p-values sign-flip permutation tests ({PERMUTATIONS:,} flips).",
        "",
        "Runs:",
        "",
    ]
    lines += [f"- `{name}`: `{' '.join(cmd)}`" for name, cmd in result["runs"].items()]
    if result["pooled"]:
        n = sum(len(f["held_out_functions"]) for f in result["folds"]) * result["seeds"]
        lines += [
            "",
            f"## All folds pooled ({n} runs per row, each function scored by the run that "
            "held it out)",
            "",
            *_table(result["pooled"]),
        ]
    if result["pooled"]:
        lines += ["", *_by_function(result["pooled"])]
    for fold in result["folds"]:
        n = len(fold["held_out_functions"]) * result["seeds"]
        lines += [
            "",
            f"## Held out {fold['held_out_functions']} ({n} runs per row)",
            "",
            *_table(fold["rows"]),
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="gymforge train run folders")
    parser.add_argument("--preset", default="alg0", choices=sorted(EXPERT_IDS))
    parser.add_argument("--seeds", type=int, default=20, help="seeds 1..N per function")
    parser.add_argument("--out", default=None, help="output stem (default: results folder)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be >= 1, got {args.seeds}")
    torch.set_num_threads(1)
    start = time.perf_counter()
    result = {
        "command": common.command_line(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        **study(args.runs, args.preset, args.seeds),
    }
    result["wall_time_s"] = round(time.perf_counter() - start, 1)
    result["machine"] = common.machine_info(["torch", "numpy"])
    out = Path(args.out or RESULTS / f"metabbo_expert_holdout_{args.preset}")
    common.write_result_files(out, result, render_md(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
