"""The actor-critic network of the on-device trainer and its action distributions.

One module maps a batch of (normalised) observations to action logits (or Gaussian means) and a
value. Discrete and MultiDiscrete actions are categorical per dimension: dimensions with the same
number of choices are grouped into one ``(B, k, n)`` block, so a line with one 200-way and ten
3-way decisions costs two ``log_softmax`` calls, not eleven. Sampling is Gumbel-max with the
trainer's own ``torch.Generator`` (reproducible, no host sync). An ordinal policy gives each
categorical dimension a discretised Gaussian over its ordered choices instead of free logits:
the head outputs a centre and a width per dimension, so what is learnt about one choice moves
its neighbours too (a waiting time of 18 informs 17 and 19). Box actions are a diagonal
Gaussian with a state-independent log standard deviation, clipped to the bounds by the trainer.

A recurrent policy puts a GRU between the observation and the two heads; its hidden state is
reset wherever an episode started (``starts``), step by step over a sequence.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn


class Tanh(nn.Module):
    """``tanh(x)`` as ``2 * sigmoid(2x) - 1``: the same function, and on CPU about ten times
    faster than ``torch.tanh`` (whose kernel is not vectorised there), which made tanh the
    largest cost of a small MLP's update."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x * 2.0) * 2.0 - 1.0


ACTIVATIONS = {"tanh": Tanh, "relu": nn.ReLU, "elu": nn.ELU}


@dataclass(frozen=True)
class PolicySpec:
    """What the network is; stored in every artifact so it can be rebuilt without the env.

    Attributes:
        obs_dim: length of the flat observation the network reads (frames stacked included).
        obs_shape: shape of one env observation (flattened for the network).
        action_kind: ``"categorical"`` (Discrete / MultiDiscrete) or ``"gaussian"`` (Box).
        nvec: choices per action dimension (categorical), or ``[]``.
        action_dim: number of action dimensions.
        action_low, action_high: Box bounds (gaussian), or ``[]``.
        scalar_action: the env's action space is ``Discrete`` (one int, not a vector).
        hidden: widths of the hidden layers of each head's MLP.
        shared: one trunk for actor and critic (else two separate MLPs, as SB3's default).
        activation: ``tanh``, ``relu`` or ``elu``.
        rnn_hidden: GRU width of a recurrent policy (0: feed-forward).
        ordinal: categorical choices are ordered; each dimension is a discretised Gaussian
            (centre, width) over them (categorical actions only).
        ordinal_width: the ordinal head's width at a zero head output, as a share of the
            number of choices (its starting breadth).
    """

    obs_dim: int
    obs_shape: tuple[int, ...]
    action_kind: str
    nvec: tuple[int, ...]
    action_dim: int
    action_low: tuple[float, ...] = ()
    action_high: tuple[float, ...] = ()
    scalar_action: bool = False
    hidden: tuple[int, ...] = (64, 64)
    shared: bool = False
    activation: str = "tanh"
    rnn_hidden: int = 0
    ordinal: bool = False
    ordinal_width: float = 0.5

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PolicySpec:
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**fields)


