"""Q-Mamba's Q-network: Q-values decomposed over action dimensions, one token per dimension.

An action ``a_t = (a_t^1, ..., a_t^K)`` (one bin per controlled hyperparameter) is chosen one
dimension at a time. Step ``t`` of an episode becomes ``K`` tokens; token ``i`` is the observation
``s_t`` concatenated with the binary code of the previous dimension's bin ``a_t^{i-1}`` (MSB
first, ``token_bits`` bits), the first token of every step carrying the all-ones start code.
A :class:`~gymforge.agents.metabbo.mamba.MambaBlock` reads the tokens in order and an MLP head
(``Linear -> leaky ReLU -> Linear``) turns each output into ``Q_i(s_t, a_t^{<i}, ·)``, one value
per bin. Bins a dimension does not have (``nvec[i] < max(nvec)``) are masked out everywhere.

Acting is autoregressive (:func:`autoregressive_decode`): dimension 1 picks ``a^1`` from
``Q_1``, its code is fed in, dimension 2 picks ``a^2`` from ``Q_2``, ... . The reference picks
greedily (``a^i = argmax Q_i``), the default here.

Behaviour-regularised acting (an extension, not the reference's; needs ``bc_weight > 0``): a
behaviour head ``π̂(a^i | s_t, a_t^{i-1}, i)`` -- an MLP on the token and the one-hot of ``i``,
trained by cross-entropy on the logged bins, its gradient kept out of the Q-network -- estimates
how often the data plays each bin. Two ways to use it, alone or together:

- ``support_threshold = τ > 0``: dimension ``i`` chooses only among bins with
  ``π̂ >= τ · max π̂``, the action filter of discrete BCQ (Fujimoto et al., "Benchmarking Batch
  Deep Reinforcement Learning Algorithms", 2019);
- ``temperature = T > 0``: dimension ``i`` *samples* ``a^i ∝ π̂(a^i) · exp(Q_i(a^i) / T)``, the
  closed-form maximiser of ``E_π[Q_i] - T · KL(π || π̂)`` (the policy-improvement step of
  KL-regularised offline RL such as AWR/CRR). ``T -> 0`` approaches the greedy step (on the
  support), ``T -> ∞`` the behaviour policy.

Why: on MetaBBO almost all of the return is earned in the first generations, so later Q-values
of different bins differ by less than the network's error; a plain argmax then lands on bins the
data never played, or on the greediest configuration everywhere (premature convergence on
multimodal functions), while the regularised step stays close to what the data did except where
the Q-values disagree with it by more than ``T``.

Loss (:func:`qmamba_loss`), with ``Q̂`` the detached Q-values and ``max`` over a dimension's bins::

    TD_inner = mean_{t, i<K} (Q_i(a^i) - max Q̂_{i+1})²          # Bellman backup inside a step
    TD_last  = mean_t (Q_K(a^K) - (r_t + γ max Q̂_1(s_{t+1})))²  # 0 bootstrap at episode end
    (max Q̂ clipped to ``target_range``)
    CQL      = mean over non-taken bins of Q²                     # conservative: push them to 0
    loss     = 0.5 (TD_inner + β TD_last) + 0.5 λ CQL             # β = 10, λ = 1, γ = 0.99
    (+ bc_weight · cross-entropy of the behaviour head, when it has one: :func:`behavior_loss`)

Differences from the reference implementation: tokens are mixed by an own pure-torch Mamba block
(no ``mamba_ssm``/CUDA), observations are standardised with dataset statistics stored in the
model, and the bootstrapped targets are clipped to the return range ``[0, 1]`` (upstream min-max
normalises the head's output over the sequence axis, which bounds it too but makes a token's
Q-values depend on later tokens, so it cannot be computed step by step). Without a bound the
bootstrapped targets diverge on MetaBBO data.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F  # noqa: N812

from gymforge.agents.metabbo.mamba import MambaBlock, MambaState

__all__ = [
    "QMambaConfig",
    "QMambaNet",
    "autoregressive_decode",
    "behavior_loss",
    "qmamba_loss",
    "support_mask",
]


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


@dataclass(frozen=True)
class QMambaConfig:
    """Architecture and loss weights of a Q-Mamba network (the reference's defaults).

    Attributes:
        obs_dim: observation features per step (9 for MetaBBO).
        action_nvec: bins of each action dimension, in decision order (``[16] * K``).
        token_bits: width of the binary action code; ``2**token_bits - 1`` is the start code,
            so ``max(action_nvec) <= 2**token_bits - 1``.
        d_state, d_conv, expand: Mamba block sizes (``d_model = obs_dim + token_bits``).
        mlp_hidden: hidden width of the Q head.
        gamma: discount between environment steps.
        beta: weight of the last dimension's TD term (the one with the reward).
        lam: weight of the conservative term.
        q_output: ``"linear"`` uses the head's output as is; ``"sigmoid"`` squashes it into
            ``(0, 1)`` (it saturates: on MetaBBO data the Q-values then collapsed to 0).
        target_range: bootstrapped targets (``max Q̂``) are clipped to this range; MetaBBO
            returns lie in ``[0, 1]`` (``Perf <= 1``). Without a bound the targets diverge on real
            data (upstream bounds the Q-values by min-max normalising them over the sequence,
            which is not causal). ``None``: no clipping.
        bc_weight: weight of the behaviour head's cross-entropy; ``0`` (the reference): the
            network has no behaviour head.
        support_threshold: acting considers only bins whose estimated behaviour probability is
            at least this fraction of the most likely bin's (discrete BCQ's ``τ``); ``0`` (the
            reference): every bin. Needs ``bc_weight > 0``.
        temperature: ``0`` (the reference): act greedily; ``T > 0``: sample each dimension's
            bin from ``π̂ · exp(Q / T)`` (see the module docstring). Needs ``bc_weight > 0``.
    """

    obs_dim: int = 9
    action_nvec: tuple[int, ...] = (16, 16, 16)
    token_bits: int = 5
    d_state: int = 32
    d_conv: int = 4
    expand: int = 2
    mlp_hidden: int = 32
    gamma: float = 0.99
    beta: float = 10.0
    lam: float = 1.0
    q_output: str = "linear"
    target_range: tuple[float, float] | None = (0.0, 1.0)
    bc_weight: float = 0.0
    support_threshold: float = 0.0
    temperature: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "action_nvec", tuple(int(n) for n in self.action_nvec))
        for name in ("obs_dim", "token_bits", "d_state", "d_conv", "expand", "mlp_hidden"):
            _positive_int(name, getattr(self, name))
        if not self.action_nvec or any(n < 1 for n in self.action_nvec):
            raise ValueError(
                f"action_nvec must be a non-empty list of ints >= 1, got {self.action_nvec}"
            )
        if max(self.action_nvec) > 2**self.token_bits - 1:
            raise ValueError(
                f"token_bits={self.token_bits} codes at most {2**self.token_bits - 1} bins plus the "
                f"start code; action_nvec has {max(self.action_nvec)}"
            )
        if self.target_range is not None:
            lo, hi = (float(v) for v in self.target_range)
            if not lo < hi:
                raise ValueError(
                    f"target_range must be (low, high) with low < high, got {self.target_range}"
                )
            object.__setattr__(self, "target_range", (lo, hi))
        if self.q_output not in ("sigmoid", "linear"):
            raise ValueError(f"q_output must be 'sigmoid' or 'linear', got {self.q_output!r}")
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma}")
        for name in ("beta", "lam", "bc_weight"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        check_acting(self.support_threshold, self.temperature, self.has_behavior_head)

    @property
    def num_dims(self) -> int:
        """``K``, the number of action dimensions (tokens per environment step)."""
        return len(self.action_nvec)

    @property
    def num_bins(self) -> int:
        """Width of the Q head, ``max(action_nvec)``."""
        return max(self.action_nvec)

    @property
    def has_behavior_head(self) -> bool:
        """Whether the network estimates the behaviour policy (``bc_weight > 0``)."""
        return self.bc_weight > 0

    @property
    def d_model(self) -> int:
        """Token width, ``obs_dim + token_bits``."""
        return self.obs_dim + self.token_bits

    def to_json(self) -> dict:
        """A JSON-ready dict (``QMambaConfig(**d)`` rebuilds it)."""
        d = asdict(self)
        d["action_nvec"] = list(self.action_nvec)
        d["target_range"] = None if self.target_range is None else list(self.target_range)
        return d


def check_acting(support_threshold: float, temperature: float, has_behavior_head: bool) -> None:
    """Raise ``ValueError`` naming the setting unless the acting options are valid."""
    tau, temp = support_threshold, temperature
    if isinstance(tau, bool) or not (isinstance(tau, (int, float)) and 0.0 <= tau <= 1.0):
        raise ValueError(f"support_threshold must be a number in [0, 1], got {tau!r}")
    if isinstance(temp, bool) or not (
        isinstance(temp, (int, float)) and math.isfinite(temp) and temp >= 0
    ):
        raise ValueError(f"temperature must be a finite number >= 0, got {temp!r}")
    for name, value in (("support_threshold", tau), ("temperature", temp)):
        if value > 0 and not has_behavior_head:
            raise ValueError(f"{name}={value} needs a behaviour head (bc_weight > 0)")


def support_mask(logits: Tensor, threshold: float) -> Tensor:
    """Bins whose probability under ``softmax(logits)`` is at least ``threshold`` times the
    largest (``-inf`` logits never; ``threshold = 0``: every other bin; always at least one)."""
    if threshold <= 0:
        return logits > -torch.inf
    return logits >= logits.amax(-1, keepdim=True) + math.log(threshold)


def bin_mask(nvec: Sequence[int], num_bins: int, device=None) -> Tensor:
    """``[K, num_bins]`` bool: which bins exist in each dimension."""
    return (
        torch.arange(num_bins, device=device)[None, :] < torch.tensor(nvec, device=device)[:, None]
    )


class QMambaNet(nn.Module):
    """Tokeniser + Mamba block + Q head (see the module docstring)."""

    def __init__(self, config: QMambaConfig) -> None:
        super().__init__()
        self.config = config
        self.block = MambaBlock(
            config.d_model, d_state=config.d_state, d_conv=config.d_conv, expand=config.expand
        )
        self.ff1 = nn.Linear(config.d_model, config.mlp_hidden)
        self.ff2 = nn.Linear(config.mlp_hidden, config.num_bins)
        if config.has_behavior_head:
            self.bc1 = nn.Linear(config.d_model + config.num_dims, config.mlp_hidden)
            self.bc2 = nn.Linear(config.mlp_hidden, config.num_bins)
        self.register_buffer("obs_mean", torch.zeros(config.obs_dim))
        self.register_buffer("obs_std", torch.ones(config.obs_dim))
        self.register_buffer("valid_bins", bin_mask(config.action_nvec, config.num_bins))
        powers = 2 ** torch.arange(config.token_bits - 1, -1, -1)
        self.register_buffer("bit_powers", powers, persistent=False)

    def set_normalisation(self, mean: Tensor, std: Tensor) -> None:
        """Store observation statistics (std floored at 1e-6)."""
        self.obs_mean.copy_(torch.as_tensor(mean, dtype=self.obs_mean.dtype))
        self.obs_std.copy_(torch.as_tensor(std, dtype=self.obs_std.dtype).clamp(min=1e-6))

    def encode_bins(self, bins: Tensor) -> Tensor:
        """Binary codes ``[..., token_bits]`` (MSB first) of integer bins; ``-1`` is the start code."""
        code = torch.where(bins < 0, 2**self.config.token_bits - 1, bins).long()
        return ((code.unsqueeze(-1) // self.bit_powers) % 2).to(self.obs_mean.dtype)

    def normalise(self, obs: Tensor) -> Tensor:
        """Standardised, finite observations."""
        z = (obs.to(self.obs_mean.dtype) - self.obs_mean) / self.obs_std
        return torch.nan_to_num(z, nan=0.0, posinf=10.0, neginf=-10.0).clamp(-10.0, 10.0)

    def tokens(self, obs: Tensor, actions: Tensor) -> Tensor:
        """Token sequence ``[B, T*K, d_model]`` of observations ``[B, T, obs_dim]`` and the
        dataset's actions ``[B, T, K]`` (token ``(t, i)`` carries ``a_t^{i-1}``)."""
        batch, steps, k = actions.shape
        previous = torch.cat([torch.full_like(actions[..., :1], -1), actions[..., :-1]], dim=-1)
        codes = self.encode_bins(previous)  # [B, T, K, bits]
        states = self.normalise(obs).unsqueeze(2).expand(batch, steps, k, -1)
        return torch.cat([states, codes], dim=-1).reshape(batch, steps * k, -1)

    def token(self, obs: Tensor, previous: Tensor) -> Tensor:
        """One token ``[B, d_model]`` of ``obs [B, obs_dim]`` and the previous dimension's bin
        ``previous [B]`` (``-1``: start of a step)."""
        return torch.cat([self.normalise(obs), self.encode_bins(previous)], dim=-1)

    def behavior_logits(self, tokens: Tensor, dim: int | None = None) -> Tensor:
        """Behaviour head: logits ``[..., num_bins]`` of ``π̂(a^i | token, i)``, ``-inf`` on bins
        the dimension lacks.

        ``tokens`` are ``[..., d_model]`` tokens of dimension ``dim``, or, with ``dim=None``,
        ``[..., K, d_model]``: one token per dimension (as :meth:`tokens` makes them, reshaped).
        The token alone does not say which dimension it decides (tokens ``i >= 1`` all carry
        a previous bin), hence the dimension's one-hot code next to it.
        """
        if not self.config.has_behavior_head:
            raise ValueError("this network has no behaviour head (bc_weight = 0)")
        k = self.config.num_dims
        eye = torch.eye(k, dtype=tokens.dtype, device=tokens.device)
        if dim is None:
            if tokens.ndim < 2 or tokens.shape[-2] != k:
                raise ValueError(f"tokens must be [..., {k}, d_model], got {tuple(tokens.shape)}")
            code, valid = eye.expand(*tokens.shape[:-1], k), self.valid_bins
        else:
            code, valid = eye[dim].expand(*tokens.shape[:-1], k), self.valid_bins[dim]
        logits = self.bc2(F.leaky_relu(self.bc1(torch.cat([tokens, code], dim=-1))))
        return logits.masked_fill(~valid, -torch.inf)

    def supported_bins(self, tokens: Tensor, dim: int, threshold: float) -> Tensor:
        """``[B, num_bins]`` bool: the bins of dimension ``dim`` whose behaviour probability is at
        least ``threshold`` times the largest (see :func:`support_mask`)."""
        return support_mask(self.behavior_logits(tokens, dim), threshold)

    def head(self, features: Tensor) -> Tensor:
        """Q-values ``[..., num_bins]`` from Mamba outputs ``[..., d_model]``."""
        q = self.ff2(F.leaky_relu(self.ff1(features)))
        return torch.sigmoid(q) if self.config.q_output == "sigmoid" else q

    def forward(
        self, obs: Tensor, actions: Tensor, state: MambaState | None = None
    ) -> tuple[Tensor, MambaState]:
        """Q-values ``[B, T, K, num_bins]`` along logged trajectories (sequence mode)."""
        k = self.config.num_dims
        if obs.ndim != 3 or obs.shape[-1] != self.config.obs_dim:
            raise ValueError(f"obs must be [B, T, {self.config.obs_dim}], got {tuple(obs.shape)}")
        if actions.shape != (*obs.shape[:2], k):
            raise ValueError(f"actions must be {(*obs.shape[:2], k)}, got {tuple(actions.shape)}")
        out, state = self.block(self.tokens(obs, actions), state)
        q = self.head(out).reshape(*actions.shape, self.config.num_bins)
        return q, state

    def initial_state(self, batch: int) -> MambaState:
        """Recurrent state of ``batch`` fresh episodes."""
        return self.block.initial_state(batch)

    def step_token(
        self, obs: Tensor, previous: Tensor, state: MambaState
    ) -> tuple[Tensor, MambaState]:
        """One token (recurrent mode): ``Q [B, num_bins]`` given ``obs [B, obs_dim]`` and the
        previous dimension's bin ``previous [B]`` (``-1``: start of a step)."""
        out, state = self.block.step(self.token(obs, previous), state)
        return self.head(out), state

    @torch.no_grad()
    def act(
        self,
        obs: Tensor,
        state: MambaState,
        support_threshold: float | None = None,
        temperature: float | None = None,
        generator: torch.Generator | None = None,
    ) -> tuple[Tensor, MambaState]:
        """Action ``[B, K]`` for ``obs [B, obs_dim]``; advances ``state`` by ``K`` tokens.

        ``support_threshold`` and ``temperature`` (default: the config's) select the acting rule
        of the module docstring; sampling (``temperature > 0``) draws from ``generator``.
        """
        tau = self.config.support_threshold if support_threshold is None else support_threshold
        temp = self.config.temperature if temperature is None else temperature
        check_acting(tau, temp, self.config.has_behavior_head)
        carry = {"state": state}

        def scores_of(dim: int, previous: Tensor) -> Tensor:
            q, carry["state"] = self.step_token(obs, previous, carry["state"])
            if tau == 0 and temp == 0:
                return q
            logits = self.behavior_logits(self.token(obs, previous), dim)
            scores = q if temp == 0 else logits + q / temp
            return scores.masked_fill(~support_mask(logits, tau), -torch.inf)

        def sample(dim: int, scores: Tensor) -> Tensor:
            return torch.multinomial(scores.softmax(-1), 1, generator=generator).squeeze(-1)

        choose = sample if temp > 0 else None
        actions = autoregressive_decode(
            scores_of, self.config.action_nvec, obs.shape[0], obs.device, choose
        )
        return actions, carry["state"]


