"""The layout of a LineFlow line's picture, computed once from its LineSpec.

A station's column is its longest-path depth from the stations without inputs along the
buffers, ignoring ``"return"`` buffers and back edges (found by a depth-first search from
the sources and magazines); a station without inputs moves right to sit just before its first
consumer. Stations are spread vertically within their column, ordered to follow their
neighbours; columns that do not fit side by side wrap into bands. Buffers between neighbouring
columns of one band are straight arrows; the others run through a lane below the band's boxes.
Sizes are in pixels.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from gymforge.envs.lineflow.spec import BufferSpec, LineSpec

Box = tuple[int, int, int, int]
Point = tuple[float, float]
Colour = tuple[int, int, int]
BUFFER_COLOURS: dict[str, Colour] = {
    "main": (110, 110, 110),
    "component": (66, 133, 200),
    "return": (150, 95, 170),
}


# --- sizes (pixels) -------------------------------------------------------------------------
HEADER_HEIGHT = 30
MARGIN = 14
MIN_COLUMN_WIDTH = 110
LANE_GAP = 11
MAX_LANES = 5
SLOT_PITCH = 13
SLOT_SIZE = 9
MIN_SLOT_PITCH = 5
ARROW = 7
WORKER_RADIUS = 4


# --- layout: columns -------------------------------------------------------------------------
def _forward_edges(spec: LineSpec) -> list[tuple[str, str]]:
    """Station pairs joined by a buffer that is not a ``"return"`` buffer."""
    return [(b.upstream, b.downstream) for b in spec.buffers if b.kind != "return"]


def _dfs_roots(spec: LineSpec) -> list[str]:
    """Sources and magazines (stations that make carriers) first, then every station in order."""
    makers = [s.name for s in spec.stations if hasattr(s, "unlimited_carriers")]
    return makers + [s.name for s in spec.stations]


def back_edges(spec: LineSpec) -> set[tuple[str, str]]:
    """Forward edges that close a cycle, found by a depth-first search from :func:`_dfs_roots`."""
    successors: dict[str, list[str]] = {s.name: [] for s in spec.stations}
    for upstream, downstream in _forward_edges(spec):
        successors[upstream].append(downstream)
    state = dict.fromkeys(successors, 0)  # 0 unseen, 1 on the stack, 2 done
    back: set[tuple[str, str]] = set()
    for root in _dfs_roots(spec):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, iter(successors[root]))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state[child] == 1:
                back.add((node, child))
            elif state[child] == 0:
                state[child] = 1
                stack.append((child, iter(successors[child])))
    return back


def _acyclic_neighbours(spec: LineSpec) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Predecessors and successors along forward edges that are not back edges."""
    back = back_edges(spec)
    preds: dict[str, set[str]] = {s.name: set() for s in spec.stations}
    succs: dict[str, set[str]] = {s.name: set() for s in spec.stations}
    for edge in _forward_edges(spec):
        upstream, downstream = edge
        if edge not in back and upstream != downstream:
            preds[downstream].add(upstream)
            succs[upstream].add(downstream)
    return preds, succs


def station_columns(spec: LineSpec) -> dict[str, int]:
    """Column of every station: longest-path depth, stations without inputs pulled right."""
    preds, succs = _acyclic_neighbours(spec)
    depth = dict.fromkeys(preds, 0)
    waiting = {name: len(p) for name, p in preds.items()}
    queue = deque(name for name, n in waiting.items() if n == 0)
    while queue:
        name = queue.popleft()
        for child in sorted(succs[name]):
            depth[child] = max(depth[child], depth[name] + 1)
            waiting[child] -= 1
            if waiting[child] == 0:
                queue.append(child)
    for name in depth:
        if not preds[name] and succs[name]:
            depth[name] = min(depth[child] for child in succs[name]) - 1
    used = sorted(set(depth.values()))
    return {name: used.index(d) for name, d in depth.items()}


def _ordered_columns(spec: LineSpec, column: Mapping[str, int]) -> list[list[str]]:
    """Stations of each column, top to bottom: barycentre sweeps over the neighbours."""
    columns: list[list[str]] = [[] for _ in range(max(column.values()) + 1)]
    for station in spec.stations:
        columns[column[station.name]].append(station.name)
    preds, succs = _acyclic_neighbours(spec)

    def position() -> dict[str, float]:
        return {n: (i + 0.5) / len(col) for col in columns for i, n in enumerate(col)}

    sweeps = (
        (range(1, len(columns)), preds),
        (range(len(columns) - 2, -1, -1), succs),
        (range(1, len(columns)), preds),
    )
    for indices, neighbours in sweeps:
        for c in indices:
            pos = position()

            def key(name: str, pos: dict[str, float] = pos, neighbours: Any = neighbours) -> float:
                near = [pos[n] for n in neighbours[name]]
                return sum(near) / len(near) if near else pos[name]

            columns[c].sort(key=key)
    return columns


