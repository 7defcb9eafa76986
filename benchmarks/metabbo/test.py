"""The MetaBBO reproduction's test evaluation: each final model once, on the frozen test split.

The protocol (``benchmarks/metabbo/protocol.json``, its sha256 recorded in
``benchmarks/results/metabbo_test_ledger.md`` before any evaluation under it) fixes the test
split: the easy split's 8 test functions, instance 1, seeds 1..19 (152 runs per row), D = 10,
population 100, 500 generations. Models and hyperparameters are chosen on the validation split
(``benchmarks.metabbo.experts``, ``benchmarks.metabbo.offline_select``); under the protocol
this script is the only evaluation on the test split, and it evaluates a row at most once: every
evaluation is kept as its own file under ``benchmarks/results/metabbo_test/``
(``PRESET-ROW.json``, with the per-run figures, the command and the time), and a row that
already has one is refused. Each evaluation written to the results gets its row in the
test-split ledger (``benchmarks.metabbo.ledger``), and the results need a clean working tree
(``--allow-dirty`` records a dirty one as not final).

Rows per preset (``alg0``, ``alg1``, ``alg2``): ``random`` (uniform random configuration, the
reference of the paired tests), ``best_static`` (the train-split grid-search winner), ``jde``,
``shade``, ``ppo_expert`` (the trained expert, acting as registered), ``ppo_expert_sampled``
(an expert registered greedy, sampling from its policy instead) and, when given with
``--qmamba PRESET=MODEL``, ``qmamba`` (greedy acting, as the reference) and with
``--qmamba-regularised PRESET=MODEL`` ``qmamba_regularised``; ``qmamba_chosen_epochs`` and
``qmamba_regularised_chosen_epochs`` (``--qmamba-chosen-epochs``,
``--qmamba-regularised-chosen-epochs``) act as those two, with the training length chosen on
the validation curve of ``benchmarks.metabbo.qmamba_epochs``; and with ``--behaviour-cloning
PRESET=MODEL`` ``behaviour_cloning`` (a model trained with a behaviour head, acting by that head
alone: the simplest offline baseline on the same data). Un-configured references, run once
for all presets (``any-random_search``, ``any-cmaes``): uniform random search and IPOP-CMA-ES
(pycma) with the same budget of evaluations, ``100 x 501``.

Metrics: Perf ``1 - e_T / e_0`` (for the un-configured references ``e_0`` is the best error of
the DE's initial population of the same run, taken from the preset's random row), log10 final
error, and the MetaBox-style AEI against random search (per function, then the geometric mean).
Each with its mean and 95% bootstrap CI; Perf and log10 error also as run-by-run paired
differences to random configuration with a 95% bootstrap CI and a sign-flip permutation p-value.

Run: ``python -m benchmarks.metabbo.test --rows random,best_static,jde,shade,ppo_expert``
(``--presets``, ``--references`` for random search and CMA-ES, ``--render`` to only rewrite the
tables). ``--quick`` runs a tiny smoke size into ``--out`` (a scratch folder; never the results).
Writes ``benchmarks/results/metabbo_test/*.json`` and ``benchmarks/results/metabbo_test.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks import common
from benchmarks.claims import bonferroni_note, verdict
from benchmarks.metabbo.experts import load_protocol, paired_test
from benchmarks.metabbo.ledger import record_protocol_evaluation
from gymforge.baselines.metabbo.experts import ACTING
from gymforge.leaderboards.stats import bootstrap_ci

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
STORE = RESULTS / "metabbo_test"
PRESET_ROWS = (
    "random",
    "best_static",
    "jde",
    "shade",
    "ppo_expert",
    "ppo_expert_sampled",
    "qmamba",
    "qmamba_chosen_epochs",
    "qmamba_regularised",
    "qmamba_regularised_chosen_epochs",
    "behaviour_cloning",
)
#: acting temperature of the behaviour-cloning row: exp(Q / T) is ~1 for every bin at this T, so
#: the model samples from its behaviour head (trained by cross-entropy on the dataset's actions)
BC_TEMPERATURE = 1000.0
REFERENCES = ("random_search", "cmaes")
METRICS = ("perf", "log10_error")
#: rows every learned row is compared with, run by run: random configuration, the best static
#: configuration and the trained expert whose trajectories are in the offline data
COMPARATORS = ("random", "best_static", "ppo_expert")
#: rows that learned from data (the rows whose comparisons the results and the README state)
LEARNED_ROWS = (
    "ppo_expert",
    "ppo_expert_sampled",
    "qmamba",
    "qmamba_chosen_epochs",
    "qmamba_regularised",
    "qmamba_regularised_chosen_epochs",
    "behaviour_cloning",
)
#: rows whose model was the best of several validation candidates: (preset, row) -> (validation
#: results file, the training run whose checkpoints and final model were the candidates)
SELECTED_ON_VALIDATION = {
    ("alg0", "qmamba_chosen_epochs"): (
        "metabbo_qmamba_epochs_alg0.json",
        "runs/qmamba/alg0-long",
    ),
    ("alg0", "qmamba_regularised_chosen_epochs"): (
        "metabbo_qmamba_epochs_alg0.json",
        "runs/qmamba/alg0-long-reg",
    ),
}
#: the paired metrics, their direction and their decimals in the text
PAIRED_METRICS = (("perf", True, 4), ("log10_error", False, 3), ("log_aei", True, 2))
QUICK = {"function_ids": [1, 15], "seeds": 2, "max_generations": 10}


def _agent_factory(preset: str, row: str, models: dict[str, dict[str, str]]) -> Callable:
    """``f(env)`` building row ``row``'s agent for ``preset``."""
    from gymforge.agents.metabbo.agent import load_agent
    from gymforge.agents.random_agent import RandomAgent
    from gymforge.baselines.metabbo.adaptive import JDEAgent, SHADEAgent
    from gymforge.baselines.metabbo.experts import ppo_expert_agent
    from gymforge.baselines.metabbo.static import StaticAgent

    # the registered agent: the env's preset picks the expert and its acting
    if row == "ppo_expert":
        return ppo_expert_agent
    if row == "ppo_expert_sampled":  # the same policy sampling (check_jobs: a greedy preset)
        from gymforge.baselines.metabbo.experts import expert_policy_path
        from gymforge.baselines.ondevice.agent import TorchPolicyAgent

        policy = expert_policy_path(preset)
        return lambda env: TorchPolicyAgent(policy, stochastic=True)
    if row in models:
        path = models[row][preset]
        if row in ("qmamba", "qmamba_chosen_epochs"):
            return lambda env: load_agent(path, support_threshold=0.0, temperature=0.0)
        if row == "behaviour_cloning":  # the behaviour head alone: T so high exp(Q / T) is flat
            return lambda env: load_agent(path, support_threshold=0.0, temperature=BC_TEMPERATURE)
        return lambda env: load_agent(path)
    return {
        "random": lambda env: RandomAgent(env),
        "best_static": lambda env: StaticAgent(env),
        "jde": lambda env: JDEAgent(env),
        "shade": lambda env: SHADEAgent(env),
    }[row]


