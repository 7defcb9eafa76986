"""Submission folders: checked metadata, the agent (entry point or artifact copy), results.

A board is ``<root>/<suite>/<Task>/`` and holds ``submissions/<YYYYMMDD>-<slug>/``::

    submission.json   {"schema", "task", "id", "submitted", "meta": {...}, "agent": {...},
                       "results_sha256", "files": {relative path: sha256}}
    policy/<file>     the artifact (SB3 .zip or TorchScript), for artifact agents
    policy/evaluations.json, policy/config.json
                      copied from beside an SB3 model written by ``gymforge train``: the
                      training-time evaluations (the board's learning curves) and the run's
                      configuration; their hashes are in ``files
    results.json      written by the evaluator

:func:`submit` checks the metadata and the agent, evaluates, then assembles the folder under
``<root>/.staging/`` and renames it onto the board in one step: an interrupted submission leaves
nothing on the board.
"""

from __future__ import annotations

import datetime
import re
import shutil
import time
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gymforge.baselines.agent_loader import AgentRecord, parse_agent_spec
from gymforge.core.outputs import check_writable
from gymforge.hashing import sha256_bytes, sha256_file
from gymforge.leaderboards.admission import check_submittable
from gymforge.leaderboards.evaluator import evaluate
from gymforge.leaderboards.files import (
    is_temporary,
    new_staging_folder,
    pretty_json,
    publish_folder,
    read_json,
    write_bytes_atomic,
)
from gymforge.leaderboards.protocol import Protocol, load_protocol
from gymforge.leaderboards.results import check_results

SUBMISSION_SCHEMA = "gymforge.submission/1"
#: files of a `gymforge train` run that travel with its model into the submission.
RUN_FILES = ("evaluations.json", "config.json")
STAGING_DIR = ".staging"
_ID_RE = re.compile(r"\d{8}-[a-z0-9][a-z0-9-]*")
#: the longest submission id (a folder name and a table cell, so kept short).
MAX_ID_LENGTH = 64
_SUBMITTED_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")

#: submission metadata fields: name -> (types, required, description).
META_FIELDS: dict[str, tuple[tuple[type, ...], bool, str]] = {
    "name": ((str,), True, "the row's name on the board"),
    "authors": ((list,), True, "non-empty list of author names"),
    "method": ((str,), True, "short description of the method"),
    "description": ((str,), False, "longer description"),
    "code_url": ((str, type(None)), False, "where the training code lives"),
    "commit": ((str, type(None)), False, "commit of the training code"),
    "license": ((str,), False, "license of the artifact"),
    "training_env_steps": ((int, type(None)), False, "env steps used in training (self-reported)"),
    "training_seeds": ((list, type(None)), False, "training seeds (self-reported)"),
    "command": ((str, type(None)), False, "the command that trained the agent"),
    "paper_url": ((str, type(None)), False, "paper describing the method"),
    "notes": ((str,), False, "anything else"),
}
#: free-text fields that may span lines (newlines and tabs allowed); every other string is one line.
MULTILINE_FIELDS = frozenset({"description", "notes"})
#: fields holding a link, which must be an http(s) URL.
URL_FIELDS = ("code_url", "paper_url")
#: bidirectional embeddings, overrides and isolates: they reorder how text around them is shown.
BIDI_CONTROLS = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))


def check_plain_text(value: str, field: str, where: str, multiline: bool = False) -> None:
    """Refuse characters that would make a metadata string more than plain text.

    Control characters (C0 including NUL, ESC and newline, DEL, C1) can rewrite a terminal or
    split a table row; bidi overrides can show a name reversed; lone surrogates cannot be
    written as UTF-8. ``multiline`` fields may hold newlines and tabs. Raises ``ValueError``
    naming the field and the character.
    """
    for char in value:
        if multiline and char in "\n\t":
            continue
        category = unicodedata.category(char)
        if (
            category in ("Cc", "Cs")
            or char in BIDI_CONTROLS
            or (not multiline and category in ("Zl", "Zp"))
        ):
            raise ValueError(
                f"{where}: metadata field {field!r} contains the control character "
                f"U+{ord(char):04X}; metadata must be plain text"
                + ("" if multiline else " on one line")
            )


def check_url(value: str, field: str, where: str) -> None:
    """Refuse a link that is not an absolute ``http``/``https`` URL (``javascript:``, ``data:``...)."""
    parts = urlsplit(value)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"{where}: metadata field {field!r} must be an http:// or https:// URL, got {value!r}"
        )


def check_submission_id(sid: Any, where: str) -> str:
    """Check a submission id: ``YYYYMMDD-slug`` with a real date, at most 64 characters."""
    if not isinstance(sid, str) or not _ID_RE.fullmatch(sid):
        raise ValueError(
            f"{where}: submission id must look like YYYYMMDD-slug (lower-case letters, digits "
            f"and '-'), got {sid!r}"
        )
    if len(sid) > MAX_ID_LENGTH:
        raise ValueError(
            f"{where}: submission id has {len(sid)} characters; at most {MAX_ID_LENGTH} allowed"
        )
    try:
        datetime.datetime.strptime(sid[:8], "%Y%m%d")
    except ValueError:
        raise ValueError(
            f"{where}: submission id {sid!r} must start with a real date YYYYMMDD"
        ) from None
    return sid


