"""Learners of the confounder streams: the reference CNN and a small vision transformer.

Both take a *normalisation factory* ``norm(shape) -> nn.Module`` whose modules are called as
``module(x, design)`` with ``design = [y, c, 1]`` (:func:`~gymforge.agents.confounders.rmdn.
design_matrix`); :func:`rmdn_norm` builds R-MDN layers, ``None`` means no normalisation, and
``gymforge.baselines.confounders.norms`` has BatchNorm, MDN and PMDN factories with the same
interface. Both models return logits (N,) and, on request, the pre-activation features of the
layer before the logits (the features whose dCor² with the confounder the reference measures).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from gymforge.agents.confounders.rmdn import RecursiveMetadataNorm

NormFactory = Callable[[tuple[int, ...]], nn.Module]


class Identity(nn.Module):
    """No normalisation: ``forward(x, design) = x``."""

    def forward(self, x: torch.Tensor, design: torch.Tensor) -> torch.Tensor:
        return x


def rmdn_norm(
    forgetting_factor: float = 0.999,
    reg: float = 1e-4,
    delta: float = 0.01,
    num_confounders: int = 1,
) -> NormFactory:
    """A factory of :class:`RecursiveMetadataNorm` layers over ``prod(shape)`` features."""

    def make(shape: tuple[int, ...]) -> nn.Module:
        return RecursiveMetadataNorm(
            math.prod(shape), num_confounders, forgetting_factor, reg, delta
        )

    return make


def _norm(factory: NormFactory | None, shape: tuple[int, ...]) -> nn.Module:
    return Identity() if factory is None else factory(shape)


class ConfounderCNN(nn.Module):
    """The reference CNN (``conv.py::Conv``) with a normalisation layer before each activation.

    ``conv(1 -> c1, k) -> norm -> ReLU -> conv(c1 -> c2, k) -> norm -> ReLU -> fc(-> hidden) ->
    norm -> ReLU -> fc(hidden -> 1)``. The defaults are the reference's sizes (16, 32, 84); smaller
    ``channels`` and ``hidden`` train quickly on a CPU.

    Args:
        norm: normalisation factory (``None``: none).
        channels: output channels of the two convolutions.
        hidden: width of the layer before the logits.
        kernel_size: convolution kernel size.
        image_size: side of the square single-channel input images.
    """

    def __init__(
        self,
        norm: NormFactory | None = None,
        channels: tuple[int, int] = (16, 32),
        hidden: int = 84,
        kernel_size: int = 5,
        image_size: int = 32,
    ) -> None:
        super().__init__()
        c1, c2 = channels
        s1 = image_size - kernel_size + 1
        s2 = s1 - kernel_size + 1
        self.conv1 = nn.Conv2d(1, c1, kernel_size)
        self.norm1 = _norm(norm, (c1, s1, s1))
        self.conv2 = nn.Conv2d(c1, c2, kernel_size)
        self.norm2 = _norm(norm, (c2, s2, s2))
        self.fc1 = nn.Linear(c2 * s2 * s2, hidden)
        self.norm3 = _norm(norm, (hidden,))
        self.fc2 = nn.Linear(hidden, 1)

    def forward(
        self, x: torch.Tensor, design: torch.Tensor, return_features: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        h = F.relu(self.norm1(self.conv1(x), design))
        h = F.relu(self.norm2(self.conv2(h), design))
        features = self.norm3(self.fc1(h.flatten(1)), design)
        logits = self.fc2(F.relu(features)).squeeze(-1)
        return (logits, features) if return_features else logits


class ConfounderViT(nn.Module):
    """A small vision transformer with normalisation after the patch embedding and before the logits.

    ``patches (p x p) -> linear embedding + position -> norm (over all tokens) -> depth x
    pre-norm transformer blocks -> mean over tokens -> LayerNorm -> fc(-> hidden) -> norm -> ReLU ->
    fc(hidden -> 1)``. The reference does not publish a ViT placement; this one mirrors the CNN's:
    after the first feature map and before the logits, each before an activation.

    Args:
        norm: normalisation factory (``None``: none).
        patch: patch side (divides ``image_size``).
        dim: token width; heads: attention heads (divide ``dim``); depth: transformer blocks.
        hidden: width of the layer before the logits.
        image_size: side of the square single-channel input images.
    """

    def __init__(
        self,
        norm: NormFactory | None = None,
        patch: int = 8,
        dim: int = 32,
        depth: int = 2,
        heads: int = 2,
        hidden: int = 32,
        image_size: int = 32,
    ) -> None:
        super().__init__()
        if image_size % patch:
            raise ValueError(f"patch must divide image_size={image_size}, got {patch}")
        tokens = (image_size // patch) ** 2
        self.patch = patch
        self.embed = nn.Linear(patch * patch, dim)
        self.position = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.norm_embed = _norm(norm, (tokens, dim))
        layer = nn.TransformerEncoderLayer(
            dim, heads, dim_feedforward=2 * dim, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head_norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.norm_head = _norm(norm, (hidden,))
        self.fc2 = nn.Linear(hidden, 1)

    def forward(
        self, x: torch.Tensor, design: torch.Tensor, return_features: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        p = self.patch
        n = x.shape[0]
        patches = x.unfold(2, p, p).unfold(3, p, p).reshape(n, -1, p * p)
        tokens = self.norm_embed(self.embed(patches) + self.position, design)
        h = self.blocks(F.gelu(tokens))
        features = self.norm_head(self.fc1(self.head_norm(h.mean(dim=1))), design)
        logits = self.fc2(F.relu(features)).squeeze(-1)
        return (logits, features) if return_features else logits
