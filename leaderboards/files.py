"""File helpers of the leaderboards: hashes, canonical JSON, and writes that never half-happen.

Every file the leaderboard writes goes through :func:`write_bytes_atomic` (a temporary file in
the same folder, flushed, then renamed over the target), and a submission folder is assembled
in a temporary sibling folder and renamed into place in one step (:func:`publish_folder`), so an
interrupted command leaves either the old state or the new one on disk, never a mix.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

#: prefix of the temporary files and folders of an unfinished write (ignored by every reader).
TEMP_PREFIX = ".tmp-"


def canonical_json(value: Any) -> bytes:
    """``value`` as JSON with sorted keys and no whitespace: the bytes that hashes are taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON with a final newline (the on-disk form of every JSON file)."""
    return json.dumps(value, indent=2, sort_keys=False, allow_nan=False) + "\n"


def read_json(path: Path, what: str) -> Any:
    """Parse the JSON file ``path``; a missing or malformed file raises ``ValueError`` naming ``what``."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{what}: file not found: {path}")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{what}: {path} is not valid JSON ({error})") from error


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary sibling file and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, value: Any) -> None:
    """Write ``value`` as pretty JSON to ``path`` atomically."""
    write_bytes_atomic(path, pretty_json(value).encode())


def new_staging_folder(parent: Path) -> Path:
    """A fresh temporary folder inside ``parent`` to assemble a folder in before publishing it."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=parent))


def publish_folder(staging: Path, target: Path) -> None:
    """Rename the finished ``staging`` folder to ``target`` (which must not exist) in one step."""
    if target.exists():
        shutil.rmtree(staging, ignore_errors=True)
        raise ValueError(f"{target} already exists; choose another submission name")
    os.rename(staging, target)


def is_temporary(path: Path) -> bool:
    """True for the leftovers of an unfinished write (names starting with ``.tmp-``)."""
    return path.name.startswith(TEMP_PREFIX)
