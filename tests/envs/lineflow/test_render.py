"""LineFlow rendering: frames of the running line, the layout, and animations written to disk."""

from __future__ import annotations

import pickle
import time
import warnings
from itertools import pairwise
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from gymforge import recording
from gymforge.envs.lineflow import LineBuilder, LineSpec
from gymforge.envs.lineflow.render import (
    MODE_COLOURS,
    OFF_COLOUR,
    POOL_COLOURS,
    SLOT_FULL,
    LineRenderer,
)
from gymforge.envs.lineflow.render_layout import back_edges
from gymforge.envs.lineflow.scenarios import waiting_time
from gymforge.envs.lineflow.simpy_engine import LineSimulation
from gymforge.envs.lineflow.viewer import HumanViewer
from gymforge.recording import write_animation

WORKING, WAITING = 0, 1  # station.mode values


def box_colour(frame: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """Median colour of a box's inside (the text is a minority of its pixels)."""
    x0, y0, x1, y1 = box
    return np.median(frame[y0 + 2 : y1 - 1, x0 + 2 : x1 - 1].reshape(-1, 3), axis=0)


def run_until_mode(sim: LineSimulation, station: str, mode: int, limit: float = 500) -> None:
    """Advance ``sim`` in steps of 0.5 until ``station`` is in ``mode``."""
    t = sim.now
    while sim.stations[station].mode != mode:
        t += 0.5
        assert t < limit, f"{station} never reached mode {mode}"
        sim.run_until(t)


def loop_line() -> LineSpec:
    """S (fed back by the sink) → P → Sink → back to S: a carrier loop."""
    line = LineBuilder("loop")
    line.source("S", unlimited_carriers=False)
    line.process("P")
    line.sink("Sink")
    line.connect("S", "P")
    line.connect("P", "Sink")
    line.connect("Sink", "S", capacity=5)
    return line.build()


def returning_assembly_line() -> LineSpec:
    """An assembly returns its emptied component carriers to their (limited) source."""
    line = LineBuilder("returning")
    line.source("S_main", unlimited_carriers=True, actionable_waiting_time=False)
    line.source("S_component", unlimited_carriers=False)
    line.assembly("Assembly")
    line.sink("Sink")
    line.connect("S_main", "Assembly")
    line.connect("S_component", "Assembly", kind="component", capacity=4)
    line.connect("Assembly", "S_component", kind="return", capacity=3)
    line.connect("Assembly", "Sink")
    return line.build()


def serial_line(n: int) -> LineSpec:
    """A source, ``n - 2`` processes and a sink in a row."""
    line = LineBuilder(f"serial_{n}")
    names = [line.source("S", unlimited_carriers=True)]
    names += [line.process(f"P{i}") for i in range(n - 2)]
    names.append(line.sink("Sink"))
    for k, (upstream, downstream) in enumerate(pairwise(names)):
        line.connect(upstream, downstream, capacity=2 + 3 * (k % 7))
    return line.build()


def assert_boxes_inside_and_apart(renderer: LineRenderer, spec: LineSpec) -> None:
    boxes = [renderer.station_box(s.name) for s in spec.stations]
    for x0, y0, x1, y1 in boxes:
        assert 0 <= x0 < x1 < renderer.width and 0 <= y0 < y1 < renderer.height
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert a[2] < b[0] or b[2] < a[0] or a[3] < b[1] or b[3] < a[1], (a, b)


# --- frames ---------------------------------------------------------------------------------
def test_lineflow__frames_are_rgb_uint8_of_the_renderer_size():
    sim = LineSimulation(waiting_time(), seed=0)
    renderer = LineRenderer(sim.spec)
    for t in (0.0, 10.0, 50.0, 200.0):
        sim.run_until(t)
        frame = renderer.draw(sim)
        assert frame.shape == (540, 960, 3)
        assert frame.dtype == np.uint8
        assert frame.flags.writeable
    small = LineRenderer(sim.spec, width=640, height=360).draw(sim)
    assert small.shape == (360, 640, 3)


def test_lineflow__frames_change_as_the_line_runs():
    sim = LineSimulation(waiting_time(), seed=0)
    renderer = LineRenderer(sim.spec)
    first = renderer.draw(sim)
    sim.run_until(100.0)
    later = renderer.draw(sim)
    assert not np.array_equal(first, later)
    assert np.array_equal(later, renderer.draw(sim)), "drawing twice must give the same frame"


def test_lineflow__stations_are_coloured_by_mode_at_their_layout_position():
    sim = LineSimulation(waiting_time(), seed=0)
    renderer = LineRenderer(sim.spec)
    run_until_mode(sim, "Assembly", WORKING)
    frame = renderer.draw(sim)
    working = box_colour(frame, renderer.station_box("Assembly"))
    assert np.allclose(working, MODE_COLOURS[WORKING], atol=2)
    assert working[1] > working[0] + 40 and working[1] > working[2] + 40  # green-ish
    waiting = [s.name for s in sim.stations.values() if s.mode == WAITING]
    assert waiting
    assert np.allclose(
        box_colour(frame, renderer.station_box(waiting[0])), MODE_COLOURS[WAITING], atol=2
    )


def test_lineflow__filled_slots_are_the_carriers_at_the_downstream_end():
    sim = LineSimulation(waiting_time(), seed=0)
    renderer = LineRenderer(sim.spec)
    name = "Buffer_S_component_to_Assembly"
    t = 0.0
    while not 0 < sim.buffers[name].n_carriers < sim.buffers[name].capacity:
        t += 0.5
        sim.run_until(t)
    frame = renderer.draw(sim)
    slots = renderer.buffer_shape(name).slots
    assert len(slots) == sim.buffers[name].capacity
    x0, y0, _, _ = slots[-1]
    assert tuple(frame[y0 + 2, x0 + 2]) == SLOT_FULL
    x0, y0, _, _ = slots[0]
    assert tuple(frame[y0 + 2, x0 + 2]) != SLOT_FULL


def test_lineflow__optional_state_is_drawn_when_present():
    """Switched-off stations, magazine counts and worker pools (components being added)."""
    sim = LineSimulation(waiting_time(), seed=0)
    sim.run_until(40.0)
    renderer = LineRenderer(sim.spec)
    plain = renderer.draw(sim)
    sim.stations["Sink"].is_on = False
    sim.stations["S_main"].n_stored = 7
    sim.pools = {
        "crew": SimpleNamespace(
            stations=["Assembly", "Sink"],
            workers=[
                SimpleNamespace(station=0, in_transit=False),
                SimpleNamespace(station=0, target=1, in_transit=True),  # walking to the sink
                SimpleNamespace(station=5, in_transit=False),  # out of range: ignored
            ],
        )
    }
    frame = renderer.draw(sim)
    assert np.allclose(box_colour(frame, renderer.station_box("Sink")), OFF_COLOUR, atol=2)
    x0, y0, x1, y1 = renderer.station_box("S_main")
    assert not np.array_equal(frame[y0:y1, x0:x1], plain[y0:y1, x0:x1])
    x0, y0, x1, _ = renderer.station_box("Assembly")
    above = frame[max(y0 - 12, 0) : y0, x0:x1].reshape(-1, 3)
    assert (above == POOL_COLOURS[0]).all(axis=1).sum() > 20
    x0, y0, x1, _ = renderer.station_box("Sink")
    ring = frame[max(y0 - 12, 0) : y0, x0:x1].reshape(-1, 3)
    assert 8 < (ring == POOL_COLOURS[0]).all(axis=1).sum() < 60, "a hollow circle"


def test_lineflow__a_renderer_rejects_another_line_and_bad_sizes():
    renderer = LineRenderer(waiting_time())
    with pytest.raises(ValueError, match=r"sim\.spec must be the line"):
        renderer.draw(LineSimulation(loop_line(), seed=0))
    renderer.draw(LineSimulation(waiting_time(), seed=1))  # an equal line is fine
    with pytest.raises(ValueError, match=r"width must be an int >= 240"):
        LineRenderer(waiting_time(), width=10)
    with pytest.raises(ValueError, match=r"spec must be a LineSpec"):
        LineRenderer("waiting_time")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match=r"no station 'Nope'"):
        renderer.station_box("Nope")


