"""The ``options`` of a ``reset``, checked in one place for every env (torch-free, so the SimPy
LineFlow engine uses it too)."""

from __future__ import annotations

from typing import Any


def check_reset_options(options: Any) -> dict[str, Any] | None:
    """``options`` of a ``reset`` as a dict or None, else a ``ValueError`` naming ``options``.

    A list or tuple of empty dicts (SB3's ``VecEnv`` passes one per instance) is None; any other
    value (``options=5``, a list of non-empty dicts) is refused before anything is reset, rather
    than silently ignored.
    """
    if options is None or isinstance(options, dict):
        return options
    if isinstance(options, list | tuple) and all(
        item is None or (isinstance(item, dict) and not item) for item in options
    ):
        return None
    raise ValueError(
        f"options must be a dict or None, got {type(options).__name__} {options!r}"[:300]
    )
