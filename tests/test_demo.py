"""The quick-start demo runs end to end (both backends) and writes its plot."""

from __future__ import annotations

import pytest

from gymforge.demo import main


@pytest.mark.parametrize("backend", ["torch", "sb3"])
def test_demo__trains_evaluates_prints_and_plots(tmp_path, capsys, backend):
    argv = [
        "--backend",
        backend,
        "--timesteps",
        "1000",
        "--eval-seeds",
        "1",
        "--out",
        str(tmp_path),
    ]
    if backend == "torch":
        argv += ["--eval-every", "1000"]
    else:
        argv += ["--num-envs", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    for policy in ("ppo", "optimal", "random"):
        assert f"\n{policy}" in out
    assert "training throughput" in out
    plot = tmp_path / "lineflow_demo.png"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp.png"))
    if backend == "torch":
        assert (tmp_path / "run" / "policy.pt").is_file()
        assert "policy kept" in out
