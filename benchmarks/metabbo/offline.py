"""Offline MetaBBO: Q-Mamba trained on µ = 0.5 data vs random and the best static configuration.

One run, end to end, on CPU (one torch thread):

1. collect a µ-mixed dataset on the *train* split of ``MetaBBO-v0`` (Alg0, 10-D, population 100,
   500 generations): a fraction µ of the episodes by the expert-ish behaviour policy (SHADE-style
   adaptation by default), the rest by uniform random configuration;
2. train the Q-Mamba agent on it (AdamW, the reference's loss weights; stopped by a wall-clock
   budget, since this CPU is shared);
3. evaluate on the *test* split with the Q-Mamba test protocol (every test function, one fixed
   instance, seeds 1..S, full budget): Q-Mamba, uniform random configuration, the best static
   configuration of the train-split grid search, and the behaviour expert, with part A's metrics:
   Perf (1 − e_T/e_0), log10 final error and the AEI-style score vs random search.

Run from the repository root::

    .venv/bin/python -m benchmarks.metabbo.offline            # full size (~10-20 min under load)
    .venv/bin/python -m benchmarks.metabbo.offline --quick    # smoke size (~2 min)

Writes ``benchmarks/results/metabbo_offline.json`` and ``.md`` (``--quick``: ``*_quick.*``).
A full run evaluates on the test split: it needs a clean working tree (``--allow-dirty``
records a dirty one as not final) and enters its file in the test-split ledger
(``benchmarks.metabbo.ledger``).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks import common
from benchmarks.metabbo.ledger import record_offline
from gymforge.agents.metabbo.agent import QMambaAgent, load_model, save_model
from gymforge.agents.metabbo.qmamba import QMambaConfig
from gymforge.agents.metabbo.train import TrainConfig, TrainResult, fit
from gymforge.agents.random_agent import RandomAgent
from gymforge.baselines.metabbo.behaviors import register_behavior
from gymforge.envs.metabbo.dataset import (
    collect,
    load_dataset,
    write_trajectories,
)
from gymforge.envs.metabbo.metrics import aei_scores, evaluate

RESULTS = common.REPO_ROOT / "benchmarks" / "results"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smoke size (not a result)")
    p.add_argument("--episodes", type=int, default=None, help="dataset episodes (full 128)")
    p.add_argument("--mu", type=float, default=0.5)
    p.add_argument("--expert", default="shade", help="behaviour expert of the mix")
    p.add_argument("--train-seconds", type=float, default=None, help="training budget (full 240)")
    p.add_argument("--epochs", type=int, default=300, help="upper bound on epochs")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--d-state", type=int, default=32)
    p.add_argument("--seeds", type=int, default=None, help="test seeds per problem (full 19)")
    p.add_argument("--max-generations", type=int, default=None, help="full 500")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--reward", default="env", help="training reward: env (reference) | log_error")
    p.add_argument(
        "--bc-weight",
        type=float,
        default=0.0,
        help="behaviour head's cross-entropy weight (0: none, the reference)",
    )
    p.add_argument(
        "--support-threshold",
        type=float,
        default=None,
        help="act only on bins the behaviour head supports (discrete BCQ's tau; with --model it "
        "overrides the model's own; default: the model's, 0 when training here)",
    )
    p.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sample each bin from behaviour x exp(Q / T) (needs a behaviour head; with --model "
        "it overrides the model's own; default: the model's, 0 (greedy) when training here)",
    )
    p.add_argument("--dataset", default=None, help="reuse this collected dataset (skip step 1)")
    p.add_argument(
        "--model",
        default=None,
        help="evaluate this model folder (gymforge train ... --out DIR) instead of training one "
        "(skips step 2; needs --dataset, the data it was trained on, for the record)",
    )
    p.add_argument(
        "--tag",
        default="",
        help="suffix of the output files, e.g. _logerror -> metabbo_offline_logerror.{md,json}",
    )
    p.add_argument("--save-dataset", default=None, help="also keep the collected dataset here")
    p.add_argument("--no-expert-eval", action="store_true", help="skip evaluating the expert")
    p.add_argument(
        "--static-bins",
        default=None,
        help="static configuration to compare with, e.g. 7,7,15 (default: part A's saved grid "
        "winner, else a grid search on the train split)",
    )
    common.add_allow_dirty(p)
    args = p.parse_args(argv)
    if args.model is not None and args.dataset is None:
        p.error("--model needs --dataset (the data the model was trained on)")
    args.train_seconds_given = args.train_seconds  # with --model: the budget it was trained with
    full = {"episodes": 128, "train_seconds": 240.0, "seeds": 19, "max_generations": 500}
    quick = {"episodes": 16, "train_seconds": 30.0, "seeds": 2, "max_generations": 100}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def best_static_agent(env_kwargs: dict[str, Any], given: str | None) -> tuple[Any, dict[str, Any]]:
    """The given bins, part A's saved grid-search winner, or a fresh grid search."""
    from gymforge.baselines.metabbo.static import StaticAgent, grid_search, load_configs

    if given is not None:
        bins = [int(v) for v in given.split(",")]
        return (lambda env: StaticAgent(env, bins)), {"source": "--static-bins", "bins": bins}

    saved = load_configs().get("alg0")
    if saved is not None:  # found with 500 generations; --quick plays it on shorter episodes too
        return (lambda env: StaticAgent(env, saved["bins"])), {
            "source": "baselines/metabbo/static_configs.json",
            "bins": saved["bins"],
            "train_perf": saved["perf"],
        }
    start = time.perf_counter()
    result = grid_search("alg0", "easy", seeds=1, max_generations=env_kwargs["max_generations"])
    return (lambda env: StaticAgent(env, result["bins"])), {
        "source": "grid_search run by this benchmark (64 configurations, 1 seed, train split)",
        "bins": result["bins"],
        "train_perf": result["perf"],
        "seconds": time.perf_counter() - start,
    }


