"""LineFlow: where PPO stands against the optimal / heuristic controllers and random, per scenario.

What it measures
    For each paper scenario (WaitingTime, WaitingTimeJump, PartDistribution k=5,
    WorkerAssignment k=3, ComplexLine k=3) the episode return (parts − scrap_factor·scrap,
    4000-step episodes on the exact SimPy engine, ``gym.make(id)``) of

    * every PPO agent stored under ``baselines/models/<id>/ppo-seed<S>/`` (trained by
      ``gymforge train``; the training commands are in each ``config.json`` and below),
    * the scenario's reference controller from the registry (WT ``optimal``, WTJ ``heuristic``,
      PD ``greedy``, WA ``best_partition``, CL ``heuristic``) and ``random``,

    all on the same held-out seeds ``2**62 + 1000 + k`` (k < ``--episodes``, default 5): disjoint
    from every training seed (< 2**62) and from the periodic-evaluation seed ``2**62`` that chose
    the stored checkpoint. PPO rows give the mean ± std over training seeds of each seed's mean
    return, the share of the reference controller's return and the normalised score
    ``(ppo − random)/(reference − random)``. The best controller of
    ``benchmarks/results/lineflow_controllers.json`` (seeds 0–4) is quoted beside them.

How to run (from the repository root)
    python -m benchmarks.lineflow.rl_sb3            # evaluate the stored agents (~3 min)
    python -m benchmarks.lineflow.rl_sb3 --quick    # one episode per agent
    python -m benchmarks.lineflow.rl_sb3 store RUN_DIR [RUN_DIR ...]   # store trained runs

    ``store`` copies a run's checkpoint with the best periodic held-out evaluation (seed 2**62;
    ties: the later one) or its final model into ``baselines/models/<id>/ppo-seed<S>/``
    (``model.zip``, ``config.json``, the run's ``evaluations.json`` and ``selected.json``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common

MODELS = common.REPO_ROOT / "baselines" / "models"
RESULTS = common.REPO_ROOT / "benchmarks" / "results"
SEED_BASE = 2**62 + 1000
#: key -> (env id, reference agent of the registry)
SCENARIOS: dict[str, tuple[str, str]] = {
    "WT": ("LineFlow-WaitingTime-v0", "optimal"),
    "WTJ": ("LineFlow-WaitingTimeJump-v0", "heuristic"),
    "PD": ("LineFlow-PartDistribution-v0", "greedy"),
    "WA": ("LineFlow-WorkerAssignment-v0", "best_partition"),
    "CL": ("LineFlow-ComplexLine-v0", "heuristic"),
}
#: key -> upstream's documented training budget in steps
UPSTREAM_BUDGET = {"WT": 1_000_000, "WTJ": 10_000_000, "PD": 1_000_000, "WA": 500_000,
                   "CL": 100_000_000}  # fmt: skip


def store(run: Path) -> Path:
    """Copy the best-evaluated checkpoint (or final model) of ``run`` into ``MODELS``."""
    config = json.loads((run / "config.json").read_text())
    evaluations = json.loads((run / "evaluations.json").read_text())["evaluations"]
    candidates = {int(config["steps"]): run}
    for folder in (run / "checkpoints").glob("step_*"):
        candidates[int(folder.name.removeprefix("step_"))] = folder
    scored = [
        (r["mean_return"], r["timesteps"]) for r in evaluations if r["timesteps"] in candidates
    ]
    if scored:
        best_return, best_step = max(scored)
        rule = f"best periodic evaluation (seed 2**62): {best_return} at {best_step} steps"
    else:
        best_step, rule = int(config["steps"]), "final model (no evaluated checkpoint)"
    source = candidates[best_step]
    target = MODELS / config["env_id"] / f"ppo-seed{config['seed']}"
    tmp = target.with_name(f".{target.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    shutil.copy2(source / "model.zip", tmp / "model.zip")
    shutil.copy2(source / "config.json", tmp / "config.json")
    shutil.copy2(run / "evaluations.json", tmp / "evaluations.json")
    selected = {"run": str(run), "source": str(source), "steps": best_step, "rule": rule,
                "final_steps": int(config["steps"])}  # fmt: skip
    (tmp / "selected.json").write_text(json.dumps(selected, indent=2) + "\n")
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    return target


def _recipe(config: dict[str, Any]) -> str:
    """The config file and revision a model trained with (a resumed run only names the latter)."""
    files = [Path(f).name for f in config["config_sources"] if Path(f).name != "config.json"]
    revision = config["train_config"]["revision"]
    if config.get("resumed_from") or not files:
        return f"config revision {revision}, resumed run"
    return f"{files[-1]} revision {revision}"


def _summary(returns: list[float]) -> dict[str, Any]:
    return {"returns": returns, "mean": float(np.mean(returns)), "std": float(np.std(returns))}


def evaluate(keys: list[str], episodes: int) -> dict[str, Any]:
    """Every stored PPO agent, the reference controller and random on the held-out seeds."""
    import torch

    torch.set_num_threads(1)
    import gymforge  # noqa: F401
    from gymforge.baselines.sb3 import load_agent
    from gymforge.baselines.training.evaluation import run_episodes
    from gymforge.cli import rollout
    from gymforge.registry import get_spec

    seeds = [SEED_BASE + k for k in range(episodes)]
    controllers = json.loads((RESULTS / "lineflow_controllers.json").read_text())
    best_known = {f["scenario"]: f for f in controllers["findings"]}
    out: dict[str, Any] = {}
    for key in keys:
        env_id, reference = SCENARIOS[key]
        start = time.perf_counter()
        row: dict[str, Any] = {"env_id": env_id, "reference_agent": reference, "ppo": []}
        for name in (reference, "random"):
            result = rollout(env_id, name, episodes, SEED_BASE)
            row[name if name == "random" else "reference"] = _summary(result["returns"])
        for folder in sorted((MODELS / env_id).glob("ppo-seed*")):
            agent = load_agent(folder)
            config = agent.config
            selected = json.loads((folder / "selected.json").read_text())
            eps = run_episodes(agent, env_id, config["env_kwargs"], seeds)
            row["ppo"].append(
                {
                    "seed": config["seed"],
                    "steps": config["steps"],
                    "trained_steps": selected.get("final_steps", config["steps"]),
                    "recipe": _recipe(config),
                    "engine": "batched torch" if config.get("vectorized") else "SimPy",
                    "selected": selected["rule"],
                    "model": str(folder.relative_to(common.REPO_ROOT)),
                    "command": " ".join(config["command"] or []).replace(
                        f"{common.REPO_ROOT}/", ""
                    ),
                    **_summary([e["return"] for e in eps]),
                }
            )
        if row["ppo"]:
            means = [p["mean"] for p in row["ppo"]]
            ref, rnd = row["reference"]["mean"], row["random"]["mean"]
            row["ppo_mean"], row["ppo_std"] = float(np.mean(means)), float(np.std(means))
            row["share_of_reference"] = row["ppo_mean"] / ref
            row["normalised"] = (row["ppo_mean"] - rnd) / (ref - rnd)
        finding = best_known.get(get_spec(env_id).kwargs["scenario"])
        if finding:
            row["best_known"] = {k: finding[k] for k in ("best_controller", "best_mean_return",
                                                          "documented")}  # fmt: skip
        row["wall_s"] = round(time.perf_counter() - start, 1)
        out[key] = row
        print(f"{key}: done in {row['wall_s']} s", file=sys.stderr, flush=True)
    return out


def markdown(data: dict[str, Any]) -> str:
    s = data["settings"]
    lines = [
        "# LineFlow: PPO against the optimal / heuristic controllers and random",
        "",
        f"Held-out seeds 2**62 + 1000 + k, k < {s['episodes']}, on the exact SimPy engine "
        "(`gym.make(id)`), 4000-step episodes, return = parts − scrap_factor·scrap. PPO: mean ± "
        "std over training seeds of each seed's mean return (per-seed figures below); reference "
        "and random: mean ± std over the episodes. normalised = (PPO − random)/(reference − "
        f"random). Run {data['finished_utc']}, {data['wall_s']} s on "
        f"{data['machine']['platform']}, {data['machine']['cpu_count']} CPUs (shared with other "
        "work while the agents trained; evaluation figures do not depend on load).",
        "",
        "| scenario | PPO (seeds, steps) | reference controller | % of reference | normalised | random | best known controller (seeds 0–4) |",
        "|---|---|---|---:|---:|---|---|",
    ]
    for key, row in data["scenarios"].items():
        ref, rnd = row["reference"], row["random"]
        best = row.get("best_known", {})
        best_text = (
            f"{best.get('best_mean_return', float('nan')):.1f} ({best.get('best_controller', '–')})"
        )
        if row["ppo"]:
            steps = "/".join(f"{p['steps'] // 1000}k" for p in row["ppo"])
            ppo = f"{row['ppo_mean']:.1f} ± {row['ppo_std']:.1f} ({len(row['ppo'])}, {steps})"
            share, norm = f"{100 * row['share_of_reference']:.1f}%", f"{row['normalised']:.2f}"
        else:
            ppo, share, norm = "not trained", "–", "–"
        lines.append(
            f"| {key} `{row['env_id']}` | {ppo} | {ref['mean']:.1f} ± {ref['std']:.1f} "
            f"({row['reference_agent']}) | {share} | {norm} | {rnd['mean']:.1f} ± {rnd['std']:.1f} "
            f"| {best_text} |"
        )
    wt = data["scenarios"].get("WT")
    if wt and wt["ppo"]:
        met = wt["share_of_reference"] >= 0.9
        best = max(wt["ppo"], key=lambda p: p["mean"])
        lines += [
            "",
            f"**WaitingTime target (PPO over {len(wt['ppo'])} seeds ≥ 90% of the optimal "
            f"controller): {'met' if met else 'NOT met'}** — {100 * wt['share_of_reference']:.1f}%;"
            f" best seed {best['seed']}: {best['mean']:.1f} ({100 * best['mean'] / wt['reference']['mean']:.1f}%)."
            " WT agents: 1M training steps each (upstream's budget) with"
            " `benchmarks/lineflow/rl_sb3_wt.yaml` (learning rate 1e-3, entropy coefficient 0.01,"
            " gamma 0.999, GAE lambda 0.98; evaluation and checkpoint every 25k steps).",
        ]
    budgets = []
    for key, row in data["scenarios"].items():
        for p in row["ppo"]:
            if "trained_steps" not in p:
                continue
            budgets.append(
                f"{key} seed {p['seed']}: {p['trained_steps'] / 1e6:g}M steps of upstream's "
                f"{UPSTREAM_BUDGET[key] / 1e6:g}M ({p['recipe']}, {p['engine']} engine)"
            )
    if budgets:
        lines += [
            "",
            "Training budgets (steps trained; the stored checkpoint is the one with the best "
            "periodic evaluation on seed 2**62, always on the SimPy engine): "
            + "; ".join(budgets)
            + ".",
        ]
    lines += ["", "## Per training seed", "",
              "| scenario | seed | steps | return (mean ± std over episodes) | checkpoint choice | model |",
              "|---|---:|---:|---|---|---|"]  # fmt: skip
    for key, row in data["scenarios"].items():
        for p in row["ppo"]:
            lines.append(
                f"| {key} | {p['seed']} | {p['steps']} | {p['mean']:.1f} ± {p['std']:.1f} | "
                f"{p['selected']} | `{p['model']}` |"
            )
    lines += ["", "Training commands (from each model's `config.json`):", "", "```"]
    for row in data["scenarios"].values():
        lines += [p["command"] for p in row["ppo"]]
    lines += ["```", "", "Reproduce the table:", "", "```", data["command"], "```", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["store"]:
        for run in argv[1:]:
            print(store(Path(run)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=5, help="held-out episodes per agent")
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--quick", action="store_true", help="one episode per agent")
    args = parser.parse_args(argv)
    keys = common.parse_scenarios(args.scenarios, SCENARIOS)
    episodes = 1 if args.quick else args.episodes
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    scenarios = evaluate(keys, episodes)
    data = {
        "benchmark": "rl_lineflow",
        "started_utc": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "finished_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "wall_s": round(time.perf_counter() - t0, 1),
        "command": common.command_line(),
        "machine": common.machine_info(["gymforge", "stable_baselines3", "torch", "simpy"]),
        "settings": {"episodes": episodes, "seed_base": "2**62 + 1000"},
        "scenarios": scenarios,
    }
    suffix = "_quick" if args.quick else ""
    common.write_json(RESULTS / f"rl_lineflow{suffix}.json", data, indent=2)
    common.write_atomic(RESULTS / f"rl_lineflow{suffix}.md", markdown(data))
    print(markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
