"""Gymnasium adapters of the Off-CMAB applications: one batched ``TorchVectorEnv`` per application
and :class:`CMABEnv`, the base of their scalar ``gym.Env`` views (the same dynamics at B=1, with
numpy evaluation helpers); the registry builds each id's view from the two."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from gymforge.core.scalar_env import TorchScalarEnv
from gymforge.core.vector_env import StepOutput, TorchVectorEnv
from gymforge.envs.cmab.cascade import CascadeProblem
from gymforge.envs.cmab.influence import InfluenceProblem
from gymforge.envs.cmab.kpath import KPathProblem
from gymforge.envs.cmab.llm_cache import LLMCacheProblem
from gymforge.envs.cmab.problem import Params, Problem, check_int, param_rng
from gymforge.envs.cmab.super_arms import (
    check_action_format,
    check_distinct,
    choice_nvec,
    decode_choice,
    encode_choice,
    validate_super_arm,
)

_COMMON_ARGS = """
    | ``horizon`` | int | 100 | plays per episode (the episode is then truncated) |
    | ``action_format`` | str | ``"choice"`` | ``"choice"`` (every action valid) or ``"ids"`` |
    | ``report_regret`` | bool | False | add the episode's exact ``regret`` and last ``gap`` to the final info |
"""

_ACTION_SPACE = """
    With ``action_format="choice"`` (default): ``MultiDiscrete([{n}, {n}−1, …, {n}−{k}+1])``,
    where entry ``j`` picks the ``a_j``-th smallest {what} id not picked by entries ``0 … j−1``:
    every point of the space is a valid super arm, so random agents and PPO work unchanged.
    ``env.unwrapped.encode(ids)`` / ``decode(action)`` convert from / to {what} ids. With
    ``action_format="ids"``: ``MultiDiscrete([{n}] * {k})`` holding the {what} ids themselves.
    Either way a super arm with the wrong size, an id out of range or a repeated id raises
    ``ValueError`` before any state changes.
"""

_EVALUATION = """
    ``env.unwrapped.expected_reward(ids)`` gives ``r(S; μ)`` under the instance's true parameters,
    ``env.unwrapped.optimal_super_arm()`` the optimal (or ``alpha``-approximate) super arm and its
    value, ``env.unwrapped.params`` the parameters and ``env.unwrapped.problem`` the structure.
    The instance's parameters are drawn from the reset seed (``reset(seed=s)`` always gives the
    same instance; instance ``i`` of a vector env reset with ``s`` is the instance of seed
    ``s + i``) and are kept across autoresets; plays are random and seeded too.
    With ``report_regret=True`` the info of the step that ends an episode (and only that step, so
    an agent never sees it while it acts) holds ``gap``, ``r(S*; μ) − r(S; μ)`` of the super arm
    just played, and ``regret``, the sum of those gaps over the episode's plays: the exact
    expected (pseudo-)regret, with no sampling noise. ``S*`` is the problem's oracle super arm
    (greedy for influence maximization, whose values are its fixed-sample spread estimates).
    With ``horizon=1`` the regret is the suboptimality gap of the one super arm played.
"""

_DATASETS = """
    Logged datasets of one instance (the one ``reset(seed=SEED)`` draws) come from ``gymforge
    dataset collect {id} --agent POLICY --n N --seed SEED``, written as a checked folder
    (``--out data/{name}``), as a Minari dataset (``--minari {name}-uniform-v0``: one episode
    of ``N`` steps, actions the logged super arms, see ``gymforge.envs.cmab.minari_logged``) or
    both. Offline learners read either: ``OfflineAgent(env).fit("data/{name}")`` or
    ``fit("minari:{name}-uniform-v0")`` (the same records, so the same super arm).
