"""The per-task training configs ship in the wheel and load from an installed copy."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel__ships_and_loads_the_training_configs(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(dist), str(ROOT)],
        check=True,
    )  # fmt: skip
    (wheel,) = dist.glob("gymforge-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {Path(n).name for n in names if n.startswith("gymforge/baselines/configs/")}
    expected = {p.name for p in (ROOT / "baselines" / "configs").glob("*.yaml")}
    assert "default.yaml" in shipped and "LineFlow-WaitingTime-v0.yaml" in shipped
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
        "print(cfg.n_envs, cfg.curriculum.update)\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code, str(site), sysconfig.get_paths()["purelib"]],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["5", "0.02"]