# --- layout: geometry ------------------------------------------------------------------------
@dataclass(frozen=True)
class BufferShape:
    """Where a buffer is drawn: its polyline, its slot squares or gauge, its colour."""

    name: str
    path: tuple[Point, ...]
    slots: tuple[Box, ...]
    gauge: Box | None
    colour: Colour


def _path_length(path: Sequence[Point]) -> float:
    return sum(math.dist(a, b) for a, b in pairwise(path))


def _point_at(path: Sequence[Point], s: float) -> Point:
    """The point at arc length ``s`` along ``path``."""
    for a, b in pairwise(path):
        step = math.dist(a, b)
        if s <= step and step > 0:
            t = s / step
            return (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]))
        s -= step
    return path[-1]


def _slot_boxes(path: Sequence[Point], capacity: int) -> tuple[tuple[Box, ...], Box | None]:
    """Slot squares centred along the middle of ``path``, or a gauge when they would not fit."""
    length = _path_length(path)
    available = max(length - 2 * (ARROW + 4), 1.0)
    pitch = min(SLOT_PITCH, available / capacity)
    middle = _point_at(path, length / 2)
    if pitch < MIN_SLOT_PITCH:
        x, y = round(middle[0]), round(middle[1])
        return (), (x - 20, y - 4, x + 20, y + 4)
    # separate squares while there is room; below that, touching cells sharing their outline
    size = min(SLOT_SIZE, round(pitch) - 2) if pitch >= 7 else round(pitch) + 1
    start = length / 2 - pitch * capacity / 2
    boxes = []
    for i in range(capacity):
        x, y = _point_at(path, start + pitch * (i + 0.5))
        x0, y0 = round(x - size / 2), round(y - size / 2)
        boxes.append((x0, y0, x0 + size - 1, y0 + size - 1))
    return tuple(boxes), None


def _segment_hits(a: Point, b: Point, boxes: Iterable[Box]) -> bool:
    """Whether the segment ``a``–``b`` passes through any of ``boxes`` (sampled)."""
    samples = max(2, int(math.dist(a, b) // 4))
    for box in boxes:
        x0, y0, x1, y1 = box
        for k in range(1, samples):
            t = k / samples
            x, y = a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])
            if x0 - 2 <= x <= x1 + 2 and y0 - 2 <= y <= y1 + 2:
                return True
    return False


def _spread(n: int, low: float, high: float) -> list[float]:
    """``n`` ports evenly inside ``(low, high)``."""
    return [low + (high - low) * (k + 1) / (n + 1) for k in range(n)]