def autoregressive_decode(
    scores_of: Callable[[int, Tensor], Tensor],
    nvec: Sequence[int],
    batch: int,
    device=None,
    choose: Callable[[int, Tensor], Tensor] | None = None,
) -> Tensor:
    """Choose an action one dimension at a time over decomposed scores.

    ``scores_of(i, previous)`` returns ``[B, M]`` scores of dimension ``i`` (Q-values, or
    log-weights) given the bins chosen for dimension ``i - 1`` (``previous [B]``, ``-1`` for
    ``i = 0``); it is called for ``i = 0, 1, ..., K-1`` in order. ``choose(i, scores)`` picks
    the bins ``[B]`` from the first ``nvec[i]`` scores; default: the argmax (ties: lowest bin),
    i.e. the greedy decomposition of Q-Mamba. Returns the chosen bins ``[B, K]`` (int64).
    """
    previous = torch.full((batch,), -1, dtype=torch.long, device=device)
    chosen = []
    for i, n in enumerate(nvec):
        scores = scores_of(i, previous)[:, :n]
        previous = scores.argmax(dim=-1) if choose is None else choose(i, scores)
        chosen.append(previous)
    return torch.stack(chosen, dim=-1)


def behavior_loss(logits: Tensor, actions: Tensor, valid: Tensor, config: QMambaConfig) -> Tensor:
    """Mean cross-entropy of the behaviour head's logits ``[B, T, K, M]`` on the logged bins
    ``[B, T, K]`` over the valid steps ``[B, T]`` (bins a dimension lacks are masked out)."""
    bins_ok = bin_mask(config.action_nvec, logits.shape[-1], logits.device)
    log_p = logits.masked_fill(~bins_ok, -torch.inf).log_softmax(-1)
    taken = log_p.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)  # [B, T, K]
    return -_masked_mean(taken, valid.bool().unsqueeze(-1).expand_as(taken))


