"""One conformance suite over the registry: every id, no hand-written lists.

The checks live in :mod:`gymforge.conformance` so that a new family's author runs the same ones.
"""

from __future__ import annotations

import pytest

from gymforge.checks.conformance import CHECKS, Check, check_id, run_check
from gymforge.registry import all_specs

#: the checks run on one id per family only (worker processes are slow to start)
ONE_PER_FAMILY_CHECKS = {"sharded_equivalence"}


def _cases() -> list[tuple[str, str]]:
    cases = []
    firsts: dict[str, str] = {}  # each family's first single-agent batched id
    for spec in all_specs():
        if spec.capabilities.batched and not spec.capabilities.multi_agent:
            firsts.setdefault(spec.family, spec.id)
    for name, check in CHECKS.items():
        for spec in all_specs():
            if not check.applies(spec):
                continue
            if name in ONE_PER_FAMILY_CHECKS and firsts.get(spec.family) != spec.id:
                continue
            cases.append((name, spec.id))
    return cases


CASES = _cases()


@pytest.mark.parametrize(("name", "env_id"), CASES, ids=[f"{n}[{i}]" for n, i in CASES])
def test_conformance(name, env_id):
    run_check(name, env_id)


def test_conformance__every_check_runs_on_some_id():
    assert {name for name, _ in CASES} == set(CHECKS)


def test_conformance__check_id_reports_failures_as_lines(monkeypatch):
    assert check_id("Probe-Match-v0", ["determinism", "pickling"]) == []

    def broken(env_id):
        raise AssertionError(f"{env_id} is broken")

    monkeypatch.setitem(CHECKS, "pickling", Check(broken, CHECKS["pickling"].applies))
    problems = check_id("Probe-Match-v0", ["determinism", "pickling"])
    assert problems == ["pickling: AssertionError: Probe-Match-v0 is broken"]
    with pytest.raises(ValueError, match="unknown conformance check"):
        run_check("nope", "Probe-Match-v0")