def _split(quick: bool) -> dict[str, Any]:
    protocol = load_protocol()
    test = dict(protocol["test"], **protocol["budget"])
    test["n_seeds"] = len(test["seeds"])
    if quick:
        test.update(QUICK, n_seeds=QUICK["seeds"])
    return test


def evaluate_row(preset: str, row: str, split: dict[str, Any], models: dict) -> dict[str, Any]:
    """Per-run figures of one configured-DE row on the test split."""
    from gymforge.envs.metabbo.metrics import evaluate

    out = evaluate(
        _agent_factory(preset, row, models),
        preset=preset,
        split=split["function_ids"],
        subset="test",
        seeds=split["n_seeds"],
        dimension=split["dimension"],
        population_size=split["population_size"],
        max_generations=split["max_generations"],
        instance_mode=split["instance_mode"],
        instance_id=split["instance_id"],
        with_random_search=False,
    )
    runs = out["runs"]
    return {
        name: np.asarray(runs[name], dtype=np.float64).ravel().tolist()
        for name in ("best_error", "initial_error", "evaluations")
    }


def evaluate_reference(name: str, split: dict[str, Any]) -> dict[str, Any]:
    """Per-run best errors of random search or CMA-ES with the DE's budget of evaluations."""
    from gymforge.baselines.metabbo.cmaes import cmaes_error
    from gymforge.envs.metabbo.metrics import random_search_error
    from gymforge.envs.metabbo.problems import ProblemSet, build_instances

    fids = [f for f in split["function_ids"] for _ in range(split["n_seeds"])]
    seeds = [s + 1 for _ in split["function_ids"] for s in range(split["n_seeds"])]
    iids = [split["instance_id"]] * len(fids)
    problem_set = ProblemSet(
        function_ids=tuple(split["function_ids"]),
        dimension=split["dimension"],
        instance_mode=split["instance_mode"],
    )
    budget = split["population_size"] * (split["max_generations"] + 1)
    if name == "random_search":
        problems = build_instances(problem_set, fids, iids, "cpu")
        errors = random_search_error(problems, budget, [10_000 + s for s in seeds])
    else:
        errors = cmaes_error(problem_set, fids, iids, seeds, budget)
    return {
        "best_error": np.asarray(errors, np.float64).tolist(),
        "evaluations": [budget] * len(fids),
    }


