"""Content hashes of bytes and files: what records (results, submissions, datasets) name."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

#: the metadata a logged dataset's hash covers besides its arrays: what it is the data of
DATASET_IDENTITY = ("env_id", "logging", "n", "seed", "instance_params_hash")


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex sha256 of the file at ``path``, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def dataset_sha256(arrays: dict[str, Any], metadata: dict[str, Any]) -> str:
    """Content hash of a logged dataset: its identity (:data:`DATASET_IDENTITY` of
    ``metadata``), then each array's dtype, shape and bytes, in name order. File containers
    (zip headers with timestamps) do not enter, so the same records always hash alike."""
    import numpy as np

    digest = hashlib.sha256()
    identity = {key: metadata.get(key) for key in DATASET_IDENTITY}
    layout = {name: [str(a.dtype), list(a.shape)] for name, a in sorted(arrays.items())}
    header = {"identity": identity, "arrays": layout}
    digest.update(
        json.dumps(header, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
    )
    for _, array in sorted(arrays.items()):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()