def policy_spec(
    obs_space: spaces.Space,
    action_space: spaces.Space,
    frame_stack: int = 1,
    hidden: tuple[int, ...] = (64, 64),
    shared: bool = False,
    activation: str = "tanh",
    rnn_hidden: int = 0,
    ordinal: bool = False,
    ordinal_width: float = 0.5,
) -> PolicySpec:
    """The :class:`PolicySpec` for one env's spaces (single, not batched)."""
    if not isinstance(obs_space, spaces.Box) or not obs_space.shape:
        raise ValueError(
            f"the torch backend needs a Box observation space, got {obs_space}; "
            "use --backend sb3 for other spaces"
        )
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    obs_dim = int(np.prod(obs_space.shape)) * frame_stack
    common = {
        "obs_dim": obs_dim,
        "obs_shape": tuple(int(n) for n in obs_space.shape),
        "hidden": tuple(int(h) for h in hidden),
        "shared": bool(shared),
        "activation": activation,
        "rnn_hidden": int(rnn_hidden),
    }
    if ordinal and not isinstance(action_space, (spaces.Discrete, spaces.MultiDiscrete)):
        raise ValueError(
            f"ordinal needs Discrete or MultiDiscrete actions, got {action_space}; set "
            "ordinal: false"
        )
    if not (
        isinstance(ordinal_width, (int, float))
        and not isinstance(ordinal_width, bool)
        and 0 < ordinal_width <= 1
    ):
        raise ValueError(f"ordinal_width must be a number in (0, 1], got {ordinal_width!r}")
    common["ordinal"] = bool(ordinal)
    common["ordinal_width"] = float(ordinal_width)
    if isinstance(action_space, spaces.Discrete):
        return PolicySpec(
            action_kind="categorical",
            nvec=(int(action_space.n),),
            action_dim=1,
            scalar_action=True,
            **common,
        )
    if isinstance(action_space, spaces.MultiDiscrete):
        if action_space.nvec.ndim != 1:
            raise ValueError(f"MultiDiscrete actions must be flat, got {action_space.nvec.shape}")
        nvec = tuple(int(n) for n in action_space.nvec)
        return PolicySpec(action_kind="categorical", nvec=nvec, action_dim=len(nvec), **common)
    if isinstance(action_space, spaces.Box) and len(action_space.shape or ()) == 1:
        if not (np.isfinite(action_space.low).all() and np.isfinite(action_space.high).all()):
            raise ValueError(f"Box actions need finite bounds, got {action_space}")
        return PolicySpec(
            action_kind="gaussian",
            nvec=(),
            action_dim=int(action_space.shape[0]),
            action_low=tuple(float(x) for x in action_space.low),
            action_high=tuple(float(x) for x in action_space.high),
            **common,
        )
    raise ValueError(
        f"the torch backend supports Discrete, MultiDiscrete and flat Box actions, got "
        f"{action_space}"
    )


def _mlp(sizes: list[int], activation: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        layers += [nn.Linear(fan_in, fan_out), ACTIVATIONS[activation]()]
    return nn.Sequential(*layers)


def _init_linear(layer: nn.Linear, gain: float) -> None:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)


