"""An online learner for ``ConfounderStream`` envs: predict each batch, learn from revealed labels.

The env reveals a batch's labels in the ``info`` of the step that scored it, which is the info
handed to the next ``act``. So :meth:`OnlineLearnerAgent.act` first takes one gradient step on
the previous batch with those labels (R-MDN layers update their regression in that step), then
predicts the current batch in eval mode (the design's label column is unused then). Works on a
single env's observation (b, 1025) and on a vector env's (B, b, 1025): all instances' batches
train one shared model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from gymforge.agents.confounders.models import ConfounderCNN, rmdn_norm
from gymforge.agents.confounders.rmdn import design_matrix
from gymforge.core.arrays import host_array
from gymforge.envs.confounders.config import IMAGE_SIZE

PIXELS = IMAGE_SIZE * IMAGE_SIZE


class OnlineLearnerAgent:
    """Online BCE learner over a model ``model_factory()`` with ``forward(x, design)``.

    Args:
        model_factory: builds a fresh model at every :meth:`reset`.
        lr: Adam's learning rate.
    """

    def __init__(self, model_factory: Callable[[], nn.Module], lr: float = 1e-3) -> None:
        self.model_factory = model_factory
        self.lr = lr
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            torch.manual_seed(seed)
        self.model = self.model_factory()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self._previous: tuple[torch.Tensor, torch.Tensor] | None = None

    @staticmethod
    def _split(observation: Any) -> tuple[torch.Tensor, torch.Tensor]:
        obs = torch.as_tensor(host_array(observation), dtype=torch.float32)
        rows = obs.reshape(-1, obs.shape[-1])
        x = rows[:, :PIXELS].reshape(-1, 1, IMAGE_SIZE, IMAGE_SIZE)
        return x, rows[:, PIXELS:]

    def learn(self, x: torch.Tensor, c: torch.Tensor, y: torch.Tensor) -> float:
        """One gradient step on a labelled batch; returns the loss."""
        self.model.train()
        logits = self.model(x, design_matrix(y, c))
        loss = F.binary_cross_entropy_with_logits(logits, y.to(logits.dtype))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return float(loss.detach())

    def act(self, observation: Any, info: dict[str, Any] | None = None) -> np.ndarray:
        if self._previous is not None and info is not None and "y" in info:
            y = torch.as_tensor(np.asarray(info["y"])).reshape(-1).long()
            self.learn(*self._previous, y)
        x, c = self._split(observation)
        self._previous = (x, c)
        self.model.eval()
        with torch.no_grad():
            design = design_matrix(torch.zeros(c.shape[0]), c)
            prob = torch.sigmoid(self.model(x, design))
        shape = host_array(observation).shape[:-1]
        return prob.reshape(shape).numpy().astype(np.float32)


def rmdn_online_agent(env: gym.Env | gym.vector.VectorEnv) -> OnlineLearnerAgent:
    """``gymforge rollout ID --agent rmdn``: a small CNN with R-MDN layers, learning online."""
    return OnlineLearnerAgent(
        lambda: ConfounderCNN(rmdn_norm(forgetting_factor=0.999, reg=1e-2), (4, 8), 32), lr=1e-3
    )


def cnn_online_agent(env: gym.Env | gym.vector.VectorEnv) -> OnlineLearnerAgent:
    """``gymforge rollout ID --agent cnn``: the same CNN without normalisation, learning online."""
    return OnlineLearnerAgent(lambda: ConfounderCNN(None, (4, 8), 32), lr=1e-3)
