"""Golden trajectories: every engine reproduces its committed per-step digests exactly.

The digests pin the bits, which depend on the torch build and the CPU's vector instruction set,
so the comparison runs only on a machine matching the one that recorded them (the skip says which
differs). Matrix products also depend on the BLAS kernels of the CPU generation: the file holds
variants per kernel fingerprint, and a difference on a fingerprint it does not know is a skip
that names it. After an intended change of the dynamics: ``python -m gymforge.checks.golden
update``.
"""

from __future__ import annotations

import copy
import json

import pytest

from gymforge.checks import golden
from gymforge.checks.machine import cpu_model

DOCUMENT = json.loads(golden.DEFAULT_FILE.read_text())
KERNELS = golden.kernel_fingerprint()


def _same_machine() -> str | None:
    here = golden.machine()
    if DOCUMENT["machine"] != here:
        return f"digests recorded on {DOCUMENT['machine']}, this machine is {here}"
    return None


def test_golden_file_covers_every_batched_id_and_simpy_line() -> None:
    """A new id (or a removed one) must come with regenerated digests."""
    expected = {f"{env_id}/{kind}" for env_id, kind in golden.golden_cases()}
    assert set(DOCUMENT["cases"]) == expected
    assert DOCUMENT["num_envs"] == golden.NUM_ENVS
    assert DOCUMENT["steps"] == golden.STEPS
    assert tuple(DOCUMENT["seeds"]) == golden.SEEDS


@pytest.mark.parametrize("case", sorted(DOCUMENT["cases"]))
def test_engine_reproduces_golden_digests(case: str) -> None:
    reason = _same_machine()
    if reason:
        pytest.skip(reason)
    env_id, kind = case.rsplit("/", 1)
    actual = golden.compute([(env_id, kind)])
    cases, known = golden.expected_cases(DOCUMENT, KERNELS)
    problem = golden.first_difference({**DOCUMENT, "cases": {case: cases[case]}}, actual)
    if problem and not known:
        pytest.skip(
            f"{problem}, on kernels {KERNELS} ({cpu_model()}) that the file does not know: "
            "record them with `python -m gymforge.checks.golden update --variant`"
        )
    assert problem is None


def test_kernel_variants_lay_over_the_recorded_cases() -> None:
    document = {
        "kernels": "aaa",
        "cases": {"x": 1, "y": 2},
        "variants": {"bbb": {"cases": {"y": 3}}},
    }
    assert golden.expected_cases(document, "aaa") == ({"x": 1, "y": 2}, True)
    assert golden.expected_cases(document, "bbb") == ({"x": 1, "y": 3}, True)
    assert golden.expected_cases(document, "ccc") == ({"x": 1, "y": 2}, False)


def test_a_variant_keeps_only_the_differing_cases() -> None:
    recorded = {"machine": {"torch": "t"}, "kernels": "aaa", "cases": {"x": 1, "y": 2}}
    here = {"machine": {"torch": "t"}, "kernels": "bbb", "cases": {"x": 1, "y": 3}}
    merged = golden.add_variant(recorded, here)
    assert merged["cases"] == recorded["cases"]
    assert merged["variants"]["bbb"]["cases"] == {"y": 3}
    with pytest.raises(ValueError, match="kernels"):
        golden.add_variant(recorded, {**here, "kernels": "aaa"})
    with pytest.raises(ValueError, match="machine"):
        golden.add_variant(recorded, {**here, "machine": {"torch": "other"}})


def test_missing_cases_are_added_and_recorded_ones_kept() -> None:
    recorded = {
        "machine": {"torch": "t"},
        "kernels": "aaa",
        "cases": {"x": 1},
        "variants": {"bbb": {"cases": {"x": 5}}},
    }
    here = {"machine": {"torch": "t"}, "kernels": "bbb", "cases": {"x": 9, "z": 4}}
    merged = golden.add_missing(recorded, here)
    assert merged["cases"] == {"x": 1, "z": 4}  # x kept as recorded, z new
    assert merged["variants"] == recorded["variants"]
    with pytest.raises(ValueError, match="machine"):
        golden.add_missing(recorded, {**here, "machine": {"torch": "other"}})


def test_the_fingerprint_sees_a_changed_product(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    real_bmm = torch.bmm
    monkeypatch.setattr(torch, "bmm", lambda a, b: real_bmm(a, b) * (1 + 1e-7))
    assert golden.kernel_fingerprint() != KERNELS


def test_first_difference_names_case_seed_step_and_field() -> None:
    case = sorted(DOCUMENT["cases"])[0]
    altered = copy.deepcopy(DOCUMENT)
    seed = str(golden.SEEDS[-1])
    altered["cases"][case][seed]["reward"][6] = "000000000000"
    message = golden.first_difference(DOCUMENT, altered)
    assert message == f"{case} seed {seed}: step 7 differs first, in reward"
    assert golden.first_difference(DOCUMENT, DOCUMENT) is None


def test_digest_sees_dtype_shape_and_one_bit() -> None:
    import numpy as np

    base = np.zeros(4, dtype=np.float32)
    flipped = base.copy()
    flipped.view(np.uint32)[2] ^= 1
    assert golden.field_digest(base) != golden.field_digest(flipped)
    assert golden.field_digest(base) != golden.field_digest(base.astype(np.float64))
    assert golden.field_digest(base) != golden.field_digest(base.reshape(2, 2))
    assert golden.field_digest({"a": base}) != golden.field_digest({"b": base})
