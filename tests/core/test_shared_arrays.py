"""ArrayChannel: big arrays through shared memory files, the rest pickled, nothing left behind."""

from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pytest

from gymforge.core import shared_arrays
from gymforge.core.shared_arrays import MIN_SHARED_BYTES, ArrayChannel, _SharedArray


def _channels() -> tuple[ArrayChannel, ArrayChannel]:
    a, b = multiprocessing.Pipe()
    return ArrayChannel(a), ArrayChannel(b)


def _big(seed: int, rows: int = 512) -> np.ndarray:
    return np.random.default_rng(seed).random((rows, 9)).astype(np.float32)  # 18 KiB


def test_nested_messages_arrive_equal_and_only_big_arrays_are_shared():
    sender, receiver = _channels()
    big, small = _big(0), np.arange(5)
    assert big.nbytes >= MIN_SHARED_BYTES > small.nbytes
    message = ("step", [big, small], {"x": big.astype(np.float64), "n": 3})
    encoded = sender._encode(message)
    assert isinstance(encoded[1][0], _SharedArray) and encoded[1][1] is small
    assert isinstance(encoded[2]["x"], _SharedArray) and encoded[2]["n"] == 3
    sender.send(message)
    kind, (got_big, got_small), rest = receiver.recv()
    assert kind == "step" and rest["n"] == 3
    np.testing.assert_array_equal(got_big, big)
    assert got_big.dtype == np.float32 and rest["x"].dtype == np.float64
    np.testing.assert_array_equal(rest["x"], big.astype(np.float64))
    np.testing.assert_array_equal(got_small, small)
    sender.close()
    receiver.close()


def test_files_are_reused_replaced_when_too_small_and_never_left_behind():
    sender, receiver = _channels()
    sender.send(_big(1))
    first = receiver.recv()
    path = sender._outgoing[0].path
    assert not os.path.exists(path)  # the receiver unlinked the name once it had mapped it
    sender.send(_big(2))
    second = receiver.recv()
    assert sender._outgoing[0].path == path  # the same file, written again
    np.testing.assert_array_equal(first, _big(1))  # (a copy: the second write left it alone)
    np.testing.assert_array_equal(second, _big(2))
    sender.send(_big(3, rows=2048))  # larger: a new file
    np.testing.assert_array_equal(receiver.recv(), _big(3, rows=2048))
    assert sender._outgoing[0].path != path
    sender.send(np.zeros(2))  # (a small array: the pipe)
    np.testing.assert_array_equal(receiver.recv(), np.zeros(2))
    paths = [m.path for m in sender._outgoing]
    sender.close()
    receiver.close()
    assert not any(os.path.exists(p) for p in paths)


def test_a_file_the_receiver_never_mapped_is_removed_by_the_sender():
    sender, receiver = _channels()
    sender.send(_big(4))  # (never received)
    path = sender._outgoing[0].path
    assert os.path.exists(path)
    sender.close()
    receiver.close()
    assert not os.path.exists(path)


def test_a_file_that_cannot_be_sized_is_removed_and_the_error_raised(monkeypatch, tmp_path):
    monkeypatch.setattr(shared_arrays, "_SHARED_DIR", str(tmp_path))

    def no_space(descriptor: int, size: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shared_arrays.os, "ftruncate", no_space)
    sender, receiver = _channels()
    with pytest.raises(OSError, match="No space left"):
        sender.send(_big(5))
    assert list(tmp_path.iterdir()) == []  # (the half-made file is gone)
    assert sender._outgoing == []
    sender.close()
    receiver.close()
