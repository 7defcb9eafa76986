"""The CPU's model name: a label recorded with results and golden variants (for people and for
telling apart machines whose BLAS kernels differ)."""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_model() -> str:
    """The ``model name`` of ``/proc/cpuinfo`` (Linux), else the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
