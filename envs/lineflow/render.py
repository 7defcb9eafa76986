"""Draw the current state of a LineFlow line as an RGB image, with Pillow only.

What a frame shows, for a :class:`~gymforge.envs.lineflow.simpy_engine.LineSimulation`:

- a header with the line's name, the simulation time (``sim.now``), the parts finished
  (``sim.n_parts``), the scrapped component carriers (``sim.n_scrap``) and a colour legend;
- each station as a box with its name and kind, filled by its mode: green working, yellow
  waiting, red failing, grey when switched off (``station.is_on`` is False, if present); a
  station with ``n_stored`` (a magazine) shows that count in its box;
- each buffer as an arrow from its upstream to its downstream station carrying ``capacity``
  slot squares, of which the ``n_carriers`` nearest the downstream end are filled dark (a fill
  gauge instead when the squares would be smaller than a few pixels); main buffers are grey,
  component buffers blue, return buffers purple;
- the workers of ``sim.pools`` (if present) as small circles above the box of the station
  each is assigned to, one colour per pool; a worker in transit is drawn hollow at the station
  it walks to (its ``target``, if it has one).

The layout (columns, bands, arrows and lanes) is computed once from the ``LineSpec`` by
:mod:`gymforge.envs.lineflow.render_layout`.

Everything static is drawn once into a base image; :meth:`LineRenderer.draw` copies it and
paints only the state, which takes well under a millisecond for a ten-station line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from gymforge.envs.lineflow.render_layout import (
    ARROW,
    HEADER_HEIGHT,
    MARGIN,
    WORKER_RADIUS,
    Box,
    BufferShape,
    Colour,
    Point,
    _Layout,
)
from gymforge.envs.lineflow.spec import LineSpec

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

# --- colours --------------------------------------------------------------------------------
BACKGROUND: Colour = (246, 246, 243)
HEADER_BACKGROUND: Colour = (226, 229, 234)
INK: Colour = (25, 25, 25)
OUTLINE: Colour = (70, 70, 70)
SLOT_EMPTY: Colour = (255, 255, 255)
SLOT_OUTLINE: Colour = (120, 120, 120)
SLOT_FULL: Colour = (45, 45, 60)
MODE_COLOURS: dict[int, Colour] = {
    0: (102, 187, 106),  # working: green
    1: (253, 216, 53),  # waiting: yellow
    2: (229, 83, 83),  # failing: red
}
OFF_COLOUR: Colour = (175, 175, 175)
UNKNOWN_COLOUR: Colour = (176, 196, 222)
POOL_COLOURS: tuple[Colour, ...] = (
    (30, 90, 200),
    (200, 90, 20),
    (120, 40, 160),
    (0, 140, 140),
    (180, 30, 110),
)
KIND_LABELS = {
    "SourceSpec": "source",
    "ProcessSpec": "process",
    "SequentialProcessSpec": "seq. process",
    "AssemblySpec": "assembly",
    "SinkSpec": "sink",
    "SwitchSpec": "switch",
    "MagazineSpec": "magazine",
}

MIN_WIDTH, MIN_HEIGHT = 240, 160
STATUS_WIDTH = 260  # room kept for the time, parts and scrap in the header


# --- fonts and text --------------------------------------------------------------------------
def _load_font(size: int) -> Font:
    """Pillow's bundled font at ``size`` pixels (a fixed-size bitmap font on old Pillow)."""
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError, ImportError):  # Pillow < 10.1 or no FreeType
        return ImageFont.load_default()


def _text_width(font: Font, text: str) -> float:
    left, _, right, _ = font.getbbox(text)
    return right - left


def _fit(text: str, font: Font, width: float) -> str:
    """``text``, shortened with an ellipsis until it fits ``width`` pixels."""
    if _text_width(font, text) <= width:
        return text
    while len(text) > 1 and _text_width(font, text + "…") > width:
        text = text[:-1]
    return text + "…"


def _text_centred(pen: ImageDraw.ImageDraw, xy: Point, text: str, font: Font, fill: Colour) -> None:
    """``text`` centred on ``xy``; bitmap fonts (old Pillow) have no anchors, so use the bbox."""
    try:
        pen.text(xy, text, font=font, fill=fill, anchor="mm")
    except ValueError:
        left, top, right, bottom = font.getbbox(text)
        pen.text(
            (xy[0] - (left + right) / 2, xy[1] - (top + bottom) / 2), text, font=font, fill=fill
        )


def _kind_label(station: Any) -> str:
    name = type(station).__name__
    return KIND_LABELS.get(name, name.removesuffix("Spec").lower())


