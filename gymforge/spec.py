"""The record of one registered id: :class:`EnvSpec` and its :class:`Capabilities`.

Torch-free and import-light: the id tables in :mod:`gymforge.ids` build these rows at
``import gymforge`` time without loading any family's code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import gymnasium as gym

#: the module whose attributes are the entry points built from the families' classes
ENTRY_POINTS = "gymforge.entry_points"
RANDOM_AGENT = "gymforge.agents.random_agent:RandomAgent"
RANDOM_PLAYERS = "gymforge.agents.random_players:RandomPlayers"  # multi-agent ids


@dataclass(frozen=True)
class Capabilities:
    """What an id supports; tests, docs and leaderboards read these flags.

    Attributes:
        multi_agent: a PettingZoo env (``parallel_entry_point``) rather than a ``gym.Env``.
        batched: has a torch ``vector_entry_point`` (``gym.make_vec``, thousands of instances);
            for a multi-agent id, a ``batched_parallel_entry_point``
            (``gymforge.make_parallel(id, num_envs=B)``).
        devices: torch devices the batched implementation runs on.
        offline_dataset: ships or collects an offline dataset.
        render_modes: render modes of the single env.
        deterministic: the same seed and actions give the same trajectory.
        same_engine: ``gym.make`` is the batch-of-one view of the ``make_vec`` dynamics, so a
            vector instance equals the scalar env sample by sample. False where the scalar env
            is an exact reference engine of its own (LineFlow's SimPy engine), which the vector
            engine matches in distribution.
    """

    multi_agent: bool = False
    batched: bool = False
    devices: tuple[str, ...] = ("cpu",)
    offline_dataset: bool = False
    render_modes: tuple[str, ...] = ()
    deterministic: bool = True
    same_engine: bool = True


@dataclass(frozen=True)
class EnvSpec:
    """One registered id.

    Attributes:
        id: the Gymnasium id, e.g. ``"LineFlow-v0"``.
        family: the family folder under ``envs/``.
        summary: one line for listings.
        entry_point: Gymnasium's entry point of the single-agent ``gym.Env`` (what ``gym.make``
            builds), as ``"module:attribute"``. Given only where the scalar env is an engine of
            its own (LineFlow's SimPy engine) or a third-party class; left out for an id with a
            ``vector_env``, it is derived: ``"gymforge.entry_points:<Name>Env"``, the view of
            the vector class at batch size one
            (:func:`gymforge.core.scalar_env.scalar_view`).
        vector_entry_point: Gymnasium's vector entry point (what
            ``gym.make_vec(..., vectorization_mode="vector_entry_point")`` calls), as
            ``"module:attribute"``. Derived from ``vector_env`` as
            ``"gymforge.entry_points:make_<VecClass>"``,
            :func:`gymforge.core.vector_factory.make_vector` over the class (so it takes
            ``num_workers``, ``autoreset_mode`` and ``array_backend`` besides the class's
            keywords); given directly only for a factory of one's own.
        vector_env: ``"module:Class"`` of the batched ``TorchVectorEnv``, if any: the one class a
            family writes for both entry points.
        scalar_base: ``"module:Class"`` of the base of the derived scalar view, a
            ``TorchScalarEnv`` subclass that adds helpers (default ``TorchScalarEnv`` itself).
        parallel_entry_point: ``"module:Class"`` of the PettingZoo ``ParallelEnv``, if any.
        batched_parallel_entry_point: ``"module:Class"`` of a multi-agent id's batched view: the
            parallel API over ``B`` instances with dicts of ``(B, ...)`` torch tensors, built by
            ``make_parallel(id, num_envs=B, device=D)``.
        kwargs: default keyword arguments of the id (variants differ only here).
        capabilities: see :class:`Capabilities`.
        agents: reference agents by CLI name, as ``"module:factory"``; ``random`` is implied.
            Multi-agent ids name players objects (see :mod:`gymforge.agents.random_players`).
        dataset_collector: ``"module:function"`` behind ``gymforge dataset collect ID`` for ids
            with offline data; it receives the parsed CLI options (see
            :mod:`gymforge.commands.dataset`).
        board_dataset: ``"module:function"`` building the logged dataset an offline board (a
            protocol's ``offline_dataset`` block) hands its agents for one evaluation seed:
            ``f(env_id, env_kwargs, block, seed) -> (dataset, arrays, metadata)``; the board
            hashes ``arrays`` and ``metadata`` (:func:`gymforge.hashing.dataset_sha256`).
    """

    id: str
    family: str
    summary: str
    entry_point: str | None = None
    vector_entry_point: str | None = None
    vector_env: str | None = None
    scalar_base: str | None = None
    parallel_entry_point: str | None = None
    batched_parallel_entry_point: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    capabilities: Capabilities = field(default_factory=Capabilities)
    agents: Mapping[str, str] = field(default_factory=dict)
    dataset_collector: str | None = None
    board_dataset: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kwargs", MappingProxyType(dict(self.kwargs)))
        self._derive_entry_points()
        agents = {"random": RANDOM_PLAYERS if self.capabilities.multi_agent else RANDOM_AGENT}
        agents.update(self.agents)
        object.__setattr__(self, "agents", MappingProxyType(agents))

    def _derive_entry_points(self) -> None:
        if self.vector_env is None:
            if self.scalar_base is not None:
                raise ValueError(f"{self.id}: scalar_base needs a vector_env")
            return
        if self.vector_entry_point is not None:
            raise ValueError(f"{self.id}: give vector_env or vector_entry_point, not both")
        module, _, name = self.vector_env.partition(":")
        if not module or not name.isidentifier():
            raise ValueError(
                f"{self.id}: vector_env must look like 'module:Class', got {self.vector_env!r}"
            )
        object.__setattr__(self, "vector_entry_point", f"{ENTRY_POINTS}:make_{name}")
        if self.capabilities.multi_agent:
            return
        if self.entry_point is None:
            view = name.removesuffix("VecEnv") + "Env"  # scalar_view's default name
            object.__setattr__(self, "entry_point", f"{ENTRY_POINTS}:{view}")
        elif self.scalar_base is not None:
            raise ValueError(f"{self.id}: scalar_base is for the derived entry point; drop one")

    def make(self, **overrides: Any) -> gym.Env:
        """``gym.make`` of this id with keyword overrides."""
        return gym.make(self.id, **overrides)
