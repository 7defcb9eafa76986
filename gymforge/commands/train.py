"""``gymforge train ID --algo NAME ...``: train an agent on a registered id.

Each algorithm name maps to a trainer ``"module:function"`` with the signature
``trainer(env_id: str, argv: list[str]) -> int``; the trainer parses its own options (so
``gymforge train ID --algo NAME --help`` documents them) and returns an exit code.
"""

from __future__ import annotations

import argparse

from gymforge.registry import get_spec, load_entry_point

#: algorithm name -> trainer entry point. Families and baselines add their rows here.
TRAINERS: dict[str, str] = {}


def cmd_train(args: argparse.Namespace) -> int:
    get_spec(args.id)  # unknown ids fail first, with the list of registered ones
    if args.algo not in TRAINERS:
        raise ValueError(f"unknown --algo {args.algo!r}; allowed: {sorted(TRAINERS)}")
    trainer = load_entry_point(TRAINERS[args.algo])
    return int(trainer(args.id, list(args.options)))


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "train",
        help="train an agent (SB3 baselines, offline agents) on an id",
        description="Options after --algo NAME belong to that trainer; pass --help after it.",
    )
    parser.add_argument("id")
    parser.add_argument("--algo", required=True, help=f"one of {sorted(TRAINERS)}")
    parser.add_argument("options", nargs=argparse.REMAINDER)
    parser.set_defaults(func=cmd_train)