class CategoricalGroups:
    """Per-dimension categoricals of a MultiDiscrete action, grouped by number of choices.

    The logits of group ``g`` (``k_g`` dimensions of ``n_g`` choices) are the columns
    ``offsets[g] : offsets[g] + k_g * n_g`` of the head's output, reshaped to ``(B, k_g, n_g)``;
    ``dims[g]`` are the action dimensions of that group, in order.
    """

    def __init__(self, nvec: tuple[int, ...], ordinal_width: float = 0.5) -> None:
        self.ordinal_width = ordinal_width
        sizes = sorted(set(nvec))
        self.groups: list[tuple[int, int, int, list[int]]] = []  # (offset, k, n, dims)
        offset = 0
        order: list[int] = []
        for n in sizes:
            dims = [d for d, m in enumerate(nvec) if m == n]
            self.groups.append((offset, len(dims), n, dims))
            offset += len(dims) * n
            order += dims
        self.n_logits = offset
        self.n_dims = len(nvec)
        # position of action dimension d in the grouped order, and back
        self._grouped = order
        self._identity = order == list(range(len(nvec)))
        self._inverse = [order.index(d) for d in range(len(nvec))]

    def _blocks(self, logits: torch.Tensor) -> list[torch.Tensor]:
        lead = logits.shape[:-1]
        return [logits[..., off : off + k * n].reshape(*lead, k, n) for off, k, n, _ in self.groups]

    def _ungroup(self, grouped: torch.Tensor) -> torch.Tensor:
        return grouped if self._identity else grouped[..., self._inverse]

    def _group(self, actions: torch.Tensor) -> torch.Tensor:
        return actions if self._identity else actions[..., self._grouped]

    def ordinal_logits(self, raw: torch.Tensor) -> torch.Tensor:
        """Logits of discretised Gaussians from ``raw`` ``(..., 2 * n_dims)`` (a centre and a
        log-width per dimension, in the env's order), laid out as :meth:`_blocks` reads them.

        The centre is ``sigmoid(c) * (n - 1)`` and the width ``ordinal_width * n * exp(w)``
        with ``w`` clipped to [-8, 2]; at the head's near-zero initial output the distribution is
        a bump over the middle choices (close to uniform at the default width of ``n / 2``).
        """
        params = raw.reshape(*raw.shape[:-1], self.n_dims, 2)
        blocks = []
        for _, k, n, dims in self.groups:
            chosen = params[..., dims, :]
            centre = torch.sigmoid(chosen[..., 0:1]) * (n - 1)
            width = torch.exp(chosen[..., 1:2].clamp(-8.0, 2.0)) * (n * self.ordinal_width)
            choices = torch.arange(n, device=raw.device, dtype=raw.dtype)
            logits = -0.5 * ((choices - centre) / width) ** 2
            blocks.append(logits.reshape(*raw.shape[:-1], k * n))
        return torch.cat(blocks, dim=-1) if len(blocks) > 1 else blocks[0]

    def sample(self, logits: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
        """Gumbel-max draws, ``(..., n_dims)`` int64 in the env's dimension order."""
        picks = []
        for block in self._blocks(logits):
            u = torch.rand(block.shape, generator=generator, device=block.device)
            gumbel = -torch.log(-torch.log(u.clamp_(1e-20, 1.0)))
            picks.append((block + gumbel).argmax(dim=-1))
        return self._ungroup(torch.cat(picks, dim=-1) if len(picks) > 1 else picks[0])

    def mode(self, logits: torch.Tensor) -> torch.Tensor:
        picks = [block.argmax(dim=-1) for block in self._blocks(logits)]
        return self._ungroup(torch.cat(picks, dim=-1) if len(picks) > 1 else picks[0])

    def _taken(
        self, logits: torch.Tensor, actions: torch.Tensor
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """Per group: the log-probabilities ``(..., k, n)`` and those of the taken actions
        ``(..., k)``."""
        grouped = self._group(actions)
        start = 0
        for block, (_, k, _, _) in zip(self._blocks(logits), self.groups, strict=True):
            logp = torch.log_softmax(block, dim=-1)
            taken = grouped[..., start : start + k].unsqueeze(-1)
            yield logp, logp.gather(-1, taken).squeeze(-1)
            start += k

    def dim_log_prob_entropy(
        self, logits: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probability and entropy of each action dimension, ``(..., n_dims)`` each, in the
        env's dimension order."""
        parts = [
            (taken, -(logp.exp() * logp).sum(-1)) for logp, taken in self._taken(logits, actions)
        ]
        log_prob = torch.cat([p for p, _ in parts], dim=-1)
        entropy = torch.cat([h for _, h in parts], dim=-1)
        return self._ungroup(log_prob), self._ungroup(entropy)

    def log_prob_entropy(
        self, logits: torch.Tensor, actions: torch.Tensor, entropy: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Summed log-probability of ``actions`` and summed entropy (``None`` when not asked
        for), each ``(...)``."""
        log_prob: torch.Tensor | None = None
        total_entropy: torch.Tensor | None = None
        for logp, taken in self._taken(logits, actions):
            part = taken.sum(-1)
            log_prob = part if log_prob is None else log_prob + part
            if entropy:
                h = -(logp.exp() * logp).sum((-1, -2))
                total_entropy = h if total_entropy is None else total_entropy + h
        assert log_prob is not None
        return log_prob, total_entropy


class ActorCritic(nn.Module):
    """Actor and critic over flat observations; see :class:`PolicySpec` for the options."""

    def __init__(self, spec: PolicySpec) -> None:
        super().__init__()
        self.spec = spec
        width = spec.rnn_hidden or spec.obs_dim
        self.memory = nn.GRU(spec.obs_dim, spec.rnn_hidden) if spec.rnn_hidden else None
        hidden = list(spec.hidden)
        out_width = hidden[-1] if hidden else width
        if spec.action_kind == "categorical":
            self.categorical: CategoricalGroups | None = CategoricalGroups(
                spec.nvec, spec.ordinal_width
            )
            n_out = 2 * len(spec.nvec) if spec.ordinal else self.categorical.n_logits
            self.log_std = None
        else:
            self.categorical = None
            n_out = spec.action_dim
            self.log_std = nn.Parameter(torch.zeros(spec.action_dim))
        if spec.shared:
            self.trunk = _mlp([width, *hidden], spec.activation)
            self.actor_body = self.critic_body = None
        else:
            self.trunk = None
            self.actor_body = _mlp([width, *hidden], spec.activation)
            self.critic_body = _mlp([width, *hidden], spec.activation)
        self.actor_head = nn.Linear(out_width, n_out)
        self.critic_head = nn.Linear(out_width, 1)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                _init_linear(module, float(np.sqrt(2)))
        _init_linear(self.actor_head, 0.01)
        _init_linear(self.critic_head, 1.0)
        if spec.action_kind == "gaussian":
            self.register_buffer("action_low", torch.tensor(spec.action_low, dtype=torch.float32))
            self.register_buffer("action_high", torch.tensor(spec.action_high, dtype=torch.float32))

    # --- the network ---------------------------------------------------------------------------
    def initial_state(self, batch: int, device: torch.device) -> torch.Tensor | None:
        """Zero hidden state ``(1, batch, rnn_hidden)`` of a recurrent policy, else ``None``."""
        if self.memory is None:
            return None
        return torch.zeros(1, batch, self.spec.rnn_hidden, device=device)

    def remember(
        self, obs: torch.Tensor, state: torch.Tensor | None, starts: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Run the GRU over ``obs`` ``(T, B, d)`` from ``state``, zeroing it where ``starts``
        ``(T, B)`` is true; returns the features ``(T, B, h)`` and the last state. Feed-forward
        policies return ``obs`` unchanged."""
        if self.memory is None:
            return obs, state
        assert state is not None
        if starts is None:
            out, state = self.memory(obs, state)
            return out, state
        outputs = []
        for t in range(obs.shape[0]):
            state = state * (~starts[t]).to(state.dtype)[None, :, None]
            out, state = self.memory(obs[t : t + 1], state)
            outputs.append(out)
        return torch.cat(outputs, dim=0), state

    def heads(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Action logits (or Gaussian means) and values ``(...)`` of ``features``."""
        if self.trunk is not None:
            latent = self.trunk(features)
            actor, value = self.actor_head(latent), self.critic_head(latent)
        else:
            assert self.actor_body is not None and self.critic_body is not None
            actor = self.actor_head(self.actor_body(features))
            value = self.critic_head(self.critic_body(features))
        if self.spec.ordinal:
            assert self.categorical is not None
            actor = self.categorical.ordinal_logits(actor)
        return actor, value.squeeze(-1)

    # --- the distribution ----------------------------------------------------------------------
    def sample(
        self, out: torch.Tensor, generator: torch.Generator | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A sampled action and its log-probability."""
        if self.categorical is not None:
            action = self.categorical.sample(out, generator)
            return action, self.categorical.log_prob_entropy(out, action, entropy=False)[0]
        assert self.log_std is not None
        noise = torch.randn(out.shape, generator=generator, device=out.device)
        action = out + noise * self.log_std.exp()
        return action, self.log_prob_entropy(out, action)[0]

    def mode(self, out: torch.Tensor) -> torch.Tensor:
        """The most likely action (deterministic acting)."""
        if self.categorical is not None:
            return self.categorical.mode(out)
        return out

    def log_prob_entropy(
        self, out: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if self.categorical is not None:
            return self.categorical.log_prob_entropy(out, action)
        assert self.log_std is not None
        log_std = self.log_std.expand_as(out)
        var = (2 * log_std).exp()
        logp = -((action - out) ** 2) / (2 * var) - log_std - 0.5 * np.log(2 * np.pi)
        entropy = (0.5 + 0.5 * np.log(2 * np.pi) + log_std).sum(-1)
        return logp.sum(-1), entropy

    def env_action(self, action: torch.Tensor) -> torch.Tensor:
        """A sampled or greedy action as the env takes it (Box: clipped to the bounds;
        Discrete: one int per instance)."""
        if self.spec.action_kind == "gaussian":
            return torch.maximum(torch.minimum(action, self.action_high), self.action_low)
        return action[..., 0] if self.spec.scalar_action else action
