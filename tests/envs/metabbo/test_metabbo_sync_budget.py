"""MetaBBO's sync budget: with its guards off (the default on CUDA) a step reads the device at
most four times (measured: two, the action check and "did any episode end"), counted on the
CPU; with the guards on (the CPU default) it reads more to take cheaper paths."""

from __future__ import annotations

import pytest
import torch

import gymforge  # noqa: F401 - registers the ids
from gymforge.checks.batch_and_device import sync_profile
from gymforge.core.host_guards import default_guards, guards_enabled, host_guards
from gymforge.registry import all_specs

METABBO_IDS = sorted(spec.id for spec in all_specs() if spec.id.startswith("MetaBBO-"))
STEPS = 10


def _steady(env_id: str, **env_kwargs: object) -> dict[str, float]:
    """Syncs per step by kind once the first steps' cached constants exist (a warm-up run builds
    them): the difference between a run of 3 + STEPS steps and one of 3 (deterministic)."""
    sync_profile(env_id, "cpu", batch=64, steps=3, env_kwargs=env_kwargs)
    short = sync_profile(env_id, "cpu", batch=64, steps=3, env_kwargs=env_kwargs)
    long = sync_profile(env_id, "cpu", batch=64, steps=3 + STEPS, env_kwargs=env_kwargs)
    kinds = set(short.by_kind) | set(long.by_kind)
    per_step = {k: (long.by_kind[k] - short.by_kind[k]) / STEPS for k in kinds}
    return {**per_step, "total": (long.total - short.total) / STEPS}


@pytest.mark.parametrize("env_id", METABBO_IDS)
def test_step_without_guards_stays_within_four_syncs(env_id: str) -> None:
    unguarded = _steady(env_id, guards=False)
    assert unguarded["total"] <= 4, unguarded
    assert unguarded.get("to_device", 0) == 0, unguarded
    assert unguarded.get("dynamic_shape", 0) == 0, unguarded
    assert _steady(env_id)["total"] > unguarded["total"]  # the CPU default reads to skip work


def test_guards_default_off_on_cuda_only_and_hold_within_their_block() -> None:
    assert default_guards(torch.device("cuda"), None) is False
    assert default_guards(torch.device("cpu"), None) is True
    assert default_guards(torch.device("cuda"), True) is True
    with pytest.raises(TypeError, match="guards must be True, False or None"):
        default_guards(torch.device("cpu"), 1)  # type: ignore[arg-type]
    assert guards_enabled()
    with host_guards(False):
        assert not guards_enabled()
        with host_guards(True):
            assert guards_enabled()
        assert not guards_enabled()
    assert guards_enabled()
