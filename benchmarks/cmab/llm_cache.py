"""LLM cache: CLCB-LLM-C against LFU and LEC in our setting and in the paper's synthetic one.

The paper's synthetic setting: 100 queries, a cache of 40, power-law arrivals with exponent 0.9,
"costs ~ Bernoulli(0.5)", n ∈ {2, 4, …, 2048}, 20 trials, CLCB-LLM-C reported 1.32× better than
LFU and LEC on average. The setting of ``OffCMAB-LLMCache-v0`` and of the board differs in the
ways listed in the results file; this runs, on the same n grid and trials:

- ``ours``: the registered env (mean costs U[0, 1] per query, Bernoulli realised costs) with
  empty-cache logging (the logging of the paper's bound);
- ``paper-a``: "costs ~ Bernoulli(0.5)" read as every realised cost Bernoulli(0.5), i.e. one
  common mean cost 0.5 (``cost_model="fixed"``);
- ``paper-b``: read as each query's cost drawn once from Bernoulli(0.5), i.e. fixed costs in
  {0, 1} (drawn with seed 0; which query is popular is still drawn per instance);
- each of the three with uniformly random caches as the logging policy instead of the empty one.

For each: the mean cost gap of every learner (20 trials × 11 n), the ratio of LFU's and LEC's
mean gap to CLCB-LLM-C's (the figure the project compares with 1.32), and the mean over n of the
per-n ratios. Writes ``benchmarks/results/cmab_llm_cache.{json,md}``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.cmab.paper import gap_table
from benchmarks.common import command_line, machine_info, write_atomic, write_json
from gymforge.agents.cmab.clcb import clcb
from gymforge.agents.cmab.lec import lec
from gymforge.agents.cmab.lfu import lfu
from gymforge.envs.cmab.collect import problem_for

RESULTS = Path(__file__).resolve().parents[1] / "results"
ENV_ID = "OffCMAB-LLMCache-v0"
LEARNERS = {"CLCB-LLM-C": clcb, "LFU": lfu, "LEC": lec}


def settings() -> dict[str, dict[str, Any]]:
    """Env kwargs of each cost reading."""
    zero_one = (np.random.default_rng(0).random(100) < 0.5).astype(float).tolist()
    return {
        "ours": {},
        "paper-a": {"cost_model": "fixed", "cost_means": [0.5] * 100},
        "paper-b": {"cost_model": "fixed", "cost_means": zero_one},
    }


def ratios(table: dict[str, Any]) -> dict[str, float]:
    """LFU / CLCB and LEC / CLCB of the overall mean gaps, and the mean of the per-n ratios."""
    mean, overall = table["mean"], table["overall_mean"]
    out = {}
    for other in ("LFU", "LEC"):
        out[f"{other}/CLCB"] = overall[other] / overall["CLCB-LLM-C"]
        per_n = [a / b for a, b in zip(mean[other], mean["CLCB-LLM-C"], strict=True) if b > 0]
        out[f"{other}/CLCB per-n mean"] = float(np.mean(per_n))
    return out


DIFFERENCES = [
    "## Settings that differ from the paper's synthetic experiment",
    "",
    "| setting | paper (synthetic) | `OffCMAB-LLMCache-v0` and the board |",
    "|---|---|---|",
    '| mean costs | "costs ~ Bernoulli(0.5)" (one common mean, or 0/1 costs per query: '
    "not said) | c(q) ~ U[0, 1] per query and instance, realised costs Bernoulli(c(q)) |",
    "| which query is popular | not said | drawn per instance (ids carry no popularity) |",
    "| logging policy | not said for the experiment (the bound assumes the empty cache) | "
    "empty cache (every query misses) |",
    "| δ | not said | 0.1 |",
    "| CLCB-LLM-C variant | Alg. 2 (UCB on p too) or Alg. 3 (empirical p̂): not said | Alg. 3 |",
    "| n | 2, 4, …, 2048 | the board: n = 100; this file: the paper's grid |",
    "| what the 1.32× averages | not said (cost or gap, over n and trials) | mean gap over "
    "the n grid and trials, and the mean of per-n ratios |",
    "| trials | 20 | the board: 300 instances; this file: 20 per n |",
    "",
    "Same as the paper: 100 queries, a cache of 40, power-law arrivals with exponent 0.9.",
]

FINDINGS = [
    "## What the runs show",
    "",
    "- No reading of the paper's cost model reproduces 1.32× against both baselines. With one "
    "common mean cost (paper-a), LFU is the best cache any learner can pick from p̂, and "
    "CLCB-LLM-C ties it; LEC, which multiplies p̂ by a noisy ĉ, is 1.30× worse (empty logs), "
    "close to the paper's figure. With 0/1 costs (paper-b), LEC is the strongest learner, "
    "since a query that is never costly should not be cached, and CLCB-LLM-C is 1.10× better "
    "than LFU only.",
    "- Why CLCB-LLM-C ties LFU for small n: under empty-cache logging every arrival of q is a "
    "cost observation, so N_c(q) = n·p̂(q) and the index p̂·(ĉ + √(2L/N_c)) is dominated by "
    "p̂·√(2L/(n p̂)) = √(2L p̂/n), increasing in p̂: the same order as LFU's until the radius "
    "shrinks below the spread of the ĉ (here n of a few hundred).",
    "- Our setting (U[0, 1] means, empty logs) gives 1.05× against both; the board's track "
    "(n = 100, 300 instances) ranks CLCB-LLM-C < LEC < LFU.",
]


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# LLM cache: our setting against the paper's synthetic one",
        "",
        f"Command: `{result['command']}`  ",
        f"Total: {result['seconds']:.0f} s on a shared, loaded machine; {result['trials']} "
        f"trials per n, n ∈ {result['n']}; gap = expected cost of the learned cache minus the "
        "optimal cache's (exact, from the instance's parameters).",
        "",
        "| setting | logging | CLCB-LLM-C | LFU | LEC | LFU / CLCB | LEC / CLCB | "
        "LFU / CLCB (mean of per-n) | LEC / CLCB (mean of per-n) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines = lines[:5] + DIFFERENCES + ["", "## Mean gaps and ratios", ""] + lines[5:]
    for row in result["rows"]:
        o, r = row["table"]["overall_mean"], row["ratios"]
        lines.append(
            f"| {row['setting']} | {row['logging']} | {o['CLCB-LLM-C']:.4f} | {o['LFU']:.4f} | "
            f"{o['LEC']:.4f} | {r['LFU/CLCB']:.2f} | {r['LEC/CLCB']:.2f} | "
            f"{r['LFU/CLCB per-n mean']:.2f} | {r['LEC/CLCB per-n mean']:.2f} |"
        )
    lines += ["", *FINDINGS, "", "Per n (mean gap):", ""]
    for row in result["rows"]:
        t = row["table"]
        lines.append(
            f"- {row['setting']}, {row['logging']} logging: "
            + "; ".join(
                f"n={n}: " + "/".join(f"{t['mean'][k][i]:.3g}" for k in LEARNERS)
                for i, n in enumerate(t["n"])
            )
            + " (CLCB-LLM-C/LFU/LEC)"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    trials = 3 if args.quick else args.trials
    n_grid = [2, 8, 32, 128, 512] if args.quick else [2**i for i in range(1, 12)]
    rows = []
    for name, kwargs in settings().items():
        problem = problem_for(ENV_ID, kwargs)
        for logging in ("empty", "uniform"):
            table = gap_table(problem, LEARNERS, n_grid, trials, logging)
            rows.append(
                {
                    "setting": name,
                    "kwargs": kwargs,
                    "logging": logging,
                    "table": table,
                    "ratios": ratios(table),
                }
            )
            print(name, logging, rows[-1]["ratios"], flush=True)
    result = {
        "command": command_line(),
        "machine": machine_info(["gymforge", "torch", "numpy"]),
        "trials": trials,
        "n": n_grid,
        "seconds": time.perf_counter() - start,
        "rows": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    write_json(RESULTS / "cmab_llm_cache.json", result, 2)
    write_atomic(RESULTS / "cmab_llm_cache.md", markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
