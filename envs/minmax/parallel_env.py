"""PettingZoo views of the min-max games: batched, ``ParallelEnv`` (simultaneous), ``AECEnv`` (alternating).

:class:`MinMaxBatchedParallelEnv` holds ``B`` games as torch tensors and speaks the parallel API
with dicts of batched tensors; :class:`MinMaxParallelEnv` is the standard PettingZoo
``ParallelEnv`` over it at ``B = 1`` (numpy at the boundary); :class:`MinMaxAECEnv` is the
alternating-order view in which ``y`` moves after seeing the new ``x``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv, ParallelEnv

from gymforge.core.devices import check_device
from gymforge.core.instance_rng import InstanceRNG
from gymforge.core.render_modes import check_render_mode
from gymforge.core.reset_seeds import MAX_SEED, batch_reset_seeds
from gymforge.core.spaces import as_action_tensor, validate_batched_action
from gymforge.core.vector_env import check_num_envs
from gymforge.envs.minmax import dynamics
from gymforge.envs.minmax.config import GameConfig, check_positive, episode_length
from gymforge.envs.minmax.games import BilinearGame, make_game
from gymforge.envs.minmax.random_games import draw_bilinear_matrices

AGENTS: tuple[str, str] = ("x", "y")

_DOC = """MinMax-<Game>: two players, x minimising and y maximising f(x, y), move their parameters.

    ## Description
    The min-max games of Feng et al., "Continuous-Time Analysis of Heavy Ball Momentum in
    Min-Max Games" (ICML 2025), as a two-player zero-sum PettingZoo game. Each step both agents
    choose an increment of their own parameter; a gradient descent–ascent player with step size
    ``h`` plays ``−h ∇_x f`` (agent ``x``) or ``+h ∇_y f`` (agent ``y``), a heavy-ball player
    adds ``β`` times its last move. Games: ``bilinear`` ``xᵀAy``, ``quadratic``
    ``a‖x‖² + xᵀBy − c‖y‖²``, ``xy2`` ``−x·y²`` with ``x ≥ 0`` (``x`` is projected), ``sextic``
    ``x(y − 0.45) + φ(x) − φ(y)`` (a limit-cycle game). ``MinMaxParallelEnv`` applies both moves
    at once (simultaneous order); ``MinMaxAECEnv`` lets ``x`` move first and ``y`` answer after
    seeing the new ``x`` (alternating order).

    ## Action Space
    Per agent ``Box(−max_increment, max_increment, (dim,), float32)``: the increment of that
    agent's parameter (``dim = m`` for ``x``, ``n`` for ``y``).

    ## Observation Space
    Both agents see ``Box(−inf, inf, (2(m + n),), float32)``:

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | 0 … m−1 | x | – | −inf | inf |
    | m … m+n−1 | y | – | −inf | inf |
    | m+n … 2m+n−1 | ∇_x f(x, y) | – | −inf | inf |
    | 2m+n … 2(m+n)−1 | ∇_y f(x, y) | – | −inf | inf |

    ## State
    ``state()`` (PettingZoo's global state, ``state_space``
    ``Box(−inf, inf, (m + n,), float32)``): both players' iterates ``(x, y)``.

    ## Rewards
    Zero-sum: ``x`` receives ``−f(x, y)`` and ``y`` receives ``+f(x, y)`` at the new point,
    once per round (in the AEC view after ``y``'s move); ``info["f"]`` holds ``f`` and
    ``info["distance"]`` the distance to the set of equilibria (bilinear, quadratic, xy2) or the
    gradient norm where none is known (sextic).

    ## Starting State
    ``x`` and ``y`` uniform in ``[−init_scale, init_scale]`` (``x`` in ``[0, init_scale]`` for
    ``xy2``), drawn from the reset seed. With ``random_game_dim=d`` (bilinear only) the reset
    seed first draws the game itself: ``A = U diag(σ) Vᵀ`` with ``U``, ``V`` random orthogonal
    ``d × d`` matrices and singular values ``σ`` uniform in ``[0.2, 1]`` (so every game has the
    unique equilibrium ``(0, 0)`` and a condition number of at most 5).

    ## Episode End
    No termination; both agents are truncated after ``max_steps`` rounds.

    ## Arguments
    | Parameter | Type | Default | Description |
    |---|---|---|---|
    | game | str | per id | ``bilinear``, ``quadratic``, ``xy2`` or ``sextic`` |
    | game_params | dict | ``{}`` | ``A``; ``a``, ``B``, ``c``; ``shift`` (see ``GAME_PARAMS``) |
    | max_steps | int | 100 | rounds per episode |
    | max_cycles | int | None | PettingZoo's name of ``max_steps`` (give one of the two) |
    | init_scale | float | 1.0 | half-width of the starting box |
    | max_increment | float | 1.0 | bound of each action entry |
    | random_game_dim | int or None | None | draw a ``d × d`` bilinear game per reset seed |

    ## Version History
    - v0: initial version.
    """


class MinMaxBatchedParallelEnv:
    """``B`` copies of one game with the parallel API over batched torch tensors.

    ``reset`` returns ``({agent: (B, D) float32}, {agent: {}})``; ``step`` takes
    ``{agent: (B, dim)}`` increments and returns observations, rewards ``(B,)``, terminations and
    truncations ``(B,) bool`` and infos ``{agent: {"f": (B,)}}`` per agent. Instance ``i`` of a
    batch reset with seed ``s`` equals a batch of one reset with ``s + i``. Episodes of all
    instances end together (no autoreset). Game, spaces, rewards and arguments are those of
    :class:`MinMaxParallelEnv`; ``game_params`` may carry a leading batch axis of size ``B``
    (one game per instance).
    """

    possible_agents = AGENTS

    def __init__(
        self,
        num_envs: int = 1,
        device: torch.device | str = "cpu",
        game: str = "bilinear",
        game_params: Mapping[str, Any] | None = None,
        max_steps: int | None = None,
        init_scale: float = 1.0,
        max_increment: float = 1.0,
        random_game_dim: int | None = None,
        max_cycles: int | None = None,
    ) -> None:
        num_envs = check_num_envs(num_envs)
        check_positive("max_increment", max_increment)
        rounds = episode_length(max_steps, max_cycles)
        self.config = GameConfig(game, dict(game_params or {}), rounds, init_scale)
        self.device = check_device(device)
        self.random_game_dim = _check_random_game_dim(random_game_dim, self.config)
        if self.random_game_dim is None:
            self.game = make_game(game, self.config.game_params, device=self.device)
        else:  # a placeholder of the right shape until reset draws the games
            eye = torch.eye(self.random_game_dim, dtype=torch.float64)
            self.game = BilinearGame(eye, device=self.device)
        if self.game.batch not in (1, num_envs):
            raise ValueError(
                f"game_params have batch {self.game.batch}; it must be 1 or num_envs={num_envs}"
            )
        self.num_envs = num_envs
        self.max_increment = float(max_increment)
        dims = {"x": self.game.x_dim, "y": self.game.y_dim}
        obs_dim = 2 * (dims["x"] + dims["y"])
        self.observation_spaces = {
            a: spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32) for a in AGENTS
        }
        self.action_spaces = {
            a: spaces.Box(-self.max_increment, self.max_increment, (dims[a],), np.float32)
            for a in AGENTS
        }
        #: the space of one instance's global state (both iterates, see :meth:`global_state`)
        self.state_space = spaces.Box(-np.inf, np.inf, (dims["x"] + dims["y"],), np.float32)
        self.rng = InstanceRNG.create([0] * num_envs, self.device)
        self.np_random, _ = seeding.np_random(None)
        self.state: dynamics.PlayState | None = None

    def reset(
        self, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, torch.Tensor], dict[str, dict[str, Any]]]:
        seeds, generator_seed = batch_reset_seeds(seed, self.num_envs, self.np_random)
        if generator_seed is not None:
            self.np_random, _ = seeding.np_random(generator_seed)
        everyone = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self.rng.reseed(everyone, torch.tensor(seeds, dtype=torch.int64, device=self.device))
        if self.random_game_dim is not None:
            matrices = draw_bilinear_matrices(self.rng, self.random_game_dim)
            self.game = BilinearGame(matrices, device=self.device)
        x, y = dynamics.starting_point(self.game, self.config, self.rng)
        self.state = dynamics.PlayState(
            x, y, torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
        )
        return self.observations(), {a: {} for a in AGENTS}

    def observations(self) -> dict[str, torch.Tensor]:
        obs = dynamics.observe(self.game, self._state.x, self._state.y).to(torch.float32)
        return {"x": obs, "y": obs.clone()}

    def global_state(self) -> torch.Tensor:
        """PettingZoo's global state of each instance, ``(B, m + n)`` float32: both players'
        iterates ``(x, y)``, which with the game determine both observations."""
        return torch.cat([self._state.x, self._state.y], dim=1).to(torch.float32)

    @property
    def _state(self) -> dynamics.PlayState:
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        return self.state

    def check_action(self, agent: str, action: Any) -> torch.Tensor:
        """The validated ``(B, dim)`` float64 increment of ``agent``; ``ValueError`` if invalid."""
        if agent not in AGENTS:
            raise ValueError(f"agent must be one of {list(AGENTS)}, got {agent!r}")
        tensor = as_action_tensor(action, self.device)
        validate_batched_action(
            tensor, self.action_spaces[agent], self.num_envs, field=f"actions[{agent!r}]"
        )
        return tensor.to(torch.float64)

    def move(self, agent: str, increment: torch.Tensor) -> None:
        """Apply a validated increment of one player (the alternating view's half-step)."""
        state = self._state
        if agent == "x":
            state.x = self.game.project_x(state.x + increment)
        else:
            state.y = state.y + increment

    def end_round(
        self,
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], dict[str, Any]]:
        """Count the round; rewards ``{x: −f, y: +f}``, truncations and infos of both agents."""
        state = self._state
        state.steps = state.steps + 1
        f = self.game.value(state.x, state.y).to(torch.float32)
        distance = dynamics.progress_measure(self.game, state.x, state.y).to(torch.float32)
        truncated = state.steps >= self.config.max_steps
        rewards = {"x": -f, "y": f.clone()}
        truncations = {a: truncated.clone() for a in AGENTS}
        infos = {a: {"f": f.clone(), "distance": distance.clone()} for a in AGENTS}
        return rewards, truncations, infos

    def step(self, actions: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not isinstance(actions, Mapping) or set(actions) != set(AGENTS):
            got = sorted(actions) if isinstance(actions, Mapping) else actions
            raise ValueError(f"actions must be a dict with keys {list(AGENTS)}, got {got!r}")
        self._state  # noqa: B018 - raises before validation when reset() was never called
        increments = {a: self.check_action(a, actions[a]) for a in AGENTS}  # all before any move
        for agent in AGENTS:
            self.move(agent, increments[agent])
        rewards, truncations, infos = self.end_round()
        terminations = {a: torch.zeros_like(truncations[a]) for a in AGENTS}
        return self.observations(), rewards, terminations, truncations, infos


class MinMaxParallelEnv(ParallelEnv):
    __doc__ = _DOC
    metadata = {"name": "minmax_v0", "render_modes": [], "is_parallelizable": True}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        self.render_mode = check_render_mode(
            render_mode, self.metadata["render_modes"], type(self).__name__
        )
        self._batched = MinMaxBatchedParallelEnv(num_envs=1, device="cpu", **kwargs)
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self.state_space = self._batched.state_space

    def state(self) -> np.ndarray:
        """Both players' iterates ``(x, y)``, float32 ``(m + n,)`` (see ``state_space``)."""
        return self._batched.global_state()[0].numpy().copy()

    @property
    def game(self) -> Any:
        """The game being played (with ``random_game_dim``, the one the last reset drew)."""
        return self._batched.game

    @functools.cache  # noqa: B019 - PettingZoo wants the same object each call
    def observation_space(self, agent: str) -> spaces.Box:
        return self._batched.observation_spaces[agent]

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Box:
        return self._batched.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        if seed is None:
            seed = int(self._batched.np_random.integers(0, MAX_SEED))
        obs, infos = self._batched.reset(seed=seed, options=options)
        self.agents = list(AGENTS)
        return _unbatch(obs), infos

    def step(self, actions: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("the episode is over: call reset() before step()")
        batched = {a: np.asarray(actions[a])[None] if a in actions else None for a in actions}
        obs, rewards, terms, truncs, infos = self._batched.step(batched)
        out = (
            _unbatch(obs),
            {a: float(r[0]) for a, r in rewards.items()},
            {a: bool(t[0]) for a, t in terms.items()},
            {a: bool(t[0]) for a, t in truncs.items()},
            {a: {k: float(v[0]) for k, v in info.items()} for a, info in infos.items()},
        )
        if any(out[2].values()) or any(out[3].values()):
            self.agents = []
        return out


class MinMaxAECEnv(AECEnv):
    """The alternating-order view: ``x`` moves, then ``y`` moves after seeing the new ``x``.

    Same game, spaces, rewards and arguments as :class:`MinMaxParallelEnv`; rewards are given
    after ``y``'s move (``x``'s half-step yields 0).
    """

    metadata = {"name": "minmax_aec_v0", "render_modes": [], "is_parallelizable": False}  # noqa: RUF012

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        super().__init__()
        self.render_mode = check_render_mode(
            render_mode, self.metadata["render_modes"], type(self).__name__
        )
        self._batched = MinMaxBatchedParallelEnv(num_envs=1, device="cpu", **kwargs)
        self.possible_agents = list(AGENTS)
        self.agents = []
        self.state_space = self._batched.state_space

    def state(self) -> np.ndarray:
        """Both players' iterates ``(x, y)``, float32 ``(m + n,)`` (see ``state_space``)."""
        return self._batched.global_state()[0].numpy().copy()

    @property
    def game(self) -> Any:
        """The game being played (with ``random_game_dim``, the one the last reset drew)."""
        return self._batched.game

    @functools.cache  # noqa: B019
    def observation_space(self, agent: str) -> spaces.Box:
        return self._batched.observation_spaces[agent]

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Box:
        return self._batched.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is None:
            seed = int(self._batched.np_random.integers(0, MAX_SEED))
        self._batched.reset(seed=seed, options=options)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = "x"

    def observe(self, agent: str) -> np.ndarray:
        return self._batched.observations()[agent][0].numpy().copy()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        increment = self._batched.check_action(agent, np.asarray(action)[None])
        self._cumulative_rewards[agent] = 0.0
        self._batched.move(agent, increment)
        if agent == "x":
            self._clear_rewards()
            self.agent_selection = "y"
        else:
            rewards, truncations, infos = self._batched.end_round()
            self.rewards = {a: float(r[0]) for a, r in rewards.items()}
            self.truncations = {a: bool(t[0]) for a, t in truncations.items()}
            self.infos = {a: {k: float(v[0]) for k, v in i.items()} for a, i in infos.items()}
            self.agent_selection = "x"
        self._accumulate_rewards()


def _check_random_game_dim(value: Any, config: GameConfig) -> int | None:
    """``random_game_dim`` checked: ``None``, or an int >= 1 on a bilinear game without params."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"random_game_dim must be None or an int >= 1, got {value!r}")
    if config.game != "bilinear" or config.game_params:
        raise ValueError(
            "random_game_dim draws bilinear games: it needs game='bilinear' and no game_params, "
            f"got game={config.game!r}, game_params={dict(config.game_params)}"
        )
    return value


def _unbatch(obs: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    return {a: o[0].numpy().copy() for a, o in obs.items()}
