"""``gymforge train ID --algo ppo|a2c|recurrentppo --backend torch [options]``.

Examples::

    gymforge train LineFlow-WaitingTime-v0 --algo ppo --backend torch --steps 1000000
    gymforge train LineFlow-ComplexLine-v0 --algo ppo --backend torch --n-envs 4096 --device cuda
    gymforge train LineFlow-WaitingTime-v0 --algo ppo --backend torch --resume runs/wt --steps 2000000
"""

from __future__ import annotations

import argparse
import json
import sys

from gymforge.baselines.ondevice.config import ALGORITHMS
from gymforge.baselines.sb3.cli import config_overrides


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
    parser.add_argument("--config", metavar="FILE", help="YAML/JSON overriding the task defaults")
    parser.add_argument(
        "--out", metavar="DIR", help="run folder (default runs/ID/ALGO-torch-seedS)"
    )
    parser.add_argument("--resume", metavar="DIR", help="continue a run folder or checkpoint")
    parser.add_argument(
        "--eval-every", type=int, metavar="N", help="held-out eval interval (steps)"
    )
    parser.add_argument("--eval-episodes", type=int, metavar="K", help="episodes per evaluation")
    parser.add_argument("--checkpoint-every", type=int, metavar="N", help="checkpoint interval")
    parser.add_argument(
        "--progress-bar",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when stderr is a terminal)",
    )
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

    overrides = config_overrides(args)
    progress = sys.stderr.isatty() if args.progress_bar is None else args.progress_bar
    result = train(
        env_id,
        algo,
        args.steps,
        seed=args.seed,
        out=args.out,
        n_envs=args.n_envs,
        device=args.device,
        threads=args.threads,
        num_workers=args.num_workers,
        config_file=args.config,
        overrides=overrides or None,
        resume=args.resume,
        progress_bar=progress,
        command=["gymforge", "train", env_id, "--algo", algo, "--backend", "torch", *argv],
        log=lambda message: print(message, file=sys.stderr),
    )
    last = result.evaluations[-1] if result.evaluations else None
    summary = {
        "out": str(result.out),
        "steps": result.steps,
        "wall_s": result.wall_s,
        "train_steps_per_s": result.steps_per_s,
        "last_eval": {k: last[k] for k in ("timesteps", "mean_return", "std_return")}
        if last
        else None,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"trained {algo} (torch backend) on {env_id} for {result.steps} steps in "
            f"{result.wall_s:.1f} s ({result.steps_per_s:,.0f} training steps/s)"
        )
        if last:
            print(
                f"held-out eval at {last['timesteps']} steps: "
                f"{last['mean_return']:.2f} ± {last['std_return']:.2f}"
            )
        print(f"saved to {result.out}/policy.pt (+ config.json)")
    return 0
