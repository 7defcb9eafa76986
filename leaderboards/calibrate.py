"""Fill in a protocol's normalisation scores by evaluating its random and reference agents.

On an offline protocol it first builds every evaluation seed's dataset and records their sha256.

Run once, when a protocol is written and before its first submission (the protocol's hash is
part of every result, so calibrating later would invalidate the board; it is refused then).
"""

from __future__ import annotations

from pathlib import Path

from gymforge.baselines.agent_loader import parse_agent_spec
from gymforge.leaderboards.evaluator import run_episodes
from gymforge.leaderboards.files import read_json, write_json_atomic
from gymforge.leaderboards.offline import dataset_hashes
from gymforge.leaderboards.protocol import load_protocol
from gymforge.leaderboards.stats import aggregate
from gymforge.leaderboards.submission import list_submissions


def calibrate(root: Path, task: str, progress: bool = False) -> tuple[float, float]:
    """Measure and store ``(random, reference)`` mean scores of ``task``'s protocol."""
    protocol = load_protocol(root, task)
    if list_submissions(root, task):
        raise ValueError(
            f"board {task} already has submissions; calibrating would change the protocol under "
            "them. Freeze a new protocol version instead"
        )
    data = read_json(protocol.path, f"protocol {task}")
    if protocol.offline_dataset is not None:  # record the datasets' hashes first
        data["offline_dataset"]["sha256"] = dataset_hashes(protocol)
        write_json_atomic(protocol.path, data)
        protocol = load_protocol(root, task)
    scores = []
    for which in ("random", "reference"):
        record = parse_agent_spec(data["normalisation"][which]["agent"], protocol.env_id)
        episodes = run_episodes(protocol, record, progress=progress)
        mean = aggregate([e["metric"] for e in episodes])["mean"]
        data["normalisation"][which]["score"] = mean
        scores.append(mean)
    write_json_atomic(protocol.path, data)
    load_protocol(root, task)  # the written file must still pass its checks
    return scores[0], scores[1]
