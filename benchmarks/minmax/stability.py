"""Speed of a batched (step size, momentum) stability map of heavy-ball GDA, against a Python loop.

Target: a 256 × 256 (h, β) stability map of Sim-HB (and of Alt-HB) on the quadratic
game f = 0.05x² + xy − 0.05y² by 2,000 iterations of simulation, batched in torch, in at most
2 s on this CPU. The anchor is the same simulation as a per-pair pure-Python loop (floats, one
pair after another); timing all 65,536 pairs would take far too long, so the loop runs on an
evenly spread subset of pairs and its time is extrapolated linearly to the full grid (the work
per pair is identical). Both compute the growth rate log‖s_T‖/T of the state with periodic
renormalisation (exact for a linear map); the script also checks that the subset's rates agree
between the two and that the simulated stable/unstable verdicts agree with the exact spectral
radii (``torch.linalg.eigvals`` of the update matrices) away from the ρ = 1 boundary.

It also records how closely Thm 4.6's step-size bound for Sim-HB,
``min_λ 2(1−β)²/(1+β)·|Re λ|/(Im λ² − Re λ²)``, matches the exact largest stable step on the
same game for β in THM46_BETAS (exact spectral computation, no timing; ``--thm46`` adds just
this to the stored results without re-running the timings).

Run: ``.venv/bin/python -m benchmarks.minmax.stability`` (``--quick``: 64 × 64 grid, one repeat).
Writes ``benchmarks/results/minmax_stability.{json,md}``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from typing import Any

import torch

from benchmarks import common
from gymforge.agents.minmax.spectral import simulated_growth_rate, stability_map
from gymforge.envs.minmax.games import make_game

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
ORDERS = ("simultaneous", "alternating")
H_MAX, BETA_MIN, BETA_MAX = 1.0, -0.9, 0.9
TARGET_S = 2.0
#: momenta at which Thm 4.6's bound is compared with the exact largest stable step
THM46_BETAS = (-0.3, -0.1, 0.0, 0.2, 0.4, 0.55, 0.7)


def python_loop_rate(
    h: float, beta: float, order: str, iterations: int, z0: tuple[float, float], renorm: int
) -> float:
    """The anchor: one (h, β) pair simulated with Python floats (same algorithm as the batch)."""
    two_a, b, two_c = 0.1, 1.0, 0.1
    x, y = z0
    xp, yp = x, y
    log_norm = 0.0
    for k in range(1, iterations + 1):
        gx = two_a * x + b * y
        gy = b * x - two_c * y
        x_new = x - h * gx + beta * (x - xp)
        if order == "alternating":
            gy = b * x_new - two_c * y
        y_new = y + h * gy + beta * (y - yp)
        xp, yp, x, y = x, y, x_new, y_new
        if k % renorm == 0 or k == iterations:
            norm = max(math.sqrt(x * x + y * y + xp * xp + yp * yp), 1e-300)
            log_norm += math.log(norm)
            x, y, xp, yp = x / norm, y / norm, xp / norm, yp / norm
    return log_norm / iterations


def measure(grid: int, iterations: int, repeats: int, loop_pairs: int, dtype: torch.dtype) -> dict:
    game = make_game("quadratic", dtype=dtype)
    hs = torch.linspace(H_MAX / grid, H_MAX, grid, dtype=torch.float64)
    betas = torch.linspace(BETA_MIN, BETA_MAX, grid, dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    z = torch.randn(1, 2, generator=gen, dtype=dtype)
    z = z / torch.linalg.vector_norm(z)
    z0 = (float(z[0, 0]), float(z[0, 1]))
    rows: dict[str, Any] = {}
    for order in ORDERS:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            rate = simulated_growth_rate(game, hs, betas, order, iterations, seed=0)
            times.append(time.perf_counter() - start)
        batched_s = statistics.median(times)
        # The anchor on an evenly spread subset of pairs, extrapolated to the whole grid.
        flat = torch.linspace(0, grid * grid - 1, loop_pairs).round().long().tolist()
        start = time.perf_counter()
        loop_rates = [
            python_loop_rate(
                float(hs[i // grid]), float(betas[i % grid]), order, iterations, z0, 50
            )
            for i in flat
        ]
        loop_s = time.perf_counter() - start
        loop_full_s = loop_s * grid * grid / len(flat)
        subset = rate.reshape(-1)[flat].double()
        agreement = float((subset - torch.tensor(loop_rates, dtype=torch.float64)).abs().max())
        exact = stability_map(game.to("cpu", torch.float64), hs, betas, order).log()
        clear = exact.abs() > 1e-3
        same = ((rate.double() < 0) == (exact < 0)) | ~clear
        rows[order] = {
            "batched_s_median": batched_s,
            "batched_s_all": times,
            "target_met": batched_s <= TARGET_S,
            "loop_pairs_timed": len(flat),
            "loop_s_subset": loop_s,
            "loop_s_extrapolated": loop_full_s,
            "speedup_vs_loop": loop_full_s / batched_s,
            "max_abs_rate_diff_vs_loop": agreement,
            "verdicts_agree_with_exact_spectrum": float(same.double().mean()),
            "stable_fraction": float((rate < 0).double().mean()),
        }
    return rows


def thm46_agreement() -> list[dict[str, float]]:
    """Per β in :data:`THM46_BETAS`: the exact largest stable Sim-HB step on the quadratic game,
    Thm 4.6's bound, and their relative difference ``|bound − exact| / exact``."""
    from gymforge.agents.minmax.spectral import max_stable_step, thm46_step_bound

    game = make_game("quadratic")
    rows = []
    for beta in THM46_BETAS:
        exact = max_stable_step(game, beta, "simultaneous")
        bound = thm46_step_bound(game, beta)
        rows.append(
            {"beta": beta, "exact": exact, "bound": bound, "relative": abs(bound - exact) / exact}
        )
    return rows