def _store_path(store: Path, preset: str, row: str) -> Path:
    return store / f"{preset}-{row}.json"


def check_jobs(jobs: list[tuple[str, str]], models: dict, store: Path) -> None:
    """Refuse, before any work, a row already evaluated or a Q-Mamba row without its model."""
    for preset, row in jobs:
        path = _store_path(store, preset, row)
        if path.exists():
            raise SystemExit(
                f"{path.name} exists: the protocol evaluates each row's final model once on the "
                "test split"
            )
        if row == "ppo_expert_sampled" and ACTING[preset] == "sampled":
            raise SystemExit(
                f"row ppo_expert_sampled on {preset}: that expert is registered sampling, so "
                "its ppo_expert row is this row"
            )
        if row in models and preset not in models[row]:
            flag = "--" + row.replace("_", "-")
            raise SystemExit(f"row {row} on {preset} needs {flag} {preset}=MODEL_FOLDER")


def run_and_store(
    preset: str,
    row: str,
    split: dict,
    models: dict,
    store: Path,
    command: str,
    provenance: dict[str, Any],
) -> None:
    """Evaluate one row, write its file (:func:`check_jobs` has refused repeats) with
    ``provenance`` (:func:`benchmarks.common.provenance`), and enter it in the test-split ledger
    when it is a result (``store`` is the results folder)."""
    path = _store_path(store, preset, row)
    start = time.perf_counter()
    runs = (
        evaluate_reference(row, split)
        if preset == "any"
        else evaluate_row(preset, row, split, models)
    )
    model = models.get(row, {}).get(preset)
    record = {
        "preset": preset,
        "row": row,
        "model": model,
        "command": command,
        "evaluated_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": round(time.perf_counter() - start, 1),
        "protocol_sha256": hashlib.sha256(
            (common.REPO_ROOT / "benchmarks" / "metabbo" / "protocol.json").read_bytes()
        ).hexdigest(),
        "split": {k: split[k] for k in ("function_ids", "instance_id", "n_seeds")},
        "git": provenance["git_revision"],
        "provenance": provenance,
        "runs": runs,
    }
    store.mkdir(parents=True, exist_ok=True)
    common.write_json(path, record, indent=1)
    if store == STORE:
        record_protocol_evaluation(path)
    print(f"{preset} {row}: {record['seconds']} s", flush=True)


def _metrics(
    runs: dict, initial_error: np.ndarray, rs_log10: np.ndarray, n_fun: int, budget: int
) -> dict[str, np.ndarray]:
    """Per-run Perf and log10 error, and per-function log AEI, of one row's stored runs."""
    from gymforge.envs.metabbo.metrics import aei_scores, log_error, perf

    err = np.asarray(runs["best_error"])
    log10 = log_error(err)
    aei = aei_scores(
        log10.reshape(n_fun, -1),
        rs_log10.reshape(n_fun, -1),
        np.asarray(runs["evaluations"], np.float64).reshape(n_fun, -1),
        budget,
    )
    return {"perf": perf(err, initial_error), "log10_error": log10, "log_aei": np.log(aei)}


