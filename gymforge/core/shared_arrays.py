"""``ArrayChannel``: messages of numpy arrays between two processes, big arrays through shared
memory.

A :class:`~gymforge.core.sharded.ShardedVectorEnv` sends every step's actions to its workers and
gets their observations back. Through a pipe, a (2048, 70) float32 observation batch is pickled,
copied into the kernel and out again: about a millisecond a round trip on the 2-core development
machine, a tenth of a LineFlow step of that size. Here each array of at least ``MIN_SHARED_BYTES``
in a message (nested tuples, lists and dicts) is written into a shared-memory file of the sender
(one per position in the message, reused while it is large enough) and only its name, shape and
dtype go through the pipe; the receiver maps the file once and copies the array out.

Reuse is safe because the two sides take turns (request, reply): a sender writes a file again
only for its next message, which the receiver asks for after it has copied the last one out.
The receiver unlinks a file as soon as it has mapped it, so nothing is left in ``/dev/shm`` even
if both processes die; the sender unlinks what is left when it closes.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

MIN_SHARED_BYTES = 16 * 1024  # smaller arrays are pickled (a shared file would not pay)
_SHARED_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None  # (None: the temp folder)


@dataclass(frozen=True)
class _SharedArray:
    """What goes through the pipe in place of a big array: the ``position``-th big array of its
    message, in the sender's file ``path``."""

    position: int
    path: str
    shape: tuple[int, ...]
    dtype: str


class _Mapping:
    """A shared file mapped into this process: a new one (``size`` bytes) or the other side's
    (``path``)."""

    def __init__(self, size: int | None = None, path: str | None = None) -> None:
        created = path is None
        if created:
            descriptor, path = tempfile.mkstemp(prefix="gymforge-", dir=_SHARED_DIR)
        else:
            descriptor = os.open(path, os.O_RDWR)
        try:
            if size is None:
                size = os.fstat(descriptor).st_size
            else:
                os.ftruncate(descriptor, size)
            self.memory = mmap.mmap(descriptor, size)
        except BaseException:
            if created:  # (e.g. /dev/shm full: no half-made file is left behind)
                os.unlink(path)
            raise
        finally:
            os.close(descriptor)
        self.path, self.size = path, size

    def view(self, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        return np.ndarray(shape, dtype=dtype, buffer=self.memory)

    def close(self) -> None:
        with contextlib.suppress(BufferError):  # (a view still alive: the OS frees it at exit)
            self.memory.close()


class ArrayChannel:
    """``send``/``recv`` of nested tuples, lists and dicts over ``connection``, with big numpy
    arrays through shared memory (see the module docstring). Both ends wrap their end of the
    same pipe in one; ``close`` frees the shared files."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._outgoing: list[_Mapping] = []  # this side's files, by position in a message
        self._incoming: dict[int, _Mapping] = {}  # the other side's files, by position

    def send(self, message: Any) -> None:
        self.connection.send(self._encode(message))

    def recv(self, copy: bool = True) -> Any:
        """The next message. ``copy=False``: its big arrays are views of the shared files, valid
        only until this side sends again (for a caller that copies them out at once)."""
        return self._decode(self.connection.recv(), copy)

    def close(self) -> None:
        for mapping in self._outgoing:
            _release(mapping)
        for mapping in self._incoming.values():
            mapping.close()
        self._outgoing, self._incoming = [], {}

    def _encode(self, message: Any) -> Any:
        """``message`` with its big arrays written to this side's files, the ``k``-th big
        array to the ``k``-th file."""
        count = 0

        def share(value: Any) -> Any:
            nonlocal count
            if not (isinstance(value, np.ndarray) and value.nbytes >= MIN_SHARED_BYTES):
                return value
            mapping = self._outgoing_file(count, value.nbytes)
            mapping.view(value.shape, value.dtype)[...] = value
            count += 1
            return _SharedArray(count - 1, mapping.path, value.shape, value.dtype.str)

        return map_nested(message, share)

    def _outgoing_file(self, position: int, size: int) -> _Mapping:
        """This side's file for the ``position``-th big array of a message, at least ``size``
        bytes (a new one, and a new name, when the old one is too small)."""
        if position < len(self._outgoing) and self._outgoing[position].size >= size:
            return self._outgoing[position]
        mapping = _Mapping(size=size)
        if position < len(self._outgoing):
            _release(self._outgoing[position])
            self._outgoing[position] = mapping
        else:
            self._outgoing.append(mapping)
        return mapping

    def _decode(self, message: Any, copy: bool) -> Any:
        """``message`` with its big arrays read from the other side's files."""

        def read(value: Any) -> Any:
            if not isinstance(value, _SharedArray):
                return value
            mapping = self._incoming.get(value.position)
            if mapping is None or mapping.path != value.path:  # (new, or replaced by a larger)
                if mapping is not None:
                    mapping.close()
                mapping = self._incoming[value.position] = _Mapping(path=value.path)
                os.unlink(value.path)  # (mapped on both sides: the name is no longer needed)
            view = mapping.view(value.shape, np.dtype(value.dtype))
            return view.copy() if copy else view

        return map_nested(message, read)


def map_nested(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """``value`` with ``leaf`` applied to everything that is not a tuple, list or dict inside
    it (the containers rebuilt, of the same kinds)."""
    if isinstance(value, tuple):
        return tuple(map_nested(v, leaf) for v in value)
    if isinstance(value, list):
        return [map_nested(v, leaf) for v in value]
    if isinstance(value, dict):
        return {k: map_nested(v, leaf) for k, v in value.items()}
    return leaf(value)


def _release(mapping: _Mapping) -> None:
    """Unmap one of this side's files and remove its name, if the receiver has not."""
    mapping.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(mapping.path)
