"""Conformance of every multi-agent id in the registry: PettingZoo's parallel API and seed tests."""

from __future__ import annotations

import pytest
from pettingzoo.test import parallel_api_test, parallel_seed_test

from gymforge.registry import all_specs, make_parallel

MULTI = [s for s in all_specs() if s.capabilities.multi_agent]


@pytest.mark.parametrize("spec", MULTI, ids=[s.id for s in MULTI])
def test_parallel_api(spec):
    parallel_api_test(make_parallel(spec.id), num_cycles=200)


@pytest.mark.parametrize("spec", MULTI, ids=[s.id for s in MULTI])
def test_parallel_seed(spec):
    parallel_seed_test(lambda: make_parallel(spec.id), num_cycles=100)


@pytest.mark.parametrize("spec", MULTI, ids=[s.id for s in MULTI])
def test_other_seed_gives_another_start(spec):
    a, _ = make_parallel(spec.id).reset(seed=1)
    b, _ = make_parallel(spec.id).reset(seed=2)
    assert any((a[k] != b[k]).any() for k in a)
