"""Model selection for the offline MetaBBO benchmark, on the *train* split only.

Evaluates trained Q-Mamba model folders (``gymforge train MetaBBO-v0 --algo qmamba ...``;
``--preset`` for the larger presets' models) and the reference policies on the easy split's
*train* functions, on an instance that no training episode used (``--instance-id``, default 2;
the datasets' episodes draw random instance seeds), seeds ``1..--seeds``, full budget. The
test split is never touched, so variants can be compared here without tuning on the test table
of ``offline.py``.

Run from the repository root::

    .venv/bin/python -m benchmarks.metabbo.offline_select MODEL_DIR [MODEL_DIR ...]

Writes ``benchmarks/results/metabbo_offline_select/metabbo_offline_select.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

import numpy as np
import torch

from benchmarks import common
from gymforge.agents.metabbo.agent import load_agent
from gymforge.baselines.metabbo.behaviors import register_behavior
from gymforge.envs.metabbo.dataset import available_behaviors
from gymforge.envs.metabbo.metrics import evaluate
from gymforge.envs.metabbo.problems import split_functions
from gymforge.registry import load_entry_point


class _ActionLog:
    """Wraps an agent and counts the configurations (bin tuples) it chooses."""

    def __init__(self, agent) -> None:
        self.agent, self.counts = agent, Counter()

    def reset(self, seed=None) -> None:
        self.agent.reset(seed)

    def act(self, obs, info=None):
        action = np.asarray(self.agent.act(obs, info))
        self.counts.update(map(tuple, action.reshape(-1, action.shape[-1]).tolist()))
        return action

    def summary(self, top: int = 3) -> dict:
        """Share of all steps of the ``top`` most frequent configurations, and how many differ."""
        total = sum(self.counts.values())
        return {
            "distinct": len(self.counts),
            "top": [
                {"bins": list(bins), "share": round(n / total, 4)}
                for bins, n in self.counts.most_common(top)
            ],
        }


def _acting_overrides(spec: str) -> dict[str, float]:
    """``'tau=0:T=0.03'`` -> ``{'support_threshold': 0.0, 'temperature': 0.03}``."""
    names = {"tau": "support_threshold", "T": "temperature"}
    overrides = {}
    for part in spec.split(":"):
        key, _, value = part.partition("=")
        if key not in names or not value:
            raise ValueError(f"acting rule {spec!r}: expected tau=X and/or T=Y joined by ':'")
        overrides[names[key]] = float(value)
    return overrides


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*", help="model folders to compare")
    p.add_argument("--baselines", default="random,shade", help="behaviour policies to include")
    p.add_argument(
        "--sb3", nargs="*", default=[], help="saved SB3 models (.zip, PPO) to compare as well"
    )
    p.add_argument(
        "--sb3-sample", action="store_true", help="also play the SB3 models' sampled policies"
    )
    p.add_argument(
        "--acting",
        default="",
        help="acting rules to evaluate each model with besides its own, comma-separated; each "
        "is tau=X and/or T=Y joined by ':' (e.g. 'tau=0:T=0.03,tau=0.5'; tau: support threshold, "
        "T: sampling temperature; models with a behaviour head, see QMambaConfig)",
    )
    p.add_argument(
        "--preset",
        default="alg0",
        choices=("alg0", "alg1", "alg2"),
        help="the optimizer preset the models configure",
    )
    p.add_argument("--seeds", type=int, default=4)
    p.add_argument("--instance-id", type=int, default=2)
    p.add_argument(
        "--out",
        default=str(
            common.REPO_ROOT
            / "benchmarks/results/metabbo_offline_select/metabbo_offline_select.json"
        ),
    )
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    register_behavior()  # the 'sb3' behaviour ($GYMFORGE_METABBO_SB3_EXPERT)
    fids = list(split_functions("easy", "train"))
    policies = {
        name: load_entry_point(available_behaviors()[name])
        for name in args.baselines.split(",")
        if name
    }
    if args.sb3:
        from gymforge.baselines.metabbo.sb3 import SB3PolicyAgent

        policies.update({f"sb3:{m}": SB3PolicyAgent(m) for m in args.sb3})
    if args.sb3 and args.sb3_sample:
        policies.update(
            {f"sb3-sampled:{m}": SB3PolicyAgent(m, deterministic=False) for m in args.sb3}
        )
    policies.update({str(m): load_agent(m) for m in args.models})
    for spec in filter(None, args.acting.split(",")):
        overrides = _acting_overrides(spec)
        policies.update({f"{m}@{spec}": load_agent(m, **overrides) for m in args.models})
    rows = {}
    for name, policy in policies.items():
        start = time.perf_counter()
        is_model = name.split("@")[0] in args.models or name.startswith("sb3:")
        logged = _ActionLog(policy) if is_model else policy
        out = evaluate(
            logged,
            preset=args.preset,
            split=fids,
            subset="train",
            seeds=args.seeds,
            instance_id=args.instance_id,
            with_random_search=False,
        )
        rows[name] = {"perf": out["perf"], "log10_error": out["log10_error"]}
        print(
            f"{name:>40}: Perf {out['perf']:.4f}  log10 err {out['log10_error']:.3f}  "
            f"({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
        if isinstance(logged, _ActionLog):
            rows[name]["actions"] = logged.summary()
            print(f"{'':>40}  chosen configurations: {rows[name]['actions']}")
    common.write_json(
        Path(args.out),
        {
            "benchmark": "metabbo_offline_select",
            "settings": {
                "preset": args.preset,
                "functions": fids,
                "subset": "train",
                "instance_id": args.instance_id,
                "seeds_per_problem": args.seeds,
            },
            "results": rows,
            "command": common.command_line(),
        },
        indent=1,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
