"""The built wheel, installed into a fresh venv and run from an empty folder, works end to end.

No source checkout is reachable from the venv: the CLI must find the protocols and the stored
models inside the installed package, and write boards to a root outside site-packages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
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


def run(venv: Path, cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run the installed ``gymforge`` command in ``cwd``; fail with its output if it fails."""
    environment = {k: v for k, v in os.environ.items() if k != "GYMFORGE_LEADERBOARDS"}
    environment.update(env or {})
    out = subprocess.run(
        [str(venv / "bin" / "gymforge"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=environment,
    )
    assert out.returncode == 0, f"gymforge {' '.join(args)}:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def test_installed__version_is_the_wheels(installed, wheel, tmp_path):
    out = run(installed, tmp_path, "--version")
    assert out.strip() == f"gymforge {wheel.name.split('-')[1]}"


def test_installed__package_is_outside_the_checkout(installed, tmp_path):
    python = installed / "bin" / "python"
    code = (
        "import gymforge, gymforge.leaderboards as b; print(gymforge.__file__); print(b.__file__)"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for line in out.stdout.split():
        assert str(installed) in line and str(ROOT) not in line


def test_installed__evaluate_submit_render_verify_from_an_empty_folder(installed, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    run(installed, work, "evaluate", "--protocol", "lineflow/WaitingTime", "--agent", "optimal",
        "--out", "r.json", "--quiet")  # fmt: skip
    results = json.loads((work / "r.json").read_text())
    assert results["task"] == "lineflow/WaitingTime" and results["aggregate"]["n"] == 20
    assert 150 < results["aggregate"]["mean"] < 165  # the optimal controller's return

    board = tmp_path / "boards"
    meta = work / "meta.json"
    meta.write_text(json.dumps({"name": "Optimal", "authors": ["me"], "method": "closed form"}))
    env = {"GYMFORGE_LEADERBOARDS": str(board)}
    run(installed, work, "submit", "--protocol", "lineflow/WaitingTime", "--agent", "optimal",
        "--meta", str(meta), "--quiet", env=env)  # fmt: skip
    (submission,) = (board / "lineflow" / "WaitingTime" / "submissions").iterdir()
    assert (submission / "results.json").is_file()
    assert not (board / "protocols").exists()  # the packaged protocols served the board
    run(installed, work, "leaderboard", "render", env=env)
    assert "Optimal" in (board / "lineflow" / "WaitingTime" / "LEADERBOARD.md").read_text()
    report = run(installed, work, "leaderboard", "verify", env=env)
    assert "0 problem(s)" in report
    assert sorted(p.name for p in work.iterdir()) == ["meta.json", "r.json"]


def test_installed__default_root_is_the_working_folder(installed, tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"name": "Optimal", "authors": ["me"], "method": "closed form"}))
    run(installed, tmp_path, "submit", "--protocol", "WaitingTime", "--agent", "optimal",
        "--meta", "meta.json", "--quiet")  # fmt: skip
    assert list((tmp_path / "leaderboards" / "lineflow" / "WaitingTime" / "submissions").iterdir())


def test_installed__stored_models_ship_and_act(installed, tmp_path):
    python = installed / "bin" / "python"
    code = (
        "import gymnasium as gym, gymforge\n"
        "from stable_baselines3 import PPO\n"
        "from gymforge.baselines import stored_model\n"
        "path = stored_model('LineFlow-WaitingTime-v0', 'ppo-seed11')\n"
        "env = gym.make('LineFlow-WaitingTime-v0')\n"
        "obs, _ = env.reset(seed=0)\n"
        "action, _ = PPO.load(path, device='cpu').predict(obs, deterministic=True)\n"
        "assert env.action_space.contains(action)\n"
        "print(path)\n"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith(str(installed))
