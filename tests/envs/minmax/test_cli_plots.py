"""``gymforge minmax ...`` writes valid PNG files; bad input gives a named error and no file."""

from __future__ import annotations

from gymforge.cli import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _is_png(path) -> bool:
    data = path.read_bytes()
    return data[:8] == PNG_MAGIC and len(data) > 1000


def test_stability_map_exact_and_simulated(tmp_path):
    out = tmp_path / "map.png"
    assert main(["minmax", "stability-map", "--grid", "6", "--out", str(out)]) == 0
    assert _is_png(out)
    out2 = tmp_path / "sim.png"
    args = ["minmax", "stability-map", "--game", "bilinear", "--grid", "5"]
    args += ["--method", "simulate", "--iterations", "50", "--out", str(out2)]
    assert main(args) == 0
    assert _is_png(out2)


def test_trajectories_and_avgs(tmp_path):
    out = tmp_path / "traj.png"
    args = ["minmax", "trajectories", "--game", "sextic", "--steps", "30", "--out", str(out)]
    assert main([*args, "--betas", "0", "0.3"]) == 0
    assert _is_png(out)
    out2 = tmp_path / "avgs.png"
    args = ["minmax", "avgs", "--game", "quadratic", "--steps", "20", "--starts", "2"]
    assert main([*args, "--game-params", '{"a": 0.1}', "--out", str(out2)]) == 0
    assert _is_png(out2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["avgs.png", "traj.png"]


def test_bad_input_is_reported_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "x.png"
    assert main(["minmax", "stability-map", "--game", "sextic", "--out", str(out)]) == 2
    assert "needs a linear game" in capsys.readouterr().err
    assert main(["minmax", "trajectories", "--game", "nim", "--out", str(out)]) == 2
    assert "game must be one of" in capsys.readouterr().err
    assert main(["minmax", "avgs", "--game-params", "{oops", "--out", str(out)]) == 2
    assert "--game-params must be a JSON object" in capsys.readouterr().err
    assert main(["minmax", "avgs", "--out", str(tmp_path / "x.jpg")]) == 2
    assert "out must be a .png file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_info_describes_a_multi_agent_id(capsys):
    import json

    assert main(["info", "MinMax-Quadratic-v0", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["action_space[x]"] == "Box(-1.0, 1.0, (1,), float32)"
    assert info["observation_space[y]"] == "Box(-inf, inf, (4,), float32)"