def _masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def qmamba_loss(
    q: Tensor,
    actions: Tensor,
    rewards: Tensor,
    valid: Tensor,
    config: QMambaConfig,
    next_first: Tensor | None = None,
) -> dict[str, Tensor]:
    """Q-Mamba's loss on a batch of (possibly padded) trajectories.

    Args:
        q: Q-values ``[B, T, K, M]`` (with gradient).
        actions: logged bins ``[B, T, K]`` (int).
        rewards: ``[B, T]``.
        valid: ``[B, T]`` bool, the steps that belong to the episode (a prefix of each row);
            the last valid step of a row bootstraps 0 (episode end), unless ``next_first`` says
            otherwise.
        next_first: optional ``[B]`` value of ``max Q̂_1`` at the step after the last column
            (for training on windows of longer trajectories), used where ``valid[:, -1]``.

    Returns:
        ``{"loss", "td_inner", "td_last", "conservative"}`` (scalars; ``loss`` differentiable).
    """
    k, m = q.shape[-2:]
    actions = actions.long()
    valid = valid.bool()
    bins_ok = bin_mask(config.action_nvec, m, q.device)  # [K, M]
    taken = F.one_hot(actions, m).bool()  # [B, T, K, M]
    q_taken = (q * taken).sum(-1)  # [B, T, K]
    q_max = q.detach().masked_fill(~bins_ok, -torch.inf).amax(-1)  # [B, T, K]
    if config.target_range is not None:
        q_max = q_max.clamp(*config.target_range)

    step_mask = valid.unsqueeze(-1)
    if k > 1:
        td_inner = _masked_mean(
            (q_taken[..., :-1] - q_max[..., 1:]).square(), step_mask.expand(-1, -1, k - 1)
        )
    else:
        td_inner = q.new_zeros(())
    next_q = torch.zeros_like(rewards, dtype=q.dtype)
    next_valid = torch.cat([valid[:, 1:], torch.zeros_like(valid[:, :1])], dim=1)
    next_q[:, :-1] = q_max[:, 1:, 0]
    if next_first is not None:
        next_q[:, -1] = next_first.to(q.dtype)
        next_valid[:, -1] = valid[:, -1]
    target_last = rewards.to(q.dtype) + config.gamma * torch.where(next_valid, next_q, 0.0)
    td_last = _masked_mean((q_taken[..., -1] - target_last).square(), valid)

    not_taken = ~taken & bins_ok & step_mask.unsqueeze(-1)
    conservative = _masked_mean(q.square(), not_taken)
    loss = 0.5 * (td_inner + config.beta * td_last) + 0.5 * config.lam * conservative
    return {"loss": loss, "td_inner": td_inner, "td_last": td_last, "conservative": conservative}
