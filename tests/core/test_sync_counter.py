"""SyncCounter: known snippets count exactly their syncs, by kind and call site; sync-free code
counts 0; nesting and exceptions leave torch as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from gymforge.checks.sync_counter import KINDS, SyncCounter


def _line_of(marker: str) -> int:
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if marker in line and "_line_of" not in line)


def test_snippet_with_known_syncs_counts_each_by_kind() -> None:
    t = torch.arange(6)
    mask = t > 2
    with SyncCounter() as syncs:
        bool(mask.any())  # scalar 1
        int(t[0])  # scalar 2
        float(t.sum())  # scalar 3
        t[1].item()  # scalar 4
        [10, 20, 30][t[2]]  # scalar 5 (__index__)
        t.tolist()  # to_host 1
        t.numpy()  # to_host 2
        np.asarray(t)  # to_host 3
        torch.nonzero(t)  # dynamic_shape 1
        t.nonzero()  # dynamic_shape 2
        torch.unique(t)  # dynamic_shape 3
        torch.bincount(t, minlength=10)  # dynamic_shape 4 (reads the maximum anyway)
        torch.masked_select(t, mask)  # dynamic_shape 5
        torch.repeat_interleave(t, t)  # dynamic_shape 6
        torch.where(mask)  # dynamic_shape 7
        t[mask]  # mask_index 1
        t.clone()[mask] = 0  # mask_index 2
        torch.as_tensor(np.arange(3))  # to_device 1
        torch.tensor([1.0, 2.0])  # to_device 2
        torch.from_numpy(np.zeros(2))  # to_device 3
        t[[0, 2]]  # to_device 4 (host indices)
        torch.equal(t, t)  # compare 1
    assert dict(syncs.by_kind) == {
        "scalar": 5,
        "to_host": 3,
        "dynamic_shape": 7,
        "mask_index": 2,
        "to_device": 4,
        "compare": 1,
    }
    assert syncs.total == 22
    assert set(syncs.by_kind) <= set(KINDS)


def test_sync_free_snippet_counts_zero() -> None:
    t = torch.rand(8, 5)
    index = torch.tensor([0, 3, 1])
    with SyncCounter() as syncs:
        mask = t > 0.5
        u = torch.where(mask, t, 0.0).cumsum(1)[:, index]
        u = u.gather(1, index.clamp(max=2).expand(8, -1)).sum(1) + mask.any(1)
        torch.bincount  # noqa: B018 - the name alone is no call
        t.repeat_interleave(2, dim=0)
        torch.repeat_interleave(t, torch.full((8,), 2), dim=0, output_size=16)
        torch.as_tensor(u)
        t.to(torch.float64).cpu()  # already on the host: no transfer
        torch.zeros(3).scatter_(0, torch.ones(1, dtype=torch.long), 1.0)
    assert syncs.total == 0, dict(syncs.by_kind)


def test_call_sites_name_file_and_line() -> None:
    t = torch.arange(3)
    with SyncCounter(record_sites=True) as syncs:
        for _ in range(3):
            int(t[1])  # site: int read
        t.tolist()  # site: tolist
    line_int, line_list = _line_of("site: int read"), _line_of("site: tolist")
    assert syncs.top_sites() == [
        ("scalar", f"{__file__}:{line_int}", 3),
        ("to_host", f"{__file__}:{line_list}", 1),
    ]
    with SyncCounter() as quiet:
        int(t[1])
    assert quiet.total == 1 and quiet.top_sites() == []


def test_nested_counters_both_count_and_restore() -> None:
    from_numpy = torch.from_numpy
    t = torch.arange(3)
    with SyncCounter() as outer:
        int(t[0])
        with SyncCounter() as inner:
            torch.from_numpy(np.zeros(1))
            bool(t.any())
        assert torch.from_numpy is not from_numpy  # the outer patch is still there
        t.tolist()
    assert inner.total == 2 and dict(inner.by_kind) == {"to_device": 1, "scalar": 1}
    assert outer.total == 4
    assert torch.from_numpy is from_numpy
    with SyncCounter() as after:
        pass
    int(t[0])  # outside any counter: nobody counts it
    assert after.total == 0 and outer.total == 4


def test_exception_restores_original_behaviour() -> None:
    from_numpy = torch.from_numpy
    t = torch.arange(3)
    counter = SyncCounter()
    with pytest.raises(ZeroDivisionError), counter:
        torch.from_numpy(np.ones(1))
        int(t[0])
        1 / 0  # noqa: B018
    assert counter.total == 2
    assert torch.from_numpy is from_numpy
    assert not torch.overrides._is_torch_function_mode_enabled()
    int(t[0])
    assert counter.total == 2
    with counter:  # reusable once closed; counts add up
        t.tolist()
    assert counter.total == 3


def test_entering_twice_at_once_is_refused() -> None:
    counter = SyncCounter()
    with counter, pytest.raises(RuntimeError, match="entered twice"):
        counter.__enter__()
    assert not torch.overrides._is_torch_function_mode_enabled()