# --- the renderer ----------------------------------------------------------------------------
def _blit(frame: np.ndarray, patch: np.ndarray, x: int, y: int) -> None:
    """Copy ``patch`` into ``frame`` with its top-left corner at ``(x, y)``, clipped."""
    h, w = frame.shape[:2]
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + patch.shape[1], w), min(y + patch.shape[0], h)
    if x0 < x1 and y0 < y1:
        frame[y0:y1, x0:x1] = patch[y0 - y : y1 - y, x0 - x : x1 - x]


def _text_patch(text: str, font: Font, size: tuple[int, int], background: Colour) -> np.ndarray:
    """``text`` centred on a ``size = (width, height)`` patch of ``background``."""
    image = Image.new("RGB", size, background)
    _text_centred(ImageDraw.Draw(image), (size[0] / 2, size[1] / 2), text, font, INK)
    return np.asarray(image)


def _circle_sprite(colour: Colour, hollow: bool) -> tuple[np.ndarray, np.ndarray]:
    """A worker's circle: its pixels and the mask of the pixels it covers."""
    side = 2 * WORKER_RADIUS + 1
    image = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    ImageDraw.Draw(image).ellipse(
        (0, 0, side - 1, side - 1),
        fill=None if hollow else (*colour, 255),
        outline=(*colour, 255),
        width=2 if hollow else 1,
    )
    rgba = np.asarray(image)
    return np.ascontiguousarray(rgba[..., :3]), rgba[..., 3] > 0


