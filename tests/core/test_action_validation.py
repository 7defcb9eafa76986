"""validate_batched_action and BatchedActionCheck: the aminmax fast path for uniform integer
ranges accepts exactly what the full check accepts, bad actions still get the full check's
messages, and a vector env's check of a valid batch reads one value back and copies nothing."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from gymnasium import spaces

from gymforge.checks.sync_counter import SyncCounter
from gymforge.core.spaces import BatchedActionCheck, _in_uniform_range, validate_batched_action


@pytest.mark.parametrize(
    "space",
    [
        spaces.MultiDiscrete([16, 16, 16]),
        spaces.MultiDiscrete([4, 4], start=[-2, -2]),
        spaces.MultiDiscrete([3, 5]),  # non-uniform: no fast path
        spaces.MultiDiscrete([3, 3], start=[0, 1]),  # non-uniform starts
        spaces.Discrete(5, start=2),
    ],
)
def test_fast_path_agrees_with_the_full_check(space: spaces.Space) -> None:
    g = torch.Generator().manual_seed(0)
    shape = (8, *space.shape)
    for dtype in (torch.int64, torch.int32, torch.int16):
        for _ in range(50):
            a = torch.randint(-4, 22, shape, generator=g).to(dtype)
            start = torch.as_tensor(np.asarray(space.start))
            n = torch.as_tensor(
                np.asarray(space.n if isinstance(space, spaces.Discrete) else space.nvec)
            )
            valid = not bool(((a < start) | (a >= start + n)).any())
            if _in_uniform_range(a, space):
                assert valid
            if valid:
                validate_batched_action(a, space, 8)
            else:
                with pytest.raises(ValueError, match=r"action\[\d+\] must be in"):
                    validate_batched_action(a, space, 8)


def test_messages_are_unchanged() -> None:
    space = spaces.MultiDiscrete([16, 16, 16])
    a = torch.zeros(4, 3, dtype=torch.int64)
    a[2, 1] = 16
    msg = "action[2] must be in [[0, 0, 0], [15, 15, 15]] per entry, got [0, 16, 0]"
    with pytest.raises(ValueError, match=re.escape(msg)):
        validate_batched_action(a, space, 4)
    with pytest.raises(ValueError, match="must hold integers"):
        validate_batched_action(a.float(), space, 4)
    with pytest.raises(ValueError, match=re.escape("must have shape (5, 3)")):
        validate_batched_action(a, space, 5)
    validate_batched_action(torch.zeros(0, 3, dtype=torch.int64), space, 0)


@pytest.mark.parametrize(
    "space",
    [
        spaces.MultiDiscrete([16, 16, 16]),
        spaces.MultiDiscrete([3, 5]),
        spaces.MultiDiscrete([3, 3], start=[0, 1]),
        spaces.Discrete(5, start=2),
        spaces.Box(-1.0, 2.0, (3,), dtype=np.float32),
    ],
)
def test_batched_action_check_agrees_with_the_free_function(space: spaces.Space) -> None:
    """Same verdict and same message as ``validate_batched_action`` on random batches."""
    check = BatchedActionCheck(space, 8, torch.device("cpu"))
    g = torch.Generator().manual_seed(1)
    shape = (8, *space.shape)
    for _ in range(60):
        if isinstance(space, spaces.Box):
            a = torch.rand(shape, generator=g) * 3.2 - 1.1
            a[0, 0] = torch.nan if torch.rand(1, generator=g) < 0.1 else a[0, 0]
        else:
            a = torch.randint(-3, 20, shape, generator=g)
        try:
            validate_batched_action(a, space, 8)
        except ValueError as error:
            with pytest.raises(ValueError, match=re.escape(str(error))):
                check(a)
        else:
            check(a)
    with pytest.raises(ValueError, match=re.escape("must have shape")):
        check(torch.zeros(7, *space.shape, dtype=torch.int64))


@pytest.mark.parametrize(
    "space",
    [
        spaces.MultiDiscrete([16, 16, 16]),
        spaces.MultiDiscrete([3, 5]),
        spaces.Discrete(5),
        spaces.Box(-1.0, 2.0, (3,), dtype=np.float32),
    ],
)
def test_a_valid_batch_costs_one_host_read_and_no_copy(space: spaces.Space) -> None:
    check = BatchedActionCheck(space, 4, torch.device("cpu"))
    action = torch.as_tensor(np.stack([space.sample() for _ in range(4)]))
    with SyncCounter() as syncs:
        check(action)
    assert dict(syncs.by_kind) == {"scalar": 1}
    with SyncCounter() as syncs:
        validate_batched_action(action, space, 4)
    assert syncs.by_kind["scalar"] == 1  # the free function builds its bounds on each call
