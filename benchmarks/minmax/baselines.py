"""Tune the paper's baselines (fixed step size h and momentum β) for the two min-max boards.

For each method, every (h, β) of a grid is scored on TRAINING seeds only (below ``2**62``; the
boards evaluate on ``2**62 + 1000000 + i``), and the best mean score is the method's fixed
choice, the constants of ``gymforge.baselines.minmax.tuned``:

- ``minmax/MinMaxTuning`` (``MinMaxTuning-v0``: the env applies simultaneous heavy ball on
  f = xy with the agent's (h, β), 100 steps): Sim-GDA (β = 0) and Sim-HB. Score: the episode
  return d_0 − min(d_T, 1000), as the board measures it. Extragradient, OGDA and Alt-HB do not
  fit this env's action (it owns the update rule) and are scored on the games board instead.
- ``minmax/MinMaxTuningAlt`` (``MinMaxTuning-Alt-v0``: the same with alternating heavy ball,
  where negative momentum converges): Alt-GDA (β = 0) and Alt-HB. Score: log10 of the distance
  to the equilibrium after the episode (lower is better), as that board measures it.
- ``minmax/RandomBilinear`` (``MinMax-RandomBilinear-v0``: a 4 × 4 bilinear game drawn per seed,
  100 env steps = 100 gradient evaluations): GDA, Sim-HB, Alt-HB, extragradient (EG) and
  optimistic GDA (OGDA). Score: log10 of the distance to the equilibrium after the episode
  (lower is better), as the board measures it.

Run: ``python -m benchmarks.minmax.baselines`` (``--quick``: 10 seeds per board).
Writes ``benchmarks/results/minmax_baselines.{json,md}`` (``_quick`` suffix with ``--quick``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from benchmarks import common
from gymforge.agents.minmax.players import AltHeavyBallPlayers, HeavyBallPlayers
from gymforge.baselines.minmax.game_players import ExtragradientPlayers, OptimisticPlayers
from gymforge.baselines.minmax.tuned import ALT_TUNING_BOARD, GAMES_BOARD, TUNING_BOARD
from gymforge.core.arrays import host_array
from gymforge.envs.minmax.tuning_env import MinMaxTuningVecEnv
from gymforge.registry import make_parallel

RESULTS = common.REPO_ROOT / "benchmarks" / "results"
GAMES_ID = "MinMax-RandomBilinear-v0"
STEPS = 100
LOG_FLOOR = 1e-12  # the games board's log10 floor
TUNING_H = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
ALT_TUNING_H = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)  # 0.5: the env's largest step size
GAMES_H = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.85, 1.0, 1.2, 1.5, 1.75, 2.0, 2.5)
BETAS = (-0.9, -0.7, -0.5, -0.3, -0.1, 0.0, 0.1, 0.3, 0.5)

#: games-board method -> (players class, uses momentum).
GAME_METHODS: dict[str, tuple[Callable[..., Any], bool]] = {
    "gda": (HeavyBallPlayers, False),
    "sim_hb": (HeavyBallPlayers, True),
    "alt_hb": (AltHeavyBallPlayers, True),
    "eg": (ExtragradientPlayers, False),
    "ogda": (OptimisticPlayers, False),
}


def tuning_scores(
    seeds: list[int], pairs: list[tuple[float, float]], order: str = "simultaneous"
) -> tuple[list[float], list[float]]:
    """Per constant (h, β), over ``seeds`` (one batched run of the tuning env with ``order``):
    the mean return and the mean log10 distance to the equilibrium at the episode's end."""
    env = MinMaxTuningVecEnv(num_envs=len(seeds) * len(pairs), game="bilinear", order=order)
    env.reset(seed=[s for _ in pairs for s in seeds])
    action = torch.tensor([p for p in pairs for _ in seeds], dtype=torch.float32)
    total = torch.zeros(env.num_envs, dtype=torch.float64)
    final = torch.zeros(env.num_envs, dtype=torch.float64)
    alive = torch.ones(env.num_envs, dtype=torch.bool)
    for _ in range(STEPS):
        _, reward, terminated, truncated, info = env.step(action)
        total += torch.where(alive, torch.as_tensor(reward, dtype=torch.float64), 0.0)
        distance = torch.as_tensor(info["distance"], dtype=torch.float64)
        final = torch.where(alive, distance, final)
        alive &= ~(torch.as_tensor(terminated) | torch.as_tensor(truncated))
    env.close()
    log_final = torch.log10(final.clamp_min(LOG_FLOOR))
    return (
        total.reshape(len(pairs), len(seeds)).mean(1).tolist(),
        log_final.reshape(len(pairs), len(seeds)).mean(1).tolist(),
    )


