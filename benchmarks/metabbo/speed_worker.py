"""The MetaBBO speed benchmark's worker: timed batched episodes served over stdin/stdout.

``benchmarks.metabbo.speed`` starts this file as a script, once per implementation, with
``PYTHONPATH`` naming the tree whose ``gymforge`` it should import (none: the installed one) and a
scratch folder as working directory, so that the repository root's ``gymforge/`` folder does not
shadow the installed package. It therefore imports nothing from ``benchmarks``: only the standard
library, numpy, torch and ``gymforge``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

FUNCTIONS = (1, 2, 10, 11)


def _problem(i: int) -> tuple[int, int]:
    return FUNCTIONS[i % len(FUNCTIONS)], 1000 + i


def batched_episode(workload: str, b: int, gens: int, seed: int) -> dict[str, Any]:
    """One timed episode of ``b`` instances: wall and CPU seconds, final errors, a digest."""
    import gymnasium as gym

    import gymforge  # noqa: F401 - registers the ids

    kwargs: dict[str, Any] = {"split": list(FUNCTIONS)} if workload == "mix4" else {}
    env = gym.make_vec(
        "MetaBBO-v0",
        num_envs=b,
        vectorization_mode="vector_entry_point",
        array_backend="torch",
        autoreset=False,
        max_generations=gens,
        **kwargs,
    )
    options = None
    if workload == "mix4":
        probs = [_problem(i) for i in range(b)]
        options = {"function_ids": [p[0] for p in probs], "instance_ids": [p[1] for p in probs]}
    actions = torch.randint(0, 16, (gens, b, 3), generator=torch.Generator().manual_seed(seed))
    digest = hashlib.blake2b(digest_size=8)
    wall, cpu = time.perf_counter(), time.thread_time()
    obs, _ = env.reset(seed=[seed + i for i in range(b)], options=options)
    digest.update(obs.numpy().tobytes())
    info: dict[str, Any] = {}
    for t in range(gens):
        obs, reward, term, trunc, info = env.step(actions[t])
        digest.update(obs.numpy().tobytes())
        digest.update(reward.numpy().tobytes())
        if bool((term | trunc).all()):
            break
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    errors = info["best_error"].numpy()
    digest.update(errors.tobytes())
    env.close()
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "median_log10_error": float(np.median(np.log10(np.maximum(errors, 1e-8)))),
        "digest": digest.hexdigest(),
        "distinct_functions": len(set(info["function_id"].tolist())),
    }


def worker() -> int:
    """Serve episodes: one JSON request per stdin line, one JSON result per stdout line."""
    torch.set_num_threads(1)
    import gymforge.envs.metabbo as metabbo

    print(json.dumps({"ready": True, "code": str(Path(metabbo.__file__).resolve().parent)}))
    sys.stdout.flush()
    batched_episode("mix4", 8, 5, 0)  # warm-up: imports, first-call costs
    for line in sys.stdin:
        request = json.loads(line)
        result = batched_episode(
            request["workload"], request["b"], request["gens"], request["seed"]
        )
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(worker())