def test_lineflow__a_renderer_pickles_and_draws_the_same_frames():
    sim = LineSimulation(waiting_time(), seed=0)
    sim.run_until(30.0)
    renderer = LineRenderer(sim.spec)
    copy = pickle.loads(pickle.dumps(renderer))
    assert np.array_equal(copy.draw(sim), renderer.draw(sim))


def test_lineflow__drawing_a_frame_is_cheap():
    """A loose bound (the measured time is well under 1 ms); it guards against regressions."""
    spec = serial_line(10)
    sim = LineSimulation(spec, seed=0)
    sim.run_until(60.0)
    renderer = LineRenderer(spec)
    renderer.draw(sim)
    start = time.perf_counter()
    for _ in range(50):
        renderer.draw(sim)
    assert (time.perf_counter() - start) / 50 < 0.025


# --- layout ---------------------------------------------------------------------------------
def test_lineflow__layout_columns_follow_the_line():
    renderer = LineRenderer(waiting_time())
    column = {name: renderer.station_column(name) for name in ("S_main", "S_component")}
    assert column == {"S_main": 0, "S_component": 0}
    assert renderer.station_column("Assembly") == 1
    assert renderer.station_column("Sink") == 2
    source, sink = renderer.station_box("S_main"), renderer.station_box("Sink")
    assert source[2] < renderer.station_box("Assembly")[0] < sink[0]


