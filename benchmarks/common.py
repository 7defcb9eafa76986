"""Helpers shared by the benchmark scripts of this package and its family subpackages.

The scripts run as ``python -m benchmarks.<family>.<name>`` (or ``python -m benchmarks.<name>``
for a top-level one) from the repository root and import this module as ``benchmarks.common``
(the repository root is on ``sys.path`` under ``-m``, and worker processes started with ``spawn``
inherit it). Only the pieces that were identical in every script live here: machine and version
facts, the git revision, the reproducing command line, atomic writes, a few formatters and the
interleaved-median loop of the reset benchmarks. Measurement logic stays in the scripts.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from gymforge.checks.machine import cpu_model

REPO_ROOT = Path(__file__).resolve().parent.parent


def package_version(name: str) -> str | None:
    """Installed version of distribution ``name``, or ``None``."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def package_versions(names: Iterable[str]) -> dict[str, str | None]:
    """``{name: installed version or None}`` for each distribution in ``names``, in order."""
    return {name: package_version(name) for name in names}


def git_revision(root: Path = REPO_ROOT) -> str | None:
    """``HEAD`` of the repository at ``root``, with ``+dirty`` for local changes."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def provenance(root: Path = REPO_ROOT, allow_dirty: bool = False) -> dict[str, Any]:
    """The revision results come from and whether they are final.

    ``final`` is ``True`` only for a clean tree: a revision ending in ``+dirty`` names a commit
    the code that ran differs from, so nobody can check such a result out again.
    ``allow_dirty`` records that the writer was told to accept that (``--allow-dirty``).
    """
    revision = git_revision(root)
    dirty = revision is None or revision.endswith("+dirty")
    record: dict[str, Any] = {"git_revision": revision, "final": not dirty}
    if dirty:
        record["allow_dirty"] = allow_dirty
    return record


def require_clean_tree(allow_dirty: bool, root: Path = REPO_ROOT) -> dict[str, Any]:
    """:func:`provenance` for a writer of final results: refuses (``SystemExit``) a dirty tree
    or an unknown revision unless ``allow_dirty``, in which case the record says so."""
    record = provenance(root, allow_dirty)
    if not record["final"] and not allow_dirty:
        raise SystemExit(
            f"the working tree is not clean (revision {record['git_revision']}): final results "
            "name the commit that produced them; commit first, or pass --allow-dirty to record "
            "the result as not final"
        )
    return record


def add_allow_dirty(parser: argparse.ArgumentParser) -> None:
    """The ``--allow-dirty`` option of a writer of final results."""
    parser.add_argument(
        "--allow-dirty",
        action="store_true",
        help="write results from a dirty working tree (recorded as final: false)",
    )


def interpreter_name() -> str:
    """The running interpreter, relative to the repository root when it lives inside it."""
    path = Path(sys.executable)
    with contextlib.suppress(ValueError):
        return str(path.relative_to(REPO_ROOT))
    return path.name


def cpus_usable() -> int | None:
    """CPUs this process may run on (its affinity mask), or ``None`` where unknown."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def machine_info(packages: Iterable[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Platform, CPUs, interpreter, ``extra`` facts, package versions and git revision.

    The keys come in this order: ``platform``, ``machine``, ``processor``, ``cpu_model``,
    ``cpu_count``, ``cpus_usable``, ``python``, then those of ``extra``, then ``versions``,
    ``git_revision`` and ``final`` (``False`` for a dirty tree: see :func:`provenance`).
    """
    facts = provenance()
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": cpus_usable(),
        "python": sys.version.split()[0],
        **(extra or {}),
        "versions": package_versions(packages),
        "git_revision": facts["git_revision"],
        "final": facts["final"],
    }


def command_line(argv: Sequence[str] | None = None) -> str:
    """The command that ran this benchmark, as one would type it from the repository root.

    Always the module form ``python -m benchmarks.<family>.<name> ARGS`` (``benchmarks.<name>``
    for a script at the top of the folder), whether the script was started that way or by its
    file path, so that recorded results name one way to reproduce them. ``argv`` defaults to
    ``sys.argv`` (its first entry is the script's path).
    """
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0])
    module = str(script)
    if script.suffix == ".py":
        parts = script.with_suffix("").parts
        # the path's last ``benchmarks`` folder is the package: what follows it is the module
        start = max((i for i, part in enumerate(parts[:-1]) if part == "benchmarks"), default=None)
        inside = parts[start + 1 :] if start is not None else parts[-1:]
        module = ".".join(["benchmarks", *inside])
    return shlex.join(["python", "-m", module, *argv[1:]])


def reproduce_lines(command: str) -> list[str]:
    """The closing lines of a Markdown report: how to run it again, as recorded."""
    return ["Reproduce (from the repository root):", "", "```", command, "```", ""]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    ) as handle:
        handle.write(text)
        temporary = Path(handle.name)
    try:
        os.chmod(temporary, 0o644)  # NamedTemporaryFile creates 0600
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def write_json(path: Path, data: Any, indent: int) -> None:
    """Write ``data`` as indented JSON plus a final newline, atomically."""
    write_atomic(path, json.dumps(data, indent=indent) + "\n")


def write_result_files(stem: Path, result: Any, markdown: str) -> None:
    """Write a benchmark's ``stem.json`` (indented) and ``stem.md``, each atomically, and print
    the Markdown."""
    write_json(stem.with_suffix(".json"), result, indent=2)
    write_atomic(stem.with_suffix(".md"), markdown + "\n")
    print(markdown)


def parse_scenarios(values: Sequence[str], known: Iterable[str]) -> list[str]:
    """Scenario keys from ``--scenarios`` (space- or comma-separated, any case), in ``known`` order.

    Raises ``argparse.ArgumentTypeError`` naming any key not in ``known``.
    """
    order = list(known)
    wanted = {v.strip().upper() for value in values for v in value.split(",") if v.strip()}
    unknown = wanted - set(order)
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown scenario(s) {sorted(unknown)}; choose from {order}"
        )
    return [key for key in order if key in wanted]


def fmt_rate(value: float | None) -> str:
    """A rate (steps/s) with thousands separators, or ``–`` when not measured."""
    return "–" if value is None else f"{value:,.0f}"


def fmt_verdict(passed: bool | None) -> str:
    """PASS, FAIL or not measured."""
    return {True: "PASS", False: "**FAIL**", None: "not measured"}[passed]


def import_lineflow(single_thread: bool = True) -> tuple[Any, str | None]:
    """Import the anchor quietly; return ``((LineSimulation, lineflow.examples), None)`` or why not.

    lineflow's ``__init__`` sets the root logger to DEBUG and adds a stdout handler; both are
    undone here so the benchmark's output stays readable. lineflow imports torch; with
    ``single_thread`` its thread count is then set to 1 deliberately.
    """
    import logging

    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # lineflow imports pygame
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        import lineflow.examples as examples
        from lineflow.simulation import LineSimulation
    except Exception as error:  # any import failure means "no anchor", not a crash
        return None, f"import lineflow failed: {type(error).__name__}: {error}"
    finally:
        root.setLevel(max(level, logging.WARNING))
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
    torch = sys.modules.get("torch")
    if single_thread and torch is not None:
        torch.set_num_threads(1)
    return (LineSimulation, examples), None


def elapsed(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes (wall clock)."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def make_vec_quietly(env_id: str, num_envs: int) -> Any:
    """``gym.make_vec(env_id, num_envs)`` on the id's own vector entry point, without
    gymnasium's "v0 is out of date" warning (benchmarks compare versions on purpose)."""
    import warnings

    import gymnasium as gym

    import gymforge  # noqa: F401 - registers the ids

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return gym.make_vec(
            env_id,
            num_envs=num_envs,
            vectorization_mode="vector_entry_point",
            array_backend="torch",
        )


def interleaved_medians(
    ids: Sequence[str],
    sizes: Sequence[int],
    repeats: int,
    measure: Callable[[str, int, int], dict[str, float]],
) -> list[dict[str, Any]]:
    """Per batch size, ``measure(id, size, repeat)`` for every id in turn, ``repeats`` times (so
    the ids see the same load), then one row per (id, size) with the median of each figure."""
    rows = []
    for size in sizes:
        runs: dict[str, list[dict[str, float]]] = {env_id: [] for env_id in ids}
        for r in range(repeats):
            for env_id in ids:
                runs[env_id].append(measure(env_id, size, r))
        for env_id in ids:
            median = {k: statistics.median(run[k] for run in runs[env_id]) for k in runs[env_id][0]}
            rows.append({"env_id": env_id, "num_envs": size, **median})
    return rows


def reset_table(
    title: str,
    result: dict[str, Any],
    draws_header: str,
    ratio: str,
) -> list[str]:
    """The markdown head and table of a v0-vs-v1 reset benchmark: ``result`` holds ``command``,
    ``measured_at``, ``load_average_start``, ``repeats`` and the rows of
    :func:`interleaved_medians` (ids ``...-v0`` and ``...-v1``); the last column is the v0 / v1
    ratio of the figure ``ratio`` (``"reset_s"`` or ``"draws_s"``)."""
    rows = result["rows"]
    v0 = {r["num_envs"]: r[ratio] for r in rows if r["env_id"].endswith("-v0")}
    lines = [
        f"# {title}",
        "",
        f"Command: `{result['command']}`, measured at {result['measured_at']}, one torch thread, "
        f"load average {result['load_average_start']:.2f} at the start (a shared 2-core "
        f"machine); medians of {result['repeats']} runs, v0 and v1 interleaved.",
        "",
        f"| id | B | reset (s) | {draws_header} (s) | one step (s) | v0 / v1 "
        f"{'reset' if ratio == 'reset_s' else 'draws'} |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        speedup = v0[row["num_envs"]] / row[ratio]
        cell = f"{speedup:.1f}x" if row["env_id"].endswith("-v1") else "–"
        lines.append(
            f"| `{row['env_id']}` | {row['num_envs']} | {row['reset_s']:.3f} | "
            f"{row['draws_s']:.3f} | {row['step_s']:.3f} | {cell} |"
        )
    return lines


def measure_resets(
    ids: Sequence[str],
    sizes: Sequence[int],
    measure: Callable[[str, int, int], dict[str, float]],
    argv: Sequence[str] | None,
    description: str,
) -> tuple[bool, dict[str, Any]]:
    """The shared run of a v0-vs-v1 reset benchmark: parse ``--quick`` (B = 256 only, 2
    repeats), one torch thread, :func:`interleaved_medians` over ``sizes``; returns whether it
    was quick and the result (command, time, load, repeats, rows, machine)."""
    import torch

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="B = 256 only, 2 repeats")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    repeats = 2 if args.quick else 3
    load = os.getloadavg()[0]
    rows = interleaved_medians(ids, (256,) if args.quick else sizes, repeats, measure)
    return args.quick, {
        "command": command_line(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_start": load,
        "repeats": repeats,
        "rows": rows,
        "machine": machine_info(["torch"]),
    }


def write_report(name: str, quick: bool, result: dict[str, Any], lines: list[str]) -> None:
    """``benchmarks/results/NAME[_quick].{json,md}``, and the markdown printed."""
    suffix = "_quick" if quick else ""
    results = REPO_ROOT / "benchmarks" / "results"
    write_json(results / f"{name}{suffix}.json", result, indent=2)
    write_atomic(results / f"{name}{suffix}.md", "\n".join(lines) + "\n")
    print("\n".join(lines))
