"""The quick-start demo runs end to end and writes its plot."""

from __future__ import annotations

from gymforge.demo import main


def test_demo__trains_evaluates_prints_and_plots(tmp_path, capsys):
    assert (
        main(
            ["--timesteps", "1000", "--num-envs", "2", "--eval-seeds", "1", "--out", str(tmp_path)]
        )
        == 0
    )
    out = capsys.readouterr().out
    for policy in ("ppo", "optimal", "random"):
        assert f"\n{policy}" in out
    plot = tmp_path / "lineflow_demo.png"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp.png"))
