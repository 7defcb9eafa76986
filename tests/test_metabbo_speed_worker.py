"""The MetaBBO speed benchmark's worker starts as a script from a scratch folder and serves
episodes (it must not import ``benchmarks``, which is not importable from there)."""

from __future__ import annotations

from benchmarks.metabbo.speed import Worker


def test_worker_serves_a_timed_episode_with_a_stable_digest():
    worker = Worker(None)
    try:
        assert worker.code.endswith("metabbo")  # where it imported the env code from
        first = worker.episode("default", 2, 3, 0)
        again = worker.episode("default", 2, 3, 0)
        other = worker.episode("mix4", 4, 3, 0)
    finally:
        worker.close()
    assert first["digest"] == again["digest"]  # same seed, same trajectory
    assert other["distinct_functions"] == 4 and other["wall_s"] > 0.0
    assert first["digest"] != other["digest"]


def test_the_speed_report_gives_ratios_and_retires_the_40_ms_target():
    """The absolute 40 ms target is host-dependent: the report states ratios measured in one
    run, and the stored runs render without judging the absolute time."""
    import json
    from pathlib import Path

    from benchmarks.metabbo import speed as metabbo_speed

    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
    res = json.loads((results / "metabbo_speed.json").read_text())
    ratios = metabbo_speed.ratios(res)
    assert round(ratios["numpy_loop_over_b64"], 1) == 11.3
    assert ratios["single_env_over_b64"] is None and ratios["b1024_ms"] is None
    res["scaling"] = {"1": {"median_wall_ms": 400.0}, "1024": {"median_wall_ms": 10.375}}
    ratios = metabbo_speed.ratios(res)
    default = res["batched"]["new"]["default"]["median_wall_ms"]
    assert ratios["single_env_over_b64"] == 400.0 / default
    assert ratios["b64_over_b1024"] == default / 10.375
    text = metabbo_speed.markdown(res)
    assert "≤ 40 ms" not in text and "retired" in text and "| numpy_loop_over_b64 | 11.3 |" in text
    stored = (results / "metabbo_speed.md").read_text()
    assert "Target 2" not in stored and "retired" in stored
    readme = (results.parents[1] / "docs" / "figures.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| MetaBBO | batched B=64"))
    assert "40 ms retired" in row and "40 ms not met" not in row
