"""Continual-learning strategies for the confounder streams: naive, EWC and a small replay buffer."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from gymforge.agents.confounders.rmdn import design_matrix
from gymforge.agents.confounders.training import Strategy


class Naive(Strategy):
    """Plain fine-tuning: every stage trains the same model further, nothing else."""

    name = "naive"


class EWC(Strategy):
    """Elastic weight consolidation (Kirkpatrick et al. 2017), diagonal Fisher, summed over stages.

    After each stage the empirical Fisher ``F_i = E[(d loss / d theta_i)^2]`` is estimated on the
    stage's training data (eval mode, in batches of ``batch_size``) and added to the running sum;
    the loss then gains ``lam / 2 * sum_i F_i (theta_i - theta*_i)^2`` around the parameters
    ``theta*`` at the end of the last stage.
    """

    name = "ewc"

    def __init__(self, lam: float = 100.0, batch_size: int = 64) -> None:
        if lam < 0:
            raise ValueError(f"lam must be >= 0, got {lam!r}")
        self.lam = lam
        self.batch_size = batch_size
        self.fisher: dict[str, torch.Tensor] = {}
        self.anchor: dict[str, torch.Tensor] = {}

    def after_stage(
        self, model: nn.Module, x: torch.Tensor, c: torch.Tensor, y: torch.Tensor
    ) -> None:
        was_training = model.training
        model.eval()
        params = {n: p for n, p in model.named_parameters() if p.requires_grad}
        fisher = {n: torch.zeros_like(p) for n, p in params.items()}
        batches = 0
        for start in range(0, y.shape[0], self.batch_size):
            sl = slice(start, start + self.batch_size)
            model.zero_grad(set_to_none=True)
            logits = model(x[sl], design_matrix(y[sl], c[sl]))
            F.binary_cross_entropy_with_logits(logits, y[sl].to(logits.dtype)).backward()
            for n, p in params.items():
                if p.grad is not None:
                    fisher[n] += p.grad.detach() ** 2
            batches += 1
        model.zero_grad(set_to_none=True)
        for n in params:
            self.fisher[n] = self.fisher.get(n, 0.0) + fisher[n] / max(batches, 1)
            self.anchor[n] = params[n].detach().clone()
        model.train(was_training)

    def penalty(self, model: nn.Module) -> torch.Tensor | None:
        if not self.fisher:
            return None
        total = torch.zeros(())
        for n, p in model.named_parameters():
            if n in self.fisher:
                total = total + (self.fisher[n] * (p - self.anchor[n]) ** 2).sum()
        return 0.5 * self.lam * total


class Replay(Strategy):
    """A reservoir-sampled buffer of past samples; each batch is trained with ``replay_size`` of them.

    Args:
        capacity: samples kept (reservoir sampling over everything streamed so far).
        replay_size: stored samples appended to each training batch.
        seed: seed of the buffer's sampling.
    """

    name = "replay"

    def __init__(self, capacity: int = 200, replay_size: int = 32, seed: int = 0) -> None:
        if capacity < 1 or replay_size < 1:
            raise ValueError(
                f"capacity and replay_size must be >= 1, got {capacity}, {replay_size}"
            )
        self.capacity = capacity
        self.replay_size = replay_size
        self.generator = torch.Generator().manual_seed(seed)
        self.x: torch.Tensor | None = None
        self.c: torch.Tensor | None = None
        self.y: torch.Tensor | None = None
        self.seen = 0

    def augment(
        self, x: torch.Tensor, c: torch.Tensor, y: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self.x is None:
            return x, c, y
        n = self.x.shape[0]
        idx = torch.randint(n, (min(self.replay_size, n),), generator=self.generator)
        return (
            torch.cat([x, self.x[idx]]),
            torch.cat([c, self.c[idx]]),
            torch.cat([y, self.y[idx]]),
        )

    def after_batch(self, x: torch.Tensor, c: torch.Tensor, y: torch.Tensor) -> None:
        for i in range(y.shape[0]):
            self.seen += 1
            if self.x is None:
                self.x = x[i : i + 1].clone()
                self.c = c[i : i + 1].clone()
                self.y = y[i : i + 1].clone()
            elif self.x.shape[0] < self.capacity:
                self.x = torch.cat([self.x, x[i : i + 1]])
                self.c = torch.cat([self.c, c[i : i + 1]])
                self.y = torch.cat([self.y, y[i : i + 1]])
            else:
                j = int(torch.randint(self.seen, (1,), generator=self.generator))
                if j < self.capacity:
                    self.x[j], self.c[j], self.y[j] = x[i], c[i], y[i]
