"""Count, on any device, the calls that would synchronise the host with a CUDA device.

On a GPU every device→host synchronisation stalls the pipeline, but ``torch.cuda`` can only
report them on a GPU. :class:`SyncCounter` sees them on the CPU too: a
``torch.overrides.TorchFunctionMode`` watches every Tensor method and torch function called
inside the ``with`` block and classifies the ones that synchronise on CUDA (what each kind
means is in :data:`KINDS`). ``torch.from_numpy`` is the one listed call the mode cannot see
(in torch 2.13); it is patched for the block and restored on exit, exceptions included.

What the CPU cannot tell: whether a tensor would live on the device. Every scalar read
(``bool(t)``, ``t.item()``…) and every tensor built from Python or numpy data is counted, also
where the code keeps that tensor on the host on purpose; the call sites
(``record_sites=True``) show where each count comes from. A copy of a host tensor to the device
(``t.to(device)``) is a no-op on a CPU run and is counted only where it really moves data.

Example::

    with SyncCounter(record_sites=True) as syncs:
        env.step(action)
    syncs.total, syncs.by_kind, syncs.top_sites(5)
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

#: kind → what synchronises on CUDA
KINDS: dict[str, str] = {
    "scalar": "a Python value read from a tensor: bool(t), int(t), float(t), t.item(), index use",
    "to_host": "a copy to the host: t.tolist(), t.numpy(), np.asarray(t), t.cpu() of a device tensor",
    "to_device": "a copy of host data to the device: torch.tensor/as_tensor/from_numpy of "
    "Python or numpy data, host indices or values in t[...], t.to(device) of a host tensor",
    "dynamic_shape": "an output whose size depends on the values: nonzero, argwhere, where(c), "
    "unique, bincount, masked_select, repeat_interleave with tensor repeats",
    "mask_index": "boolean-mask indexing t[mask] or assignment t[mask] = v (a nonzero inside)",
    "compare": "a comparison answered on the host: torch.equal, torch.allclose",
}

_SCALAR_READS = {"__bool__", "__int__", "__float__", "__complex__", "__index__", "item"}
_SCALAR_READS |= {"is_nonzero", "__format__", "__contains__"}
_HOST_COPIES = {"tolist", "numpy", "__array__"}
# bincount reads the input's minimum and maximum on CUDA, with or without minlength (one call
# is counted once, like every other kind: the counts are of calls, not of driver syncs).
_DYNAMIC_SHAPES = {"nonzero", "argwhere", "unique", "unique_consecutive", "bincount"}
_DYNAMIC_SHAPES |= {"masked_select"}
_COMPARES = {"equal", "allclose"}
_BUILDERS = {"tensor", "as_tensor", "asarray"}
# Frames skipped when naming a call site: torch, numpy (as folders) and this module.
_PACKAGE_DIRS = (*(str(Path(m.__file__).parent) + os.sep for m in (torch, np)), __file__)


def _is_host_data(value: Any) -> bool:
    """Python or numpy data that a tensor would be built from (not a tensor, not a slice)."""
    return isinstance(value, (list, tuple, np.ndarray, np.generic, int, float, bool, complex))


def _is_mask(index: Any) -> bool:
    if isinstance(index, torch.Tensor):
        return index.dtype in (torch.bool, torch.uint8)
    if isinstance(index, np.ndarray):
        return index.dtype == np.bool_
    return False


def _index_kind(index: Any) -> str | None:
    """The sync kind of ``t[index]``: a boolean mask, or host data used as indices."""
    parts = index if isinstance(index, tuple) else (index,)
    if any(_is_mask(part) for part in parts):
        return "mask_index"
    if any(isinstance(part, (list, np.ndarray)) for part in parts):
        return "to_device"
    return None


def _device_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.device | None:
    """The target device of ``Tensor.to(...)`` (``None`` when only the dtype changes)."""
    for value in (*args, kwargs.get("device")):
        if isinstance(value, (str, torch.device)):
            return torch.device(value)
        if isinstance(value, torch.Tensor):
            return value.device
    return None


def _transfer_kind(source: torch.device, target: torch.device | None) -> str | None:
    if target is None or source.type == target.type:
        return None
    return "to_host" if target.type == "cpu" else "to_device"


def sync_kind(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The kind (a key of :data:`KINDS`) of the call ``name(*args, **kwargs)``, or ``None``
    when it does not synchronise on CUDA."""
    if name in _SCALAR_READS:
        return "scalar"
    if name in _HOST_COPIES:
        return "to_host"
    if name in _DYNAMIC_SHAPES:
        return "dynamic_shape"
    if name in _COMPARES:
        return "compare"
    if name == "where":
        return "dynamic_shape" if len(args) + len(kwargs) == 1 else None
    if name == "repeat_interleave":
        repeats = args[1] if len(args) > 1 else kwargs.get("repeats")
        sized = kwargs.get("output_size") is not None
        return "dynamic_shape" if isinstance(repeats, torch.Tensor) and not sized else None
    if name in _BUILDERS:
        data = args[0] if args else kwargs.get("data", kwargs.get("obj"))
        return "to_device" if _is_host_data(data) else None
    if name in ("__getitem__", "__setitem__") and len(args) >= 2:
        kind = _index_kind(args[1])
        if kind is None and name == "__setitem__" and len(args) >= 3:
            kind = "to_device" if isinstance(args[2], (list, tuple, np.ndarray)) else None
        return kind
    source = args[0] if args and isinstance(args[0], torch.Tensor) else None
    if source is None:
        return None
    if name == "cpu":
        return _transfer_kind(source.device, torch.device("cpu"))
    if name in ("to", "cuda"):
        target = torch.device("cuda") if name == "cuda" else _device_of(args[1:], kwargs)
        return _transfer_kind(source.device, target)
    if name == "copy_" and len(args) >= 2 and isinstance(args[1], torch.Tensor):
        return _transfer_kind(args[1].device, source.device)
    return None


