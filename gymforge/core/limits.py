"""Limits checked before work: memory for a count of instances or records, and worker counts.

A careless or hostile setting (``num_envs=10**6``, ``--n 10**12``, ``--workers 10**9``) would
otherwise grow memory until the operating system kills the process, or start processes until the
machine stalls, with no message naming the setting. These checks run before anything is allocated
and raise one ``ValueError`` naming the field, the estimate and the limit.

- :func:`check_memory`: ``count`` items of about ``bytes_each`` must fit in the memory available
  now (the host's ``MemAvailable``, or a CUDA device's free memory);
- :func:`check_workers`: a process count must be in ``[1, MAX_WORKERS_PER_CPU x CPUs]``.

The estimates are deliberately rough (a measured peak per item, with a margin): they exist to
refuse settings that cannot fit, not to predict usage to the byte.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

#: worker processes allowed per CPU core: more only adds start-up time and memory
MAX_WORKERS_PER_CPU = 4


def available_memory(device: object = "cpu") -> int:
    """Bytes that can be allocated now on ``device``: the free memory of a CUDA device, else the
    host's ``MemAvailable`` (``/proc/meminfo``), else its physical memory."""
    if getattr(device, "type", str(device).split(":")[0]) == "cuda":
        import torch

        free, _total = torch.cuda.mem_get_info(device)  # type: ignore[arg-type]
        return int(free)
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 1 << 62  # unknown: no limit from memory


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, e.g. ``"1.5 GiB"``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def check_memory(field: str, count: int, bytes_each: int, what: str, device: object = "cpu") -> int:
    """Raise ``ValueError`` naming ``field`` unless ``count`` items of ``bytes_each`` bytes fit
    in the memory available on ``device``; returns the estimate in bytes."""
    estimate = int(count) * int(bytes_each)
    limit = available_memory(device)
    if estimate > limit:
        per = format_bytes(bytes_each)
        raise ValueError(
            f"{field}={count:,} needs about {format_bytes(estimate)} ({per} per {what}), more "
            f"than the {format_bytes(limit)} of memory available on {device}; use a smaller "
            f"{field} (at most about {max(1, limit // max(1, bytes_each)):,} here)"
        )
    return estimate


def max_workers() -> int:
    """The most worker processes :func:`check_workers` accepts: ``MAX_WORKERS_PER_CPU`` per CPU
    core of this machine."""
    return MAX_WORKERS_PER_CPU * (os.cpu_count() or 1)


def check_workers(field: str, workers: object, jobs: int | None = None) -> int:
    """``workers`` as an int in ``[1, max_workers()]`` (and at most ``jobs`` when given), else a
    ``ValueError`` naming ``field``."""
    high = max_workers() if jobs is None else max(1, min(max_workers(), jobs))
    if (
        isinstance(workers, bool)
        or not isinstance(workers, (int, np.integer))
        or not 1 <= workers <= high
    ):
        why = f"{MAX_WORKERS_PER_CPU} per CPU core, {os.cpu_count() or 1} cores here"
        if jobs is not None and jobs < max_workers():
            why += f"; at most one per job, {jobs} jobs"
        raise ValueError(f"{field} must be an int in [1, {high}] ({why}), got {workers!r}")
    return int(workers)
