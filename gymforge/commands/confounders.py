"""``gymforge confounders continual``: the R-MDN continual protocol on a synthetic stream.

Trains a learner stage by stage on the synthetic confounder stream and tests it on every stage's
held-out data after each stage; prints the accuracy matrix, per-stage accuracy and per-class
dCor², average accuracy, BWT and forgetting, and optionally writes them as JSON.

Example::

    gymforge confounders continual --norm rmdn --strategy naive --epochs 6 --out rmdn.json
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from gymforge.commands import plain

NORMS = ("none", "batchnorm", "mdn", "pmdn", "rmdn")
STRATEGIES = ("naive", "ewc", "replay")
ARCHS = ("cnn", "vit")
SCHEDULES = ("paper", "linear", "step", "cyclic")


def _build(args: argparse.Namespace) -> tuple[Any, Any, Any, tuple, Any]:
    from gymforge.agents.confounders.models import ConfounderCNN, ConfounderViT, rmdn_norm
    from gymforge.agents.confounders.rmdn import design_matrix
    from gymforge.baselines.confounders import (
        EWC,
        Naive,
        Replay,
        batchnorm_norm,
        mdn_norm,
        pmdn_norm,
        pmdn_penalty,
        set_mdn_training_design,
    )

    norm = {
        "none": None,
        "batchnorm": batchnorm_norm(),
        "mdn": mdn_norm(),
        "pmdn": pmdn_norm(),
        "rmdn": rmdn_norm(args.forgetting_factor, args.reg),
    }[args.norm]
    if args.arch == "cnn":
        model = ConfounderCNN(norm, tuple(args.channels), args.hidden)
    else:
        model = ConfounderViT(norm, hidden=args.hidden)
    strategy = {"naive": Naive, "ewc": lambda: EWC(args.ewc_lambda), "replay": Replay}[
        args.strategy
    ]()
    hooks = ()
    if args.norm == "mdn":
        hooks = (lambda m, x, c, y: set_mdn_training_design(m, design_matrix(y, c)),)
    extra = pmdn_penalty if args.norm == "pmdn" else None
    return model, strategy, norm, hooks, extra


def cmd_continual(args: argparse.Namespace) -> int:
    import torch

    from gymforge.agents.confounders.training import TrainConfig, run_continual
    from gymforge.envs.confounders import SyntheticConfig, SyntheticStream, shift_schedule

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    shifts = shift_schedule(
        args.schedule, args.stages, args.shift_low, args.shift_high, args.period
    )
    stream = SyntheticStream(
        SyntheticConfig(samples_per_group=args.samples_per_group),
        shifts,
        seed=args.seed,
        batch_size=args.batch_size,
    )
    model, strategy, _, hooks, extra = _build(args)
    config = TrainConfig(epochs=args.epochs, lr=args.lr, step_size=args.step_size, gamma=args.gamma)
    result = run_continual(model, stream, stream.validation(), config, strategy, hooks, extra)
    t = result.accuracy.shape[0]
    print(f"shifts {list(shifts)}; rows: stage trained, columns: stage tested")
    for i in range(t):
        print(f"  {i}: " + " ".join(f"{v:.3f}" for v in result.accuracy[i].tolist()))
    per_stage = [float(result.accuracy[i, i]) for i in range(t)]
    dcor = [float(result.dcor2[i, i].mean()) for i in range(t)]
    print("accuracy per stage:", " ".join(f"{v:.3f}" for v in per_stage))
    print("dCor² per stage:   ", " ".join(f"{v:.3f}" for v in dcor))
    summary = result.summary()
    print(", ".join(f"{k} {v:+.3f}" for k, v in summary.items()))
    if args.out is not None:
        payload = {
            "options": {k: v for k, v in vars(args).items() if k not in ("func",)},
            "shifts": list(shifts),
            "accuracy_matrix": result.accuracy.tolist(),
            "balanced_accuracy_matrix": result.balanced_accuracy.tolist(),
            "dcor2_matrix": result.dcor2.tolist(),
            **summary,
        }
        payload["options"]["out"] = str(args.out)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=out.parent, delete=False, suffix=".tmp") as fh:
            json.dump(payload, fh, indent=1)
            tmp = fh.name
        os.replace(tmp, out)
        print(f"wrote {out}")
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an int >= 1, got {text}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("confounders", help="confounder streams: the R-MDN continual protocol")
    commands = parser.add_subparsers(dest="confounders_command", required=True)
    run = commands.add_parser(
        "continual",
        help="train stage by stage on the synthetic stream, test on every stage",
        description=plain(__doc__.splitlines()[0]),
    )
    run.add_argument(
        "--norm",
        choices=NORMS,
        default="rmdn",
        help="normalisation layer of the learner (default rmdn)",
    )
    run.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="naive",
        help="continual-learning strategy (default naive)",
    )
    run.add_argument(
        "--arch", choices=ARCHS, default="cnn", help="network: a small CNN or ViT (default cnn)"
    )
    run.add_argument(
        "--channels",
        type=_positive_int,
        nargs=2,
        default=[4, 8],
        help="CNN channels of its two conv layers (default 4 8)",
    )
    run.add_argument(
        "--hidden", type=_positive_int, default=32, help="width of the hidden layer (default 32)"
    )
    run.add_argument(
        "--schedule",
        choices=SCHEDULES,
        default="paper",
        help="how the confounder shift moves stage by stage (default paper)",
    )
    run.add_argument("--stages", type=_positive_int, default=5, help="number of stages (default 5)")
    run.add_argument(
        "--shift-low", type=float, default=0.0, help="smallest shift of the schedule (default 0.0)"
    )
    run.add_argument(
        "--shift-high", type=float, default=0.5, help="largest shift of the schedule (default 0.5)"
    )
    run.add_argument(
        "--period", type=int, default=4, help="stages per cycle of the cyclic schedule (default 4)"
    )
    run.add_argument(
        "--samples-per-group",
        type=_positive_int,
        default=128,
        help="images per (label, confounder) group and stage (default 128)",
    )
    run.add_argument(
        "--batch-size", type=_positive_int, default=32, help="training batch size (default 32)"
    )
    run.add_argument("--epochs", type=_positive_int, default=6, help="epochs per stage (default 6)")
    run.add_argument("--lr", type=float, default=1e-3, help="learning rate (default 1e-3)")
    run.add_argument(
        "--step-size",
        type=_positive_int,
        default=2,
        help="epochs between learning-rate decays (default 2)",
    )
    run.add_argument(
        "--gamma", type=float, default=0.5, help="learning-rate decay factor (default 0.5)"
    )
    run.add_argument(
        "--forgetting-factor",
        type=float,
        default=0.999,
        help="R-MDN's forgetting factor (default 0.999)",
    )
    run.add_argument(
        "--reg",
        type=float,
        default=1e-2,
        help="R-MDN's regularisation of its inverse (default 1e-2)",
    )
    run.add_argument(
        "--ewc-lambda", type=float, default=100.0, help="EWC penalty weight (default 100)"
    )
    run.add_argument(
        "--seed", type=int, default=1, help="seed of the stream and the network (default 1)"
    )
    run.add_argument(
        "--threads", type=_positive_int, default=1, help="torch CPU threads (default 1)"
    )
    run.add_argument("--out", type=Path, default=None, help="write the results as JSON here")
    run.set_defaults(func=cmd_continual)
