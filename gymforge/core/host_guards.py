"""Guards: host reads that let an engine skip work, and a switch that turns them off.

A batched engine often asks the device a yes/no question to take a cheaper path: is every
instance still running (then skip the masking), is every value finite (then skip the repair)?
On a CPU the answer is nearly free and the skipped work is not; on a GPU each question is a host
synchronisation that drains the device's queue. The questions are only shortcuts: the path
taken without them gives the same bits (each engine's golden tests check it).

Engine code asks :func:`guards_enabled` before such a read; a vector env turns the guards off
around its work with :func:`host_guards` (on CUDA by default). The setting is a context
variable, so it holds for the code a step calls and for nothing else.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

import torch

_ENABLED: contextvars.ContextVar[bool] = contextvars.ContextVar("gymforge_guards", default=True)


def guards_enabled() -> bool:
    """Whether engine code may read the device to pick a cheaper path (default True)."""
    return _ENABLED.get()


@contextmanager
def host_guards(enabled: bool) -> Iterator[None]:
    """Within the block, :func:`guards_enabled` answers ``enabled``."""
    token = _ENABLED.set(enabled)
    try:
        yield
    finally:
        _ENABLED.reset(token)


def default_guards(device: torch.device, guards: bool | None) -> bool:
    """``guards`` when given, else on for every device but CUDA (where a read is a sync)."""
    if guards is None:
        return device.type != "cuda"
    if not isinstance(guards, bool):
        raise TypeError(f"guards must be True, False or None, got {guards!r}")
    return guards
