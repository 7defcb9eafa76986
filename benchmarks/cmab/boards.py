"""The Off-CMAB boards in figures: each track's rows, and where they rank as the paper does.

Reads the CMAB boards under ``leaderboards/`` (the rows ``gymforge submit`` evaluated; nothing is
re-run) and their archived first versions, and writes ``benchmarks/results/cmab_boards.md``:
per board, every row's mean score with its 95% bootstrap CI; for the cascade tracks, CLCB's
reductions of the mean gap against CUCB-Offline and EMP beside the paper's (47.75% and 20.02%);
and, for the small-n track where EMP ties or beats CLCB, how often the items are observed and
what each learner picks (from the same datasets the board's episodes use).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.common import command_line, write_atomic
from gymforge.agents.cmab.clcb import clcb
from gymforge.agents.cmab.emp import emp
from gymforge.envs.cmab.collect import collect_records, problem_for
from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.problem import instance_params
from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.archive import load_archived_board
from gymforge.leaderboards.board import Board, load_board
from gymforge.leaderboards.discrimination import separation
from gymforge.leaderboards.protocol import list_tasks, load_protocol

RESULTS = Path(__file__).resolve().parents[1] / "results"
CASCADE_TRACKS = ("CascadeOfflineN20", "CascadeOffline", "CascadeOfflineN500", "CascadeOfflineUCB")


def by_learner(board: Board) -> dict[str, dict[str, Any]]:
    """Each row's aggregate, keyed by a short learner name."""
    out = {}
    for row in board.rows:
        name = row.name.replace("Offline: ", "").replace("Reference: ", "")
        out["random" if name.startswith("Random") else name] = row.results["aggregate"]
    return out


def fmt(value: float) -> str:
    return f"{value:.3g}"


def board_table(board: Board) -> list[str]:
    """The board's rows: mean, 95% CI, normalised."""
    p = board.protocol
    lines = [
        f"### {p.task} (v{p.version}; {p.metric}, "
        f"{'higher' if p.higher_is_better else 'lower'} is better; {len(p.seeds)} episodes)",
        "",
        "| rank | row | mean | 95% CI | normalised |",
        "|---:|---|---:|---|---:|",
    ]
    for rank, row in enumerate(board.rows, 1):
        agg = row.results["aggregate"]
        low, high = agg["ci95"]
        norm = agg["normalised"]
        lines.append(
            f"| {rank} | {row.name} | {fmt(agg['mean'])} | [{fmt(low)}, {fmt(high)}] | "
            f"{'–' if norm is None else f'{norm:.3f}'} |"
        )
    sep = separation(board)
    if sep is not None:
        lines += [
            "",
            f"Reference vs random: difference {fmt(sep.difference)}, CI half-widths "
            f"{fmt(sep.reference_half_width)} and {fmt(sep.random_half_width)} "
            f"({'separated' if sep.separates else 'not separated'}).",
        ]
    return [*lines, ""]