def check_meta(meta: Any, where: str) -> dict[str, Any]:
    """Check submission metadata; raise ``ValueError`` naming the field and what it must be."""
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: metadata must be a JSON object")
    unknown = sorted(set(meta) - set(META_FIELDS))
    if unknown:
        raise ValueError(
            f"{where}: metadata field {unknown[0]!r} is unknown; allowed: {sorted(META_FIELDS)}"
        )
    for key, (types, required, description) in META_FIELDS.items():
        if key not in meta:
            if required:
                raise ValueError(f"{where}: metadata field {key!r} is missing ({description})")
            continue
        value = meta[key]
        if isinstance(value, bool) or not isinstance(value, types):
            names = "/".join("null" if t is type(None) else t.__name__ for t in types)
            raise ValueError(f"{where}: metadata field {key!r} must be {names}, got {value!r}")
    if not meta["name"].strip() or len(meta["name"]) > 80:
        raise ValueError(f"{where}: metadata field 'name' must have 1 to 80 characters")
    authors = meta["authors"]
    if not authors or not all(isinstance(a, str) and a.strip() for a in authors):
        raise ValueError(f"{where}: metadata field 'authors' must be a non-empty list of names")
    for key, value in meta.items():
        if isinstance(value, str):
            check_plain_text(value, key, where, multiline=key in MULTILINE_FIELDS)
    for author in authors:
        check_plain_text(author, "authors", where)
    for key in URL_FIELDS:
        if meta.get(key) is not None:
            check_url(meta[key], key, where)
    steps = meta.get("training_env_steps")
    if steps is not None and steps < 0:
        raise ValueError(f"{where}: metadata field 'training_env_steps' must be >= 0")
    seeds = meta.get("training_seeds")
    if seeds is not None and not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"{where}: metadata field 'training_seeds' must be a list of integers")
    return meta


def slugify(name: str) -> str:
    """``"PPO (seed 0)"`` -> ``"ppo-seed-0"`` (short enough for a ``YYYYMMDD-`` id)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[: MAX_ID_LENGTH - 9].strip("-") or "submission"


def board_dir(root: Path, task: str) -> Path:
    """The folder of ``task``'s board."""
    return Path(root) / task


def submissions_dir(root: Path, task: str) -> Path:
    return board_dir(root, task) / "submissions"


def list_submissions(root: Path, task: str) -> list[Path]:
    """The submission folders of a board, sorted by id (temporary leftovers excluded)."""
    folder = submissions_dir(root, task)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and not is_temporary(p))