class LineRenderer:
    """Renders a line's current state to an RGB ``uint8`` array of shape ``(height, width, 3)``.

    Args:
        spec: the line; the layout is computed from it once.
        width: image width in pixels (>= 240).
        height: image height in pixels (>= 160).

    Example::

        renderer = LineRenderer(sim.spec)
        frame = renderer.draw(sim)  # after sim.run_until(t)
    """

    def __init__(self, spec: LineSpec, width: int = 960, height: int = 540) -> None:
        if not isinstance(spec, LineSpec):
            raise ValueError(f"spec must be a LineSpec, got {type(spec).__name__}")
        for field_name, value, low in (("width", width, MIN_WIDTH), ("height", height, MIN_HEIGHT)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{field_name} must be an int >= {low}, got {value!r}")
        self.spec = spec
        self.width = width
        self.height = height
        self._layout = _Layout(spec, width, height)
        self._fonts: dict[int, Font] = {}
        self._name_size, self._two_lines = self._station_text_size()
        self._tiles: dict[tuple[str, Colour, bool], np.ndarray] = {}
        self._texts: dict[tuple[str, Colour], np.ndarray] = {}
        self._sprites: dict[tuple[Colour, bool], tuple[np.ndarray, np.ndarray]] = {}
        self._header_x = MARGIN
        self._header_width = 0
        self._base = np.asarray(self._draw_base()).copy()
        self._accepted_spec: LineSpec = spec

    # pickling: keep only the arguments; fonts and images are rebuilt
    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "width": self.width, "height": self.height}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["spec"], state["width"], state["height"])  # type: ignore[misc]

    # --- layout queries ---------------------------------------------------------------------
    def station_box(self, name: str) -> Box:
        """``(x0, y0, x1, y1)`` of station ``name``'s box, in pixels, corners inclusive."""
        if name not in self._layout.boxes:
            raise KeyError(f"no station {name!r}; stations: {list(self._layout.boxes)}")
        return self._layout.boxes[name]

    def station_column(self, name: str) -> int:
        """Column of station ``name`` counted over all bands, 0 leftmost."""
        self.station_box(name)
        return self._layout.column[name]

    def buffer_shape(self, name: str) -> BufferShape:
        """Polyline, slot squares (or gauge) and colour of buffer ``name``."""
        if name not in self._layout.shapes:
            raise KeyError(f"no buffer {name!r}; buffers: {list(self._layout.shapes)}")
        return self._layout.shapes[name]

    @property
    def n_bands(self) -> int:
        """Number of bands (rows of columns) the line wraps into."""
        return self._layout.n_bands

    # --- static parts -----------------------------------------------------------------------
    def _font(self, size: int) -> Font:
        if size not in self._fonts:
            self._fonts[size] = _load_font(size)
        return self._fonts[size]

    def _header_font(self) -> Font:
        return self._font(14 if self.width >= 480 else 11)

    def _station_text_size(self) -> tuple[int, bool]:
        """Font size of station names, and whether a second line (kind or count) fits."""
        h = self._layout.box_h
        two_lines = h >= 32
        size = max(9, min(13, (h - 6) // 2 if two_lines else h - 5))
        return size, two_lines

    def _draw_base(self) -> Image.Image:
        image = Image.new("RGB", (self.width, self.height), BACKGROUND)
        pen = ImageDraw.Draw(image)
        pen.rectangle((0, 0, self.width - 1, HEADER_HEIGHT - 6), fill=HEADER_BACKGROUND)
        font = self._header_font()
        title = _fit(self.spec.name, font, self.width * 0.3)
        pen.text((MARGIN, 5), title, font=font, fill=INK)
        self._header_x = (
            MARGIN + round(_text_width(font, title)) + (20 if self.width >= 480 else 10)
        )
        legend_x = self._draw_legend(pen)
        self._header_width = max(legend_x - 12 - self._header_x, 0)
        for shape in self._layout.shapes.values():
            self._draw_buffer_outline(pen, shape)
        for station in self.spec.stations:
            tile = Image.fromarray(self._tile(station.name, MODE_COLOURS[1], True))
            image.paste(tile, self.station_box(station.name)[:2])
        return image

    def _draw_legend(self, pen: ImageDraw.ImageDraw) -> int:
        """Colour legend at the right of the header, if the status text keeps room for about
        ``t = 1234.5  parts 1234  scrap 123``; returns its left edge."""
        font = self._font(11)
        entries = (("working", MODE_COLOURS[0]), ("waiting", MODE_COLOURS[1]))
        entries += (("failing", MODE_COLOURS[2]), ("off", OFF_COLOUR))
        x = self.width - MARGIN
        needed = sum(round(_text_width(font, label)) + 28 for label, _ in entries)
        if x - needed < self._header_x + STATUS_WIDTH:
            return x
        for label, colour in reversed(entries):
            x -= round(_text_width(font, label)) + 4
            pen.text((x, 8), label, font=font, fill=INK)
            x -= 14
            pen.rectangle((x, 8, x + 10, 18), fill=colour, outline=OUTLINE)
            x -= 10
        return x

    def _draw_buffer_outline(self, pen: ImageDraw.ImageDraw, shape: BufferShape) -> None:
        pen.line(shape.path, fill=shape.colour, width=2, joint="curve")
        (xa, ya), (xb, yb) = shape.path[-2], shape.path[-1]
        angle = math.atan2(yb - ya, xb - xa)
        left = (xb - ARROW * math.cos(angle - 0.45), yb - ARROW * math.sin(angle - 0.45))
        right = (xb - ARROW * math.cos(angle + 0.45), yb - ARROW * math.sin(angle + 0.45))
        pen.polygon((left, (xb, yb), right), fill=shape.colour)
        for box in shape.slots:
            pen.rectangle(box, fill=SLOT_EMPTY, outline=SLOT_OUTLINE)
        if shape.gauge is not None:
            pen.rectangle(shape.gauge, fill=SLOT_EMPTY, outline=SLOT_OUTLINE)

    def _tile(self, name: str, colour: Colour, with_kind: bool) -> np.ndarray:
        """A station's box in ``colour`` with its name (and kind), rendered once and cached."""
        key = (name, colour, with_kind)
        if key in self._tiles:
            return self._tiles[key]
        x0, y0, x1, y1 = self.station_box(name)
        w, h = x1 - x0, y1 - y0
        tile = Image.new("RGB", (w + 1, h + 1), colour)
        pen = ImageDraw.Draw(tile)
        pen.rectangle((0, 0, w, h), outline=OUTLINE)
        size = self._name_size  # shrink a long name down to 9 px before shortening it
        while size > 9 and _text_width(self._font(size), name) > w - 6:
            size -= 1
        label = _fit(name, self._font(size), w - 6)
        name_y = h / 3 if self._two_lines else h / 2
        _text_centred(pen, (w / 2, name_y), label, self._font(size), INK)
        if with_kind and self._two_lines:
            small = self._font(max(9, self._name_size - 2))
            kind = _fit(_kind_label(self.spec.station(name)), small, w - 6)
            _text_centred(pen, (w / 2, 2 * h / 3 + 1), kind, small, (60, 60, 60))
        self._tiles[key] = np.asarray(tile)
        return self._tiles[key]

    # --- the state --------------------------------------------------------------------------
    def draw(self, sim: Any) -> np.ndarray:
        """The current state of ``sim`` (a ``LineSimulation`` of this line) as an RGB array.

        The array is new and writable; drawing never changes ``sim``.
        """
        self._check(sim)
        frame = self._base.copy()
        self._draw_buffers(frame, sim.buffers)
        self._draw_stations(frame, sim.stations)
        self._draw_workers(frame, getattr(sim, "pools", None))
        self._draw_header(frame, sim)
        return frame

    def _check(self, sim: Any) -> None:
        spec = getattr(sim, "spec", None)
        if spec is self._accepted_spec:
            return
        if spec != self.spec:
            raise ValueError(
                f"sim.spec must be the line this renderer was built for ({self.spec.name!r}), "
                f"got {getattr(spec, 'name', spec)!r}"
            )
        self._accepted_spec = spec

    def _draw_header(self, frame: np.ndarray, sim: Any) -> None:
        if self._header_width <= 0:
            return
        text = f"t = {float(sim.now):.1f}     parts {sim.n_parts}     scrap {sim.n_scrap}"
        strip = Image.new("RGB", (self._header_width, HEADER_HEIGHT - 8), HEADER_BACKGROUND)
        ImageDraw.Draw(strip).text((0, 5), text, font=self._header_font(), fill=INK)
        _blit(frame, np.asarray(strip), self._header_x, 0)

    def _draw_buffers(self, frame: np.ndarray, buffers: Mapping[str, Any]) -> None:
        for name, buffer in buffers.items():
            shape = self._layout.shapes.get(name)
            if shape is None:
                continue
            capacity = max(int(buffer.capacity), 1)
            n = min(max(int(buffer.n_carriers), 0), capacity)
            if shape.gauge is not None:
                x0, y0, x1, y1 = shape.gauge
                filled = round((x1 - x0 - 1) * n / capacity)
                frame[y0 + 1 : y1, x0 + 1 : x0 + 1 + filled] = SLOT_FULL
                continue
            for x0, y0, x1, y1 in shape.slots[len(shape.slots) - n :]:
                frame[max(y0, 0) : y1 + 1, max(x0, 0) : x1 + 1] = SLOT_FULL

    def _station_colour(self, station: Any) -> Colour:
        if getattr(station, "is_on", True) is False:
            return OFF_COLOUR
        return MODE_COLOURS.get(getattr(station, "mode", -1), UNKNOWN_COLOUR)

    def _draw_stations(self, frame: np.ndarray, stations: Mapping[str, Any]) -> None:
        for name, station in stations.items():
            if name not in self._layout.boxes:
                continue
            stored = getattr(station, "n_stored", None)
            colour = self._station_colour(station)
            x0, y0, _, _ = self._layout.boxes[name]
            _blit(frame, self._tile(name, colour, stored is None), x0, y0)
            if stored is not None:
                self._draw_stored(frame, self._layout.boxes[name], stored, colour)

    def _draw_stored(self, frame: np.ndarray, box: Box, stored: Any, colour: Colour) -> None:
        """A magazine's stored count on the lower line of its box (or its right end)."""
        x0, y0, x1, y1 = box
        text = f"stored {stored}" if self._two_lines else str(stored)
        key = (text, colour)
        if key not in self._texts:
            if len(self._texts) > 1024:
                self._texts.clear()
            font = self._font(max(9, self._name_size - 1))
            width = min(round(_text_width(font, text)) + 4, x1 - x0 - 2)
            self._texts[key] = _text_patch(text, font, (max(width, 1), 12), colour)
        patch = self._texts[key]
        if self._two_lines:
            x, y = (x0 + x1 - patch.shape[1]) // 2, round(y0 + 2 * (y1 - y0) / 3 + 1 - 6)
        else:
            x, y = x1 - patch.shape[1] - 1, y1 - patch.shape[0] - 1
        _blit(frame, patch, x, y)

    def _sprite(self, colour: Colour, hollow: bool) -> tuple[np.ndarray, np.ndarray]:
        if (colour, hollow) not in self._sprites:
            self._sprites[colour, hollow] = _circle_sprite(colour, hollow)
        return self._sprites[colour, hollow]

    def _draw_workers(self, frame: np.ndarray, pools: Mapping[str, Any] | None) -> None:
        """Each worker as a circle above its station's box, hollow while in transit."""
        if not pools:
            return
        placed: dict[str, int] = {}
        step = 2 * WORKER_RADIUS + 2
        for p, pool in enumerate(pools.values()):
            colour = POOL_COLOURS[p % len(POOL_COLOURS)]
            names = list(getattr(pool, "stations", ()))
            for worker in getattr(pool, "workers", ()):
                hollow = bool(getattr(worker, "in_transit", False))
                # a walking worker is drawn at its destination (``target``) when it has one
                index = getattr(worker, "target" if hollow else "station", None)
                if index is None:
                    index = getattr(worker, "station", None)
                if not isinstance(index, (int, np.integer)) or not 0 <= index < len(names):
                    continue
                box = self._layout.boxes.get(names[index])
                if box is None:
                    continue
                k = placed.get(names[index], 0)
                placed[names[index]] = k + 1
                per_row = max(1, (box[2] - box[0]) // step)
                x = box[0] + 1 + (k % per_row) * step
                y = box[1] - 2 * WORKER_RADIUS - 3 - (k // per_row) * step
                pixels, mask = self._sprite(colour, hollow)
                if x >= 0 and y >= 0 and x + mask.shape[1] <= self.width:
                    frame[y : y + mask.shape[0], x : x + mask.shape[1]][mask] = pixels[mask]
