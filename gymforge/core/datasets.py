"""A small, versioned on-disk format for offline data: arrays + JSON metadata + a checksum.

A dataset is a folder::

    PATH/
      data.npz        the arrays (numpy ``savez``, uncompressed, no pickled objects)
      metadata.json   {"format": "gymforge-dataset", "format_version": 1, "sha256": ..., "arrays":
                       {name: {"dtype": ..., "shape": [...]}, ...}, "gymforge_version": ...,
                       "created": ..., plus whatever the collector records}

:func:`write_dataset` writes into a temporary sibling folder and renames it into place, so a
crash never leaves a half-written dataset at ``PATH``. :func:`read_dataset` checks the checksum,
the recorded dtypes and shapes, and (optionally) a schema of required arrays, and raises
:class:`DatasetError` naming what is wrong.

Families may additionally export to Minari (the Farama format: MetaBBO's episodes, Off-CMAB's
logged plays as one episode per dataset); this format keeps exactly the family's record arrays
with a checksum, for fast checked reloads.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = "gymforge-dataset"
FORMAT_VERSION = 1
DATA_FILE = "data.npz"
METADATA_FILE = "metadata.json"


class DatasetError(ValueError):
    """A dataset folder is missing, malformed, or does not match its checksum or schema."""


@dataclass(frozen=True)
class ArraySchema:
    """What a reader requires of one array: its dtype kind(s) and number of dimensions.

    ``kinds`` are numpy dtype kinds (``"f"`` float, ``"i"`` signed int, ``"u"`` unsigned,
    ``"b"`` bool); ``ndim`` ``None`` accepts any rank; ``shape`` entries ``None`` accept any size.
    """

    kinds: str
    ndim: int | None = None
    shape: tuple[int | None, ...] | None = None


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: its arrays (numpy) and its metadata."""

    arrays: dict[str, np.ndarray]
    metadata: dict[str, Any]
    path: Path

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _package_version() -> str:
    from gymforge import __version__

    return __version__


def write_dataset(
    path: str | Path,
    arrays: Mapping[str, np.ndarray],
    metadata: Mapping[str, Any],
    *,
    overwrite: bool = False,
) -> Path:
    """Write ``arrays`` and ``metadata`` as a dataset folder at ``path`` (atomically).

    Raises:
        DatasetError: ``path`` exists and ``overwrite`` is false, an array is of object dtype,
            or the metadata is not JSON-serialisable — all before anything is written.
    """
    path = Path(path)
    if path.exists() and not overwrite:
        raise DatasetError(f"dataset path {str(path)!r} exists; pass overwrite=True to replace it")
    reserved = {"format", "format_version", "sha256", "arrays"}
    clash = sorted(reserved & set(metadata))
    if clash:
        raise DatasetError(f"metadata keys {clash} are reserved by the dataset format")
    numpy_arrays = {name: np.asarray(value) for name, value in arrays.items()}
    for name, value in numpy_arrays.items():
        if value.dtype.kind == "O":
            raise DatasetError(f"array {name!r} has object dtype; store numbers only")
    record: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "gymforge_version": _package_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **dict(metadata),
        "arrays": {
            name: {"dtype": str(value.dtype), "shape": list(value.shape)}
            for name, value in numpy_arrays.items()
        },
    }
    try:
        json.dumps(record)
    except TypeError as error:
        raise DatasetError(f"metadata must be JSON-serialisable: {error}") from None

    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        np.savez(staging / DATA_FILE, **numpy_arrays)
        record["sha256"] = _sha256(staging / DATA_FILE)
        (staging / METADATA_FILE).write_text(json.dumps(record, indent=2, sort_keys=True))
        if path.exists():
            shutil.rmtree(path)
        os.replace(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return path


def read_metadata(path: str | Path, *, verify: bool = True) -> dict[str, Any]:
    """The metadata of the dataset at ``path``; with ``verify``, the checksum is checked too."""
    path = Path(path)
    meta_path, data_path = path / METADATA_FILE, path / DATA_FILE
    if not meta_path.is_file() or not data_path.is_file():
        raise DatasetError(
            f"{str(path)!r} is not a gymforge dataset: expected {METADATA_FILE} and {DATA_FILE}"
        )
    try:
        metadata = json.loads(meta_path.read_text())
    except json.JSONDecodeError as error:
        raise DatasetError(f"{meta_path}: malformed JSON ({error})") from None
    if metadata.get("format") != FORMAT:
        raise DatasetError(
            f"{meta_path}: format is {metadata.get('format')!r}, expected {FORMAT!r}"
        )
    if metadata.get("format_version") != FORMAT_VERSION:
        raise DatasetError(
            f"{meta_path}: format_version {metadata.get('format_version')!r} is not supported "
            f"(this gymforge reads version {FORMAT_VERSION})"
        )
    if verify:
        actual = _sha256(data_path)
        if actual != metadata.get("sha256"):
            raise DatasetError(
                f"{data_path}: checksum mismatch (recorded {metadata.get('sha256')}, actual "
                f"{actual}); the data were changed or truncated"
            )
    return metadata


def read_dataset(
    path: str | Path,
    schema: Mapping[str, ArraySchema] | None = None,
    *,
    expect: Mapping[str, Any] | None = None,
) -> Dataset:
    """Load and check the dataset at ``path``.

    Args:
        schema: arrays the caller needs, with their dtype kinds and ranks.
        expect: metadata entries that must hold these values (e.g. ``{"env_id": "MetaBBO-v0"}``).

    Raises:
        DatasetError: a missing file, checksum mismatch, missing array, wrong dtype or shape, an
            array whose shape differs from the recorded one, or unexpected metadata.
    """
    metadata = read_metadata(path, verify=True)
    for key, value in (expect or {}).items():
        if metadata.get(key) != value:
            raise DatasetError(
                f"dataset {str(path)!r}: metadata {key!r} is {metadata.get(key)!r}, expected {value!r}"
            )
    with np.load(Path(path) / DATA_FILE, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    for name, recorded in metadata["arrays"].items():
        if name not in arrays:
            raise DatasetError(f"dataset {str(path)!r}: array {name!r} is recorded but missing")
        if (
            list(arrays[name].shape) != recorded["shape"]
            or str(arrays[name].dtype) != recorded["dtype"]
        ):
            raise DatasetError(f"dataset {str(path)!r}: array {name!r} differs from its record")
    for name, rule in (schema or {}).items():
        if name not in arrays:
            raise DatasetError(
                f"dataset {str(path)!r}: required array {name!r} missing; has {sorted(arrays)}"
            )
        value = arrays[name]
        if value.dtype.kind not in rule.kinds:
            raise DatasetError(
                f"dataset {str(path)!r}: array {name!r} has dtype {value.dtype}, "
                f"expected kind in {rule.kinds!r}"
            )
        if rule.ndim is not None and value.ndim != rule.ndim:
            raise DatasetError(
                f"dataset {str(path)!r}: array {name!r} has shape {value.shape}, expected {rule.ndim} dims"
            )
        if rule.shape is not None and any(
            want is not None and have != want
            for have, want in zip(value.shape, rule.shape, strict=False)
        ):
            raise DatasetError(
                f"dataset {str(path)!r}: array {name!r} has shape {value.shape}, expected {rule.shape}"
            )
    return Dataset(arrays=arrays, metadata=metadata, path=Path(path))
