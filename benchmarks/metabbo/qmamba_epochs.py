"""Q-Mamba's validation curve over training epochs: does training longer on the same data help?

``gymforge train MetaBBO-v0 --algo qmamba ... --checkpoint-every N`` keeps the model after every
N-th epoch in ``OUT.checkpoints/epoch_K``. This benchmark evaluates each such model (acting as
its config says: greedy for the reference's settings) on the protocol's **validation split**
(``benchmarks/metabbo/protocol.json``: the 16 training functions on an instance no training
episode used, seeds ``1..n``, the full budget), with random configuration and the registered
expert of the preset (the behaviour policy in the data) on the same runs. Per row: mean Perf
and log10 final error with 95% bootstrap CIs, and paired differences run by run against random
and against the expert (CI and sign-flip p-value). The test split is never touched.

Rows already in the output file are kept when their model file has the same SHA-256 (so the
command can be re-run as a training run writes further checkpoints); a changed file is
evaluated again.

Run: ``python -m benchmarks.metabbo.qmamba_epochs MODEL_OR_CHECKPOINTS_DIR ... --preset alg0``
(writes ``benchmarks/results/metabbo_qmamba_epochs_PRESET.{json,md}``; ``--out`` to change).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks import common
from benchmarks.metabbo.experts import (
    PERMUTATIONS,
    format_ci,
    load_protocol,
    paired_test,
    validation_runs,
)
from gymforge.agents.metabbo.agent import WEIGHTS_FILE, load_agent, load_model
from gymforge.agents.random_agent import RandomAgent
from gymforge.baselines.metabbo.experts import EXPERT_IDS, ppo_expert_agent
from gymforge.leaderboards.stats import bootstrap_ci

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
METRICS = ("perf", "log10_error")
REFERENCES = ("random", "expert")
Runs = dict[str, np.ndarray]  # metric -> per-run values


def model_folders(paths: list[Path]) -> list[Path]:
    """The model folders named by ``paths``: a model folder itself, or a checkpoints folder
    whose ``epoch_*`` children are model folders (in epoch order)."""
    found: list[Path] = []
    for path in paths:
        if (path / WEIGHTS_FILE).is_file():
            found.append(path)
        elif path.is_dir() and sorted(path.glob("epoch_*")):
            found += [p for p in sorted(path.glob("epoch_*")) if (p / WEIGHTS_FILE).is_file()]
        else:
            raise SystemExit(f"{path}: neither a Q-Mamba model folder nor a checkpoints folder")
    return found


def _digest(model: Path) -> str:
    return hashlib.sha256((model / WEIGHTS_FILE).read_bytes()).hexdigest()


def _summary(values: Runs, references: dict[str, Runs]) -> dict[str, Any]:
    row: dict[str, Any] = {
        m: {"mean": float(v.mean()), "ci95": list(bootstrap_ci(v))} for m, v in values.items()
    }
    for name, ref in references.items():
        if ref is not values:
            row[f"vs_{name}"] = {m: paired_test(values[m] - ref[m]) for m in METRICS}
    return row


def study(models: list[Path], preset: str, previous: dict[str, Any] | None) -> dict[str, Any]:
    """Random, the expert and every model on the validation split; rows of ``previous`` (an
    earlier result of the same settings) whose model file is unchanged are reused."""
    validation = load_protocol()["validation"]
    records = {model: load_model(model)[1] for model in models}
    for model, record in records.items():  # refused before any evaluation
        if record.get("env_id") not in (None, EXPERT_IDS[preset]):
            raise SystemExit(f"{model}: a model of {record['env_id']}, not {EXPERT_IDS[preset]}")
    kept = previous["rows"] if previous else {}
    runs: dict[str, Runs] = {}
    rows: dict[str, Any] = {}
    for name in REFERENCES:
        if name in kept:
            runs[name] = {m: np.asarray(kept[name]["runs"][m]) for m in METRICS}
        else:
            # the registered expert: the env's preset picks its policy and acting
            factory = ppo_expert_agent if name == "expert" else RandomAgent
            runs[name] = validation_runs(factory, preset, validation)
        rows[name] = {"runs": {m: runs[name][m].tolist() for m in METRICS}}
    for model, record in records.items():
        key, digest = str(model), _digest(model)
        old = kept.get(key)
        start = time.perf_counter()
        if old is not None and old.get("sha256") == digest:
            values = {m: np.asarray(old["runs"][m]) for m in METRICS}
        else:
            values = validation_runs(load_agent(model), preset, validation)
        runs[key] = values
        rows[key] = {
            "epochs": len(record.get("history", [])),
            "sha256": digest,
            "seconds_trained": record.get("seconds"),
            "runs": {m: values[m].tolist() for m in METRICS},
        }
        print(f"{key}: {time.perf_counter() - start:.0f} s", flush=True)
    references = {name: runs[name] for name in REFERENCES}
    for name, row in rows.items():
        row.update(_summary(runs[name], references))
    return {
        "preset": preset,
        "validation": {k: validation[k] for k in ("function_ids", "instance_id", "seeds")},
        "rows": rows,
    }


def _cells(row: dict[str, Any], reference: str) -> str:
    vs = row.get(f"vs_{reference}")
    if vs is None:
        return "– | –"
    return f"{format_ci(vs['perf'], 4)} | {format_ci(vs['log10_error'], 2)}"


def render_md(result: dict[str, Any]) -> str:
    val = result["validation"]
    n_runs = len(val["function_ids"]) * len(val["seeds"])
    lines = [
        f"# Q-Mamba over training epochs ({result['preset']}, validation split)",
        "",
        f"Command: `{result['command']}`, measured at {result['measured_at']} (one torch "
        "thread). Rows kept from an earlier run of the same file are not re-run.",
        "",
        f"Validation split: functions {val['function_ids']}, instance {val['instance_id']}, "
        f"seeds 1..{len(val['seeds'])} ({n_runs} runs per row); the test split is not used. "
        "Each model acts as its config says. Paired differences are run by run (same function, "
        "instance and seed); Perf higher is better, log10 error lower is better; 95% "
        f"percentile-bootstrap CIs ({PERMUTATIONS:,}-flip sign tests in the JSON).",
        "",
        "| row | epochs | Perf ↑ | log10 error ↓ | ΔPerf vs random | Δlog10 error vs random "
        "| ΔPerf vs expert | Δlog10 error vs expert |",
        "|---|---:|---|---|---|---|---|---|",
    ]
    for name, row in result["rows"].items():
        epochs = row.get("epochs", "–")
        lines.append(
            f"| {name} | {epochs} | {format_ci(row['perf'], 4)} | "
            f"{format_ci(row['log10_error'], 2)} | {_cells(row, 'random')} | "
            f"{_cells(row, 'expert')} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", type=Path, help="model or checkpoints folders")
    parser.add_argument("--preset", choices=sorted(EXPERT_IDS), default="alg0")
    parser.add_argument("--out", default=None, help="stem of the results files")
    args = parser.parse_args(argv)
    models = model_folders(args.models)  # refused before any evaluation
    torch.set_num_threads(1)
    out = Path(args.out or RESULTS / f"metabbo_qmamba_epochs_{args.preset}")
    previous = None
    if out.with_suffix(".json").is_file():
        previous = json.loads(out.with_suffix(".json").read_text())
        if previous.get("preset") != args.preset or previous.get("validation") != {
            k: load_protocol()["validation"][k] for k in ("function_ids", "instance_id", "seeds")
        }:
            previous = None
    start = time.perf_counter()
    result = study(models, args.preset, previous)
    result["command"] = common.command_line()
    result["measured_at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["wall_time_s"] = round(time.perf_counter() - start, 1)
    result["machine"] = common.machine_info(["torch", "numpy"])
    common.write_result_files(out, result, render_md(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