def games_score(players: Any, seeds: list[int]) -> float:
    """Mean log10 final distance of ``players`` on the games board's id over ``seeds``."""
    env = make_parallel(GAMES_ID, num_envs=len(seeds))
    observations, _ = env.reset(seed=seeds)
    players.reset(seed=seeds[0])
    infos: dict[str, Any] = {}
    for _ in range(STEPS):
        actions = players.act(observations)
        observations, _, _, _, infos = env.step(actions)
    distance = host_array(infos["x"]["distance"], np.float64)
    distance = np.where(np.isfinite(distance), distance, np.inf)
    return float(np.mean(np.log10(np.maximum(distance, LOG_FLOOR))))


def tune_games(seeds: list[int]) -> dict[str, Any]:
    """Every (h, β) of each games-board method, scored; the best (lowest) is the choice."""
    shape_env = make_parallel(GAMES_ID)  # players read the action boxes from a ParallelEnv
    out: dict[str, Any] = {}
    for method, (cls, momentum) in GAME_METHODS.items():
        rows = []
        for h in GAMES_H:
            for beta in BETAS if momentum else (0.0,):
                kwargs = (
                    {"momentum": beta} if cls in (HeavyBallPlayers, AltHeavyBallPlayers) else {}
                )
                players = cls(shape_env, step_size=h, **kwargs)
                rows.append({"h": h, "beta": beta, "score": games_score(players, seeds)})
        best = min(rows, key=lambda r: (r["score"], r["h"], r["beta"]))
        out[method] = {"grid": rows, "chosen": {"h": best["h"], "beta": best["beta"]}, "best": best}
    return out


def tune_tuning_board(seeds: list[int]) -> dict[str, Any]:
    """Sim-GDA and Sim-HB on MinMaxTuning-v0: the best (highest-return) constant pair of each."""
    out: dict[str, Any] = {}
    for method, betas in (("gda", (0.0,)), ("sim_hb", BETAS)):
        pairs = [(h, b) for h in TUNING_H for b in betas]
        scores, _ = tuning_scores(seeds, pairs)
        rows = [{"h": h, "beta": b, "score": s} for (h, b), s in zip(pairs, scores, strict=True)]
        best = max(rows, key=lambda r: (r["score"], -r["h"], -r["beta"]))
        out[method] = {"grid": rows, "chosen": {"h": best["h"], "beta": best["beta"]}, "best": best}
    return out


def tune_alt_tuning_board(seeds: list[int]) -> dict[str, Any]:
    """Alt-GDA and Alt-HB on MinMaxTuning-Alt-v0: the constant pair of least final log10 distance."""
    out: dict[str, Any] = {}
    for method, betas in (("alt_gda", (0.0,)), ("alt_hb", BETAS)):
        pairs = [(h, b) for h in ALT_TUNING_H for b in betas]
        _, scores = tuning_scores(seeds, pairs, order="alternating")
        rows = [{"h": h, "beta": b, "score": s} for (h, b), s in zip(pairs, scores, strict=True)]
        best = min(rows, key=lambda r: (r["score"], r["h"], r["beta"]))
        out[method] = {"grid": rows, "chosen": {"h": best["h"], "beta": best["beta"]}, "best": best}
    return out


def _fmt(value: float) -> str:
    return f"{value:.3g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def _table(title: str, tuned: dict[str, Any], better: str) -> list[str]:
    lines = [f"### {title}", "", f"Chosen pairs ({better} is better):", ""]
    lines += ["| method | h | β | training score |", "|---|---:|---:|---:|"]
    for method, entry in tuned.items():
        best = entry["best"]
        lines.append(f"| {method} | {best['h']} | {best['beta']} | {_fmt(best['score'])} |")
    lines += ["", "Every grid point (h × β, training score):", ""]
    for method, entry in tuned.items():
        betas = sorted({r["beta"] for r in entry["grid"]})
        hs = sorted({r["h"] for r in entry["grid"]})
        score = {(r["h"], r["beta"]): r["score"] for r in entry["grid"]}
        lines += [f"{method}:", "", "| h \\ β | " + " | ".join(str(b) for b in betas) + " |"]
        lines.append("|---|" + "---:|" * len(betas))
        for h in hs:
            cells = " | ".join(_fmt(score[(h, b)]) for b in betas)
            lines.append(f"| {h} | {cells} |")
        lines.append("")
    return lines


