"""Shared test settings: one torch thread (2-core CI machines), the registry's ids, the wheel
and a fresh venv holding it, and the limit on skipped guards: a run in which more than
:data:`GUARD_SKIP_LIMIT` tests marked ``guard`` (the golden trajectories) were skipped fails, so
a guard that quietly stops comparing (on some host, or after an edit) cannot pass for green."""

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
#: skipped ``guard`` tests a run tolerates
GUARD_SKIP_LIMIT = 3


class GuardSkipLimit:
    """Counts the tests marked ``guard`` that were skipped (at setup or in the call) and fails
    the session, naming them, when there are more than ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.skipped: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and "guard" in report.keywords and report.nodeid not in self.skipped:
            self.skipped.append(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if len(self.skipped) > self.limit and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if len(self.skipped) > self.limit:
            terminalreporter.write_line(
                f"FAILED: {len(self.skipped)} guard tests were skipped (at most {self.limit} "
                f"may be), e.g. {self.skipped[0]}",
                red=True,
            )


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(GuardSkipLimit(GUARD_SKIP_LIMIT), "guard-skip-limit")


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
