"""The per-task training configs ship in the wheel and load from an installed copy."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel__ships_and_loads_the_training_configs(wheel, tmp_path):
    """(``wheel``: the session's wheel of this checkout, see ``tests/conftest.py``.)"""
    names = set(zipfile.ZipFile(wheel).namelist())
    prefix = "gymforge/baselines/configs/"
    shipped = {n.removeprefix(prefix) for n in names if n.startswith(prefix)}
    configs = ROOT / "baselines" / "configs"
    expected = {
        str(p.relative_to(configs)) for p in [*configs.rglob("*.yaml"), *configs.rglob("*.yml")]
    }
    assert {"default.yaml", "LineFlow-WaitingTime-v0.yaml", "ondevice/default.yaml"} <= shipped
    assert shipped == expected
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site),
         str(wheel)],
        check=True,
    )  # fmt: skip
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); sys.path.append(sys.argv[2])\n"
        "from gymforge.baselines.sb3 import config\n"
        "assert config.CONFIG_DIR.is_relative_to(sys.argv[1]), config.CONFIG_DIR\n"
        "cfg = config.load_config('LineFlow-ComplexLine-v0')\n"
        "from gymforge.baselines.ondevice import config as torch_config\n"
        "torch_cfg = torch_config.load_config('LineFlow-ComplexLine-v0')\n"
        "print(cfg.n_envs, cfg.curriculum.update, torch_cfg.n_envs)\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(site), sysconfig.get_paths()["purelib"]],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["5", "0.02", "256"]
