"""The hyperparameters of the on-device PPO trainer (and of A2C and recurrent PPO, which are
settings of the same update): :class:`PPOConfig`, validated when built, read from the ``algos``
block of a ``gymforge train`` config file by :mod:`.config`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

OPTIMIZERS = ("adam", "rmsprop")


@dataclass(frozen=True)
class PPOConfig:
    """Hyperparameters of one run (defaults: cleanrl's PPO with rsl_rl-sized rollouts).

    Attributes:
        n_steps: steps of every instance per rollout (a rollout is ``n_steps * B`` samples).
        n_epochs, n_minibatches: passes over a rollout and minibatches per pass.
        learning_rate: Adam's (or RMSprop's) step size at the start; annealed linearly to 0
            over the run when ``anneal_lr``.
        gamma, gae_lambda: discount and GAE's lambda.
        clip: PPO's ratio clip (``None``: unclipped policy gradient).
        clip_value: clip of the value change (``None``: plain squared error).
        value_coef, entropy_coef: weights of the value loss and the entropy bonus.
        max_grad_norm: gradient clipping by global norm (``None``: off).
        normalize_advantage: per minibatch, to zero mean and unit std.
        normalize_obs: running mean/std observation normalisation (statistics in the artifact).
        optimizer: ``adam`` or ``rmsprop`` (A2C's).
        adam_eps: the optimizer's epsilon.
        hidden, shared, activation, rnn_hidden, ordinal, ordinal_width: the network
            (:class:`.policy.PolicySpec`).
        final_temperature: categorical actions are sampled from ``softmax(logits / T)`` with ``T``
            falling linearly from 1 at the start of the run to this at its end (the PPO ratio
            uses the same ``T``), so that late rollouts try choices next to the greedy one
            rather than all over; greedy acting (evaluation) is unaffected. 1: off.
        mask_unread_actions: leave out of the policy gradient the action dimensions that the
            env did not read in a step (an env reporting ``last_action_read``, as the batched
            LineFlow envs do): a LineFlow waiting time is read only when its source starts a
            cycle, about one step in twelve, and the next action replaces an unread one, so
            the other samples' policy terms are noise. The policy and entropy terms average
            over the samples with a read dimension (advantages normalised over those); the
            value loss keeps every sample. The gradient it drops is the one through the
            observed setting alone. Categorical actions only.
        stagger_starts: cut each instance's first episode at a uniformly random step (treated
            as a time limit: bootstrapped, not counted as an episode), so that the instances'
            episodes spread over the whole horizon instead of marching in step. Without it, a
            rollout of B instances holds B samples of the same few steps of an episode (rsl_rl
            randomises the first episode's length for the same reason). Needs an env with
            ``max_steps`` and partial resets; ignored otherwise.
    """

    n_steps: int = 16
    n_epochs: int = 5
    n_minibatches: int = 4
    learning_rate: float = 3e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float | None = 0.2
    clip_value: float | None = None
    value_coef: float = 0.5
    entropy_coef: float = 0.0
    max_grad_norm: float | None = 0.5
    normalize_advantage: bool = True
    normalize_obs: bool = False
    optimizer: str = "adam"
    adam_eps: float = 1e-5
    hidden: tuple[int, ...] = (64, 64)
    shared: bool = False
    activation: str = "tanh"
    rnn_hidden: int = 0
    ordinal: bool = False
    ordinal_width: float = 0.5
    final_temperature: float = 1.0
    mask_unread_actions: bool = False
    stagger_starts: bool = True

    def __post_init__(self) -> None:
        for name in ("n_steps", "n_epochs", "n_minibatches"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        for name in ("learning_rate", "adam_eps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name} must be a number > 0, got {value!r}")
        for name in ("gamma", "gae_lambda"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 <= value <= 1
            ):
                raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
        for name in ("clip", "clip_value", "max_grad_norm"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0
            ):
                raise ValueError(f"{name} must be a number > 0 or null, got {value!r}")
        for name in ("value_coef", "entropy_coef"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if isinstance(self.rnn_hidden, bool) or not isinstance(self.rnn_hidden, int):
            raise ValueError(f"rnn_hidden must be an int >= 0, got {self.rnn_hidden!r}")
        if self.rnn_hidden < 0:
            raise ValueError(f"rnn_hidden must be an int >= 0, got {self.rnn_hidden!r}")
        t = self.final_temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 1:
            raise ValueError(f"final_temperature must be a number in (0, 1], got {t!r}")
        for name in ("ordinal", "mask_unread_actions", "stagger_starts"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be true or false, got {getattr(self, name)!r}")

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["hidden"] = list(self.hidden)
        return data

    @classmethod
    def from_mapping(cls, data: dict[str, Any], where: str = "config") -> PPOConfig:
        """A config from a mapping; an unknown key is an error naming ``where`` and the allowed."""
        allowed = sorted(f.name for f in fields(cls))
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise ValueError(f"{where}: unknown setting {unknown[0]!r}; allowed: {allowed}")
        values = dict(data)
        if "hidden" in values:
            hidden = values["hidden"]
            if not isinstance(hidden, (list, tuple)) or not all(
                isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in hidden
            ):
                raise ValueError(f"{where}: hidden must be a list of ints >= 1, got {hidden!r}")
            values["hidden"] = tuple(hidden)
        try:
            return cls(**values)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