def test_lineflow__a_carrier_loop_back_to_the_source_does_not_break_the_layering():
    spec = loop_line()
    assert back_edges(spec) == {("Sink", "S")}
    renderer = LineRenderer(spec)
    assert [renderer.station_column(n) for n in ("S", "P", "Sink")] == [0, 1, 2]
    assert renderer.station_box("S")[2] < renderer.station_box("Sink")[0]
    path = renderer.buffer_shape("Buffer_Sink_to_S").path
    assert len(path) > 2, "the back edge runs through a lane below the boxes"
    assert max(y for _, y in path) > renderer.station_box("Sink")[3]
    frame = renderer.draw(LineSimulation(spec, seed=0))
    assert frame.shape == (540, 960, 3)


def test_lineflow__return_buffers_are_ignored_for_the_columns():
    spec = returning_assembly_line()
    renderer = LineRenderer(spec)
    assert renderer.station_column("S_component") < renderer.station_column("Assembly")
    assert renderer.station_column("Assembly") < renderer.station_column("Sink")
    assert renderer.station_box("S_main")[2] < renderer.station_box("Sink")[0]
    sim = LineSimulation(spec, seed=0)
    sim.run_until(50.0)
    assert renderer.draw(sim).shape == (540, 960, 3)


@pytest.mark.parametrize("n", [2, 10, 25])
def test_lineflow__long_lines_wrap_into_bands_with_boxes_apart_and_inside(n):
    if n == 2:
        line = LineBuilder("two")
        line.source("S", unlimited_carriers=True)
        line.sink("Sink")
        line.connect("S", "Sink")
        spec = line.build()
    else:
        spec = serial_line(n)
    renderer = LineRenderer(spec)
    assert_boxes_inside_and_apart(renderer, spec)
    assert renderer.n_bands == (1 if n == 2 else 2 if n == 10 else 4)
    box = renderer.station_box("Sink")
    assert box[3] - box[1] >= 30, "boxes stay tall enough for two lines of text"
    sim = LineSimulation(spec, seed=0)
    sim.run_until(40.0)
    assert renderer.draw(sim).shape == (540, 960, 3)


# --- animations -----------------------------------------------------------------------------
def frames_of_the_line(n: int = 4) -> list[np.ndarray]:
    sim = LineSimulation(waiting_time(), seed=0)
    renderer = LineRenderer(sim.spec, width=320, height=180)
    frames = []
    for k in range(n):
        sim.run_until(10.0 * k)
        frames.append(renderer.draw(sim))
    return frames


def test_lineflow__write_animation_writes_a_looping_gif(tmp_path):
    frames = frames_of_the_line()
    path = write_animation(frames, tmp_path / "line.gif", fps=20)
    assert path == tmp_path / "line.gif"
    assert [p.name for p in tmp_path.iterdir()] == ["line.gif"]
    with Image.open(path) as gif:
        assert gif.format == "GIF"
        assert gif.n_frames == len(frames)
        assert gif.size == (320, 180)
        assert gif.info["loop"] == 0
        assert gif.info["duration"] == 50
        gif.seek(len(frames) - 1)
        assert np.abs(np.asarray(gif.convert("RGB"), dtype=int) - frames[-1]).mean() < 3


def test_lineflow__write_animation_replaces_an_existing_file(tmp_path):
    path = tmp_path / "line.gif"
    path.write_bytes(b"old")
    write_animation(frames_of_the_line(2), str(path))
    with Image.open(path) as gif:
        assert gif.n_frames == 2


