"""The on-device trainer stands on the shared training base alone: importing it (or its
``gymforge train`` CLI) loads neither Stable-Baselines3 nor sb3-contrib, and nothing of the
SB3 backend's package."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SB3_MODULES = ("stable_baselines3", "sb3_contrib", "gymforge.baselines.sb3")


@pytest.mark.parametrize(
    "module",
    [
        "gymforge.baselines.ondevice.run",
        "gymforge.baselines.ondevice.cli",
        "gymforge.baselines.training.runs",
        "gymforge.baselines.training.config",
        "gymforge.baselines.training.cli",
    ],
)
def test_import_loads_no_sb3(module: str) -> None:
    code = (
        f"import json, sys, {module}\n"
        f"print(json.dumps(sorted(m for m in {SB3_MODULES!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