"""


class CMABVecEnv(TorchVectorEnv):
    """Batched Off-CMAB env over a :class:`~gymforge.envs.cmab.problem.Problem`.

    Subclasses set :meth:`make_problem`. Observation: the last play's feedback features and the
    elapsed fraction of the episode; reward: the realised reward; ``info``: the super arm's ids,
    the triggered base arms and their outcomes, and the application's compact feedback.
    """

    info_keys: tuple[str, ...] = ()

    def __init__(
        self,
        num_envs: int = 1,
        device: torch.device | str = "cpu",
        autoreset: bool = True,
        horizon: int = 100,
        action_format: str = "choice",
        report_regret: bool = False,
        **problem_kwargs: Any,
    ) -> None:
        self.problem: Problem = self.make_problem(**problem_kwargs)
        self.horizon = check_int("horizon", horizon, 1)
        self.action_format = check_action_format(action_format)
        if not isinstance(report_regret, bool):
            raise ValueError(f"report_regret must be a bool, got {report_regret!r}")
        self.report_regret = report_regret
        observation_space = spaces.Box(0.0, 1.0, (self.problem.feedback_dim + 1,), dtype=np.float32)
        super().__init__(num_envs, observation_space, self._action_space(), device, autoreset)
        # The action sizes per position, kept on the device for the range check of decode().
        self._nvec = torch.as_tensor(self.single_action_space.nvec, device=self.device)
        self._redraw = True
        #: True once ``reset`` chose the instances (the constructor's draw is a placeholder).
        self.instance_chosen = False
        self.params: Params = {}
        self.steps = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
        # Exact regret so far and the oracle value r(S*; μ) per instance (report_regret only).
        self.regret = torch.zeros(self.num_envs, dtype=torch.float64, device=self.device)
        self.optimum = torch.zeros(self.num_envs, dtype=torch.float64, device=self.device)
        # The observation: last feedback features, then plays so far ÷ horizon. Each step and
        # reset builds a new tensor (never written in place once returned).
        self.obs = torch.zeros(
            self.num_envs, self.problem.feedback_dim + 1, dtype=torch.float32, device=self.device
        )
        self._reset_instances(torch.ones(self.num_envs, dtype=torch.bool, device=self.device))

    @classmethod
    def make_problem(cls, **kwargs: Any) -> Problem:
        raise NotImplementedError

    def _action_space(self) -> spaces.Space:
        n, k = self.problem.n_ids, self.problem.size
        if self.action_format == "choice":
            return spaces.MultiDiscrete(choice_nvec(n, k))
        return spaces.MultiDiscrete(np.full(k, n, dtype=np.int64))

    # --- super arms ----------------------------------------------------------------------
    def _validate(self, ids: Any, field: str = "super_arm") -> torch.Tensor:
        ids = _ids_of(ids)
        if not torch.is_tensor(ids):
            ids = torch.as_tensor(np.asarray(ids))
        problem = self.problem
        return validate_super_arm(
            ids, problem.n_ids, problem.size, field, problem.id_name, problem.size_name
        )

    def decode(self, action: Any) -> torch.Tensor:
        """Super-arm ids ``(B, k)`` of a batch of actions (validated)."""
        action = torch.as_tensor(np.asarray(action) if not torch.is_tensor(action) else action)
        action = action.to(self.device)
        if self.action_format == "ids":
            return self._validate(action, "action")
        squeeze = action.dim() == 1
        action = action[None] if squeeze else action
        nvec = self._nvec
        if action.shape[-1] != nvec.shape[0] or bool(((action < 0) | (action >= nvec)).any()):
            raise ValueError(f"action must have entries in [0, {nvec.tolist()}) per position")
        return decode_choice(action, self.problem.n_ids)

    def _decode_validated(self, action: torch.Tensor) -> torch.Tensor:
        """:meth:`decode` of a batch ``step`` has already checked against the action space
        (integer dtype, shape ``(B, k)``, every entry in its range): only the repeated ids of
        the ``ids`` format remain to be checked, with the same error as :meth:`decode`."""
        if self.action_format == "choice":
            return decode_choice(action, self.problem.n_ids)
        ids = action.long()
        check_distinct(ids, self.problem.n_ids, "action", self.problem.id_name)
        return ids

    def encode(self, super_arm: Any) -> torch.Tensor:
        """The actions ``(B, k)`` that play the super arms ``super_arm`` (ids, validated)."""
        ids = self._validate(super_arm).to(self.device)
        return ids if self.action_format == "ids" else encode_choice(ids)

    # --- evaluation ------------------------------------------------------------------------
    @property
    def alpha(self) -> float:
        """Approximation ratio of :meth:`optimal_super_arm` (1 where it is exact)."""
        return self.problem.alpha

    def expected_reward(self, super_arm: Any) -> torch.Tensor:
        """``r(S; μ)`` ``(B,)`` float64 of super arms given as ids ``(k,)`` or ``(B, k)``."""
        ids = self._validate(super_arm).to(self.device)
        ids = ids.expand(self.num_envs, -1) if ids.shape[0] == 1 else ids
        if ids.shape[0] != self.num_envs:
            raise ValueError(f"super_arm must hold 1 or num_envs={self.num_envs} rows")
        return self.problem.expected_reward(self.params, self.problem.arm_from_ids(ids))

    def optimal_super_arm(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The optimal (``alpha``-approximate) super arm ids ``(B, k)`` and its value ``(B,)``."""
        arm, value = self.problem.optimal(self.params)
        if arm.dtype == torch.bool:  # cache / seed masks with exactly k members
            ids = torch.nonzero(arm)[:, 1].reshape(arm.shape[0], self.problem.size)
        elif arm.dim() == 1:  # path index
            ids = arm[:, None]
        else:
            ids = arm
        return ids, value

    # --- TorchVectorEnv hooks ----------------------------------------------------------------
    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        self._redraw = True
        result = super().reset(seed=seed, options=options)
        self.instance_chosen = True
        return result

    def _reset_instances(self, mask: torch.Tensor) -> None:
        if self._redraw:  # an explicit reset: the seeds define new instances
            self.params = self.problem.draw_params(param_rng(self.rng.seed))
            self._redraw = False
            if self.report_regret:
                self.optimum = self.problem.optimal(self.params)[1].to(torch.float64)
        self.steps = torch.where(mask, 0, self.steps)
        self.regret = torch.where(mask, 0.0, self.regret)
        self.obs = torch.where(mask[:, None], 0.0, self.obs)

    def _step_instances(self, action: torch.Tensor) -> StepOutput:
        ids = self._decode_validated(action)  # raises before any state changes
        arm = self.problem.arm_from_ids(ids)
        reward, feedback = self.problem.play(self.params, arm, self.rng)
        obs, triggered, outcomes = self.problem.observation(self.params, feedback)
        self.steps = self.steps + 1
        obs[:, -1] = self.steps.to(torch.float32) / self.horizon
        self.obs = obs
        truncated = self.steps >= self.horizon
        info = {"super_arm": ids, "triggered": triggered, "outcomes": outcomes}
        info.update({key: feedback[key] for key in self.info_keys})
        if self.report_regret:
            gap = self.optimum - self.problem.expected_reward(self.params, arm).to(torch.float64)
            self.regret = self.regret + gap
            if bool(truncated.any()):  # only the step that ends an episode reports them
                info["gap"] = torch.where(truncated, gap, torch.nan)
                info["regret"] = torch.where(truncated, self.regret, torch.nan)
        return StepOutput(reward, torch.zeros_like(truncated), truncated, info)

    def _observe(self) -> torch.Tensor:
        return self.obs