def summarise(store: Path) -> dict[str, Any]:
    """Means, CIs and paired tests against random of every stored evaluation, per preset."""
    from gymforge.envs.metabbo.metrics import log_error

    records = {p.stem: json.loads(p.read_text()) for p in sorted(store.glob("*.json"))}
    if "any-random_search" not in records:
        raise SystemExit("render needs the random-search reference (run --references first)")
    rs = records["any-random_search"]
    n_fun = len(rs["split"]["function_ids"])
    budget = int(rs["runs"]["evaluations"][0])
    rs_log10 = log_error(np.asarray(rs["runs"]["best_error"]))
    out: dict[str, Any] = {}
    for preset in ("alg0", "alg1", "alg2"):
        if f"{preset}-random" not in records:
            continue
        e0 = np.asarray(records[f"{preset}-random"]["runs"]["initial_error"])
        table: dict[str, Any] = {}
        names = [f"{preset}-{r}" for r in PRESET_ROWS] + [f"any-{r}" for r in REFERENCES]
        values = {
            key.split("-", 1)[1]: _metrics(records[key]["runs"], e0, rs_log10, n_fun, budget)
            for key in names
            if key in records
        }
        for row, metric_values in values.items():
            entry = {m: (float(v.mean()), bootstrap_ci(v)) for m, v in metric_values.items()}
            # AEI aggregates as the geometric mean over functions (one easy function would
            # dominate an arithmetic mean): the mean of log AEI and its CI, exponentiated
            log_mean, (log_low, log_high) = entry.pop("log_aei")
            entry["aei"] = (math.exp(log_mean), (math.exp(log_low), math.exp(log_high)))
            if row in LEARNED_ROWS:
                entry["paired"] = {
                    other: {
                        m: paired_test(metric_values[m] - values[other][m])
                        for m, _, _ in PAIRED_METRICS
                    }
                    for other in COMPARATORS
                    if other in values and other != row
                }
            if row != "random":
                entry["vs_random"] = {
                    m: paired_test(metric_values[m] - values["random"][m]) for m in METRICS
                }
                diff = metric_values["log10_error"] - values["random"]["log10_error"]
                entry["log10_vs_random_by_function"] = dict(
                    zip(rs["split"]["function_ids"], np.split(diff, n_fun), strict=True)
                )
            table[row] = entry
        out[preset] = table
    return out


def _fmt(mean_ci: tuple[float, tuple[float, float]], digits: int) -> str:
    """``mean [low, high]`` with ``digits`` decimals and thousands separators."""
    mean, (low, high) = mean_ci
    spec = f",.{digits}f"
    return f"{mean:{spec}} [{low:{spec}}, {high:{spec}}]"


