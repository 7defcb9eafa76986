"""Batch independence: an instance behaves the same whatever the batch it runs in.

Instance ``i`` of a batch reset with seed ``s`` must produce the same observations, rewards,
terminations and truncations in a batch of 2 as in a batch of 5, given the same actions, for
every id with a batched engine. This is what lets a user scale ``num_envs`` without changing
results, and it is the property a GPU kernel with batch-size-dependent reductions (or writes
whose order matters) would break; the ``gpu`` variant checks it on CUDA.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gymforge.checks.batch_and_device import batch_independence_problem, device_agreement, rows
from gymforge.registry import all_specs

BATCHED = [spec.id for spec in all_specs() if spec.vector_entry_point is not None]


@pytest.mark.parametrize("env_id", BATCHED)
def test_instance_behaves_the_same_in_batches_of_different_sizes(env_id: str) -> None:
    torch.set_num_threads(1)
    assert batch_independence_problem(env_id, "cpu") is None


def test_the_check_sees_an_instance_that_depends_on_its_batch(monkeypatch) -> None:
    """A known failure: instance 0's reward shifted by the batch size must be reported."""
    import gymforge.checks.batch_and_device as checks

    real = checks.rows

    def shifted(env_id, batch, device, steps, seed=7, kept=None):
        out = real(env_id, batch, device, steps, seed, kept)
        out[3][1] = out[3][1] + batch  # step 3's reward
        return out

    monkeypatch.setattr(checks, "rows", shifted)
    problem = batch_independence_problem("Probe-Match-v0")
    assert problem == "Probe-Match-v0 on cpu: step 3, reward differs between batch sizes"


def test_device_agreement_of_the_cpu_with_itself_is_exact() -> None:
    agreement = device_agreement("Probe-Match-v0", "cpu", batch=4, steps=5)
    assert all(v == {"equal_fraction": 1.0, "max_abs_diff": 0.0} for v in agreement.values())
    assert (
        len(rows("Probe-Match-v0", 4, "cpu", 5)) == 6
        and np.ndim(rows("Probe-Match-v0", 4, "cpu", 1)[1][1]) == 1
    )


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("env_id", BATCHED)
def test_instance_behaves_the_same_in_batches_of_different_sizes_on_cuda(env_id: str) -> None:
    assert batch_independence_problem(env_id, "cuda") is None
