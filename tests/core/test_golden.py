"""Golden trajectories: every engine reproduces its committed trajectory on every host.

Each step's integer and boolean parts (flags, counts, ids, shapes, non-finite entries) must match
exactly; float values must stay within the family's tolerance (``gymforge.checks.golden`` says
which and why). Nothing is skipped for the host: on a host the file has no variant for, the
recorded values apply. The tests are marked ``guard``: a run that skips more than a handful of
them fails (``tests/conftest.py``). After an intended change of the dynamics:
``python -m gymforge.checks.golden update``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from gymforge.checks import golden

DOCUMENT = json.loads(golden.DEFAULT_FILE.read_text())
KERNELS = golden.kernel_fingerprint()
EXPECTED = golden.expected_cases(DOCUMENT, KERNELS)


def test_golden_file_covers_every_batched_id_and_simpy_line() -> None:
    """A new id (or a removed one) must come with a regenerated file."""
    expected = {f"{env_id}/{kind}" for env_id, kind in golden.golden_cases()}
    assert set(DOCUMENT["cases"]) == expected
    assert DOCUMENT["schema"] == golden.SCHEMA
    assert DOCUMENT["num_envs"] == golden.NUM_ENVS
    assert DOCUMENT["steps"] == golden.STEPS
    assert tuple(DOCUMENT["seeds"]) == golden.SEEDS


@pytest.mark.guard
@pytest.mark.parametrize("case", sorted(DOCUMENT["cases"]))
def test_engine_reproduces_golden_trajectory(case: str) -> None:
    env_id, kind = case.rsplit("/", 1)
    actual = golden.compute([(env_id, kind)])
    problem = golden.first_difference({"cases": {case: EXPECTED[case]}}, actual)
    assert problem is None, problem


def test_variants_hold_only_understood_families_and_float_values() -> None:
    for fingerprint, variant in DOCUMENT.get("variants", {}).items():
        assert set(variant) == {"cpu", "values"}, fingerprint
        assert {golden.family(case) for case in variant["values"]} <= set(golden.VARIANT_FAMILIES)


def _record(exact: str, *values: float) -> dict[str, Any]:
    """A one-step record (reset only) with ``values`` as the obs values."""
    return {
        "exact": {field: [exact] for field in golden.FIELDS},
        "values": {field: [golden.format_values(values)] for field in golden.FIELDS},
    }


def test_a_variant_lays_over_the_values_only() -> None:
    document = {
        "kernels": "aaa",
        "cases": {"MetaBBO-v1/vector": {"0": _record("e", 1.0)}, "Probe-Match-v0/vector": {}},
        "variants": {"bbb": {"cpu": "x", "values": {"MetaBBO-v1/vector": {"0": {"obs": ["2"]}}}}},
    }
    assert golden.expected_cases(document, "aaa") == document["cases"]
    laid = golden.expected_cases(document, "bbb")["MetaBBO-v1/vector"]["0"]
    assert laid["values"] == {"obs": ["2"]}
    assert laid["exact"] == document["cases"]["MetaBBO-v1/vector"]["0"]["exact"]


def test_a_variant_is_refused_for_an_exact_difference_or_another_family() -> None:
    recorded = {
        "kernels": "aaa",
        "cases": {"MetaBBO-v1/vector": {"0": _record("e", 1.0)}},
    }
    flipped = {"kernels": "bbb", "cases": {"MetaBBO-v1/vector": {"0": _record("e", 2.0)}}}
    merged = golden.add_variant(recorded, flipped)
    assert merged["variants"]["bbb"]["values"] == {
        "MetaBBO-v1/vector": {"0": flipped["cases"]["MetaBBO-v1/vector"]["0"]["values"]}
    }
    assert golden.add_variant(recorded, {**recorded, "kernels": "ccc"})["variants"] == {}
    with pytest.raises(ValueError, match="kernels"):
        golden.add_variant(recorded, {**flipped, "kernels": "aaa"})
    with pytest.raises(ValueError, match="exact"):
        golden.add_variant(
            recorded, {"kernels": "bbb", "cases": {"MetaBBO-v1/vector": {"0": _record("f", 1.0)}}}
        )
    other = {"kernels": "aaa", "cases": {"LineFlow-v0/vector": {"0": _record("e", 1.0)}}}
    with pytest.raises(ValueError, match="family"):
        golden.add_variant(
            other, {"kernels": "bbb", "cases": {"LineFlow-v0/vector": {"0": _record("e", 2.0)}}}
        )


def test_missing_cases_are_added_and_recorded_ones_kept() -> None:
    recorded = {"cases": {"x": 1}, "variants": {"bbb": {"values": {"x": 5}}}}
    merged = golden.add_missing(recorded, {"cases": {"x": 9, "z": 4}})
    assert merged["cases"] == {"x": 1, "z": 4}
    assert merged["variants"] == recorded["variants"]


def test_first_difference_names_case_seed_step_and_field() -> None:
    case = sorted(DOCUMENT["cases"])[0]
    seed = str(golden.SEEDS[-1])
    altered = copy.deepcopy(DOCUMENT)
    altered["cases"][case][seed]["exact"]["reward"][6] = "000000000000"
    message = golden.first_difference(DOCUMENT, altered)
    assert message is not None
    assert message.startswith(f"{case} seed {seed}: step 7 differs first, in reward: the exact")
    assert golden.first_difference(DOCUMENT, DOCUMENT) is None


def test_values_within_tolerance_match_and_beyond_it_differ() -> None:
    tol = golden.Tolerance(rtol=1e-3, atol=1e-4)
    recorded = ("e", golden.format_values([1.0, 0.0]))
    assert golden.compare_record(recorded, ("e", golden.format_values([1.0009, 9e-5])), tol) is None
    problem = golden.compare_record(recorded, ("e", "1 0.0002"), tol, ["a", "b"])
    assert problem is not None and problem.startswith("b: recorded 0, now 0.0002")
    assert "number" in str(golden.compare_record(recorded, ("e", "1"), tol))


def test_split_puts_integers_exact_and_floats_in_values() -> None:
    ints = np.arange(6).reshape(2, 3)
    changed = ints.copy()
    changed[1, 2] = 7
    assert golden.split(ints)[0] != golden.split(changed)[0]
    assert golden.split(ints)[1] == []
    floats = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 6)
    exact, values, labels = golden.split({"x": floats, "n": 3})
    assert len(values) == len(labels) == 2 * 4  # rows longer than RAW_ROW: four statistics
    nudged = floats.copy()
    nudged[0, 0] = np.nextafter(nudged[0, 0], np.float32(2))
    assert golden.split({"x": nudged, "n": 3})[0] == exact  # a float's last bit: not exact
    assert golden.split({"x": floats, "n": 4})[0] != exact
    assert golden.split({"x": floats.astype(np.float64), "n": 3})[0] != exact  # dtype
    with_nan = floats.copy()
    with_nan[1, 1] = np.nan
    assert golden.split({"x": with_nan, "n": 3})[0] != exact  # non-finite pattern
    assert golden.split(np.float32([0.5, 2.0]))[1] == [0.5, 2.0]  # short leaves: whole


def _first_termination(env_id: str, seed: int) -> int:
    """The first step at which any instance of the golden run of ``env_id`` terminates."""
    env = gym.make_vec(env_id, num_envs=golden.NUM_ENVS, vectorization_mode="vector_entry_point")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for step in range(1, golden.STEPS + 1):
        action = golden._actions(env.single_action_space, rng, golden.NUM_ENVS)
        if bool(env.step(torch.as_tensor(action))[2].any()):
            return step
    raise AssertionError("no instance terminates")


def test_a_slightly_changed_observation_is_reported_at_its_first_step(monkeypatch) -> None:
    """Probe's elapsed fraction scaled by 1 + 1e-4 (zero at the reset): the float part
    reports step 1, in obs."""
    from gymforge.envs.probe import dynamics

    real = dynamics.observe

    def observe(config, state):
        obs = real(config, state)
        obs[:, -2] *= 1 + 1e-4
        return obs

    monkeypatch.setattr(dynamics, "observe", observe)
    case = "Probe-Match-v0/vector"
    problem = golden.first_difference(
        {"cases": {case: EXPECTED[case]}}, golden.compute([(case.split("/")[0], "vector")])
    )
    assert problem is not None
    assert problem.startswith(f"{case} seed {golden.SEEDS[0]}: step 1 differs first, in obs: obs[")


def test_a_changed_termination_rule_is_reported_at_its_first_step(monkeypatch) -> None:
    """Probe with one more mistake allowed: the exact part reports the step of the first
    termination: the exact part of terminated differs there first."""
    from gymforge.envs.probe import dynamics

    real = dynamics.step

    def step(config, state, action, rng):
        return real(dataclasses.replace(config, patience=config.patience + 1), state, action, rng)

    monkeypatch.setattr(dynamics, "step", step)
    env_id = "Probe-Match-v0"
    case = f"{env_id}/vector"
    actual = golden.compute([(env_id, "vector")])
    monkeypatch.undo()
    first = _first_termination(env_id, golden.SEEDS[0])
    problem = golden.first_difference({"cases": {case: EXPECTED[case]}}, actual)
    assert problem is not None
    # the terminated instance is reset at once, so its observation differs first
    assert problem.startswith(f"{case} seed {golden.SEEDS[0]}: step {first} differs first, in obs")
    recorded = EXPECTED[case][str(golden.SEEDS[0])]["exact"]["terminated"]
    now = actual["cases"][case][str(golden.SEEDS[0])]["exact"]["terminated"]
    assert recorded[: first - 1] == now[: first - 1]
    assert recorded[first - 1] != now[first - 1]


@pytest.mark.parametrize(
    ("skipped", "status"), [(3, pytest.ExitCode.OK), (4, pytest.ExitCode.TESTS_FAILED)]
)
def test_a_run_that_skips_more_than_three_guards_fails(
    pytestconfig: pytest.Config, tmp_path, skipped: int, status: pytest.ExitCode
) -> None:
    """The limit of ``tests/conftest.py``, run in-process on a suite of passing and skipped
    guards: three skips pass, four fail the run."""
    limit = type(pytestconfig.pluginmanager.get_plugin("guard-skip-limit"))
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    guard: a guard\n")
    (tmp_path / f"test_guards_{skipped}.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.guard\n"
        f"@pytest.mark.parametrize('i', range({skipped + 2}))\n"
        "def test_guard(i):\n"
        f"    if i < {skipped}:\n"
        "        pytest.skip('no comparison')\n"
    )
    plugin = limit(3)
    args = [str(tmp_path), "-q", "-p", "no:cacheprovider", "-c", str(tmp_path / "pytest.ini")]
    assert pytest.main(args, plugins=[plugin]) == status
    assert len(plugin.skipped) == skipped
