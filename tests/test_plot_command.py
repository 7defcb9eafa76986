"""``gymforge plot``: learning curves of run folders, mean and range over seeds, to a PNG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gymforge.cli import main
from gymforge.commands.plot import curves, read_run


def run_folder(root: Path, seed: int, returns: list[float], steps=(1000, 2000, 3000)) -> Path:
    folder = root / f"ppo-seed{seed}"
    folder.mkdir(parents=True)
    evaluations = [
        {"timesteps": s, "mean_return": r, "std_return": 0.0}
        for s, r in zip(steps, returns, strict=False)
    ]
    document = {"env_id": "Probe-Match-v0", "algo": "ppo", "seed": seed, "evaluations": evaluations}
    (folder / "evaluations.json").write_text(json.dumps(document))
    return folder


def test_plot__mean_and_range_over_the_runs_of_one_id(tmp_path, capsys):
    a = run_folder(tmp_path, 0, [1.0, 2.0, 4.0])
    b = run_folder(tmp_path, 1, [3.0, 2.0, 8.0])
    line = curves([read_run(a), read_run(b)])["Probe-Match-v0 ppo"]
    assert line["steps"] == [1000, 2000, 3000] and line["runs"] == 2
    assert list(line["mean"]) == [2.0, 2.0, 6.0]
    assert list(line["low"]) == [1.0, 2.0, 4.0] and list(line["high"]) == [3.0, 2.0, 8.0]
    out = tmp_path / "plots" / "curves.png"
    assert main(["plot", str(a), str(b / "evaluations.json"), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "final mean 6.00 (range 4.00 .. 8.00) at 3,000 steps" in capsys.readouterr().out


def test_plot__only_the_steps_every_run_evaluated(tmp_path):
    a = run_folder(tmp_path, 0, [1.0, 2.0, 4.0])
    b = run_folder(tmp_path, 1, [5.0, 6.0], steps=(2000, 3000))
    line = curves([read_run(a), read_run(b)])["Probe-Match-v0 ppo"]
    assert line["steps"] == [2000, 3000] and list(line["mean"]) == [3.5, 5.0]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p / "missing", "no evaluations.json"),
        (lambda p: run_folder(p, 0, []), "holds no evaluations"),
    ],
)
def test_plot__bad_runs_are_one_clear_line(tmp_path, capsys, make, message):
    out = tmp_path / "c.png"
    assert main(["plot", str(make(tmp_path)), "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_plot__refuses_an_output_that_is_not_png(tmp_path, capsys):
    assert main(["plot", str(run_folder(tmp_path, 0, [1, 2, 3])), "--out", "c.jpg"]) == 2
    assert "--out must be a .png file" in capsys.readouterr().err
