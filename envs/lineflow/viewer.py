"""``HumanViewer``: shows rendered frames in a matplotlib window (``render_mode="human"``)."""

from __future__ import annotations

from typing import Any

import numpy as np


class HumanViewer:
    """A matplotlib figure updated in place; needs an interactive backend (a display)."""

    def __init__(self, title: str) -> None:
        import matplotlib.pyplot as plt

        self._plt = plt
        self._figure = plt.figure(title)
        self._image: Any = None

    def show(self, frame: np.ndarray) -> None:
        if self._image is None:
            axes = self._figure.add_axes((0, 0, 1, 1))
            axes.axis("off")
            self._image = axes.imshow(frame)
        else:
            self._image.set_data(frame)
        self._figure.canvas.draw_idle()
        self._plt.pause(0.001)

    def close(self) -> None:
        self._plt.close(self._figure)
