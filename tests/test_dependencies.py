"""The core dependencies stay lean: optional modules fail with a message naming their extra."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import gymnasium as gym
import pytest

from gymforge.core.extras import EXTRAS, require

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def names(requirements: list[str]) -> set[str]:
    return {r.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip() for r in requirements}


def test_optional_modules_are_not_core_dependencies_and_each_has_its_extra():
    core = names(PROJECT["dependencies"])
    extras = PROJECT["optional-dependencies"]
    for module, extra in EXTRAS.items():
        assert module not in core, module
        assert module in names(extras[extra]), (module, extra)
    assert "pillow" in core  # imported by LineFlow's renderer
    assert "hypothesis" not in names(extras["dev"])
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")


def test_making_the_core_envs_imports_no_optional_module():
    code = (
        "import sys, gymnasium as gym, gymforge\n"
        "for env_id in ('LineFlow-v0', 'MetaBBO-v0', 'OffCMAB-Cascade-v0', 'MinMaxTuning-v0'):\n"
        "    env = gym.make(env_id); env.reset(seed=0); env.step(env.action_space.sample())\n"
        "env = gym.make('LineFlow-v0', render_mode='rgb_array'); env.reset(seed=0); env.render()\n"
        "print(sorted(m for m in ('pandas', 'matplotlib', 'networkx') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("module", "make"),
    [
        ("networkx", lambda: gym.make("OffCMAB-InfluenceMax-v0")),
        ("pandas", lambda: _history_frame()),
        ("matplotlib", lambda: require("matplotlib.pyplot", "plots")),
    ],
)
def test_a_missing_optional_module_names_its_extra(monkeypatch, module, make):
    for name in [m for m in sys.modules if m == module or m.startswith(f"{module}.")]:
        monkeypatch.setitem(sys.modules, name, None)  # (imports fail as if not installed)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ImportError, match=rf"pip install 'gymforge\[{EXTRAS[module]}\]'"):
        make()


def _history_frame():
    env = gym.make("LineFlow-v0", record_history=True)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    return env.unwrapped.history_frame()
