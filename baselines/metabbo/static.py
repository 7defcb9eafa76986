"""Static configuration baseline: the best fixed action found by a grid search on the train split.

:func:`grid_search` runs every configuration of a grid on every function of a split's *train*
subset (one fixed instance per function, ``seeds`` runs each, the full generation budget), all
in one batched env, and ranks the configurations by mean Perf (ties: mean log10 final error).
The grid sets ``F1``, ``F2`` and ``Cr`` of every sub-population to the same bins from
``GRID_BINS``, i.e. values ``{0.2, 0.533, 0.933}`` (bins 3, 8, 14): 27
configurations per preset (for ``pso``: ``w``, ``c1 = c2`` and ``c3`` on the same bins); other
dimensions (migration, bound handling) keep the preset's default bins. The winners are saved in ``static_configs.json`` next to this file (written by
``python -m gymforge.baselines.metabbo.static``) and :class:`StaticAgent` plays them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gymforge.baselines.metabbo.common import as_batch, env_preset, unbatch
from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv
from gymforge.envs.metabbo.metrics import log_error, perf
from gymforge.envs.metabbo.presets import get_preset
from gymforge.envs.metabbo.problems import split_functions

__all__ = ["GRID_BINS", "RESULT_FILE", "StaticAgent", "grid_configurations", "grid_search"]

GRID_BINS = (3, 8, 14)
RESULT_FILE = Path(__file__).with_name("static_configs.json")


def grid_configurations(preset: str) -> list[list[int]]:
    """The grid's actions for ``preset`` (shared F1/F2/Cr bins, other dimensions at default)."""
    p = get_preset(preset)
    out = []
    for f1, f2, cr in itertools.product(GRID_BINS, repeat=3):
        # PSO presets: w, c1 = c2 and c3 take the three grid bins
        value = {"F1": f1, "F2": f2, "Cr": cr, "w": f1, "c1": f2, "c2": f2, "c3": cr}
        out.append(
            [
                value.get(h.key, d)
                for h, d in zip(p.hyperparameters, p.default_action(), strict=True)
            ]
        )
    return out


def grid_search(
    preset: str = "alg0",
    split: str = "easy",
    seeds: int = 1,
    dimension: int = 10,
    population_size: int = 100,
    max_generations: int = 500,
    instance_id: int = 1,
    device: str = "cpu",
    chunk: int = 1024,
) -> dict[str, Any]:
    """Evaluate every grid configuration on the train subset; returns the ranking and the best."""
    configs = grid_configurations(preset)
    fids = list(split_functions(split, "train"))
    runs = [(c, f, s + 1) for c in range(len(configs)) for f in fids for s in range(seeds)]
    err = np.empty(len(runs))
    err0 = np.empty(len(runs))
    start = time.perf_counter()
    for lo in range(0, len(runs), chunk):
        part = runs[lo : lo + chunk]
        env = MetaBBOVecEnv(
            num_envs=len(part),
            device=device,
            autoreset=False,
            preset=preset,
            split=fids,
            dimension=dimension,
            population_size=population_size,
            max_generations=max_generations,
        )
        env.reset(
            seed=[s for _, _, s in part],
            options={
                "function_ids": [f for _, f, _ in part],
                "instance_ids": [instance_id] * len(part),
            },
        )
        action = torch.tensor([configs[c] for c, _, _ in part], device=env.device)
        done = torch.zeros(len(part), dtype=torch.bool, device=env.device)
        while not bool(done.all()):
            _, _, terminated, truncated, info = env.step(action)
            done |= terminated | truncated
        err[lo : lo + len(part)] = info["best_error"].cpu().numpy()
        err0[lo : lo + len(part)] = info["initial_error"].cpu().numpy()
    shape = (len(configs), len(fids) * seeds)
    perf_c = perf(err, err0).reshape(shape).mean(1)
    log_c = log_error(err).reshape(shape).mean(1)
    order = sorted(range(len(configs)), key=lambda c: (-perf_c[c], log_c[c]))
    best = order[0]
    p = get_preset(preset)
    return {
        "preset": preset,
        "bins": configs[best],
        "values": {
            h.name: h.grid()[b] for h, b in zip(p.hyperparameters, configs[best], strict=True)
        },
        "perf": float(perf_c[best]),
        "log10_error": float(log_c[best]),
        "settings": {
            "split": split,
            "subset": "train",
            "functions": fids,
            "instance_id": instance_id,
            "seeds": list(range(1, seeds + 1)),
            "dimension": dimension,
            "population_size": population_size,
            "max_generations": max_generations,
            "grid_bins": list(GRID_BINS),
            "configurations": len(configs),
            "seconds": time.perf_counter() - start,
            "device": device,
        },
        "ranking": [
            {"bins": configs[c], "perf": float(perf_c[c]), "log10_error": float(log_c[c])}
            for c in order
        ],
    }


def load_configs(path: Path = RESULT_FILE) -> dict[str, Any]:
    """The saved grid-search results by preset name ({} if none were saved)."""
    return json.loads(path.read_text()) if path.exists() else {}


def save_result(result: dict[str, Any], path: Path = RESULT_FILE) -> None:
    """Merge ``result`` into ``path`` under its preset (temp file + rename)."""
    data = load_configs(path)
    data[result["preset"]] = result
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)


class StaticAgent:
    """Plays one fixed action every generation.

    Args:
        env: a ``MetaBBO`` env (its preset selects the saved configuration).
        bins: the action to play; default: the saved grid-search winner of the env's preset.
    """

    def __init__(self, env: Any, bins: list[int] | None = None) -> None:
        preset = env_preset(env)
        if bins is None:
            saved = load_configs().get(preset.name)
            if saved is None:
                raise ValueError(
                    f"no saved static configuration for preset {preset.name!r}; run "
                    f"python -m gymforge.baselines.metabbo.static --preset {preset.name}"
                )
            bins = saved["bins"]
        action = np.asarray(bins, dtype=np.int64)
        if action.shape != (preset.num_controlled,) or ((action < 0) | (action > 15)).any():
            raise ValueError(
                f"bins must be {preset.num_controlled} integers in 0..15 for preset "
                f"{preset.name!r}, got {bins!r}"
            )
        self.action = action

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        obs, single = as_batch(observation)
        return unbatch(np.tile(self.action, (obs.shape[0], 1)), single)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Grid search for the static MetaBBO baseline.")
    parser.add_argument("--preset", default="alg0")
    parser.add_argument("--split", default="easy")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--max-generations", type=int, default=500)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULT_FILE)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    result = grid_search(
        args.preset,
        args.split,
        args.seeds,
        max_generations=args.max_generations,
        device=args.device,
    )
    save_result(result, args.out)
    print(json.dumps({k: result[k] for k in ("preset", "bins", "perf", "log10_error")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