def _caller_site() -> str:
    """``file:line`` of the innermost frame outside torch, numpy and this module."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIRS):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class _SyncMode(TorchFunctionMode):
    def __init__(self, record: Callable[[str], None]) -> None:
        super().__init__()
        self._record = record

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        kind = sync_kind(getattr(func, "__name__", ""), args, kwargs)
        if kind is not None:
            self._record(kind)
        return func(*args, **kwargs)


class SyncCounter:
    """Context manager counting the calls inside it that synchronise on CUDA, by kind.

    Args:
        record_sites: also count, per kind, the ``file:line`` of the code that made each call
            (the innermost frame outside torch and numpy); see :meth:`top_sites`.

    Counters nest (an inner block's calls count in the outer one too) and everything they
    change is restored on exit, also when the block raises.
    """

    def __init__(self, record_sites: bool = False) -> None:
        self.record_sites = record_sites
        self.by_kind: Counter[str] = Counter()
        self.sites: Counter[tuple[str, str]] = Counter()
        self._mode: _SyncMode | None = None
        self._from_numpy: Callable[..., torch.Tensor] | None = None

    @property
    def total(self) -> int:
        """All counted calls."""
        return sum(self.by_kind.values())

    def top_sites(self, n: int = 10) -> list[tuple[str, str, int]]:
        """The ``n`` most frequent ``(kind, file:line, count)`` (needs ``record_sites=True``)."""
        return [(kind, site, count) for (kind, site), count in self.sites.most_common(n)]

    def record(self, kind: str) -> None:
        """Count one call of ``kind`` (called by the torch function mode and the patches)."""
        self.by_kind[kind] += 1
        if self.record_sites:
            self.sites[kind, _caller_site()] += 1

    def __enter__(self) -> SyncCounter:
        if self._mode is not None:
            raise RuntimeError("a SyncCounter cannot be entered twice at once")
        original = torch.from_numpy

        def counted_from_numpy(array: np.ndarray) -> torch.Tensor:
            self.record("to_device")
            return original(array)

        self._from_numpy = original
        torch.from_numpy = counted_from_numpy
        self._mode = _SyncMode(self.record)
        try:
            self._mode.__enter__()
        except BaseException:
            torch.from_numpy = original
            self._mode = self._from_numpy = None
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        mode, original = self._mode, self._from_numpy
        self._mode = self._from_numpy = None
        try:
            if mode is not None:
                mode.__exit__(exc_type, exc, traceback)
        finally:
            if original is not None:
                torch.from_numpy = original
