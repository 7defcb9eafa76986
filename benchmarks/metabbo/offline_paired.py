"""Paired comparison of the offline MetaBBO agent with the other methods of a results file.

Reads one or more ``benchmarks/results/metabbo_offline*.json`` files (written by
``offline.py``; every method ran the same problems with the same seeds, so runs pair up)
and prints, per file and per other method, the mean difference ``qmamba - other`` of Perf and of
log10 final error over the paired runs, its 95 % bootstrap interval (10,000 resamples of the
runs, seed 0) and how many runs the agent does better / worse / the same on, as a markdown table.

Run from the repository root::

    .venv/bin/python -m benchmarks.metabbo.offline_paired benchmarks/results/metabbo_offline_kl.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

AGENT = "qmamba"
# metric, direction (+1: higher is better)
METRICS = (("perf", 1), ("log10_error", -1))


def paired_rows(results: dict, resamples: int = 10_000, seed: int = 0) -> list[dict]:
    """One row per (other method, metric): mean difference, bootstrap interval, win counts."""
    rng = np.random.default_rng(seed)
    agent_runs = results[AGENT]["runs"]
    rows = []
    for other, values in results.items():
        if other == AGENT:
            continue
        for metric, direction in METRICS:
            diff = np.ravel(agent_runs[metric]) - np.ravel(values["runs"][metric])
            picks = rng.integers(0, len(diff), size=(resamples, len(diff)))
            means = diff[picks].mean(axis=1)
            better = int((direction * diff > 0).sum())
            worse = int((direction * diff < 0).sum())
            rows.append(
                {
                    "other": other,
                    "metric": metric,
                    "mean": float(diff.mean()),
                    "low": float(np.quantile(means, 0.025)),
                    "high": float(np.quantile(means, 0.975)),
                    "better": better,
                    "worse": worse,
                    "same": len(diff) - better - worse,
                    "runs": len(diff),
                }
            )
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [
        f"| {AGENT} − other | metric | mean | 95 % bootstrap interval | better / worse / same |",
        "|---|---|---:|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['other']} | {r['metric']} | {r['mean']:+.4f} | [{r['low']:+.4f}, "
            f"{r['high']:+.4f}] | {r['better']} / {r['worse']} / {r['same']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", nargs="+", help="metabbo_offline*.json files")
    args = p.parse_args(argv)
    for path in args.results:
        results = json.loads(Path(path).read_text())["results"]
        if AGENT not in results or "runs" not in results[AGENT]:
            raise ValueError(f"{path}: no per-run results of {AGENT!r}")
        print(
            f"{path} ({np.size(results[AGENT]['runs']['perf'])} paired runs; log10 error: lower is better)\n"
        )
        print(markdown(paired_rows(results)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
