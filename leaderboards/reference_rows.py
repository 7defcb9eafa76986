"""Seed every board with its real reference rows: the random agent and the registry's agents.

``python -m gymforge.leaderboards.reference_rows [--root DIR] [TASK ...]`` submits, for each task
with a protocol (or the ones named), the random agent and every reference agent that the
registry lists for the protocol's env id, through the same code path as ``gymforge submit``,
skipping rows already on the board; then it re-renders. Nothing here lists tasks or agents by
hand: a new family's board gets its rows from its protocol file and its registry row. An offline
board (a protocol with ``offline_dataset``) gets the random agent and the offline learners its
protocol names (``offline_dataset.agents``), not the registry's online learners.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Sequence
from pathlib import Path

from gymforge.baselines.agent_loader import load_factory
from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.files import read_json
from gymforge.leaderboards.protocol import list_tasks, load_protocol, resolve_task
from gymforge.leaderboards.render import write_all
from gymforge.leaderboards.submission import list_submissions, slugify, submit
from gymforge.registry import get_spec


def reference_meta(task: str, name: str, entry_point: str, agent_arg: str | None = None) -> dict:
    """Submission metadata of a registry agent; its docstring's summary is the description.

    ``agent_arg`` is the ``--agent`` value of the row's command (default: ``name``). A factory
    that loads a trained model says how many env steps trained it in its
    ``training_env_steps`` attribute (none: the agent was not trained).
    """
    factory = load_factory(entry_point)
    doc = inspect.getdoc(factory) or ""
    summary = doc.split("\n\n")[0].replace("\n", " ").strip()
    if not summary or summary.startswith("Args:"):
        summary = f"{factory.__name__} ({entry_point})."
    random = name == "random"
    steps = int(getattr(factory, "training_env_steps", 0))
    kind = "reference" if agent_arg is None else "offline"
    origin = (
        f"Registry agent {name!r} of the env id"
        if agent_arg is None
        else f"Offline learner {name!r} of the protocol (fitted on its dataset)"
    )
    return {
        "name": "Random (uniform actions)" if random else f"{kind.capitalize()}: {name}",
        "authors": ["gymforge maintainers"],
        "method": "uniform random actions" if random else f"{kind} agent {factory.__name__}",
        "description": f"{summary} {origin}; "
        + (f"trained for {steps:,} env steps." if steps else "not trained."),
        "code_url": None,
        "training_env_steps": steps,
        "command": f"gymforge submit --protocol {task} --agent {agent_arg or name} --meta "
        "submission.json",
    }


def seed_board(root: Path, task: str) -> list[Path]:
    """Submit the missing reference rows of ``task``; returns the new submission folders."""
    protocol = load_protocol(root, task)
    agents = get_spec(protocol.env_id).agents
    rows = [(name, entry_point, name) for name, entry_point in agents.items()]
    if protocol.offline_dataset is not None:
        rows = [("random", agents["random"], "random")] + [
            (name, entry_point, entry_point)
            for name, entry_point in protocol.offline_dataset["agents"].items()
        ]
    folders = list_submissions(root, task)
    present = {folder.name.split("-", 1)[1] for folder in folders}
    # an agent already on the board under another name (a row submitted with its own metadata)
    # is not submitted again
    on_board = {
        read_json(f / "submission.json", f"{f}/submission.json")["agent"].get("entry_point")
        for f in folders
    }
    added = []
    for name, entry_point, agent in rows:
        meta = reference_meta(task, name, entry_point, None if agent == name else agent)
        if slugify(meta["name"]) in present or entry_point in on_board:
            continue
        added.append(submit(root, task, agent, meta, progress=True))
    return added


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="*", help="tasks (default: every task with a protocol)")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    tasks = [resolve_task(args.root, t) for t in args.tasks] or list_tasks(args.root)
    for task in tasks:
        for folder in seed_board(args.root, task):
            print(f"added {folder.relative_to(args.root)}")
    write_all(args.root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
