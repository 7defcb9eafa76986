"""Optional dependencies: import one, or fail with a message that names the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

#: the package extra that brings each optional top-level module
EXTRAS = {
    "matplotlib": "plot",
    "pandas": "history",
    "networkx": "graphs",
    "torchrl": "torchrl",
    "minari": "offline",
}


def require(module: str, purpose: str) -> ModuleType:
    """Import ``module`` (e.g. ``"matplotlib.pyplot"``); when it is missing, raise an
    ``ImportError`` saying that ``purpose`` needs it and which extra installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        top = module.split(".")[0]
        if error.name is None or error.name.split(".")[0] != top:
            raise
        extra = EXTRAS.get(top)
        hint = f"pip install 'gymforge[{extra}]'" if extra else f"pip install {top}"
        raise ImportError(f"{purpose} needs {top}, which is not installed: {hint}") from error
