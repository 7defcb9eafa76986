"""Where Minari datasets live: the ``minari:NAME`` spelling and the datasets folder to use.

Minari keeps its datasets under one folder, ``MINARI_DATASETS_PATH`` (else its own default).
gymforge's collectors and readers take an optional ``root`` for that folder; :func:`minari_root`
points Minari at it for the duration of a block. Wherever gymforge expects a dataset path, the
spelling ``minari:NAME`` names the Minari dataset ``NAME`` instead.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

#: prefix of a Minari dataset id where a dataset path is expected
PREFIX = "minari:"


def is_minari_name(path: object) -> bool:
    """True when ``path`` is spelt ``minari:NAME``."""
    return isinstance(path, str) and path.startswith(PREFIX)


@contextlib.contextmanager
def minari_root(root: str | Path | None) -> Iterator[None]:
    """Point Minari at the datasets folder ``root`` for the block (None: Minari's default)."""
    if root is None:
        yield
        return
    previous = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(Path(root).resolve())
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = previous
