"""``gymforge train ID --algo ppo|a2c|recurrentppo --backend torch [options]``.

Examples::

    gymforge train LineFlow-WaitingTime-v0 --algo ppo --backend torch --steps 1000000
    gymforge train LineFlow-ComplexLine-v0 --algo ppo --backend torch --n-envs 4096 --device cuda
    gymforge train LineFlow-WaitingTime-v0 --algo ppo --backend torch --resume runs/wt --steps 2000000
"""

from __future__ import annotations

import argparse
import sys

from gymforge.baselines.ondevice.config import ALGORITHMS
from gymforge.baselines.training.cli import add_run_options, report, run_options


def build_parser(env_id: str, algo: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=f"gymforge train {env_id} --algo {algo} --backend torch",
        description=(
            f"Train {algo} with the on-device trainer on {env_id}'s batched engine: rollouts, "
            "advantages and updates stay tensors on --device."
        ),
    )
    parser.add_argument("--steps", type=int, required=True, help="total environment steps")
    parser.add_argument(
        "--seed", type=int, default=0, help="run seed (instance i starts at seed + i)"
    )
    parser.add_argument("--n-envs", type=int, help="instances trained at once (default: config)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:k]: env, storage and network")
    parser.add_argument(
        "--num-workers", type=int, help="split a CPU env over this many processes (default: 1)"
    )
    parser.add_argument("--threads", type=int, help="torch threads (default: 1 on CPU)")
    add_run_options(parser, "runs/ID/ALGO-torch-seedS", "held-out eval interval (steps)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    return parser


def run_cli(env_id: str, algo: str, argv: list[str]) -> int:
    """Parse ``argv`` and train; prints where the policy was saved."""
    if algo not in ALGORITHMS:
        raise ValueError(
            f"--backend torch trains {list(ALGORITHMS)}, not {algo!r} (use --backend sb3)"
        )
    args = build_parser(env_id, algo).parse_args(argv)
    from gymforge.baselines.ondevice.run import train

    command = ["gymforge", "train", env_id, "--algo", algo, "--backend", "torch", *argv]
    result = train(
        **run_options(args, env_id, algo, command),
        device=args.device,
        threads=args.threads,
        num_workers=args.num_workers,
        log=lambda message: print(message, file=sys.stderr),
    )
    report(
        result,
        args.json,
        f"trained {algo} (torch backend) on {env_id} for {result.steps} steps in "
        f"{result.wall_s:.1f} s ({result.steps_per_s:,.0f} training steps/s)",
        f"saved to {result.out}/policy.pt (+ config.json)",
        {"train_steps_per_s": result.steps_per_s},
    )
    return 0