def _ids_of(super_arm: Any) -> Any:
    """The ids of ``optimal_super_arm()``'s ``(ids, value)`` pair; anything else as given."""
    if (
        isinstance(super_arm, tuple)
        and len(super_arm) == 2
        and isinstance(super_arm[0], (np.ndarray, torch.Tensor))
        and np.ndim(super_arm[1]) == super_arm[0].ndim - 1
    ):
        return super_arm[0]
    return super_arm


class CMABEnv(TorchScalarEnv):
    """The base of the Off-CMAB scalar views: numpy evaluation helpers over the view's
    :class:`CMABVecEnv`."""

    vector_env_cls: type[CMABVecEnv]

    @property
    def problem(self) -> Problem:
        return self._vector.problem

    @property
    def params(self) -> Params:
        return self._vector.params

    @property
    def alpha(self) -> float:
        return self._vector.alpha

    def expected_reward(self, super_arm: Any) -> float:
        """``r(S; μ)`` of the super arm given as ``k`` ids (or :meth:`optimal_super_arm`'s pair)."""
        return float(self._vector.expected_reward(_ids_of(super_arm))[0])

    def optimal_super_arm(self) -> tuple[np.ndarray, float]:
        ids, value = self._vector.optimal_super_arm()
        return ids[0].numpy(), float(value[0])

    def encode(self, super_arm: Any) -> np.ndarray:
        return self._vector.encode(super_arm)[0].numpy()

    def decode(self, action: Any) -> np.ndarray:
        return self._vector.decode(action)[0].numpy()


