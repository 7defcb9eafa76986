"""``gymforge train ID --algo NAME ...``: train an agent on a registered id.

Each algorithm name maps to a trainer ``"module:function"`` with the signature
``trainer(env_id: str, argv: list[str]) -> int``; the trainer parses its own options (so
``gymforge train ID --algo NAME --help`` documents them) and returns an exit code.
"""

from __future__ import annotations

import argparse

from gymforge.registry import get_spec, load_entry_point

BACKENDS = ("sb3", "torch")
#: algorithm name -> trainer entry point. Families and baselines add their rows here.
TRAINERS: dict[str, str] = {
    "qmamba": "gymforge.agents.metabbo.train:train_cli",  # MetaBBO offline agent
    # Stable-Baselines3 / sb3-contrib baselines (gymforge.baselines.sb3)
    "ppo": "gymforge.baselines.sb3.cli:train_ppo",
    "a2c": "gymforge.baselines.sb3.cli:train_a2c",
    "dqn": "gymforge.baselines.sb3.cli:train_dqn",
    "sac": "gymforge.baselines.sb3.cli:train_sac",
    "recurrentppo": "gymforge.baselines.sb3.cli:train_recurrentppo",
    "trpo": "gymforge.baselines.sb3.cli:train_trpo",
}


def cmd_train(args: argparse.Namespace) -> int:
    if (args.algo is None or args.id is None) and {"-h", "--help"} & set(args.options):
        args.print_help()
        return 0
    if args.id is None:
        raise ValueError("an id is required: gymforge train ID --algo NAME (see `gymforge list`)")
    spec = get_spec(args.id)  # unknown ids fail first, with the list of registered ones
    if spec.capabilities.multi_agent:
        tuner = (
            " (or train the single-agent tuner MinMaxTuning-v0)" if spec.family == "minmax" else ""
        )
        raise ValueError(
            f"{args.id} is a multi-agent PettingZoo id; `gymforge train` trains single-agent "
            f"ids: play it from Python with gymforge.make_parallel({args.id!r}){tuner}"
        )
    if args.algo is None:
        raise ValueError(f"--algo is required; allowed: {sorted(TRAINERS)}")
    if args.algo not in TRAINERS:
        raise ValueError(f"unknown --algo {args.algo!r}; allowed: {sorted(TRAINERS)}")
    if args.backend == "torch":
        from gymforge.baselines.ondevice.cli import run_cli

        return int(run_cli(args.id, args.algo, list(args.options)))
    trainer = load_entry_point(TRAINERS[args.algo])
    return int(trainer(args.id, list(args.options)))


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "train",
        help="train an agent (SB3 baselines, offline agents) on an id",
        description="Other options belong to the trainer of --algo; --algo NAME --help lists them.",
        add_help=False,
    )
    parser.add_argument("id", nargs="?", help="a registered id (see gymforge list)")
    parser.add_argument("--algo", help=f"one of {sorted(TRAINERS)}")
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="sb3",
        help="sb3 (default: Stable-Baselines3, any single-agent id) or torch (the on-device "
        "trainer: ppo, a2c, recurrentppo on ids with a batched engine)",
    )
    parser.set_defaults(func=cmd_train, passthrough=True, print_help=parser.print_help)
