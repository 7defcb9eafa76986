"""The built wheel, installed into a fresh venv and run from an empty folder, works end to end.

No source checkout is reachable from the venv: the CLI must find the protocols and the stored
models inside the installed package, and write boards to a root outside site-packages.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
    run(installed, tmp_path, "evaluate", "--protocol", "lineflow/WaitingTime", "--agent",
        "optimal", "--out", "r.json", "--quiet")  # fmt: skip
    results = json.loads((tmp_path / "r.json").read_text())
    assert results["task"] == "lineflow/WaitingTime" and results["aggregate"]["n"] == 20
    assert 150 < results["aggregate"]["mean"] < 165  # the optimal controller's return
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # (nothing else written)

    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"name": "Optimal", "authors": ["me"], "method": "closed form"}))
    # submit to the default root, ./leaderboards; render and verify it named by the variable
    run(installed, tmp_path, "submit", "--protocol", "WaitingTime", "--agent", "optimal",
        "--meta", "meta.json", "--quiet")  # fmt: skip
    board = tmp_path / "leaderboards"
    (submission,) = (board / "lineflow" / "WaitingTime" / "submissions").iterdir()
    assert (submission / "results.json").is_file()
    assert not (board / "protocols").exists()  # the packaged protocols served the board
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"GYMFORGE_LEADERBOARDS": str(board)}
    run(installed, elsewhere, "leaderboard", "render", env=env)
    assert "Optimal" in (board / "lineflow" / "WaitingTime" / "LEADERBOARD.md").read_text()
    report = run(installed, elsewhere, "leaderboard", "verify", env=env)
    assert "0 problem(s)" in report
    assert not list(elsewhere.iterdir())


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
