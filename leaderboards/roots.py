"""Where the boards live: the board root of a command and the protocols it reads.

The protocols (and the stored reference models under ``gymforge.baselines``) ship inside the
package, read through :mod:`importlib.resources`, so an installed wheel evaluates without a
source checkout. The board root, where submissions and renders are written, is chosen in order:

1. ``$GYMFORGE_LEADERBOARDS`` when set;
2. the ``leaderboards/`` folder of a source checkout (the package imported from one);
3. ``./leaderboards`` in the working directory (created by the first write).

A root with its own ``protocols/`` folder uses it; one without falls back to the packaged
protocols, so a user's own board root needs no copy of them.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

#: environment variable naming the board root.
ROOT_VARIABLE = "GYMFORGE_LEADERBOARDS"
PROTOCOLS_DIR = "protocols"
_PACKAGE_DIR = Path(__file__).resolve().parent


def checkout_root() -> Path | None:
    """The ``leaderboards/`` folder of the source checkout gymforge runs from, if it does."""
    if (_PACKAGE_DIR.parent / "pyproject.toml").is_file() and (
        _PACKAGE_DIR / PROTOCOLS_DIR
    ).is_dir():
        return _PACKAGE_DIR
    return None


def default_root() -> Path:
    """The board root commands use when no ``--root`` is given (see the module docstring)."""
    named = os.environ.get(ROOT_VARIABLE)
    if named:
        return Path(named).expanduser()
    return checkout_root() or Path.cwd() / "leaderboards"


def packaged_protocols() -> Path:
    """The protocols folder shipped inside the package."""
    folder = resources.files("gymforge.leaderboards") / PROTOCOLS_DIR
    path = Path(str(folder))
    if not path.is_dir():
        raise ValueError(
            f"the installed gymforge has no packaged protocols at {path}; reinstall the package"
        )
    return path


def protocols_dir(root: Path) -> Path:
    """The protocols a board root uses: its own ``protocols/`` or else the packaged ones."""
    own = Path(root) / PROTOCOLS_DIR
    return own if own.is_dir() else packaged_protocols()
