"""The interface every Off-CMAB application implements, batched over instances.

An application (cascade, LLM cache, influence maximization, k-path) is a :class:`Problem`: fixed
structure (sizes, a graph, fixed parameters) held by the object, and per-instance parameters
(attraction probabilities, costs, edge probabilities) held in a dict of tensors with a leading
instance axis ``B``, drawn from the instance's own seed. Every method is a pure function of
``(params, super arm, random numbers)``; the env adapters and the dataset collector own the state.

Super arms are passed in each application's natural form (``arm``): a ranked list of ids
``(B, k)`` for the cascade, a boolean cache or seed mask ``(B, m)`` for the cache and influence
maximization (datasets may hold empty caches or random-size seed sets), a path index ``(B,)``
for the k-path problem. :meth:`Problem.arm_from_ids` turns validated ids into that form.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import torch

from gymforge.core.instance_rng import InstanceRNG

Params = dict[str, torch.Tensor]
Feedback = dict[str, torch.Tensor]


class Problem:
    """Base class of the four applications (see the module docstring).

    Attributes:
        name: short name (``"cascade"``, ``"llm_cache"``, ``"influence"``, ``"kpath"``).
        n_arms: number of base arms ``m`` of the CMAB-T instance.
        n_ids: number of distinct ids a super arm is built from (items, queries, nodes, paths).
        size: ids per super arm ``k`` (1 for the k-path problem, whose super arm is a path index).
        alpha: approximation ratio of :meth:`optimal` (1 where it is exact).
        feedback_dim: length of the per-step feedback features in the observation.
    """

    name: str = ""
    n_arms: int
    n_ids: int
    size: int
    alpha: float = 1.0
    feedback_dim: int
    id_name: str = "items"  # what the ids of a super arm are, for error messages
    size_name: str = "list_size"  # the argument that sets the super-arm size

    # --- instances -----------------------------------------------------------------------
    def draw_params(self, rng: InstanceRNG) -> Params:
        """Per-instance parameters, each a tensor with leading axis ``B``."""
        raise NotImplementedError

    # --- dynamics ------------------------------------------------------------------------
    def arm_from_ids(self, ids: torch.Tensor) -> torch.Tensor:
        """The natural super-arm form of validated ids ``(B, size)``."""
        raise NotImplementedError

    def play(
        self, params: Params, arm: torch.Tensor, rng: InstanceRNG
    ) -> tuple[torch.Tensor, Feedback]:
        """Play ``arm`` once per instance: reward ``(B,)`` float32 and the compact feedback."""
        raise NotImplementedError

    def features(
        self, feedback: Feedback, triggered: torch.Tensor, outcomes: torch.Tensor
    ) -> torch.Tensor:
        """Observation features ``(B, feedback_dim)`` in [0, 1] of one play's feedback, given
        its :meth:`triggered` arms and outcomes: by default the two side by side."""
        return torch.cat([triggered.to(torch.float32), outcomes], dim=1)

    def triggered(self, params: Params, feedback: Feedback) -> tuple[torch.Tensor, torch.Tensor]:
        """Triggered base arms ``(B, n_arms)`` bool and their observed outcomes (0 elsewhere)."""
        raise NotImplementedError

    def observation(
        self, params: Params, feedback: Feedback
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A fresh observation buffer ``(B, feedback_dim + 1)`` holding the features (last column
        left 0 for the env's step counter), the triggered arms and their outcomes."""
        triggered, outcomes = self.triggered(params, feedback)
        features = self.features(feedback, triggered, outcomes)
        buffer = torch.zeros(features.shape[0], self.feedback_dim + 1, device=features.device)
        buffer[:, : self.feedback_dim] = features
        return buffer, triggered, outcomes

    # --- evaluation ----------------------------------------------------------------------
    def expected_reward(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        """``r(S; μ)`` per instance, ``(B,)`` float64."""
        raise NotImplementedError

    def optimal(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        """The optimal (or ``alpha``-approximate) super arm and its expected reward ``(B,)``."""
        raise NotImplementedError

    def trigger_probabilities(self, params: Params, arm: torch.Tensor) -> torch.Tensor:
        """``p_i^S``: the probability that each base arm is triggered, ``(B, n_arms)`` float64."""
        raise NotImplementedError

    # --- datasets ------------------------------------------------------------------------
    def arm_statistics(self, arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Per-base-arm observation counts ``N_i`` and outcome sums from a dataset's arrays."""
        raise NotImplementedError

    def public_config(self) -> dict[str, Any]:
        """The structure of the problem as JSON-friendly values (recorded in dataset metadata)."""
        raise NotImplementedError


def select_params(params: Params, index: int | slice | torch.Tensor) -> Params:
    """The parameters of a subset of instances."""
    return {name: value[index] for name, value in params.items()}


def expand_params(params: Params, batch: int) -> Params:
    """Repeat the parameters of one instance (leading axis 1) over ``batch`` rows."""
    return {name: value.expand(batch, *value.shape[1:]) for name, value in params.items()}


def params_hash(params: Params) -> str:
    """sha256 over the parameter tensors of one instance (name, dtype, shape and bytes)."""
    digest = hashlib.sha256()
    for name in sorted(params):
        value = params[name].detach().cpu().contiguous().numpy()
        digest.update(f"{name}|{value.dtype}|{value.shape}|".encode())
        digest.update(value.tobytes())
    return digest.hexdigest()


def check_int(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]`` or a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        upper = "" if maximum is None else f" and <= {maximum}"
        raise ValueError(f"{name} must be >= {minimum}{upper}, got {value}")
    return int(value)


def check_unit_range(name: str, low: float, high: float) -> tuple[float, float]:
    """``(low, high)`` with ``0 <= low <= high <= 1`` or a ``ValueError`` naming ``name``."""
    if not (0.0 <= float(low) <= float(high) <= 1.0):
        raise ValueError(f"{name} must satisfy 0 <= low <= high <= 1, got ({low}, {high})")
    return float(low), float(high)


def check_probabilities(name: str, values: object, length: int | None = None) -> np.ndarray:
    """A 1-D float64 array of values in [0, 1] (of ``length`` if given) or a ``ValueError``."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or (length is not None and array.shape[0] != length):
        want = f"length {length}" if length is not None else "1-D"
        raise ValueError(f"{name} must be a {want} sequence, got shape {array.shape}")
    if not np.all(np.isfinite(array)) or array.min(initial=0) < 0 or array.max(initial=0) > 1:
        raise ValueError(f"{name} must hold probabilities in [0, 1]")
    return array


# Parameter draws use counters from 2**40 on, a range the per-step draws never reach, so an
# instance's parameters and its plays come from disjoint parts of the same seeded stream.
PARAM_COUNTER = 1 << 40


def param_rng(seeds: torch.Tensor) -> InstanceRNG:
    """The stream an instance's parameters are drawn from: instance seed ``s`` → parameters."""
    seeds = seeds.to(torch.int64)
    rng = InstanceRNG(seed=seeds, counter=torch.zeros_like(seeds), key=seeds)
    rng.reseed(torch.ones_like(seeds, dtype=torch.bool), seeds)
    rng.counter = torch.full_like(seeds, PARAM_COUNTER)
    return rng


def instance_params(problem: Problem, seed: int, device: torch.device | str = "cpu") -> Params:
    """Parameters ``(1, ...)`` of the instance with ``seed`` (what ``env.reset(seed=seed)`` draws)."""
    return problem.draw_params(param_rng(torch.tensor([seed], device=device)))
