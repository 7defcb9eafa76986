"""Frozen evaluation protocols: one JSON file per task under ``leaderboards/protocols/<suite>/``.

A protocol fixes everything an evaluation depends on, so that two evaluations of the same agent
under it give the same numbers::

    {
      "schema": "gymforge.protocol/1",
      "task": "lineflow/WaitingTime",          # <suite>/<task>; the file is protocols/<task>.json
      "version": 1,                            # bumped (with a new board) on any change
      "title": "...", "description": "...",
      "env": {"id": "LineFlow-WaitingTime-v0", "version": 0,
              "kwargs": {"horizon": 4000},      # overrides passed to gym.make
              "registry_kwargs": {...}},        # the id's registered kwargs when frozen
      "evaluation": {"seeds": [1000000, ...],   # held-out episode seeds, one episode each
                     "episodes": 20, "max_steps": 4000, "verify_episodes": 1},
      "training_seeds": {"start": 0, "stop": 1000000},   # disjoint from the evaluation seeds
      "budget": {"train_env_steps": 1000000, "source": "..."},
      "metric": {"name": "return" | "info:<key>", "higher_is_better": true, "description": "...",
                 "transform": {"kind": "log10", "floor": 1e-8}},   # optional

      "record_info": ["n_parts", ...],          # final-info entries kept per episode
      "normalisation": {"random": {"agent": "random", "score": 68.1},
                        "reference": {"agent": "optimal", "score": 157.8}},
      "tolerance": {"abs": 1e-6},               # per-episode metric, when verify re-runs
      "offline_dataset": {...},                 # optional: the offline-dataset track, see
                                                #   gymforge.leaderboards.offline
      "agents": {"name": "module:factory"}      # optional: entry points this board runs
    }                                           #   besides the env id's registered agents

Protocols are discovered by listing the folder: adding a task for a new family is adding one file
(then ``gymforge leaderboard calibrate TASK`` fills in the normalisation scores before the first
submission). :func:`load_protocol` checks every field and raises :class:`ProtocolError` naming the
file and the field.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.hashing import sha256_file
from gymforge.leaderboards.files import read_json
from gymforge.leaderboards.roots import protocols_dir
from gymforge.registry import did_you_mean

SCHEMA = "gymforge.protocol/1"
_TASK_RE = re.compile(r"[a-z0-9_]+/[A-Za-z0-9_]+")
_ID_VERSION_RE = re.compile(r"-v(\d+)\Z")
_KEYS = {
    "schema",
    "task",
    "version",
    "title",
    "description",
    "env",
    "evaluation",
    "training_seeds",
    "budget",
    "metric",
    "record_info",
    "normalisation",
    "tolerance",
}
_OPTIONAL_KEYS = {"offline_dataset", "agents"}
_ENTRY_POINT_RE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


class ProtocolError(ValueError):
    """A protocol file is missing, malformed or inconsistent."""


@dataclass(frozen=True)
class Protocol:
    """A loaded, checked protocol.

    Attributes:
        task: ``"<suite>/<task>"``, e.g. ``"lineflow/WaitingTime"``.
        path: the protocol file.
        sha256: hash of the file's bytes (results record it; verify compares it).
        data: the parsed file.
    """

    task: str
    path: Path
    sha256: str
    data: dict[str, Any]

    @property
    def version(self) -> int:
        return int(self.data["version"])

    @property
    def env_id(self) -> str:
        return str(self.data["env"]["id"])

    @property
    def env_kwargs(self) -> dict[str, Any]:
        return dict(self.data["env"]["kwargs"])

    @property
    def seeds(self) -> list[int]:
        return [int(s) for s in self.data["evaluation"]["seeds"]]

    @property
    def max_steps(self) -> int:
        return int(self.data["evaluation"]["max_steps"])

    @property
    def verify_episodes(self) -> int:
        return int(self.data["evaluation"]["verify_episodes"])

    @property
    def metric(self) -> str:
        return str(self.data["metric"]["name"])

    def metric_value(self, raw: float) -> float:
        """The episode's metric from its raw value (the return or the info entry): the raw value,
        or ``log10(max(raw, floor))`` under ``metric.transform = {"kind": "log10", "floor": f}``."""
        transform = self.data["metric"].get("transform")
        if transform is None:
            return float(raw)
        return math.log10(max(float(raw), float(transform["floor"])))

    @property
    def higher_is_better(self) -> bool:
        return bool(self.data["metric"]["higher_is_better"])

    @property
    def record_info(self) -> list[str]:
        return list(self.data["record_info"])

    @property
    def offline_dataset(self) -> dict[str, Any] | None:
        """The offline-dataset block (:mod:`gymforge.leaderboards.offline`), or ``None``."""
        return self.data.get("offline_dataset")

    @property
    def tolerance(self) -> float:
        return float(self.data["tolerance"]["abs"])

    @property
    def suite(self) -> str:
        return self.task.split("/")[0]

    @property
    def name(self) -> str:
        return self.task.split("/")[1]

    def normalisation_scores(self) -> tuple[float, float] | None:
        """``(random, reference)`` scores, or ``None`` while the protocol is not calibrated."""
        norm = self.data["normalisation"]
        low, high = norm["random"].get("score"), norm["reference"].get("score")
        if low is None or high is None:
            return None
        return float(low), float(high)

    def normalise(self, score: float) -> float | None:
        """``(score − random) / (reference − random)``: 0 is random, 1 the reference agent."""
        scores = self.normalisation_scores()
        if scores is None:
            return None
        low, high = scores
        return (score - low) / (high - low) + 0.0  # + 0.0: no -0.0 when lower is better


def _fail(path: Path, field: str, message: str) -> ProtocolError:
    return ProtocolError(f"protocol {path}: field {field!r} {message}")


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path, where: str):
    if key not in data:
        raise _fail(path, f"{where}{key}", "is missing")
    value = data[key]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise _fail(path, f"{where}{key}", f"must be a number, got {value!r}")
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise _fail(path, f"{where}{key}", f"must be of type {names}, got {value!r}")
    return value


def check_protocol_data(data: Any, path: Path, task: str) -> None:
    """Check the schema and the internal consistency of a protocol; raise ``ProtocolError``."""
    if not isinstance(data, dict):
        raise ProtocolError(f"protocol {path}: must be a JSON object")
    unknown = sorted(set(data) - _KEYS - _OPTIONAL_KEYS)
    if unknown:
        allowed = sorted(_KEYS | _OPTIONAL_KEYS)
        raise _fail(path, unknown[0], f"is not a protocol field; allowed: {allowed}")
    if _require(data, "schema", str, path, "") != SCHEMA:
        raise _fail(path, "schema", f"must be {SCHEMA!r}, got {data['schema']!r}")
    if _require(data, "task", str, path, "") != task:
        raise _fail(path, "task", f"must be {task!r} (the file's place under protocols/)")
    if _require(data, "version", int, path, "") < 1:
        raise _fail(path, "version", "must be >= 1")
    _require(data, "title", str, path, "")
    _require(data, "description", str, path, "")

    env = _require(data, "env", dict, path, "")
    env_id = _require(env, "id", str, path, "env.")
    version = _require(env, "version", int, path, "env.")
    match = _ID_VERSION_RE.search(env_id)
    if match is None or int(match.group(1)) != version:
        raise _fail(path, "env.version", f"must match the id's -v suffix ({env_id!r})")
    _require(env, "kwargs", dict, path, "env.")
    _require(env, "registry_kwargs", dict, path, "env.")

    evaluation = _require(data, "evaluation", dict, path, "")
    seeds = _require(evaluation, "seeds", list, path, "evaluation.")
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise _fail(path, "evaluation.seeds", "must be a non-empty list of integers")
    if any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise _fail(path, "evaluation.seeds", "must be distinct non-negative integers")
    if _require(evaluation, "episodes", int, path, "evaluation.") != len(seeds):
        raise _fail(path, "evaluation.episodes", f"must equal the number of seeds ({len(seeds)})")
    if _require(evaluation, "max_steps", int, path, "evaluation.") < 1:
        raise _fail(path, "evaluation.max_steps", "must be >= 1")
    verify_episodes = _require(evaluation, "verify_episodes", int, path, "evaluation.")
    if not 1 <= verify_episodes <= len(seeds):
        raise _fail(path, "evaluation.verify_episodes", f"must be in [1, {len(seeds)}]")

    train = _require(data, "training_seeds", dict, path, "")
    start = _require(train, "start", int, path, "training_seeds.")
    stop = _require(train, "stop", int, path, "training_seeds.")
    if not 0 <= start < stop:
        raise _fail(path, "training_seeds", "must satisfy 0 <= start < stop")
    overlap = [s for s in seeds if start <= s < stop]
    if overlap:
        raise _fail(
            path,
            "evaluation.seeds",
            f"must be disjoint from the training seeds [{start}, {stop}); shared: {overlap[:5]}",
        )

    budget = _require(data, "budget", dict, path, "")
    steps = _require(budget, "train_env_steps", (int, type(None)), path, "budget.")
    if steps is not None and steps < 1:
        raise _fail(path, "budget.train_env_steps", "must be >= 1 or null")
    _require(budget, "source", str, path, "budget.")

    metric = _require(data, "metric", dict, path, "")
    name = _require(metric, "name", str, path, "metric.")
    if name != "return" and not (name.startswith("info:") and len(name) > 5):
        raise _fail(path, "metric.name", f"must be 'return' or 'info:<key>', got {name!r}")
    _require(metric, "higher_is_better", bool, path, "metric.")
    unknown = sorted(set(metric) - {"name", "higher_is_better", "description", "transform"})
    if unknown:
        raise _fail(path, f"metric.{unknown[0]}", "is not a metric field")
    if "transform" in metric:
        transform = _require(metric, "transform", dict, path, "metric.")
        if transform.get("kind") != "log10" or set(transform) != {"kind", "floor"}:
            raise _fail(path, "metric.transform", 'must be {"kind": "log10", "floor": > 0}')
        floor = transform["floor"]
        if isinstance(floor, bool) or not isinstance(floor, int | float) or floor <= 0:
            raise _fail(path, "metric.transform.floor", f"must be a number > 0, got {floor!r}")
    _require(metric, "description", str, path, "metric.")

    record = _require(data, "record_info", list, path, "")
    if not all(isinstance(k, str) for k in record):
        raise _fail(path, "record_info", "must be a list of info keys (strings)")

    norm = _require(data, "normalisation", dict, path, "")
    for which in ("random", "reference"):
        entry = _require(norm, which, dict, path, "normalisation.")
        _require(entry, "agent", str, path, f"normalisation.{which}.")
        _require(entry, "score", (int, float, type(None)), path, f"normalisation.{which}.")
    low, high = norm["random"]["score"], norm["reference"]["score"]
    if (low is None) != (high is None):
        raise _fail(path, "normalisation", "must give both scores or neither (not calibrated)")
    if low is not None and low == high:
        raise _fail(path, "normalisation", "random and reference scores must differ")

    tolerance = _require(data, "tolerance", dict, path, "")
    if _require(tolerance, "abs", (int, float), path, "tolerance.") < 0:
        raise _fail(path, "tolerance.abs", "must be >= 0")

    agents = data.get("agents", {})
    if not isinstance(agents, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and _ENTRY_POINT_RE.fullmatch(v)
        for k, v in agents.items()
    ):
        raise _fail(path, "agents", "must map names to entry points 'module:factory'")

    if "offline_dataset" in data:
        from gymforge.leaderboards.offline import check_offline_block

        check_offline_block(data["offline_dataset"], path, len(seeds))


def protocol_path(root: Path, task: str) -> Path:
    """Where the protocol of ``task`` lives for the board root (its own or the packaged one)."""
    return protocols_dir(root) / f"{task}.json"


def load_protocol(root: Path, task: str) -> Protocol:
    """Load and check the protocol of ``task`` (``"<suite>/<task>"``) under ``root``."""
    if not _TASK_RE.fullmatch(task):
        raise ProtocolError(f"task must look like '<suite>/<Task>', got {task!r}")
    path = protocol_path(root, task)
    data = read_json(path, f"protocol {task!r}")
    check_protocol_data(data, path, task)
    return Protocol(task=task, path=path, sha256=sha256_file(path), data=data)


def list_tasks(root: Path) -> list[str]:
    """Every task with a protocol file under ``root``, sorted (the folder is the list)."""
    base = protocols_dir(root)
    tasks = [
        f"{p.parent.name}/{p.stem}" for p in base.glob("*/*.json") if not p.name.startswith(".")
    ]
    return sorted(tasks)


def all_protocols(root: Path) -> list[Protocol]:
    """Every protocol under ``root``, loaded and checked."""
    return [load_protocol(root, task) for task in list_tasks(root)]


def resolve_task(root: Path, name: str) -> str:
    """``name`` as a full task: ``"lineflow/WaitingTime"``, ``"WaitingTime"`` (when unique), or
    the env id of exactly one protocol."""
    tasks = list_tasks(root)
    if name in tasks:
        return name
    by_name = [t for t in tasks if t.split("/")[1] == name]
    if len(by_name) == 1:
        return by_name[0]
    by_env = [p.task for p in all_protocols(root) if p.env_id == name]
    if len(by_env) == 1:
        return by_env[0]
    hint = did_you_mean(name, tasks) or did_you_mean(name, [t.split("/")[1] for t in tasks])
    raise ProtocolError(
        f"unknown task {name!r}{hint} (`gymforge leaderboard list` shows the {len(tasks)} tasks)"
    )
