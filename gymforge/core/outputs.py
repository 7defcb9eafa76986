"""Output folders checked writable before any work starts, so no result is lost at the end."""

from __future__ import annotations

import tempfile
from pathlib import Path


def check_writable(folder: Path | str, field: str) -> Path:
    """Raise ``ValueError`` naming ``field`` unless files can be created in ``folder``.

    A folder that does not exist yet must be creatable: its nearest existing ancestor must be a
    writable folder. Nothing is left behind (the probe is a temporary file, removed at once).
    """
    folder = Path(folder)
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"{field}: {existing} is not a folder, so {folder} cannot be written")
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".write-probe-"):
            pass
    except OSError as error:
        raise ValueError(
            f"{field}: cannot write in {existing} ({error.strerror or error}); choose a writable folder"
        ) from None
    return folder
