"""``gymforge dataset collect ID ...`` and ``gymforge dataset info PATH``.

``collect`` hands the id and the remaining options to the id's ``dataset_collector`` (see
:class:`gymforge.spec.EnvSpec`), so each family documents and parses its own options; any other
single-agent id goes to the Minari collector (:mod:`gymforge.minari_datasets`), e.g.::

    gymforge dataset collect LineFlow-WaitingTime-v0 --agent optimal --episodes 10 --minari lineflow-wt-optimal-v0

    gymforge dataset collect MetaBBO-v0 --agent mix --mu 0.5 --episodes 64 --out data/alg0
    gymforge dataset collect OffCMAB-Cascade-v0 --agent uniform --n 10000 --out data/cascade
    gymforge dataset collect OffCMAB-Cascade-v0 --agent uniform --n 10000 --minari cascade-uniform-v0

Every collector takes ``--agent`` (the logging or behaviour policy) and ``--n`` (the count:
episodes, or logged plays for Off-CMAB); the older ``--behavior``/``--logging`` still work.
Every collector shows a progress bar on stderr (per episode, with the current generation for
MetaBBO; per block of plays for Off-CMAB) that ``--quiet`` hides: a MetaBBO collection of 10,000 episodes
takes about 10 minutes (64 episodes: about 15 s).

``info`` prints a dataset's metadata after checking its checksum (or, for ``minari:NAME``, the
Minari dataset's metadata).
"""

from __future__ import annotations

import argparse
import json

from gymforge.registry import get_spec, load_entry_point


def cmd_collect(args: argparse.Namespace) -> int:
    if args.id is None or args.id in ("-h", "--help"):
        if args.id is None and not {"-h", "--help"} & set(args.options):
            raise ValueError("an id is required: gymforge dataset collect ID [options]")
        args.print_help()
        print(f"\nids with a family collector: {[s.id for s in _offline_specs()]}; every other")
        print("single-agent id: --agent NAME|PATH --episodes N --minari NAME (a Minari dataset)")
        return 0
    spec = get_spec(args.id)
    if spec.dataset_collector is not None:
        collect = load_entry_point(spec.dataset_collector)
        return int(collect(args.id, list(args.options)))
    if spec.capabilities.multi_agent:
        raise ValueError(
            f"{args.id} is a PettingZoo id; datasets are collected on single-agent ids"
        )
    from gymforge.minari_datasets import collect_cli

    return int(collect_cli(args.id, list(args.options)))


def cmd_info(args: argparse.Namespace) -> int:
    from gymforge.core.datasets import read_metadata
    from gymforge.core.minari_folder import is_minari_name

    if is_minari_name(args.path):
        from gymforge.core.minari_folder import PREFIX
        from gymforge.minari_datasets import load_minari

        dataset = load_minari(args.path.removeprefix(PREFIX), args.minari_root)
        metadata = dataset.storage.metadata
    else:
        metadata = read_metadata(args.path, verify=True)
    print(json.dumps(metadata, indent=2, sort_keys=True, default=str))
    return 0


def _offline_specs():
    from gymforge.registry import all_specs

    return [s for s in all_specs() if s.dataset_collector is not None]


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("dataset", help="collect or inspect offline datasets")
    dataset_sub = parser.add_subparsers(dest="dataset_command", required=True)
    collect = dataset_sub.add_parser(
        "collect",
        help="collect an offline dataset by running logging policies in an env",
        description="Options after the id belong to the id's collector; pass --help after it "
        "(gymforge dataset collect ID --help).",
        add_help=False,
    )
    collect.add_argument("id", nargs="?", help="the id to collect from (see gymforge list)")
    collect.set_defaults(func=cmd_collect, passthrough=True, print_help=collect.print_help)
    info = dataset_sub.add_parser("info", help="print a dataset's metadata (checksum verified)")
    info.add_argument("path", help="dataset folder, or minari:NAME for a Minari dataset")
    info.add_argument(
        "--minari-root", default=None, help="Minari datasets folder (default: Minari's own)"
    )
    info.set_defaults(func=cmd_info)