def reductions(boards: dict[str, Board]) -> list[str]:
    """CLCB's mean-gap reductions against CUCB-Offline and EMP, per cascade track and overall."""
    lines = [
        "| track | CLCB | EMP | CUCB-Offline | CLCB vs CUCB-Offline | CLCB vs EMP | ranking |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    sums = {"clcb": 0.0, "emp": 0.0, "cucb_offline": 0.0}
    uniform = 0
    for name in CASCADE_TRACKS:
        rows = by_learner(boards[name])
        m = {k: rows[k]["mean"] for k in sums}
        order = " < ".join(sorted(m, key=m.get))
        lines.append(
            f"| {name} | {fmt(m['clcb'])} | {fmt(m['emp'])} | {fmt(m['cucb_offline'])} | "
            f"{1 - m['clcb'] / m['cucb_offline']:+.1%} | {1 - m['clcb'] / m['emp']:+.1%} | "
            f"{order} |"
        )
        if name != "CascadeOfflineUCB":
            uniform += 1
            for k in sums:
                sums[k] += m[k]
    avg = {k: v / uniform for k, v in sums.items()}
    lines.append(
        f"| mean of the {uniform} uniform-logging tracks | {fmt(avg['clcb'])} | "
        f"{fmt(avg['emp'])} | {fmt(avg['cucb_offline'])} | "
        f"{1 - avg['clcb'] / avg['cucb_offline']:+.1%} | {1 - avg['clcb'] / avg['emp']:+.1%} | |"
    )
    lines.append(
        "| paper (synthetic cascade, averaged over its settings) | | | | +47.75% | +20.02% | |"
    )
    return lines


def small_n_statistics(task: str = "cmab/CascadeOfflineN20") -> dict[str, float]:
    """On the track's datasets: share of items never / once observed, and the mean count and
    attraction of the items CLCB and EMP pick."""
    protocol = load_protocol(DEFAULT_ROOT, task)
    n = protocol.offline_dataset["n"]
    problem = problem_for(protocol.env_id, {})
    stats: dict[str, list[float]] = {k: [] for k in ("never", "once", "n_clcb", "n_emp")}
    stats |= {"mu_clcb": [], "mu_emp": []}
    for seed in protocol.seeds:
        params = instance_params(problem, seed)
        arrays = collect_records(problem, params, "uniform", n, seed)
        dataset = LoggedDataset(arrays, {"n": n}, problem, params)
        counts, _ = dataset.arm_statistics()
        mu = params["mu"][0].numpy()
        stats["never"].append(float((counts == 0).mean()))
        stats["once"].append(float((counts == 1).mean()))
        for name, learner in (("clcb", clcb), ("emp", emp)):
            ids = learner(dataset)[0].numpy()
            stats[f"n_{name}"].append(float(counts[ids].mean()))
            stats[f"mu_{name}"].append(float(mu[ids].mean()))
    return {k: float(np.mean(v)) for k, v in stats.items()}


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(
        description="Write benchmarks/results/cmab_boards.md from the CMAB boards (no options)."
    ).parse_args(argv)
    torch.set_num_threads(1)
    cmab = [t for t in list_tasks(DEFAULT_ROOT) if t.startswith("cmab/")]
    boards = {
        t.split("/")[1]: load_board(DEFAULT_ROOT, load_protocol(DEFAULT_ROOT, t)) for t in cmab
    }
    small = small_n_statistics()
    lines = [
        "# Off-CMAB boards: exact gaps and regrets, and the paper's ranking",
        "",
        f"Command: `{command_line()}` (reads the boards; nothing is re-evaluated).",
        "",
        "Every offline track scores the super arm an agent plays by its exact suboptimality gap",
        "r(S*; μ) − r(S; μ) under the instance's true parameters, averaged over the protocol's",
        "instances (lower is better); the online tracks score the exact expected regret over the",
        "episode. 95% CIs are percentile bootstraps of the mean over instances.",
        "",
        "## Cascade: CLCB vs EMP vs CUCB-Offline",
        "",
        *reductions(boards),
        "",
        "Where the boards rank as the paper does, and where not:",
        "",
        "- n = 100 (uniform logs, the main track) ranks CLCB < EMP < CUCB-Offline with CLCB's",
        "  CI clear of EMP's, as the paper does. Its reductions are larger than the paper's",
        "  averages, which mix settings; averaged over our three uniform-logging tracks they",
        "  are close to the paper's against CUCB-Offline and smaller against EMP (table above).",
        "- n = 20: EMP's mean gap is at or below CLCB's (CIs overlap). With 20 plays of at most",
        f"  5 examined items over 100 items, {small['never']:.0%} of the items are never observed",
        f"  and {small['once']:.0%} once; CLCB's radius √(log(2mn/δ)/2N) ≈ 2.0 at N = 1 swamps",
        "  the empirical mean, so CLCB ranks mostly by how often an item was observed: the",
        f"  items it picks were observed {small['n_clcb']:.2f} times on average (mean",
        f"  attraction {small['mu_clcb']:.3f}), EMP's {small['n_emp']:.2f} times (items clicked",
        f"  on their only observation; mean attraction {small['mu_emp']:.3f}). Pessimism pays",
        "  once most items have been observed a few times (n = 100), not before.",
        "- n = 500: both are within about 1e-5 of the optimum (EMP slightly lower, CIs overlap);",
        "  CUCB-Offline's optimism still costs it a factor of about 30.",
        "- UCB-logged data (n = 100, the paper's logging ablation): CLCB < EMP < CUCB-Offline,",
        "  but CLCB's lead over EMP is inside the CIs; the paper reports its largest margin under",
        "  UCB logs. Our UCB logger re-plans after every record, so its data concentrate on the",
        "  items a UCB learner converges to; a plausible reason (not measured here) is that",
        "  these are mostly the optimal items, so EMP has few rarely observed items to be misled",
        "  by. The paper's UCB logger may differ (its refresh schedule is not stated).",
        "",
        "## Other tracks",
        "",
        "- LLM cache (n = 100, empty-cache logs): CLCB-LLM-C < LEC ≈ LFU, CLCB's CI clear of",
        "  both; the paper's setting and ratios are in `cmab_llm_cache.md`.",
        "- k-path (Theorem 2's lower-bound instance; the gap is 0 or 0.5 per instance): the three",
        "  learners' CIs overlap (EMP lowest). The paper claims no CLCB advantage on this",
        "  instance, whose uniform logs cover both paths about equally.",
        "- Influence maximization: EMP far ahead, CLCB-IM-N below random; why, and when that",
        "  changes, is in `cmab_im_study.md`.",
        "",
        "## Every CMAB board",
        "",
    ]
    for name in sorted(boards):
        lines += board_table(boards[name])
    lines += ["## Archived first versions (realised rewards; kept, not rescored)", ""]
    for task in cmab:
        try:
            old = load_archived_board(DEFAULT_ROOT, task, 1)
        except (FileNotFoundError, ValueError):
            continue
        cells = ", ".join(f"{r.name} {r.mean:.5g}" for r in old.rows)
        lines.append(f"- {task} v1 ({old.protocol.metric}): {cells}")
    write_atomic(RESULTS / "cmab_boards.md", "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
