"""MetaBBO metrics and the test-split evaluation protocol.

- **Perf** (Q-Mamba): ``1 - e_T / e_0``, the error of the best value found after the episode over
  the initial population's best error (``e = f - f_opt``); it is the return of ``MetaBBO-v0``.
  It is compressed near 1 (a uniformly random configuration already scores about 0.97 on
  Q-Mamba's test set), hence also:
- **log10 final error**: ``log10(max(e_T, 1e-8))`` (the floor is the termination target).
- **AEI-style score** (after MetaBox's AEI, which multiplies exp-normalised scores for cost,
  evaluations and runtime, each relative to random search): per problem,
  ``exp(mean_seeds[log10 e_RS - log10 e_T] + mean_seeds[(N - n) / N])`` where ``e_RS`` is the
  best error of random search (uniform sampling of the box) with the same budget ``N`` of
  evaluations (``population_size x (max_generations + 1)``) and ``n`` the evaluations the
  method used (``n < N`` only after early termination). The runtime term is left out: every
  method runs inside the same batched env, so its wall time says nothing about the method. A
  score of 1 is random search's level; larger is better. The aggregate is the geometric mean over
  problems (one easy problem, e.g. the linear slope, would dominate an arithmetic mean).

:func:`evaluate` runs Q-Mamba's test protocol: every function of a split's test subset, one
fixed instance each, ``seeds`` runs (seeds ``1..seeds``) of ``max_generations`` generations, all
in one batched env (instance ``i`` depends only on its own seed, so batching changes nothing).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.metabbo.bbob import BBOBInstances
from gymforge.envs.metabbo.bbob import evaluate as evaluate_f
from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv
from gymforge.envs.metabbo.problems import build_instances, split_functions

__all__ = ["aei_scores", "evaluate", "log_error", "perf", "random_search_error"]

ERROR_FLOOR = 1e-8


def perf(best_error: Tensor | np.ndarray, initial_error: Tensor | np.ndarray) -> np.ndarray:
    """Q-Mamba's ``Perf = 1 - e_T / e_0`` per run (1 where ``e_0 = 0``)."""
    e_t = np.asarray(best_error, dtype=np.float64)
    e_0 = np.asarray(initial_error, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - e_t / e_0
    return np.where(e_0 > 0, out, 1.0)


def log_error(best_error: Tensor | np.ndarray, floor: float = ERROR_FLOOR) -> np.ndarray:
    """``log10(max(e_T, floor))`` per run."""
    return np.log10(np.maximum(np.asarray(best_error, dtype=np.float64), floor))


def random_search_error(
    problems: BBOBInstances, budget: int, seeds: Sequence[int], chunk: int = 2048
) -> np.ndarray:
    """Best error of uniform random search with ``budget`` evaluations per instance
    (instance ``i`` seeded ``seeds[i]``; batched, no loop over instances)."""
    rng = InstanceRNG.create(list(seeds), problems.device)
    best = torch.full((problems.batch_size,), math.inf, dtype=torch.float64)
    done = 0
    while done < budget:
        n = min(chunk, budget - done)
        x = -5.0 + 10.0 * rng.uniform(n, problems.dimension).to(torch.float64)
        f = evaluate_f(problems, x)
        best = torch.minimum(best, f.min(-1).values.cpu())
        done += n
    return (best - problems.f_opt.cpu()).clamp(min=0.0).numpy()


def aei_scores(
    log10_error: np.ndarray,
    log10_random: np.ndarray,
    evaluations: np.ndarray,
    budget: int,
) -> np.ndarray:
    """Per-problem AEI-style scores from ``[problems, seeds]`` arrays (see the module docstring)."""
    cost = (log10_random - log10_error).mean(-1)
    fes = ((budget - evaluations) / budget).mean(-1)
    return np.exp(cost + fes)


def _as_agent(policy: Any, env: MetaBBOVecEnv) -> Any:
    if hasattr(policy, "act") and not isinstance(policy, type):
        return policy
    if callable(policy):
        return policy(env)
    raise ValueError(f"policy must be an agent with act() or a factory(env), got {policy!r}")


def evaluate(
    policy: Any | Callable[[MetaBBOVecEnv], Any],
    preset: str = "alg0",
    split: str | Sequence[int] = "easy",
    subset: str = "test",
    seeds: int = 19,
    dimension: int = 10,
    population_size: int = 100,
    max_generations: int = 500,
    instance_mode: str = "random",
    instance_id: int = 1,
    device: str = "cpu",
    with_random_search: bool = True,
) -> dict[str, Any]:
    """Run ``policy`` on every function of ``split``'s ``subset`` with seeds ``1..seeds``.

    Args:
        policy: an agent (``reset(seed)``, batched ``act(obs, info)``) or a factory ``f(env)``.
        instance_id: the instance of every function (a random-instance seed, or a COCO id).
        with_random_search: also compute the AEI-style scores (runs random search).

    Returns a JSON-ready dict: the settings, per-problem means (``perf``, ``log10_error``,
    ``evaluations``, ``aei``) and the overall means, plus per-run arrays under ``runs``.
    """
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be an integer >= 1, got {seeds!r}")
    fids = list(split_functions(split, subset))
    n_runs = len(fids) * seeds
    env = MetaBBOVecEnv(
        num_envs=n_runs,
        device=device,
        autoreset=False,
        preset=preset,
        split=fids,
        subset=subset,
        dimension=dimension,
        population_size=population_size,
        max_generations=max_generations,
        instance_mode=instance_mode,
    )
    run_fids = [f for f in fids for _ in range(seeds)]
    run_seeds = [s + 1 for _ in fids for s in range(seeds)]
    agent = _as_agent(policy, env)
    agent.reset(seed=0)
    start = time.perf_counter()
    obs, info = env.reset(
        seed=run_seeds, options={"function_ids": run_fids, "instance_ids": [instance_id] * n_runs}
    )
    done = torch.zeros(n_runs, dtype=torch.bool, device=env.device)
    info_np: dict[str, Any] = {}
    while not bool(done.all()):
        action = agent.act(obs.cpu().numpy(), info_np)
        obs, _, terminated, truncated, info = env.step(torch.as_tensor(np.asarray(action)))
        done |= terminated | truncated
        info_np = {k: v.cpu().numpy() for k, v in info.items() if not k.startswith("_")}
    seconds = time.perf_counter() - start
    shape = (len(fids), seeds)
    err = info_np["best_error"].reshape(shape)
    runs = {
        "best_error": err,
        "initial_error": info_np["initial_error"].reshape(shape),
        "evaluations": info_np["evaluations"].reshape(shape),
    }
    runs["perf"] = perf(runs["best_error"], runs["initial_error"])
    runs["log10_error"] = log_error(err)
    budget = population_size * (max_generations + 1)
    aei = None
    if with_random_search:
        problems = build_instances(env.config.problem_set, run_fids, [instance_id] * n_runs, device)
        rs = random_search_error(problems, budget, [10_000 + s for s in run_seeds])
        runs["random_search_log10_error"] = log_error(rs).reshape(shape)
        aei = aei_scores(
            runs["log10_error"], runs["random_search_log10_error"], runs["evaluations"], budget
        )
    problems_out = [
        {
            "function_id": f,
            "instance_id": instance_id,
            "perf": float(runs["perf"][i].mean()),
            "perf_std": float(runs["perf"][i].std()),
            "log10_error": float(runs["log10_error"][i].mean()),
            "evaluations": float(runs["evaluations"][i].mean()),
            **({"aei": float(aei[i])} if aei is not None else {}),
        }
        for i, f in enumerate(fids)
    ]
    return {
        "preset": preset,
        "split": split if isinstance(split, str) else list(split),
        "subset": subset,
        "dimension": dimension,
        "population_size": population_size,
        "max_generations": max_generations,
        "instance_mode": instance_mode,
        "seeds": list(range(1, seeds + 1)),
        "perf": float(runs["perf"].mean()),
        "log10_error": float(runs["log10_error"].mean()),
        **({"aei": float(np.exp(np.log(aei).mean()))} if aei is not None else {}),
        "seconds": seconds,
        "problems": problems_out,
        "runs": {k: v.tolist() for k, v in runs.items()},
    }
