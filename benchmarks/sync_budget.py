"""Host synchronisations per ``step`` of every batched id, counted on the CPU.

For each registered id with a batched entry point: ``gym.make_vec(id, num_envs=256)`` on the CPU,
``reset(seed=0)``, then ``--steps`` calls of ``step`` with seeded random actions built as tensors
beforehand, inside :class:`gymforge.core.sync_counter.SyncCounter`. The count is of the calls
that would synchronise the host with a CUDA device (scalar reads, copies to the host, host data
copied to the device, outputs of data-dependent size, boolean-mask indexing); it is
deterministic, so one run is the figure. Records per id the syncs per step, the per-kind
breakdown and the top call sites (paths relative to the repository root); the LineFlow ids
also in the engine's GPU mode and the MetaBBO ids with their guards off (what ``device="cuda"``
selects), rows marked "GPU mode".

Writes ``benchmarks/results/sync_budget.{json,md}``. ``--ids``: only these ids (substring
match); ``--batch``, ``--steps``: the workload.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import torch

import gymforge  # noqa: F401 - registers the ids
from benchmarks.common import REPO_ROOT, command_line, machine_info, write_atomic, write_json
from gymforge.checks.batch_and_device import sync_profile
from gymforge.checks.sync_counter import KINDS
from gymforge.envs.lineflow.batched.engine import GPU_MODE
from gymforge.registry import all_specs

RESULTS = Path(__file__).resolve().parent / "results"
TOP_SITES = 5


def _relative(site: str) -> str:
    path, _, line = site.rpartition(":")
    try:
        return f"{Path(path).resolve().relative_to(REPO_ROOT)}:{line}"
    except ValueError:
        return site


def measure(
    env_id: str, batch: int, steps: int, env_kwargs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Syncs per step of ``env_id`` (made with ``env_kwargs``), per kind, and the most frequent
    call sites."""
    started = time.perf_counter()
    counter = sync_profile(env_id, "cpu", batch, steps, env_kwargs)
    return {
        "id": env_id if env_kwargs is None else f"{env_id} (GPU mode)",  # what CUDA selects
        "syncs_per_step": counter.total / steps,
        "by_kind": {kind: counter.by_kind[kind] / steps for kind in KINDS if counter.by_kind[kind]},
        "top_sites": [
            {"kind": kind, "site": _relative(site), "per_step": count / steps}
            for kind, site, count in counter.top_sites(TOP_SITES)
        ],
        "seconds": round(time.perf_counter() - started, 2),
    }


def _number(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Host synchronisations per step (counted on the CPU)",
        "",
        f"`{result['command']}`: B={result['batch']}, {result['steps']} steps after "
        "`reset(seed=0)`, seeded random actions prepared as tensors beforehand. A count is of "
        "the calls that would synchronise with a CUDA device (`gymforge.core.sync_counter`); it "
        "is deterministic. Kinds:",
        "",
        *(f"- `{kind}`: {meaning}" for kind, meaning in KINDS.items()),
        "",
        "| id | syncs/step | by kind (per step) |",
        "|---|---:|---|",
    ]
    for row in result["ids"]:
        kinds = ", ".join(f"{k} {_number(v)}" for k, v in row["by_kind"].items()) or "–"
        lines.append(f"| {row['id']} | {_number(row['syncs_per_step'])} | {kinds} |")
    lines += ["", "## Top call sites (per step)", ""]
    for row in result["ids"]:
        if not row["top_sites"]:
            continue
        lines.append(f"**{row['id']}**")
        lines.append("")
        for site in row["top_sites"]:
            lines.append(f"- {_number(site['per_step'])} `{site['kind']}` at `{site['site']}`")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="*", default=None, help="only ids containing these")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    ids = [spec.id for spec in all_specs() if spec.vector_entry_point is not None]
    if args.ids:
        ids = [env_id for env_id in ids if any(part in env_id for part in args.ids)]
    rows = []
    for env_id in ids:
        rows.append(measure(env_id, args.batch, args.steps))
        if env_id.startswith("LineFlow-"):
            rows.append(measure(env_id, args.batch, args.steps, GPU_MODE))
        if env_id.startswith("MetaBBO-"):
            rows.append(measure(env_id, args.batch, args.steps, {"guards": False}))
    for row in rows:
        print(f"{row['id']}: {_number(row['syncs_per_step'])} syncs/step", flush=True)
    result = {
        "command": command_line(),
        "batch": args.batch,
        "steps": args.steps,
        "machine": machine_info(["torch", "numpy", "gymnasium"]),
        "ids": rows,
    }
    if not args.ids:
        write_json(RESULTS / "sync_budget.json", result, indent=1)
        write_atomic(RESULTS / "sync_budget.md", markdown(result))


if __name__ == "__main__":
    main()