def check_submission_record(data: Any, where: str, task: str, folder_name: str) -> None:
    """Check the schema of a stored ``submission.json``."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: must be a JSON object")
    allowed = {"schema", "task", "id", "submitted", "meta", "agent", "results_sha256", "files"}
    unknown = sorted(set(data) - allowed)
    missing = sorted(allowed - set(data) - {"files"})
    if unknown:
        raise ValueError(f"{where}: field {unknown[0]!r} is unknown; allowed: {sorted(allowed)}")
    if missing:
        raise ValueError(f"{where}: field {missing[0]!r} is missing")
    if data["schema"] != SUBMISSION_SCHEMA:
        raise ValueError(f"{where}: schema must be {SUBMISSION_SCHEMA!r}, got {data['schema']!r}")
    if data["task"] != task:
        raise ValueError(f"{where}: task is {data['task']!r} but the folder is on board {task!r}")
    if data["id"] != folder_name:
        raise ValueError(f"{where}: id {data['id']!r} differs from its folder {folder_name!r}")
    check_submission_id(data["id"], where)
    if not isinstance(data["submitted"], str) or not _SUBMITTED_RE.fullmatch(data["submitted"]):
        raise ValueError(f"{where}: 'submitted' must be a UTC time like 2026-01-31T12:00:00Z")
    check_meta(data["meta"], where)
    AgentRecord.from_json(data["agent"], where)
    if not isinstance(data["results_sha256"], str) or len(data["results_sha256"]) != 64:
        raise ValueError(f"{where}: results_sha256 must be a 64-character hex digest")
    files = data.get("files", {})
    if not isinstance(files, dict) or not all(
        isinstance(k, str)
        and k.startswith("policy/")
        and ".." not in k
        and isinstance(v, str)
        and len(v) == 64
        for k, v in files.items()
    ):
        raise ValueError(f"{where}: files must map paths under policy/ to sha256 digests")


def submit(
    root: Path,
    task: str,
    agent_spec: str,
    meta: dict[str, Any],
    submission_id: str | None = None,
    progress: bool = False,
    results: dict[str, Any] | None = None,
) -> Path:
    """Evaluate an agent under ``task``'s protocol and add it to the board; returns its folder.

    ``results`` is an earlier ``gymforge evaluate`` output of the same agent under the same
    protocol: it is checked (schema, protocol hash, seeds, episode hash, aggregates, and that its
    agent is this agent: kind, entry point or algorithm, sha256) and used instead of evaluating
    again. CI's verify re-runs every episode of the row all the same.

    Everything is checked before the evaluation starts (which may take minutes): the metadata,
    the id, the agent (one a public board may run), and that the board's submissions folder and the staging folder can be
    written. The folder appears on the board only once complete. The caller re-renders the board
    (:func:`gymforge.leaderboards.render.write_all`).
    """
    protocol: Protocol = load_protocol(root, task)
    check_meta(meta, "--meta")
    now = time.gmtime()
    sid = submission_id or f"{time.strftime('%Y%m%d', now)}-{slugify(meta['name'])}"
    check_submission_id(sid, "--id")
    if protocol.normalisation_scores() is None:
        raise ValueError(
            f"protocol {task} is not calibrated yet; run `gymforge leaderboard calibrate {task}`"
        )
    record = parse_agent_spec(agent_spec, protocol.env_id)
    check_submittable(record, protocol)
    target = submissions_dir(root, task) / sid
    if target.exists():
        raise ValueError(f"submission {task}/{sid} already exists; pick another name or --id")
    check_writable(submissions_dir(root, task), f"board {task}")
    check_writable(Path(root) / STAGING_DIR, f"board {task}")

    if results is None:
        results = evaluate(protocol, record, progress=progress)
    else:
        check_reused_results(results, protocol, record)

    stored = record
    files: dict[str, str] = {}
    staging = new_staging_folder(Path(root) / STAGING_DIR)
    try:
        if record.artifact is not None:
            source = Path(record.artifact)
            (staging / "policy").mkdir()
            copy = staging / "policy" / source.name
            shutil.copyfile(source, copy)
            if sha256_file(copy) != record.sha256:
                raise ValueError(f"{source} changed while it was being evaluated")
            stored = AgentRecord(**{**record.to_json(), "artifact": f"policy/{source.name}"})
            results["agent"] = stored.to_json()
            if record.kind in ("sb3", "torch_policy"):
                for name in RUN_FILES:
                    if (source.parent / name).is_file() and name != source.name:
                        shutil.copyfile(source.parent / name, staging / "policy" / name)
                        files[f"policy/{name}"] = sha256_file(staging / "policy" / name)
                if "policy/evaluations.json" in files:
                    learning_curve(staging / "policy" / "evaluations.json")  # checks its shape
        results_bytes = pretty_json(results).encode()
        write_bytes_atomic(staging / "results.json", results_bytes)
        document = {
            "schema": SUBMISSION_SCHEMA,
            "task": task,
            "id": sid,
            "submitted": time.strftime("%Y-%m-%dT%H:%M:%SZ", now),
            "meta": meta,
            "agent": stored.to_json(),
            "results_sha256": sha256_bytes(results_bytes),
            "files": files,
        }
        write_bytes_atomic(staging / "submission.json", pretty_json(document).encode())
        target.parent.mkdir(parents=True, exist_ok=True)
        publish_folder(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def check_reused_results(results: Any, protocol: Protocol, record: AgentRecord) -> None:
    """Refuse a ``--results`` file that is not this agent's evaluation under this protocol."""
    check_results(results, protocol, "--results")
    stored = AgentRecord.from_json(results["agent"], "--results")
    for key in ("kind", "sha256", "entry_point", "algorithm"):
        if getattr(stored, key) != getattr(record, key):
            raise ValueError(
                f"--results evaluated another agent ({key} {getattr(stored, key)!r}, the "
                f"--agent given has {getattr(record, key)!r}); evaluate this agent or drop "
                "--results"
            )


#: the metadata file ``gymforge submit --init-meta`` writes: every field, required ones first.
META_TEMPLATE: dict[str, Any] = {
    "name": "My method",
    "authors": ["Your Name"],
    "method": "one line: what the agent is and how it was trained",
    "description": "optional: longer description (newlines allowed)",
    "code_url": "https://example.org/your/code",
    "commit": None,
    "license": "MIT",
    "training_env_steps": None,
    "training_seeds": None,
    "command": None,
    "paper_url": None,
    "notes": "optional",
}


def load_meta(path: Path) -> dict[str, Any]:
    """Read and check a ``--meta`` file."""
    return check_meta(read_json(path, "--meta"), str(path))


def learning_curve(path: Path) -> list[tuple[int, float]]:
    """``(timesteps, mean return)`` points of a ``gymforge train`` ``evaluations.json``."""
    data = read_json(path, "evaluations.json")
    points = data.get("evaluations") if isinstance(data, dict) else None
    if not isinstance(points, list) or not all(
        isinstance(p, dict)
        and isinstance(p.get("timesteps"), int)
        and isinstance(p.get("mean_return"), int | float)
        for p in points
    ):
        raise ValueError(
            f"{path}: expected {{'evaluations': [{{'timesteps': int, 'mean_return': float}}, ...]}}"
        )
    return [(int(p["timesteps"]), float(p["mean_return"])) for p in points]
