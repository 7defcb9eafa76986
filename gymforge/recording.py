"""Write rendered frames (RGB ``uint8`` arrays) to an animation file.

``.gif`` is always supported (Pillow, a matplotlib dependency). ``.mp4`` is supported when
``imageio`` and ``imageio-ffmpeg`` are installed (``pip install "gymforge[video]"``); gymforge
does not need them otherwise.
The file is written to a temporary file in the same folder and moved into place with
``os.replace``, so ``path`` is either left as it was or holds the complete animation.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from PIL import Image

MAX_GIF_FPS = 50  # GIF delays are in hundredths of a second; viewers slow shorter ones down

Writer = Callable[[Sequence[np.ndarray], Path, int], None]


def mp4_available() -> bool:
    """Whether ``imageio`` with its ffmpeg plugin (``imageio-ffmpeg``) can be imported."""
    return all(importlib.util.find_spec(name) is not None for name in ("imageio", "imageio_ffmpeg"))


def supported_suffixes() -> tuple[str, ...]:
    """File suffixes :func:`write_animation` can write here."""
    return (".gif", ".mp4") if mp4_available() else (".gif",)


def _shared_palette(frames: Sequence[np.ndarray], samples: int = 16) -> Image.Image:
    """A 256-colour palette for all frames, from a mosaic of up to ``samples`` of them.

    Quantizing every frame against one palette, without dithering, is about 20 times faster
    than Pillow's per-frame adaptive palette and exact for flat renderings like LineFlow's.
    """
    picks = sorted({round(i) for i in np.linspace(0, len(frames) - 1, min(samples, len(frames)))})
    mosaic = np.concatenate([frames[i][::2, ::2] for i in picks], axis=0)
    return Image.fromarray(mosaic).quantize(colors=256, method=Image.Quantize.MEDIANCUT)


def _write_gif(frames: Sequence[np.ndarray], path: Path, fps: int) -> None:
    """One GIF frame per array, looping forever (identical consecutive frames are merged)."""
    palette = _shared_palette(frames)

    def indexed(frame: np.ndarray) -> Image.Image:
        return Image.fromarray(frame).quantize(palette=palette, dither=Image.Dither.NONE)

    images = (indexed(frame) for frame in frames[1:])
    with open(path, "wb") as file:
        indexed(frames[0]).save(
            file,
            format="GIF",
            save_all=True,
            append_images=images,
            duration=round(1000 / fps),
            loop=0,
        )
        file.flush()
        os.fsync(file.fileno())


def _write_mp4(frames: Sequence[np.ndarray], path: Path, fps: int) -> None:
    """H.264 video through imageio's ffmpeg plugin."""
    import imageio.v2 as imageio

    with imageio.get_writer(
        path, format="FFMPEG", mode="I", fps=fps, codec="libx264", macro_block_size=2
    ) as writer:
        for frame in frames:
            writer.append_data(frame)


def _writer_for(path: Path) -> Writer:
    suffix = path.suffix.lower()
    if suffix == ".gif":
        return _write_gif
    if suffix == ".mp4" and mp4_available():
        return _write_mp4
    extra = (
        " ('.mp4' needs imageio and imageio-ffmpeg: pip install \"gymforge[video]\")"
        if suffix == ".mp4"
        else ""
    )
    raise ValueError(
        f"path suffix must be one of {supported_suffixes()}{extra}, got {suffix or path.name!r}"
    )


def _check_fps(fps: int, suffix: str) -> None:
    largest = MAX_GIF_FPS if suffix == ".gif" else 240
    if isinstance(fps, bool) or not isinstance(fps, (int, np.integer)) or not 1 <= fps <= largest:
        raise ValueError(f"fps must be an int in [1, {largest}] for {suffix}, got {fps!r}")


def _check_frames(frames: Sequence[np.ndarray]) -> None:
    if len(frames) == 0:
        raise ValueError("frames must hold at least one frame, got an empty sequence")
    for i, frame in enumerate(frames):
        if not isinstance(frame, np.ndarray):
            raise ValueError(f"frames[{i}] must be a numpy array, got {type(frame).__name__}")
        if frame.dtype != np.uint8:
            raise ValueError(f"frames[{i}].dtype must be uint8, got {frame.dtype}")
        if frame.ndim != 3 or frame.shape[2] != 3 or 0 in frame.shape:
            raise ValueError(
                f"frames[{i}].shape must be (height, width, 3) with height, width >= 1, "
                f"got {frame.shape}"
            )
        if frame.shape != frames[0].shape:
            raise ValueError(
                f"frames[{i}].shape must equal frames[0].shape {frames[0].shape}, got {frame.shape}"
            )


def _reserve_temporary(path: Path) -> Path:
    """A new empty file next to ``path``, with the same suffix, created with the umask's mode."""
    for _ in range(100):
        temporary = path.with_name(f".{path.stem}.{secrets.token_hex(4)}.tmp{path.suffix}")
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return temporary
    raise FileExistsError(f"could not create a temporary file next to {path}")


def write_animation(frames: Sequence[np.ndarray], path: str | Path, fps: int = 20) -> Path:
    """Write ``frames`` as an animation to ``path`` and return the path.

    Args:
        frames: RGB ``uint8`` arrays of one shape ``(height, width, 3)``, e.g. from
            ``env.render()`` with ``render_mode="rgb_array"``; a list, tuple or stacked array.
        path: ``.gif`` (always) or ``.mp4`` (when imageio and imageio-ffmpeg are installed); an
            existing file is replaced. Its folder must exist.
        fps: frames per second, at most 50 for GIF.

    Raises:
        ValueError: naming the field, for an unsupported suffix, a bad ``fps``, no frames,
            frames that are not RGB ``uint8`` arrays of one shape, or a missing folder.
    """
    path = Path(path)
    writer = _writer_for(path)
    _check_fps(fps, path.suffix.lower())
    frames = list(frames)
    _check_frames(frames)
    if not path.parent.is_dir():
        raise ValueError(f"path's folder must exist, got {str(path.parent)!r}")
    if path.is_dir():
        raise ValueError(f"path must be a file, got the folder {str(path)!r}")
    temporary = _reserve_temporary(path)
    try:
        writer(frames, temporary, int(fps))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path
