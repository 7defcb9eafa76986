"""The reference's continual protocol: train stage by stage, test on every stage after each.

After training through stage ``i`` the model is evaluated on the held-out data of every stage
``j``, which fills the accuracy matrix ``R[i, j]`` (and balanced accuracy, per-group accuracy and
per-class dCor² of the features before the logits with the confounder). Continual-learning
strategies (naive fine-tuning, EWC, replay: ``gymforge.baselines.confounders.strategies``)
plug in through :class:`Strategy`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from gymforge.agents.confounders.rmdn import design_matrix
from gymforge.envs.confounders import metrics
from gymforge.envs.confounders.streams import ConfounderStream

StageHook = Callable[[nn.Module, torch.Tensor, torch.Tensor, torch.Tensor], None]


class Strategy:
    """Naive fine-tuning; subclasses override the hooks (all no-ops here)."""

    name = "naive"

    def augment(
        self, x: torch.Tensor, c: torch.Tensor, y: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The batch actually trained on (replay appends stored samples)."""
        return x, c, y

    def penalty(self, model: nn.Module) -> torch.Tensor | None:
        """An extra loss term (EWC's quadratic penalty), or None."""
        return None

    def after_batch(self, x: torch.Tensor, c: torch.Tensor, y: torch.Tensor) -> None:
        """Called with every fresh (un-augmented) training batch after its update."""

    def after_stage(
        self, model: nn.Module, x: torch.Tensor, c: torch.Tensor, y: torch.Tensor
    ) -> None:
        """Called with the whole stage's training data after the stage."""


@dataclass
class TrainConfig:
    """Optimisation settings; the defaults are the reference's.

    As in the reference, every stage gets a fresh Adam optimizer and a ``StepLR`` schedule that
    multiplies the learning rate by ``gamma`` every ``step_size`` epochs.

    Attributes:
        epochs: passes over each stage's training data (reference: 100).
        lr, weight_decay: Adam's settings (reference: 1e-4, 1e-3).
        step_size, gamma: the per-stage ``StepLR`` schedule (reference: 20, 0.8).
        penalty_weight: weight of the model's own extra loss (``extra_loss``, e.g. PMDN).
    """

    epochs: int = 100
    lr: float = 1e-4
    weight_decay: float = 1e-3
    step_size: int = 20
    gamma: float = 0.8
    penalty_weight: float = 1.0


@dataclass
class Evaluation:
    """Metrics of a model on one stage's held-out data."""

    accuracy: float
    balanced_accuracy: float
    group_accuracy: list[float]
    dcor2: list[float]  # per class, u-dCor²(features | y = k, c | y = k)


@torch.no_grad()
def evaluate(
    model: nn.Module, x: torch.Tensor, c: torch.Tensor, y: torch.Tensor, batch_size: int = 512
) -> Evaluation:
    """Evaluate in eval mode; the design's label column is zero, so no label reaches the model."""
    model.eval()
    logits, features = [], []
    for start in range(0, y.shape[0], batch_size):
        xb, cb = x[start : start + batch_size], c[start : start + batch_size]
        design = design_matrix(torch.zeros(cb.shape[0], device=cb.device), cb)
        out, feat = model(xb, design, return_features=True)
        logits.append(out)
        features.append(feat)
    pred = (torch.cat(logits) >= 0).long()
    feats = torch.cat(features)
    return Evaluation(
        accuracy=float((pred == y).double().mean()),
        balanced_accuracy=float(metrics.balanced_accuracy(pred, y)),
        group_accuracy=metrics.group_accuracy(pred, y).tolist(),
        dcor2=metrics.per_class_dcor_sqr(feats, c, y).tolist(),
    )


@dataclass
class ContinualResult:
    """Matrices indexed ``[stage trained, stage tested]``."""

    accuracy: torch.Tensor  # (T, T) float64
    balanced_accuracy: torch.Tensor  # (T, T) float64
    dcor2: torch.Tensor  # (T, T, 2) float64, per class
    evaluations: list[list[Evaluation]] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        return {
            "average_accuracy": metrics.average_accuracy(self.accuracy),
            "bwt": metrics.backward_transfer(self.accuracy),
            "forgetting": metrics.forgetting(self.accuracy),
        }


def train_stage(
    model: nn.Module,
    stream: ConfounderStream,
    stage: int,
    strategy: Strategy,
    config: TrainConfig,
    extra_loss: Callable[[nn.Module], torch.Tensor] | None = None,
) -> None:
    """``config.epochs`` passes of BCE training over ``stream``'s stage ``stage``, fresh Adam."""
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, config.step_size, config.gamma)
    for _ in range(config.epochs):
        for x, c, y, _ in stream.stage_batches(stage):
            model.train()
            xa, ca, ya = strategy.augment(x, c, y)
            logits = model(xa, design_matrix(ya, ca))
            loss = F.binary_cross_entropy_with_logits(logits, ya.to(logits.dtype))
            if extra_loss is not None:
                loss = loss + config.penalty_weight * extra_loss(model)
            penalty = strategy.penalty(model)
            if penalty is not None:
                loss = loss + penalty
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            strategy.after_batch(x, c, y)
        schedule.step()


def run_continual(
    model: nn.Module,
    train: ConfounderStream,
    test: ConfounderStream,
    config: TrainConfig,
    strategy: Strategy | None = None,
    stage_hooks: Sequence[StageHook] = (),
    extra_loss: Callable[[nn.Module], torch.Tensor] | None = None,
) -> ContinualResult:
    """Train through every stage of ``train``; after each, evaluate on every stage of ``test``.

    Args:
        stage_hooks: called with ``(model, x, c, y)`` of a stage's training data before the
            stage (e.g. MDN's kernel on the whole training set).
        extra_loss: the model's own loss term (e.g. PMDN's penalty), weighted by
            ``config.penalty_weight``.
    """
    strategy = strategy if strategy is not None else Strategy()
    t = train.num_stages
    if test.num_stages != t:
        raise ValueError(f"test must have {t} stages like train, got {test.num_stages}")
    tests = [test.stage_data(j) for j in range(t)]
    rows: list[list[Evaluation]] = []
    for i in range(t):
        x, c, y = train.stage_data(i)
        for hook in stage_hooks:
            hook(model, x, c, y)
        train_stage(model, train, i, strategy, config, extra_loss)
        strategy.after_stage(model, x, c, y)
        rows.append([evaluate(model, *tests[j]) for j in range(t)])
    acc = torch.tensor([[e.accuracy for e in row] for row in rows], dtype=torch.float64)
    bal = torch.tensor([[e.balanced_accuracy for e in row] for row in rows], dtype=torch.float64)
    dc = torch.tensor([[e.dcor2 for e in row] for row in rows], dtype=torch.float64)
    return ContinualResult(accuracy=acc, balanced_accuracy=bal, dcor2=dc, evaluations=rows)
