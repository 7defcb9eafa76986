"""``HumanViewer``: shows rendered frames in a matplotlib window (``render_mode="human"``).

Without a display (or with a non-interactive matplotlib backend) it warns once and does nothing,
so ``render_mode="human"`` never crashes a headless training run.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

import numpy as np

from gymforge.core.extras import require

NON_INTERACTIVE_BACKENDS = frozenset({"agg", "pdf", "ps", "svg", "cairo", "pgf", "template"})


def has_display() -> bool:
    """Whether a window can be shown: macOS, Windows, or an X11 / Wayland display."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class HumanViewer:
    """Shows frames in a matplotlib window; without a display it warns once and does nothing.

    Args:
        fps: frames per second to pace :meth:`show` at.
    """

    def __init__(self, fps: float = 20.0) -> None:
        self.fps = fps
        self._figure: Any = None
        self._image: Any = None
        self._disabled = False

    def show(self, frame: np.ndarray) -> None:
        """Display ``frame`` (an RGB array), opening the window on first use."""
        if self._disabled:
            return
        if self._image is None and not self._open(frame):
            return
        import matplotlib.pyplot as plt

        self._image.set_data(frame)
        self._figure.canvas.draw_idle()
        plt.pause(1.0 / self.fps)

    def _open(self, frame: np.ndarray) -> bool:
        if has_display():
            matplotlib = require("matplotlib", "render_mode='human'")
            import matplotlib.pyplot as plt

            if matplotlib.get_backend().lower() not in NON_INTERACTIVE_BACKENDS:
                plt.ion()
                height, width = frame.shape[:2]
                self._figure = plt.figure(figsize=(width / 100, height / 100), dpi=100)
                axes = self._figure.add_axes((0, 0, 1, 1))
                axes.set_axis_off()
                self._image = axes.imshow(frame)
                return True
        warnings.warn(
            "render_mode='human' needs a display (and an interactive matplotlib backend); "
            "frames are not shown. Use render_mode='rgb_array' to get the frames.",
            RuntimeWarning,
            stacklevel=3,
        )
        self._disabled = True
        return False

    def close(self) -> None:
        """Close the window, if one is open."""
        if self._figure is not None:
            import matplotlib.pyplot as plt

            plt.close(self._figure)
            self._figure = self._image = None