@pytest.mark.parametrize(
    ("frames", "name", "fps", "message"),
    [
        ([], "a.gif", 20, r"frames must hold at least one frame"),
        ([np.zeros((4, 4, 3), np.float32)], "a.gif", 20, r"frames\[0\]\.dtype must be uint8"),
        ([np.zeros((4, 4), np.uint8)], "a.gif", 20, r"frames\[0\]\.shape must be"),
        (
            [np.zeros((4, 4, 3), np.uint8), np.zeros((4, 5, 3), np.uint8)],
            "a.gif",
            20,
            r"frames\[1\]\.shape must equal frames\[0\]\.shape",
        ),
        ([[0, 0, 0]], "a.gif", 20, r"frames\[0\] must be a numpy array"),
        ([np.zeros((4, 4, 3), np.uint8)], "a.gif", 0, r"fps must be an int in \[1, 50\]"),
        ([np.zeros((4, 4, 3), np.uint8)], "a.gif", 2.5, r"fps must be an int"),
        ([np.zeros((4, 4, 3), np.uint8)], "a.avi", 20, r"path suffix must be one of"),
        ([np.zeros((4, 4, 3), np.uint8)], "missing/a.gif", 20, r"path's folder must exist"),
    ],
)
def test_lineflow__write_animation_refuses_bad_input_and_writes_nothing(
    tmp_path, frames, name, fps, message
):
    with pytest.raises(ValueError, match=message):
        write_animation(frames, tmp_path / name, fps=fps)
    assert list(tmp_path.iterdir()) == []


def test_lineflow__mp4_without_imageio_is_refused_with_the_supported_suffixes(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(recording, "mp4_available", lambda: False)
    with pytest.raises(ValueError, match=r"\('\.gif',\).*'\.mp4' needs imageio"):
        write_animation(frames_of_the_line(1), tmp_path / "line.mp4")
    assert list(tmp_path.iterdir()) == []


def test_lineflow__a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "line.gif"
    path.write_bytes(b"old")

    def half_written(frames, temporary, fps):
        temporary.write_bytes(b"GIF89a-partial")
        raise OSError("disk full")

    monkeypatch.setattr(recording, "_write_gif", half_written)
    with pytest.raises(OSError, match="disk full"):
        write_animation(frames_of_the_line(2), path)
    assert [p.name for p in tmp_path.iterdir()] == ["line.gif"]
    assert path.read_bytes() == b"old"


def test_lineflow__human_viewer_without_a_display_warns_once_and_shows_nothing(monkeypatch):
    monkeypatch.setattr("gymforge.envs.lineflow.viewer.has_display", lambda: False)
    viewer = HumanViewer()
    frame = frames_of_the_line(1)[0]
    with pytest.warns(RuntimeWarning, match="needs a display"):
        viewer.show(frame)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        viewer.show(frame)
    assert caught == []
    viewer.close()


@pytest.mark.skipif(
    not recording.mp4_available(), reason="imageio and imageio-ffmpeg not installed"
)
def test_lineflow__write_animation_writes_an_mp4_when_imageio_is_installed(tmp_path):
    import imageio.v2 as imageio

    frames = frames_of_the_line(3)
    path = write_animation(frames, tmp_path / "line.mp4", fps=10)
    assert [p.name for p in tmp_path.iterdir()] == ["line.mp4"]
    with imageio.get_reader(path) as reader:
        assert sum(1 for _ in reader) == len(frames)


@pytest.mark.skipif(
    not hasattr(LineBuilder, "worker_pool") or not hasattr(LineBuilder, "magazine"),
    reason="the engine has no magazines or worker pools yet",
)
def test_lineflow__a_pooled_magazine_loop_renders_its_workers_and_stored_count():
    line = LineBuilder("pooled_loop")
    line.magazine("Mag", unlimited_carriers=False, carriers_in_magazine=6)
    line.source("S", unlimited_carriers=False, processing_time=1)
    line.worker_pool("crew", 3, transition_time=4)
    line.process("P1", processing_time=6, worker_pool="crew")
    line.process("P2", processing_time=6, worker_pool="crew")
    line.sink("Sink", processing_time=1)
    for upstream, downstream in pairwise(["Mag", "S", "P1", "P2", "Sink", "Mag"]):
        line.connect(upstream, downstream, capacity=3)
    spec = line.build()
    renderer = LineRenderer(spec)
    assert [renderer.station_column(n) for n in ("Mag", "S", "P1", "P2", "Sink")] == [0, 1, 2, 3, 4]
    sim = LineSimulation(spec, seed=0)
    sim.run_until(31.0)
    frame = renderer.draw(sim)
    for name in ("P1", "P2"):  # three workers start round-robin over the pool's two stations
        x0, y0, x1, _ = renderer.station_box(name)
        above = frame[max(y0 - 12, 0) : y0, x0:x1].reshape(-1, 3)
        assert (above == POOL_COLOURS[0]).all(axis=1).any()