def render_md(result: dict[str, Any]) -> str:
    cfg = result["config"]
    lines = [
        "# Min-max baselines: fixed (h, β) tuned on training seeds",
        "",
        f"Command: `{result['command']}`, measured at {result['measured_at']}. Training seeds "
        f"{cfg['tuning_seeds'][0]} … {cfg['tuning_seeds'][-1]} (MinMaxTuning) and "
        f"{cfg['games_seeds'][0]} … {cfg['games_seeds'][-1]} (RandomBilinear); the boards "
        "evaluate on 2^62 + 1000000 + i, never seen here. The chosen constants are those of "
        "`gymforge.baselines.minmax.tuned` (a test checks they match this file).",
        "",
        "On `MinMaxTuning-v0` (Sim-HB on f = xy) every constant pair diverges (Feng et al., "
        "Prop. 3.2), so the best pair is the one that diverges slowest: the smallest step size "
        "of the grid scores highest, and a score closer to 0 means slower divergence, not "
        "convergence. "
        "Extragradient, OGDA and Alt-HB cannot be expressed as that env's action (it applies "
        "simultaneous heavy ball itself) and are tuned on the games board only.",
        "",
        *_table("minmax/MinMaxTuning (mean return, 100 steps)", result["tuning_board"], "higher"),
        "On `MinMaxTuning-Alt-v0` (alternating heavy ball, same game and starts) negative "
        "momentum converges and Alt-GDA (β = 0) only circles (spectral radius 1), so the board "
        "scores the log10 distance at the episode's end. Its largest step size is the env's "
        "h_max = 0.5, the edge of the action box.",
        "",
        *_table(
            "minmax/MinMaxTuningAlt (mean log10 distance after 100 steps)",
            result["alt_tuning_board"],
            "lower",
        ),
        *_table(
            "minmax/RandomBilinear (mean log10 distance after 100 gradient evaluations)",
            result["games_board"],
            "lower",
        ),
    ]
    return "\n".join(lines)


def check_constants(result: dict[str, Any]) -> list[str]:
    """Where the chosen pairs differ from the constants in ``tuned.py`` (empty when they match)."""
    problems = []
    boards = (
        ("tuning_board", TUNING_BOARD),
        ("alt_tuning_board", ALT_TUNING_BOARD),
        ("games_board", GAMES_BOARD),
    )
    for board, constants in boards:
        for method, entry in result[board].items():
            chosen = (entry["chosen"]["h"], entry["chosen"]["beta"])
            if tuple(constants[method]) != chosen:
                problems.append(
                    f"{board}.{method}: tuned.py has {constants[method]}, chose {chosen}"
                )
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10 training seeds per board")
    args = parser.parse_args()
    torch.set_num_threads(1)
    count = 10 if args.quick else 50
    tuning_seeds = list(range(count))
    games_seeds = list(range(count))
    start = time.perf_counter()
    result: dict[str, Any] = {
        "command": common.command_line(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "config": {
            "steps": STEPS,
            "tuning_seeds": tuning_seeds,
            "games_seeds": games_seeds,
            "tuning_h": list(TUNING_H),
            "alt_tuning_h": list(ALT_TUNING_H),
            "games_h": list(GAMES_H),
            "betas": list(BETAS),
            "log_floor": LOG_FLOOR,
        },
        "tuning_board": tune_tuning_board(tuning_seeds),
        "alt_tuning_board": tune_alt_tuning_board(tuning_seeds),
        "games_board": tune_games(games_seeds),
    }
    result["wall_time_s"] = round(time.perf_counter() - start, 1)
    result["machine"] = common.machine_info(["torch", "numpy", "pettingzoo"])
    suffix = "_quick" if args.quick else ""
    common.write_json(RESULTS / f"minmax_baselines{suffix}.json", result, indent=2)
    common.write_atomic(RESULTS / f"minmax_baselines{suffix}.md", render_md(result) + "\n")
    print(render_md(result))
    problems = check_constants(result)
    for problem in problems:
        print(f"NOTE: {problem}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