def paired_verdicts(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Q-Mamba against random and the best static configuration, run by run: per metric the
    paired difference's mean, 95% CI and p-value, and the word the CI supports
    (:func:`benchmarks.claims.verdict`; a higher mean whose CI holds 0 is a tie)."""
    from benchmarks.claims import verdict
    from benchmarks.metabbo.experts import paired_test

    q = results["qmamba"]["runs"]
    out = {}
    for other in ("random", "best_static"):
        for metric, higher_is_better in (("perf", True), ("log10_error", False)):
            diff = (
                np.asarray(q[metric]).ravel() - np.asarray(results[other]["runs"][metric]).ravel()
            )
            test = paired_test(diff)
            test["verdict"] = verdict(*test["ci95"], higher_is_better=higher_is_better)
            out[f"qmamba_vs_{other}_{metric}"] = test
    return out


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    keep = ("perf", "log10_error", "aei", "seconds")
    return {
        **{k: result.get(k) for k in keep},
        "problems": result["problems"],
        "runs": {k: result["runs"][k] for k in ("perf", "log10_error", "evaluations")},
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    register_behavior()  # the 'sb3' behaviour ($GYMFORGE_METABBO_SB3_EXPERT)
    suffix = ("_quick" if args.quick else "") + args.tag
    provenance = (
        common.provenance(allow_dirty=True)
        if args.quick
        else common.require_clean_tree(args.allow_dirty)
    )
    started = time.perf_counter()
    load_start = os.getloadavg()
    env_kwargs = {"split": "easy", "subset": "train", "max_generations": args.max_generations}

    # 1. data
    t0 = time.perf_counter()
    if args.dataset is not None:
        data = load_dataset(args.dataset)
        metadata = data.metadata
        collect_seconds = metadata["seconds"]
        args.episodes, args.mu, args.expert = len(data), metadata["mu"], metadata["behaviors"][0]
    else:
        arrays, metadata = collect(
            "MetaBBO-v0",
            behavior="mix",
            mu=args.mu,
            expert=args.expert,
            episodes=args.episodes,
            seed=1000,
            env_kwargs=env_kwargs,
        )
        with tempfile.TemporaryDirectory() as tmp:
            target = args.save_dataset or Path(tmp) / "data"
            data = load_dataset(write_trajectories(target, arrays, metadata))
        collect_seconds = time.perf_counter() - t0
    print(f"collected {len(data)} episodes in {collect_seconds:.1f} s: {metadata['mean_return']}")

    # 2. training (or a model trained separately by ``gymforge train``)
    if args.model is not None:
        net, model_record = load_model(args.model)
        config = net.config
        train = TrainConfig(**model_record["train"])
        overrides = {
            name: getattr(args, name)
            for name in ("support_threshold", "temperature")
            if getattr(args, name) is not None
        }
        config = replace(config, **overrides)
        net.config = config
        trained = TrainResult(
            agent=QMambaAgent(net),
            history=model_record["history"],
            seconds=model_record["seconds"],
        )
        args.train_seconds = model_record.get("time_limit", args.train_seconds_given)
        trained_by = f"gymforge train (model folder {args.model})"
    else:
        config = QMambaConfig(
            obs_dim=9,
            action_nvec=(16, 16, 16),
            d_state=args.d_state,
            bc_weight=args.bc_weight,
            support_threshold=args.support_threshold or 0.0,
            temperature=args.temperature or 0.0,
        )
        train = TrainConfig(
            epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=0, reward=args.reward
        )

        def report(epoch: int, losses: dict[str, float]) -> None:
            print(
                f"  epoch {epoch + 1}: loss {losses['loss']:.4g} (td_last {losses['td_last']:.3g})"
            )

        trained = fit(data, config, train, progress=report, time_limit=args.train_seconds)
        trained_by = "this script"
    model_dir = save_model(
        trained.agent.net,
        RESULTS / f"metabbo_offline{suffix}.model",
        extra={
            "env_id": "MetaBBO-v0",
            "train": asdict(train),
            "history": trained.history,
            "seconds": trained.seconds,
        },
    )
    print(f"trained {len(trained.history)} epochs in {trained.seconds:.1f} s")

    # 3. evaluation on the test split
    eval_kwargs = {
        "preset": "alg0",
        "split": "easy",
        "subset": "test",
        "seeds": args.seeds,
        "max_generations": args.max_generations,
    }
    static_factory, static_info = best_static_agent(env_kwargs, args.static_bins)
    methods: dict[str, Any] = {
        "qmamba": trained.agent,
        "random": RandomAgent,
        "best_static": static_factory,
    }
    if not args.no_expert_eval:
        from gymforge.envs.metabbo.dataset import available_behaviors
        from gymforge.registry import load_entry_point

        methods[f"expert_{args.expert}"] = load_entry_point(available_behaviors()[args.expert])
    results: dict[str, Any] = {}
    random_search = None
    budget = 100 * (args.max_generations + 1)
    for name, policy in methods.items():
        out = evaluate(policy, with_random_search=random_search is None, **eval_kwargs)
        if random_search is None:
            random_search = np.asarray(out["runs"]["random_search_log10_error"])
        else:  # same random-search runs for every method (same seeds): computed once
            aei = aei_scores(
                np.asarray(out["runs"]["log10_error"]),
                random_search,
                np.asarray(out["runs"]["evaluations"]),
                budget,
            )
            out["aei"] = float(np.exp(np.log(aei).mean()))
            for problem, score in zip(out["problems"], aei, strict=True):
                problem["aei"] = float(score)
        results[name] = summarise(out)
        print(
            f"{name:>14}: Perf {out['perf']:.4f}  log10 err {out['log10_error']:.3f}  "
            f"AEI {out['aei']:.3f}  ({out['seconds']:.1f} s)"
        )

    verdicts = paired_verdicts(results)
    record = {
        "benchmark": "metabbo_offline",
        "quick": args.quick,
        "settings": {
            "env_id": "MetaBBO-v0",
            "preset": "alg0",
            "dimension": 10,
            "population_size": 100,
            "max_generations": args.max_generations,
            "train": {"split": "easy", "subset": "train", "episodes": args.episodes, "seed": 1000},
            "test": {
                "split": "easy",
                "subset": "test",
                "seeds_per_problem": args.seeds,
                "instance_id": 1,
            },
            "mu": args.mu,
            "expert": args.expert,
            "qmamba": config.to_json(),
            "training": {
                **asdict(train),
                "time_limit_s": args.train_seconds,
                "trained_by": trained_by,
            },
        },
        "dataset": {
            "seconds": collect_seconds,
            "counts": metadata["counts"],
            "mean_return": metadata["mean_return"],
        },
        "training": {
            "epochs_run": len(trained.history),
            "seconds": trained.seconds,
            "first_epoch": trained.history[0],
            "last_epoch": trained.history[-1],
            "model": str(model_dir.relative_to(common.REPO_ROOT)),
        },
        "best_static": static_info,
        "results": results,
        "verdicts": verdicts,
        "total_seconds": time.perf_counter() - started,
        "load_average_start": load_start,
        "load_average_end": os.getloadavg(),
        "machine": common.machine_info(["torch", "numpy", "gymnasium"]),
        "provenance": provenance,
        "command": common.command_line(),
    }
    path = RESULTS / f"metabbo_offline{suffix}.json"
    common.write_json(path, record, indent=1)
    common.write_atomic(RESULTS / f"metabbo_offline{suffix}.md", render_markdown(record))
    if not args.quick:
        variant = f"{args.expert} expert data, µ = {args.mu}" + (
            f" ({args.tag.strip('_')})" if args.tag else ""
        )
        record_offline(path, time.strftime("%Y-%m-%d", time.gmtime()), variant)
    print(f"total {record['total_seconds']:.0f} s; verdicts {verdicts}")
    return 0


def render_markdown(r: dict[str, Any]) -> str:
    s, res = r["settings"], r["results"]
    lines = [
        "# Offline MetaBBO: Q-Mamba vs random and best static configuration"
        + (" (quick smoke run, not a result)" if r["quick"] else ""),
        "",
        f"`{r['command']}` — {r['machine'].get('cpus_usable', '?')} CPUs, one torch thread, "
        f"load average {r['load_average_start'][0]:.1f} → {r['load_average_end'][0]:.1f} "
        "(the machine was shared with other jobs), total "
        f"{r['total_seconds'] / 60:.1f} min.",
        "",
        f"- Env: `MetaBBO-v0`, Alg0 (K = 3: F1, F2, Cr), D = {s['dimension']}, population "
        f"{s['population_size']}, {s['max_generations']} generations.",
        f"- Data: {s['train']['episodes']} episodes on the easy split's train functions, "
        f"µ = {s['mu']} ({r['dataset']['counts']}), mean return per behaviour "
        + ", ".join(f"{k} {v:.4f}" for k, v in r["dataset"]["mean_return"].items())
        + f"; {r['dataset']['seconds']:.0f} s.",
        f"- Training (CPU, {s['training'].get('trained_by', 'this script')}): "
        f"{r['training']['epochs_run']} epochs in {r['training']['seconds']:.0f} s (budget "
        + (
            "none"
            if s["training"]["time_limit_s"] is None
            else f"{s['training']['time_limit_s']:.0f} s"
        )
        + f"), batch {s['training']['batch_size']}, lr {s['training']['lr']}, reward "
        f"`{s['training']['reward']}`, γ = {s['qmamba']['gamma']}, β = {s['qmamba']['beta']}, "
        f"λ = {s['qmamba']['lam']}, behaviour weight {s['qmamba'].get('bc_weight', 0.0)}, "
        f"support threshold τ = {s['qmamba'].get('support_threshold', 0.0)}, "
        f"acting temperature T = {s['qmamba'].get('temperature', 0.0)}; "
        f"loss {r['training']['first_epoch']['loss']:.4g} → "
        f"{r['training']['last_epoch']['loss']:.4g}.",
        f"- Test: easy split's test functions (1, 2, 3, 5, 15, 16, 17, 21), instance 1, seeds "
        f"1..{s['test']['seeds_per_problem']} per problem.",
        f"- Best static: bins {r['best_static']['bins']} ({r['best_static']['source']}).",
        "",
        "| method | Perf ↑ | log10 final error ↓ | AEI-style ↑ | eval time (s) |",
        "|---|---|---|---|---|",
    ]
    for name, v in res.items():
        lines.append(
            f"| {name} | {v['perf']:.4f} | {v['log10_error']:.3f} | {v['aei']:.3f} | "
            f"{v['seconds']:.0f} |"
        )
    lines += ["", "Per problem (Perf / log10 error):", ""]
    names = list(res)
    lines.append("| function | " + " | ".join(names) + " |")
    lines.append("|---" * (len(names) + 1) + "|")
    for i, problem in enumerate(res["qmamba"]["problems"]):
        cells = [
            f"{res[n]['problems'][i]['perf']:.4f} / {res[n]['problems'][i]['log10_error']:.2f}"
            for n in names
        ]
        lines.append(f"| f{problem['function_id']} | " + " | ".join(cells) + " |")
    if all(isinstance(v, dict) for v in r["verdicts"].values()):
        heading = "Q-Mamba against random and best static (paired 95% CI, run by run):"
    else:  # files written before the paired verdicts compared means only
        heading = (
            "Q-Mamba against random and best static, means only (no paired interval, so no "
            "verdict; log10 error: a lower mean is the better one):"
        )
    lines += ["", heading, ""]
    for key, v in r["verdicts"].items():
        if isinstance(v, dict):
            low, high = v["ci95"]
            lines.append(f"- {key}: {v['verdict']} ({v['mean']:+.4f} [{low:+.4f}, {high:+.4f}])")
        else:
            lines.append(f"- {key}: {'better mean' if v else 'no better mean'} (means only)")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
