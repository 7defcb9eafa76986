"""Device strings checked once, with one clear line, before any tensor is allocated."""

from __future__ import annotations

import torch

#: device types gymforge runs on: the CPU, CUDA GPUs and Apple's MPS.
DEVICE_TYPES = ("cpu", "cuda", "mps")


def available_devices() -> list[str]:
    """The devices this torch build can use here, e.g. ``["cpu", "cuda:0"]``."""
    found = ["cpu"]
    if torch.cuda.is_available():
        found += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if torch.backends.mps.is_available():
        found.append("mps")
    return found


def check_device(device: object, field: str = "device") -> torch.device:
    """``device`` as a ``torch.device`` usable here, or a ``ValueError`` naming ``field``."""
    allowed = f"allowed here: {', '.join(available_devices())}"
    try:
        parsed = torch.device(device)  # type: ignore[arg-type]
    except (RuntimeError, TypeError):
        raise ValueError(
            f"{field} must be one of {DEVICE_TYPES} (e.g. 'cuda:0'), got {device!r}; {allowed}"
        ) from None
    if parsed.type not in DEVICE_TYPES:
        raise ValueError(
            f"{field} must be one of {DEVICE_TYPES} (e.g. 'cuda:0'), got {device!r}; {allowed}"
        )
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"{field} {device!r}: this torch build (torch {torch.__version__}) has no usable "
                f"CUDA device; {allowed}"
            )
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise ValueError(
                f"{field} {device!r}: there is no CUDA device {parsed.index}; {allowed}"
            )
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"{field} {device!r}: MPS is not available on this machine; {allowed}")
    return parsed