# --- Cascade ------------------------------------------------------------------------------------

_CASCADE_DOC = (
    """OffCMAB-Cascade: rank items for a user who clicks the first attractive one.

    ## Description
    The cascading bandit of Off-CMAB (Liu et al., ICML 2025) for learning to rank: ``m`` items
    with unknown attraction probabilities ``μ``; each step the agent shows a ranked list of ``k``
    items, the user examines it top-down and clicks the first attractive item. The items up to
    and including the click are observed (triggered). Expected reward
    ``r(S; μ) = 1 − ∏_{i∈S}(1 − μ_i)``. The offline learner CLCB is ``gymforge.agents.cmab``.
"""
    + _EVALUATION
    + _DATASETS.format(id="OffCMAB-Cascade-v0", name="cascade")
    + """
    ## Action Space
"""
    + _ACTION_SPACE.format(n="m", k="k", what="item")
    + """
    ## Observation Space
    ``Box(0, 1, (2m + 1,), float32)``: the feedback of the last play (zeros after a reset).

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | 0 … m−1 | item ``i`` examined (triggered) in the last play | flag | 0 | 1 |
    | m … 2m−1 | item ``i`` clicked in the last play | flag | 0 | 1 |
    | 2m | plays so far ÷ horizon | fraction | 0 | 1 |

    ## Rewards
    1 if the user clicks an item of the list, else 0. ``info``: ``super_arm`` (the ranked ids),
    ``triggered`` and ``outcomes`` (per item), ``click_position`` (``k`` when no click).

    ## Starting State
    ``μ_i ~ U[mu_low, mu_high]`` drawn from the reset seed (or the fixed ``attraction``).

    ## Episode End
    Never terminated; truncated after ``horizon`` plays (the instance is kept on autoreset).

    ## Arguments
    | Parameter | Type | Default | Description |
    |---|---|---|---|
    | ``n_items`` | int | 100 | items ``m`` |
    | ``list_size`` | int | 5 | list length ``k`` |
    | ``mu_low``, ``mu_high`` | float | 0, 1 | range of the drawn attraction probabilities |
    | ``attraction`` | sequence | None | fixed ``μ`` (e.g. ``loaders.attraction_from_ratings``) |
"""
    + _COMMON_ARGS
    + """
    ## Version History
    - v0: initial version.
    """
)


class CascadeVecEnv(CMABVecEnv):
    __doc__ = _CASCADE_DOC
    info_keys = ("click_position",)

    @classmethod
    def make_problem(cls, **kwargs: Any) -> Problem:
        return CascadeProblem(**kwargs)


# --- LLM cache ------------------------------------------------------------------------------------

