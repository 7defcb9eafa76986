"""The wheel installs one package, ``gymforge``, that imports every subpackage."""

from __future__ import annotations

import subprocess
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGE_DIRS = PYPROJECT["tool"]["setuptools"]["package-dir"]


def source_packages() -> set[str]:
    """Every folder with an __init__.py under a mapped top-level folder, as a gymforge name."""
    found = set()
    for package, folder in PACKAGE_DIRS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *relative)))
    return found


def test_packaging__every_source_package_is_listed_in_pyproject():
    assert source_packages() <= set(PYPROJECT["tool"]["setuptools"]["packages"])


def test_packaging__wheel_holds_only_the_gymforge_package(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {n.split("/")[0] for n in names if not n.startswith("gymforge-")}
    assert top_level == {"gymforge"}
    for package in source_packages():
        assert "/".join(package.split(".")) + "/__init__.py" in names


def test_packaging__wheel_in_a_fresh_venv_makes_lineflow(installed, tmp_path):
    """(``installed``: a fresh venv holding the session's wheel, see ``tests/conftest.py``.)"""
    python = installed / "bin" / "python"
    code = (
        "import gymnasium as gym, importlib, pkgutil\n"
        "env = gym.make('gymforge:LineFlow-v0'); env.reset(seed=0); env.step(env.action_space.sample())\n"
        "import gymforge\n"
        "mods = [m.name for m in pkgutil.walk_packages(gymforge.__path__, 'gymforge.')]\n"
        "[importlib.import_module(m) for m in mods if not m.endswith('__main__')]\n"
        "print(gymforge.__file__)\n"
        "for name in ('envs', 'agents', 'baselines'):\n"
        "    assert importlib.util.find_spec(name) is None, name\n"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(str(installed))