class _Layout:
    """Boxes of the stations and shapes of the buffers for one line at one image size."""

    def __init__(self, spec: LineSpec, width: int, height: int) -> None:
        self.column = station_columns(spec)
        self.columns = _ordered_columns(spec, self.column)
        usable = width - 2 * MARGIN
        fit = max(1, usable // MIN_COLUMN_WIDTH)
        self.n_bands = math.ceil(len(self.columns) / fit)
        self.per_band = math.ceil(len(self.columns) / self.n_bands)
        self.dx = usable / self.per_band
        self.band = {n: c // self.per_band for n, c in self.column.items()}
        self.local = {n: c % self.per_band for n, c in self.column.items()}
        band_height = (height - HEADER_HEIGHT - MARGIN / 2) / self.n_bands
        self.band_top = [HEADER_HEIGHT + b * band_height for b in range(self.n_bands)]
        lanes = self._lanes_needed(spec)
        self.area_bottom = [
            top + band_height - (LANE_GAP * lanes[b] + 4 if lanes[b] else 2)
            for b, top in enumerate(self.band_top)
        ]
        self.boxes = self._station_boxes()
        self.shapes = self._buffer_shapes(spec)

    def _straight_candidate(self, b: BufferSpec) -> bool:
        same_band = self.band[b.upstream] == self.band[b.downstream]
        return same_band and self.local[b.downstream] > self.local[b.upstream]

    def _lanes_needed(self, spec: LineSpec) -> list[int]:
        """Lanes to reserve per band: every buffer that may be routed starts in one."""
        lanes = [0] * self.n_bands
        for b in spec.buffers:
            span = self.local[b.downstream] - self.local[b.upstream]
            if not self._straight_candidate(b) or span > 1:
                lanes[self.band[b.upstream]] += 1
        return [min(n, MAX_LANES) for n in lanes]

    def _station_boxes(self) -> dict[str, Box]:
        rows: dict[tuple[int, int], list[str]] = {}
        for col in self.columns:
            for name in col:
                rows.setdefault((self.band[name], self.local[name]), []).append(name)
        top = [t + WORKER_RADIUS * 2 + 4 for t in self.band_top]
        dy = min((self.area_bottom[b] - top[b]) / len(n) for (b, _), n in rows.items())
        self.box_w = int(min(max(0.52 * self.dx, 34), 124))
        self.box_h = int(min(max(0.55 * dy, 16), 52))
        boxes: dict[str, Box] = {}
        for (b, local), names in rows.items():
            x = MARGIN + (local + 0.5) * self.dx
            step = (self.area_bottom[b] - top[b]) / len(names)
            for i, name in enumerate(names):
                y = top[b] + (i + 0.5) * step
                x0, y0 = round(x - self.box_w / 2), round(y - self.box_h / 2)
                boxes[name] = (x0, y0, x0 + self.box_w, y0 + self.box_h)
        return boxes

    def _routes(self, spec: LineSpec) -> dict[str, bool]:
        """Whether each buffer runs through a lane (True) or straight (False)."""
        routed = {}
        for b in spec.buffers:
            if not self._straight_candidate(b):
                routed[b.name] = True
                continue
            a, z = self.boxes[b.upstream], self.boxes[b.downstream]
            start, end = (a[2], (a[1] + a[3]) / 2), (z[0], (z[1] + z[3]) / 2)
            others = [box for n, box in self.boxes.items() if n not in (b.upstream, b.downstream)]
            routed[b.name] = _segment_hits(start, end, others)
        return routed

    def _ports(self, spec: LineSpec, routed: Mapping[str, bool]) -> dict[str, tuple[float, float]]:
        """Exit and entry heights of each buffer, spread over the sides of the boxes."""
        ports: dict[str, list[float]] = {b.name: [0.0, 0.0] for b in spec.buffers}

        def centre(name: str) -> float:
            return (self.boxes[name][1] + self.boxes[name][3]) / 2

        for station, box in self.boxes.items():
            outs = [b for b in spec.buffers if b.upstream == station]
            outs.sort(key=lambda b: (routed[b.name], centre(b.downstream)))
            for b, y in zip(outs, _spread(len(outs), box[1], box[3]), strict=True):
                ports[b.name][0] = y
            ins = [b for b in spec.buffers if b.downstream == station]
            ins.sort(key=lambda b: (routed[b.name], centre(b.upstream)))
            for b, y in zip(ins, _spread(len(ins), box[1], box[3]), strict=True):
                ports[b.name][1] = y
        return {name: (p[0], p[1]) for name, p in ports.items()}

    def _buffer_shapes(self, spec: LineSpec) -> dict[str, BufferShape]:
        routed = self._routes(spec)
        ports = self._ports(spec, routed)
        lane_count = [0] * self.n_bands
        shapes = {}
        for b in spec.buffers:
            a, z = self.boxes[b.upstream], self.boxes[b.downstream]
            y_out, y_in = ports[b.name]
            if routed[b.name]:
                band = self.band[b.upstream]
                k = lane_count[band] % MAX_LANES
                lane_count[band] += 1
                lane_y = self.area_bottom[band] + LANE_GAP * k + 3
                x_out, x_in = a[2] + 8 + 3 * k, z[0] - 8 - 3 * k
                path: tuple[Point, ...] = (
                    (a[2], y_out),
                    (x_out, y_out),
                    (x_out, lane_y),
                    (x_in, lane_y),
                    (x_in, y_in),
                    (z[0], y_in),
                )
            else:
                path = ((a[2], y_out), (z[0], y_in))
            slots, gauge = _slot_boxes(path, b.capacity)
            colour = BUFFER_COLOURS.get(b.kind, BUFFER_COLOURS["main"])
            shapes[b.name] = BufferShape(b.name, path, slots, gauge, colour)
        return shapes