_LLM_DOC = (
    """OffCMAB-LLMCache: choose which LLM queries to cache.

    ## Description
    The LLM cache bandit of Off-CMAB (after Zhu et al. 2023): ``m`` queries arrive with power-law
    probabilities ``p ∝ rank^−0.9`` (queries ranked in a random order drawn from the seed) and have unknown mean costs ``c(q)``; the super arm is
    the cache content ``M`` of ``k`` queries. Each step one query arrives; a cached query costs
    nothing, a miss costs ``C_t`` (mean ``c(q)``), observed only on a miss. Expected cost
    ``Σ_{q∉M} p(q) c(q)``; reward = −cost. Base arms: ``m`` arrival arms (always observed) and
    ``m`` cost arms (observed on a miss). Cost models: ``"bernoulli"`` (default), ``"fixed"``,
    ``"tokens"`` (token counts of a prompt list); see ``gymforge.envs.cmab.llm_cache``.
"""
    + _EVALUATION
    + _DATASETS.format(id="OffCMAB-LLMCache-v0", name="llmcache")
    + """
    ## Action Space
"""
    + _ACTION_SPACE.format(n="m", k="k", what="query")
    + """
    ## Observation Space
    ``Box(0, 1, (2m + 1,), float32)``: the feedback of the last step (zeros after a reset).

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | 0 … m−1 | query ``q`` arrived in the last step | flag | 0 | 1 |
    | m … 2m−1 | observed cost of query ``q`` (0 on a hit or if it did not arrive) | cost | 0 | 1 |
    | 2m | steps so far ÷ horizon | fraction | 0 | 1 |

    ## Rewards
    Minus the realised cost (0 on a hit). ``info``: ``super_arm`` (cached ids), ``triggered`` and
    ``outcomes`` over the ``2m`` base arms, ``query``, ``miss``, ``cost``.

    ## Starting State
    Mean costs drawn from the reset seed (``"bernoulli"``: ``U[cost_low, cost_high]``).

    ## Episode End
    Never terminated; truncated after ``horizon`` steps (the instance is kept on autoreset).

    ## Arguments
    | Parameter | Type | Default | Description |
    |---|---|---|---|
    | ``n_queries`` | int | 100 | queries ``m`` |
    | ``cache_size`` | int | 40 | cache size ``k`` |
    | ``alpha`` | float | 0.9 | power-law exponent of the arrivals |
    | ``cost_model`` | str | ``"bernoulli"`` | ``"bernoulli"``, ``"fixed"`` or ``"tokens"`` |
    | ``cost_low``, ``cost_high`` | float | 0, 1 | range of the drawn mean costs |
    | ``cost_means`` | sequence | None | mean costs for ``"fixed"`` |
    | ``prompts`` | list[str] | None | prompt texts for ``"tokens"`` |
    | ``token_encoding`` | str | None | tiktoken encoding (None: built-in word pieces) |
    | ``cost_noise`` | str | None | ``"bernoulli"`` or ``"none"`` (None: the model's default) |
    | ``arrival`` | sequence | None | fixed arrival probabilities instead of the power law |
"""
    + _COMMON_ARGS
    + """
    ## Version History
    - v0: initial version.
    """
)


class LLMCacheVecEnv(CMABVecEnv):
    __doc__ = _LLM_DOC
    info_keys = ("query", "miss", "cost")

    @classmethod
    def make_problem(cls, **kwargs: Any) -> Problem:
        return LLMCacheProblem(**kwargs)


# --- Influence maximization --------------------------------------------------------------------

