"""The MetaBBO speed benchmark's worker starts as a script from a scratch folder and serves
episodes (it must not import ``benchmarks``, which is not importable from there)."""

from __future__ import annotations

from benchmarks.metabbo_speed import Worker


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
