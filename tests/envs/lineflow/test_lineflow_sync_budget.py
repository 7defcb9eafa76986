"""LineFlow's sync budget in the engine's GPU mode: host synchronisations per ``step`` counted
on the CPU (the calls that would synchronise with a CUDA device; the counts are deterministic).

In the GPU mode (``engine.GPU_MODE``: plain rules, every guard taken) the only syncs left are
the checks that end the event loop and the sweep loop, the action check and the "did any
episode end" read: no compaction (``nonzero``), no copies to the host."""

from __future__ import annotations

import pytest

import gymforge  # noqa: F401 - registers the ids
from gymforge.checks.batch_and_device import sync_profile
from gymforge.envs.lineflow.batched.engine import GPU_MODE
from gymforge.registry import all_specs

STEPS = 12
#: syncs per step at most in the GPU mode; every other batched LineFlow id: the largest of these
BUDGET = {"LineFlow-WaitingTime-v0": 12, "LineFlow-ComplexLine-v0": 20}
LINEFLOW_IDS = sorted(
    spec.id
    for spec in all_specs()
    if spec.id.startswith("LineFlow-") and getattr(spec, "vector_entry_point", None)
)


@pytest.mark.parametrize("env_id", LINEFLOW_IDS)
def test_gpu_mode_step_stays_within_the_sync_budget(env_id: str) -> None:
    counter = sync_profile(env_id, "cpu", batch=256, steps=STEPS, env_kwargs=GPU_MODE)
    budget = BUDGET.get(env_id, max(BUDGET.values()))
    assert counter.total <= budget * STEPS, counter.top_sites()
    assert counter.by_kind["dynamic_shape"] == 0, counter.top_sites()
    assert counter.by_kind["to_host"] == 0, counter.top_sites()


def test_cpu_mode_syncs_more_than_the_gpu_mode() -> None:
    """The budget is the GPU mode's doing: the CPU mode's guards and compaction sync more."""
    env_id = "LineFlow-WaitingTime-v0"
    cpu = sync_profile(env_id, "cpu", batch=256, steps=STEPS)
    gpu = sync_profile(env_id, "cpu", batch=256, steps=STEPS, env_kwargs=GPU_MODE)
    assert cpu.total > 2 * gpu.total
    assert cpu.by_kind["dynamic_shape"] > 0