_IM_DOC = (
    """OffCMAB-InfluenceMax: pick seed nodes of an independent cascade.

    ## Description
    Influence maximization with node-level feedback (Off-CMAB, CLCB-IM-N): a directed graph
    whose edges (the base arms) carry unknown activation probabilities; each step the agent
    picks ``k`` seed nodes and an independent cascade runs from them. The reward is the number of
    activated nodes; the feedback is the activation round of every node (node-level: which edge
    activated a node is not observed). The default graph is a directed G(30, 0.1) (networkx,
    ``graph_seed=0``); generators, user edge lists and networkx graphs are accepted.
    ``expected_reward`` is a Monte Carlo estimate (``mc_samples`` fixed live-edge samples) and
    ``optimal_super_arm`` is the greedy seed set, a (1 − 1/e)-approximation (``alpha``).
"""
    + _EVALUATION
    + _DATASETS.format(id="OffCMAB-InfluenceMax-v0", name="influence")
    + """
    ## Action Space
"""
    + _ACTION_SPACE.format(n="V", k="k", what="node")
    + """
    ## Observation Space
    ``Box(0, 1, (2V + 1,), float32)``: the cascade of the last step (zeros after a reset).

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | 0 … V−1 | node ``v`` activated in the last cascade | flag | 0 | 1 |
    | V … 2V−1 | (activation round + 1) ÷ V (0 if not activated) | fraction | 0 | 1 |
    | 2V | steps so far ÷ horizon | fraction | 0 | 1 |

    ## Rewards
    The number of activated nodes (seeds included). ``info``: ``super_arm`` (seed ids),
    ``activation_round`` per node (−1 = never), ``triggered`` edges (source activated) and as
    their ``outcomes`` whether the target activated in the next round.

    ## Starting State
    Edge probabilities ``U[edge_prob_low, edge_prob_high]`` drawn from the reset seed.

    ## Episode End
    Never terminated; truncated after ``horizon`` steps (the instance is kept on autoreset).

    ## Arguments
    | Parameter | Type | Default | Description |
    |---|---|---|---|
    | ``graph`` | str or nx graph | ``"gnp"`` | ``gnp``, ``barabasi_albert``, ``watts_strogatz``, ``edge_list`` |
    | ``n_nodes`` | int | 30 | nodes of a generated graph |
    | ``graph_param`` | float | None | generator parameter (gnp p = 0.1, BA m = 2, WS k = 4) |
    | ``graph_seed`` | int | 0 | seed of the generated topology |
    | ``edge_list`` | str | None | edge-list file for ``graph="edge_list"`` |
    | ``edge_prob_low``, ``edge_prob_high`` | float | 0.05, 0.3 | range of drawn edge probabilities |
    | ``n_seeds`` | int | 3 | seeds ``k`` |
    | ``mc_samples`` | int | 2000 | Monte Carlo samples of the evaluation helpers |
"""
    + _COMMON_ARGS
    + """
    ## Version History
    - v0: initial version.
    """
)


class InfluenceMaxVecEnv(CMABVecEnv):
    __doc__ = _IM_DOC
    info_keys = ("activation_round",)

    @classmethod
    def make_problem(cls, **kwargs: Any) -> Problem:
        return InfluenceProblem(**kwargs)


# --- k-path ------------------------------------------------------------------------------------

_KPATH_DOC = (
    """OffCMAB-KPath: pick one of several k-edge paths (the lower-bound instance).

    ## Description
    The k-path semi-bandit problem of Off-CMAB's lower bound (Theorem 2): ``n_paths`` disjoint
    paths of ``k`` edges; every edge on the chosen path is observed and the reward is the sum of
    their Bernoulli outcomes. All edges have mean ``base`` except those of one path, drawn from
    the reset seed, with mean ``base + gap`` (construction inferred; see
    ``gymforge.envs.cmab.kpath``).
"""
    + _EVALUATION
    + _DATASETS.format(id="OffCMAB-KPath-v0", name="kpath")
    + """
    ## Action Space
    ``MultiDiscrete([n_paths])``: the index of the path (one entry; both action formats agree).

    ## Observation Space
    ``Box(0, 1, (2m + 1,), float32)`` with ``m = n_paths · k`` edges: the last play's feedback.

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | 0 … m−1 | edge ``i`` observed in the last play | flag | 0 | 1 |
    | m … 2m−1 | outcome of edge ``i`` in the last play | flag | 0 | 1 |
    | 2m | plays so far ÷ horizon | fraction | 0 | 1 |

    ## Rewards
    The number of edges of the path whose Bernoulli outcome is 1 (0 … k). ``info``:
    ``super_arm`` (the path index), ``triggered`` and ``outcomes`` per edge.

    ## Starting State
    The better path drawn uniformly from the reset seed.

    ## Episode End
    Never terminated; truncated after ``horizon`` plays (the instance is kept on autoreset).

    ## Arguments
    | Parameter | Type | Default | Description |
    |---|---|---|---|
    | ``n_paths`` | int | 2 | number of paths |
    | ``path_length`` | int | 5 | edges per path ``k`` |
    | ``base`` | float | 0.5 | mean of the ordinary edges |
    | ``gap`` | float | 0.1 | extra mean of the better path's edges |
"""
    + _COMMON_ARGS
    + """
    ## Version History
    - v0: initial version.
    """
)


class KPathVecEnv(CMABVecEnv):
    __doc__ = _KPATH_DOC

    @classmethod
    def make_problem(cls, **kwargs: Any) -> Problem:
        return KPathProblem(**kwargs)