def _by_function(summary: dict[str, Any], rows: list[str]) -> list[str]:
    """Δlog10 error vs random per test function (mean over its seeds), per configured row."""
    lines = [
        "## Per function: Δlog10 error vs random configuration (mean over the seeds)",
        "",
        "Read from the stored evaluations above (nothing re-run, nothing chosen from it); "
        "negative is better than random.",
        "",
    ]
    for p, table in summary.items():
        functions = next(
            (e["log10_vs_random_by_function"] for e in table.values() if "vs_random" in e), {}
        )
        lines += [f"| {p} | " + " | ".join(f"f{f}" for f in functions) + " |"]
        lines.append("|---|" + "---:|" * len(functions))
        for row in rows:
            by_function = table.get(row, {}).get("log10_vs_random_by_function")
            if by_function:
                cells = (f"{float(d.mean()):+.2f}" for d in by_function.values())
                lines.append(f"| {row} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines[:-1]


def _paired_cell(test: dict[str, Any], higher_is_better: bool, digits: int) -> str:
    """``mean [low, high]`` of a paired difference and the word :func:`verdict` gives it."""
    low, high = test["ci95"]
    figures = _fmt((test["mean"], (low, high)), digits)
    return f"{figures} | {verdict(low, high, higher_is_better)}"


def _candidates(preset: str, row: str) -> int | None:
    """How many validation candidates row ``row``'s model was chosen from, or ``None``."""
    source = SELECTED_ON_VALIDATION.get((preset, row))
    if source is None:
        return None
    name, run = source
    path = RESULTS / name
    if not path.exists():
        return None
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return sum(1 for key in rows if key == run or key.startswith(run + ".checkpoints/"))


def _comparisons(summary: dict[str, Any]) -> list[str]:
    """The learned rows against random, best static and the expert, with the word each paired
    interval supports, then how many tests each preset ran and which survive Bonferroni."""
    lines = [
        "## Learned rows in words: against random, the best static configuration and the expert",
        "",
        "Each word is `benchmarks.claims.verdict` of the paired 95% bootstrap CI (row minus "
        "comparator on the same function, instance and seed; log AEI per function, CI over "
        "the functions): an interval holding 0 is a tie, whatever the means say. `ppo_expert` "
        "is the trained expert whose trajectories are in the offline data.",
        "",
        "| method | preset | against | ΔPerf [95% CI] | | Δlog10 error [95% CI] | | "
        "Δlog AEI [95% CI] | |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in LEARNED_ROWS:
        for preset, table in summary.items():
            for other, tests in table.get(row, {}).get("paired", {}).items():
                cells = [
                    _paired_cell(tests[m], higher, digits) for m, higher, digits in PAIRED_METRICS
                ]
                lines.append(f"| {row} | {preset} | {other} | " + " | ".join(cells) + " |")
    if len(lines) == 8:
        return []
    lines += ["", "### Multiplicity", ""]
    for preset, table in summary.items():
        tested = [row for row, entry in table.items() if "vs_random" in entry]
        survivors = [
            f"{row} ({verdict(*entry['vs_random']['perf']['ci95'])} random, ΔPerf "
            f"{_fmt((entry['vs_random']['perf']['mean'], entry['vs_random']['perf']['ci95']), 4)}, "
            f"p = {entry['vs_random']['perf']['p_value']:.2g})"
            for row, entry in table.items()
            if "vs_random" in entry and entry["vs_random"]["perf"]["p_value"] < 0.05 / len(tested)
        ]
        lines.append(
            f"- {preset}: {len(tested)} rows are tested against random on Perf (and again on "
            f"log10 error): {', '.join(tested)}. Bonferroni over those {len(tested)} Perf "
            f"tests puts the per-test level at 0.05 / {len(tested)} = "
            f"{0.05 / len(tested):.2g}; the Perf differences below it: "
            f"{', '.join(survivors) or 'none'}."
        )
    for (preset, row), (name, run) in SELECTED_ON_VALIDATION.items():
        n = _candidates(preset, row)
        entry = summary.get(preset, {}).get(row)
        if n is None or entry is None:
            continue
        n_tested = sum(1 for e in summary[preset].values() if "vs_random" in e)
        p_value = entry["vs_random"]["perf"]["p_value"]
        lines.append(
            f"- {preset} {row}: its model is the one with the highest validation Perf of {n} "
            f"candidates (the checkpoints and final model of `{run}`, `{name}`), and only it "
            "was evaluated on the test split. Its test result is one evaluation of that "
            "checkpoint; as evidence for the training recipe it is the best of "
            f"{n} noisy candidates. Its Perf test against random: "
            f"{bonferroni_note(p_value, n_tested)}."
        )
    return lines


def render(store: Path) -> str:
    """The results file: the paper-shaped tables (rows = methods, columns = presets)."""
    summary = summarise(store)
    presets = list(summary)
    rows = [r for r in (*PRESET_ROWS, *REFERENCES) if any(r in summary[p] for p in presets)]
    evaluations = sorted(store.glob("*.json"))
    lines = [
        "# MetaBBO reproduction: the protocol's test evaluation",
        "",
        "<!-- GENERATED by `python -m benchmarks.metabbo.test --render`; do not edit. -->",
        "",
        "Test split of `benchmarks/metabbo/protocol.json`: the easy split's test functions, "
        "instance 1, seeds 1..19 (152 runs per row), D = 10, population 100, 500 generations. "
        "Each row below is one evaluation, stored in `benchmarks/results/metabbo_test/` and "
        "entered in `metabbo_test_ledger.md`; a row is never evaluated twice. Means with 95% "
        "bootstrap CIs over the runs (AEI: its geometric mean over the functions, CI by resampling functions). `random_search` and `cmaes` are "
        "not configured DEs: they spend the same 50,100 evaluations; their Perf uses the DE's "
        "initial best error of the same run.",
        "",
    ]
    for metric, title, digits in (
        ("perf", "Perf (higher is better)", 4),
        ("log10_error", "log10 final error (lower is better)", 2),
        ("aei", "AEI against random search, geometric mean over functions (higher is better)", 1),
    ):
        lines += [f"## {title}", "", "| method | " + " | ".join(presets) + " |"]
        lines.append("|---|" + "---|" * len(presets))
        for row in rows:
            cells = [
                _fmt(summary[p][row][metric], digits) if row in summary[p] else "–" for p in presets
            ]
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "## Paired differences to random configuration (same function, instance and seed)",
        "",
        "| method | preset | ΔPerf [95% CI] | p | Δlog10 error [95% CI] | p |",
        "|---|---|---|---:|---|---:|",
    ]
    for row in rows:
        for p in presets:
            vs = summary[p].get(row, {}).get("vs_random")
            if vs:
                perf, err = vs["perf"], vs["log10_error"]
                lines.append(
                    f"| {row} | {p} | {_fmt((perf['mean'], perf['ci95']), 4)} | "
                    f"{perf['p_value']:.2g} | {_fmt((err['mean'], err['ci95']), 3)} | "
                    f"{err['p_value']:.2g} |"
                )
    comparisons = _comparisons(summary)
    lines += ["", *comparisons, *([""] if comparisons else []), *_by_function(summary, rows)]
    lines += [
        "",
        "## Evaluations",
        "",
        "| file | evaluated | seconds | command |",
        "|---|---|---:|---|",
    ]
    for path in evaluations:
        record = json.loads(path.read_text())
        lines.append(
            f"| `{path.name}` | {record['evaluated_at']} | {record['seconds']} | "
            f"`{record['command']}` |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", default="alg0,alg1,alg2")
    p.add_argument("--rows", default="", help=f"comma-separated, of {PRESET_ROWS}")
    p.add_argument("--references", action="store_true", help="random search and CMA-ES")
    p.add_argument("--qmamba", action="append", default=[], help="PRESET=MODEL_FOLDER")
    p.add_argument("--qmamba-regularised", action="append", default=[], help="PRESET=MODEL")
    p.add_argument(
        "--qmamba-chosen-epochs",
        action="append",
        default=[],
        help="PRESET=MODEL: greedy acting, training length chosen on validation",
    )
    p.add_argument(
        "--qmamba-regularised-chosen-epochs",
        action="append",
        default=[],
        help="PRESET=MODEL: regularised acting, training length chosen on validation",
    )
    p.add_argument(
        "--behaviour-cloning",
        action="append",
        default=[],
        help="PRESET=MODEL with a behaviour head, acting by that head alone",
    )
    p.add_argument("--render", action="store_true", help="only rewrite the tables")
    p.add_argument("--quick", action="store_true", help="smoke size into --out (not a result)")
    p.add_argument("--out", type=Path, default=None, help="store folder (default: the results)")
    common.add_allow_dirty(p)
    args = p.parse_args(argv)
    rows = [r for r in args.rows.split(",") if r]
    presets = [x for x in args.presets.split(",") if x]
    bad = [r for r in rows if r not in PRESET_ROWS] + [
        x for x in presets if x not in ("alg0", "alg1", "alg2")
    ]
    if bad:
        p.error(f"unknown rows or presets {bad}; rows: {PRESET_ROWS}, presets: alg0, alg1, alg2")
    if args.quick and args.out is None:
        p.error("--quick needs --out (a smoke run never writes the results)")
    store = args.out or STORE
    models = {
        "qmamba": dict(x.split("=", 1) for x in args.qmamba),
        "qmamba_regularised": dict(x.split("=", 1) for x in args.qmamba_regularised),
        "qmamba_chosen_epochs": dict(x.split("=", 1) for x in args.qmamba_chosen_epochs),
        "qmamba_regularised_chosen_epochs": dict(
            x.split("=", 1) for x in args.qmamba_regularised_chosen_epochs
        ),
        "behaviour_cloning": dict(x.split("=", 1) for x in args.behaviour_cloning),
    }
    torch.set_num_threads(1)
    split = _split(args.quick)
    command = common.command_line(None if argv is None else [__file__, *argv])
    jobs = [(preset, row) for preset in presets for row in rows]
    jobs += [("any", name) for name in REFERENCES] if args.references else []
    if not args.render:
        check_jobs(jobs, models, store)
        provenance = (
            common.require_clean_tree(args.allow_dirty)
            if store == STORE
            else common.provenance(allow_dirty=True)
        )
        for preset, row in jobs:
            run_and_store(preset, row, split, models, store, command, provenance)
    text = render(store)
    target = store.parent / "metabbo_test.md" if store == STORE else store / "metabbo_test.md"
    common.write_atomic(target, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
