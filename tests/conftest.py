"""Shared test settings: one torch thread (2-core CI machines), the registry's ids, the wheel
and a fresh venv holding it."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
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


@pytest.fixture(scope="session")
def installed(wheel: Path, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel (with its console script); its dependencies come from the
    test environment's site-packages, appended after the venv's own so the wheel wins. The
    editable install there is a .pth import hook, which a plain path entry does not activate."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "-q",
            str(wheel),
        ],
        check=True,
    )
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv
