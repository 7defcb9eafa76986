"""``gymforge minmax stability-map | trajectories | avgs``: figures of the min-max family.

Examples::

    gymforge minmax stability-map --game quadratic --grid 128 --out stability.png
    gymforge minmax trajectories --game sextic --h 0.1 --betas -0.3 0 0.3 --out traj.png
    gymforge minmax avgs --game sextic --h 0.1 --betas -0.3 0 0.3 0.5 --out avgs.png

``--game-params`` takes JSON, e.g. ``'{"a": 0.05, "B": [[1.0]], "c": 0.05}'``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def _game(args: argparse.Namespace) -> Any:
    from gymforge.envs.minmax.games import make_game

    try:
        params = json.loads(args.game_params) if args.game_params else {}
    except json.JSONDecodeError as err:
        raise ValueError(f"--game-params must be a JSON object, got {args.game_params!r}") from err
    if not isinstance(params, dict):
        raise ValueError(f"--game-params must be a JSON object, got {args.game_params!r}")
    return make_game(args.game, params)


def _threads() -> None:
    import torch

    torch.set_num_threads(1)


def cmd_stability_map(args: argparse.Namespace) -> int:
    from gymforge.agents.minmax.plots import plot_stability_map

    _threads()
    path = plot_stability_map(
        _game(args),
        args.out,
        h_max=args.h_max,
        beta_range=(args.beta_min, args.beta_max),
        grid=args.grid,
        method=args.method,
        iterations=args.iterations,
    )
    print(f"stability map written to {path}")
    return 0


def cmd_trajectories(args: argparse.Namespace) -> int:
    from gymforge.agents.minmax.plots import plot_trajectories

    _threads()
    path = plot_trajectories(
        _game(args), args.out, h=args.h, betas=args.betas, steps=args.steps, seed=args.seed
    )
    print(f"trajectories written to {path}")
    return 0


def cmd_avgs(args: argparse.Namespace) -> int:
    from gymforge.agents.minmax.plots import plot_avgs

    _threads()
    path = plot_avgs(
        _game(args),
        args.out,
        h=args.h,
        betas=args.betas,
        steps=args.steps,
        starts=args.starts,
        seed=args.seed,
    )
    print(f"AvgS plot written to {path}")
    return 0


def _common(parser: argparse.ArgumentParser, game: str) -> None:
    parser.add_argument(
        "--game", default=game, help="bilinear, quadratic, xy2 or sextic (default %(default)s)"
    )
    parser.add_argument("--game-params", default=None, help="the game's parameters as JSON")
    parser.add_argument("--out", required=True, help="PNG file to write")


def _nonnegative_steps(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"steps must be >= 1, got {number}")
    return number


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("minmax", help="min-max games: stability maps, trajectories, AvgS")
    minmax_sub = parser.add_subparsers(dest="minmax_command", required=True)

    smap = minmax_sub.add_parser("stability-map", help="Sim vs Alt HB stability over (h, β)")
    _common(smap, "quadratic")
    smap.add_argument("--h-max", type=float, default=1.0, help="largest step size")
    smap.add_argument(
        "--beta-min", type=float, default=-0.9, help="smallest momentum (default -0.9)"
    )
    smap.add_argument("--beta-max", type=float, default=0.9, help="largest momentum (default 0.9)")
    smap.add_argument("--grid", type=int, default=128, help="grid points per axis")
    smap.add_argument("--method", default="exact", help="exact (eigenvalues) or simulate")
    smap.add_argument(
        "--iterations",
        type=_nonnegative_steps,
        default=2000,
        help="iterations of --method simulate (default 2000)",
    )
    smap.set_defaults(func=cmd_stability_map)

    for name, helptext, func, steps in (
        ("trajectories", "iterates in the (x, y) plane per momentum", cmd_trajectories, 1000),
        ("avgs", "trajectory-average slope AvgS against momentum", cmd_avgs, 3000),
    ):
        p = minmax_sub.add_parser(name, help=helptext)
        _common(p, "sextic")
        p.add_argument("--h", type=float, default=0.1, help="step size")
        p.add_argument(
            "--betas",
            type=float,
            nargs="+",
            default=[-0.3, 0.0, 0.3, 0.5],
            help="momenta to compare (default -0.3 0 0.3 0.5)",
        )
        p.add_argument(
            "--steps", type=_nonnegative_steps, default=steps, help=f"iterations (default {steps})"
        )
        p.add_argument(
            "--seed", type=int, default=0, help="seed of the starting points (default 0)"
        )
        if name == "avgs":
            p.add_argument("--starts", type=int, default=16, help="seeded starts to average")
        p.set_defaults(func=func)
