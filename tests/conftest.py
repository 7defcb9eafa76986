"""Shared test settings: one torch thread (2-core CI machines), the registry's ids, the wheel."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

import gymforge  # noqa: F401 - registers the ids

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _quiet_torch_threads() -> None:
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The gymforge wheel built from this checkout (once per test session)."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("gymforge-*.whl")
    return path
