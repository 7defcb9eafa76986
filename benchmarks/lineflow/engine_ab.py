"""The batched LineFlow engine of this checkout vs. the engine of a git revision, side by side.

Measures what a change of the engine's code costs or saves with the shortcuts on: the same
warmed line state is stepped with the same actions by the engine of the working tree ("after")
and by the engine package of ``--baseline`` ("before": ``envs/lineflow/batched`` at that
revision, loaded from git into a temporary package), in one process, one torch thread,
interleaved: each repeat times every engine once, in turn, from the same warmed state and
random counters (in alternating order). Reported: the median seconds per measurement of each engine and the median
of the per-repeat speed ratios (before / after seconds: above 1 is faster now).

Cases (``--cases``): WT (``LineFlow-WaitingTime-v0``) at B = 4096 and CL3
(``LineFlow-ComplexLine-v0``, 3 assemblies, 9 workers, no alternation) at B = 1024, warmed
``--warm-up-steps`` steps with seeded random actions, then ``--steps`` steps per measurement.

    python -m benchmarks.lineflow.engine_ab --baseline main --repeats 9
"""

from __future__ import annotations

import argparse
import copy
import importlib
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

import gymforge  # noqa: F401  (registers the ids)

PACKAGE = "envs/lineflow/batched"
IMPORT_NAME = "gymforge.envs.lineflow.batched"
CASES: dict[str, tuple[str, int, dict[str, Any]]] = {
    "WT": ("LineFlow-WaitingTime-v0", 4096, {}),
    "CL3": (
        "LineFlow-ComplexLine-v0",
        1024,
        {"n_assemblies": 3, "n_workers": 9, "scrap_factor": 1 / 3, "alternate": False},
    ),
}


def load_baseline_engine(revision: str, folder: Path) -> type:
    """The ``Engine`` class of ``revision``'s engine package, imported from a copy in
    ``folder`` under its own name (its imports of itself rewritten to that name)."""
    root = Path(__file__).resolve().parents[2]
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{revision}:{PACKAGE}"],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    name = "lineflow_engine_baseline"
    package = folder / name
    package.mkdir()
    for file in names:
        if file.endswith(".py"):
            source = subprocess.run(
                ["git", "show", f"{revision}:{PACKAGE}/{file}"],
                cwd=root, check=True, capture_output=True, text=True,
            ).stdout  # fmt: skip
            (package / file).write_text(source.replace(IMPORT_NAME, name))
    # Registered by hand rather than by putting ``folder`` on ``sys.path``: only this one package
    # becomes importable, and nothing else in the temporary folder can shadow a real module.
    spec = importlib.util.spec_from_file_location(
        name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None, f"no package at {package}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return importlib.import_module(f"{name}.engine").Engine


def warmed_env(case: str, warm_up_steps: int, seed: int) -> tuple[Any, list[torch.Tensor]]:
    """The case's env after ``warm_up_steps`` seeded random-action steps, and its actions."""
    env_id, batch, kwargs = CASES[case]
    env = gym.make_vec(
        env_id,
        num_envs=batch,
        vectorization_mode="vector_entry_point",
        array_backend="torch",
        scenario_kwargs=kwargs,
    )
    env.reset(seed=seed)
    env.action_space.seed(seed)
    actions = [
        torch.as_tensor(np.asarray(env.action_space.sample()), dtype=torch.long) for _ in range(8)
    ]
    for i in range(warm_up_steps):
        env.step(actions[i % len(actions)])
    return env, actions


def timed_steps(env: Any, start: Any, actions: list[torch.Tensor], steps: int) -> float:
    """Seconds for ``steps`` steps of ``env`` from the copy ``start`` of a warmed env's
    (state, counters, steps)."""
    state, counter, episode_steps = copy.deepcopy(start)
    env.state, env.rng.counter, env._steps = state, counter, episode_steps
    began = time.perf_counter()
    for i in range(steps):
        env.step(actions[i % len(actions)])
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="main", help="git revision of the 'before' engine")
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20, help="steps per measurement")
    parser.add_argument("--warm-up-steps", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.steps < 1 or args.warm_up_steps < 0:
        parser.error("--repeats and --steps must be >= 1, --warm-up-steps >= 0")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as folder:
        baseline = load_baseline_engine(args.baseline, Path(folder))
        for case in args.cases:
            env, actions = warmed_env(case, args.warm_up_steps, args.seed)
            start = copy.deepcopy((env.state, env.rng.counter, env._steps))
            engines = {"after": env.engine, "before": baseline(env.compiled)}
            seconds: dict[str, list[float]] = {name: [] for name in engines}
            for repeat in range(args.repeats):
                parts = []
                order = list(engines.items())
                for name, engine in order if repeat % 2 == 0 else order[::-1]:
                    env.engine = engine
                    seconds[name].append(timed_steps(env, start, actions, args.steps))
                    parts.append(env.state.n_parts.clone())
                if not torch.equal(parts[0], parts[1]):  # (the same work, or no comparison)
                    raise RuntimeError(f"{case}: the two engines produced different parts")
            ratios = [b / a for a, b in zip(seconds["after"], seconds["before"], strict=True)]
            batch = CASES[case][1]
            print(
                f"{case} B={batch}: after {statistics.median(seconds['after']):.3f} s, "
                f"before {statistics.median(seconds['before']):.3f} s per {args.steps} steps; "
                f"speed after/before median {statistics.median(ratios):.3f} "
                f"(min {min(ratios):.3f}, max {max(ratios):.3f}, {args.repeats} repeats)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