def render_md(result: dict) -> str:
    cfg = result["config"]
    lines = [
        "# MinMax stability-map speed",
        "",
        f"Command: `{result['command']}`. Measured at {result['measured_at']} with "
        f"`torch.set_num_threads({cfg['threads']})`, **under load** (other engineers were "
        "running on the same 2-core machine; load average at start "
        f"{result['load_average_at_start']}).",
        "",
        f"Grid {cfg['grid']} × {cfg['grid']} (h in (0, {H_MAX}], β in [{BETA_MIN}, {BETA_MAX}]), "
        f"{cfg['iterations']} iterations per pair, quadratic game f = 0.05x² + xy − 0.05y². "
        f"Batched time: median of {cfg['repeats']} runs. The Python-loop time is measured on "
        f"{cfg['loop_pairs']} evenly spread pairs and **extrapolated** linearly to the full grid.",
        "",
        "| dtype | order | batched (s) | target ≤ 2 s | Python loop, extrapolated (s) | speed-up | "
        "max rate diff vs loop | verdicts = exact ρ |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dtype, rows in result["results"].items():
        for order, r in rows.items():
            lines.append(
                f"| {dtype} | {order} | {r['batched_s_median']:.2f} | "
                f"{'met' if r['target_met'] else 'NOT met'} | {r['loop_s_extrapolated']:.0f} | "
                f"{r['speedup_vs_loop']:.0f}× | {r['max_abs_rate_diff_vs_loop']:.1e} | "
                f"{100 * r['verdicts_agree_with_exact_spectrum']:.2f}% |"
            )
    lines += [
        "",
        "'verdicts = exact ρ': share of pairs where the simulated verdict (growth rate < 0) "
        "equals the exact spectral verdict (log ρ < 0), counting pairs with |log ρ| ≤ 1e-3 "
        "(on the boundary) as agreeing.",
        "",
    ]
    thm46 = result.get("thm46")
    if thm46:
        relative = [r["relative"] for r in thm46]
        lines += [
            "## Thm 4.6: largest stable Sim-HB step, bound against exact",
            "",
            "Same game; exact: the largest h with spectral radius below 1 "
            "(`gymforge.agents.minmax.spectral.max_stable_step`); bound: "
            "min_λ 2(1−β)²/(1+β)·|Re λ|/(Im λ² − Re λ²).",
            "",
            "| β | exact | Thm 4.6 bound | relative difference |",
            "|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['beta']:+.2f} | {r['exact']:.5f} | {r['bound']:.5f} | "
            f"{100 * r['relative']:.2f}% |"
            for r in thm46
        ]
        lines += [
            "",
            f"The bound is within {100 * min(relative):.2f}–{100 * max(relative):.2f}% of the "
            f"exact step for β in [{min(THM46_BETAS)}, {max(THM46_BETAS)}].",
            "",
        ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="64 × 64 grid, one repeat")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument(
        "--thm46",
        action="store_true",
        help="only add the Thm 4.6 comparison to the stored results (no timing)",
    )
    args = parser.parse_args()
    if args.thm46:
        import json

        path = RESULTS / "minmax_stability.json"
        result = json.loads(path.read_text(encoding="utf-8"))
        result["thm46"] = thm46_agreement()
        common.write_json(path, result, indent=2)
        common.write_atomic(RESULTS / "minmax_stability.md", render_md(result))
        print(render_md(result))
        return 0
    torch.set_num_threads(args.threads)
    grid, repeats, loop_pairs = (64, 1, 16) if args.quick else (256, 3, 64)
    iterations = 2000
    load = list(__import__("os").getloadavg())
    results = {
        str(dtype).removeprefix("torch."): measure(grid, iterations, repeats, loop_pairs, dtype)
        for dtype in (torch.float64, torch.float32)
    }
    result = {
        "command": common.command_line(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_at_start": [round(v, 2) for v in load],
        "config": {
            "grid": grid,
            "iterations": iterations,
            "repeats": repeats,
            "loop_pairs": loop_pairs,
            "threads": args.threads,
            "target_s": TARGET_S,
            "game": "quadratic a=0.05, B=[[1]], c=0.05",
        },
        "machine": common.machine_info(["torch", "numpy"]),
        "results": results,
        "thm46": thm46_agreement(),
    }
    suffix = "_quick" if args.quick else ""
    common.write_json(RESULTS / f"minmax_stability{suffix}.json", result, indent=2)
    common.write_atomic(RESULTS / f"minmax_stability{suffix}.md", render_md(result))
    print(render_md(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
