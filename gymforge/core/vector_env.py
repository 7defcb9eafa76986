"""``TorchVectorEnv``: the batched base every torch family plugs its dynamics into.

A subclass owns a state dataclass of tensors with a leading ``B`` axis and implements three hooks:

- ``_reset_instances(mask)``: re-initialise the instances selected by the boolean ``mask`` (B,),
  drawing randomness only from ``self.rng`` (an :class:`InstanceRNG`);
- ``_step_instances(action)``: advance every instance by one step and return a :class:`StepOutput`;
- ``_observe()``: the batched observation tensor of shape ``(B, *single_observation_space.shape)``.

The base class does the rest exactly once for every family: seeding (instance ``i`` of a batch
reset with seed ``s`` equals a single env reset with ``s + i``), action validation before any state
changes, and Gymnasium's vector conventions:

- ``autoreset_mode`` (a keyword of the factory :func:`gymforge.core.vector_factory.make_vector`,
  so ``gym.make_vec(id, ..., autoreset_mode=AutoresetMode.NEXT_STEP)``; a class constructor
  takes ``autoreset`` only): ``SAME_STEP`` (the default; finished instances reset inside
  ``step``, with ``infos["final_obs"]``/``infos["final_info"]`` and their
  ``_final_obs``/``_final_info`` masks), ``NEXT_STEP`` (a finished instance is reset by the
  next ``step``, which ignores its action and returns its reset observation with reward 0 and
  both flags False) or ``DISABLED`` (the caller resets finished instances with
  ``reset(options={"reset_mask": mask})``; stepping a finished instance first is not refused:
  its dynamics go on past the end), declared in ``metadata["autoreset_mode"]``. Gymnasium's
  ``make_vec`` forwards keywords, not ``vector_kwargs``, to a vector entry point;
- ``array_backend`` (a keyword of the factory too): ``"numpy"`` (everything returned as numpy
  arrays, so Gymnasium's numpy-based vector wrappers work; the factory's default) or
  ``"torch"`` (tensors on the env's device; the factory's default when a ``device`` is named,
  and a class constructor's), see :mod:`gymforge.core.vector_factory`.

Under ``NEXT_STEP`` the step that resets an instance still advances its dynamics once before
the reset (one implementation of the dynamics, no masked step), so its later episodes draw from
its own random stream at other positions than under ``SAME_STEP``; instance ``i`` still depends
only on its own seed.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gymforge.core.devices import check_device
from gymforge.core.instance_rng import InstanceRNG
from gymforge.core.limits import check_memory
from gymforge.core.reset_options import check_reset_options
from gymforge.core.reset_seeds import batch_reset_seeds
from gymforge.core.spaces import CHECKED_SPACES, BatchedActionCheck, as_action_tensor
from gymforge.core.vector_options import as_bool_mask, to_numpy


@dataclass
class StepOutput:
    """What a batched step returns before autoreset. Every tensor has leading dimension ``B``."""

    reward: torch.Tensor  # (B,) float32
    terminated: torch.Tensor  # (B,) bool
    truncated: torch.Tensor  # (B,) bool
    info: dict[str, torch.Tensor] = field(default_factory=dict)  # each (B, ...)


#: keywords of :func:`gymforge.core.vector_factory.make_vector` (and so of ``gym.make_vec``), not
#: of a class: a class constructor builds one env in this process, SAME_STEP (or DISABLED with
#: ``autoreset=False``) with the torch backend
FACTORY_KEYWORDS = ("num_workers", "autoreset_mode", "array_backend")


def check_num_envs(num_envs: object) -> int:
    """``num_envs`` as an int >= 1, else a ``ValueError`` naming the field."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
    return int(num_envs)


def check_env_memory(
    cls: type[TorchVectorEnv], num_envs: object, device: object, kwargs: dict[str, Any]
) -> None:
    """Refuse, naming ``num_envs``, a batch whose estimated memory (``num_envs`` times
    ``cls.instance_bytes(kwargs)``) exceeds what ``device`` has available, before anything is
    allocated; a malformed ``num_envs`` or ``device`` is refused by name too."""
    count = check_num_envs(num_envs)
    check_memory("num_envs", count, cls.instance_bytes(kwargs), "instance", check_device(device))


def check_constructor_keywords(cls: type, kwargs: dict[str, Any]) -> None:
    """Refuse, by name, a keyword of the factory (:data:`FACTORY_KEYWORDS`) given to the
    constructor of ``cls`` when that constructor does not take it, naming the factory to use."""
    own = inspect.signature(cls.__init__).parameters
    for name in FACTORY_KEYWORDS:
        if name in kwargs and name not in own:
            sharded = (
                f", or gymforge.core.sharded.sharded({cls.__name__}, num_workers=K, ...) for a "
                "ShardedVectorEnv"
                if name == "num_workers"
                else ""
            )
            raise TypeError(
                f"{cls.__name__}(...) takes no {name} (a class builds one env in this process): "
                f"pass it to gym.make_vec(id, ..., {name}=...) or to "
                f"gymforge.core.vector_factory.make_vector({cls.__name__}, {name}=..., ...)"
                f"{sharded}"
            )


class TorchVectorEnv(VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` over batched torch state on one device.

    Args:
        num_envs: number of instances ``B`` (>= 1).
        single_observation_space: the observation space of one instance.
        single_action_space: the action space of one instance.
        device: torch device holding the state, e.g. ``"cpu"`` or ``"cuda"``.
        autoreset: reset finished instances inside ``step`` (SAME_STEP). The scalar adapter turns
            this off to expose the Gymnasium single-env contract.

    The constructor of a class always returns an instance of that class, with SAME_STEP
    autoreset (DISABLED with ``autoreset=False``) and the torch backend. The vector options
    ``autoreset_mode`` and ``array_backend``, and ``num_workers`` (the batch over worker
    processes), belong to the factory :func:`gymforge.core.vector_factory.make_vector`, which
    every batched id's ``gym.make_vec`` entry point calls; a class given one of them refuses it
    by name (:func:`check_constructor_keywords`).
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 - Gymnasium reads this class attribute
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }
    # attributes that describe the env and never change (agents read them, e.g. a LineFlow
    # agent reads ``line`` and ``features``); a ShardedVectorEnv copies them from its first shard
    shared_attributes: tuple[str, ...] = ()
    #: whether ``reset(options={"reset_mask": mask})`` resets a subset of the instances
    supports_reset_mask = True
    #: the autoreset modes this class can run in (see :meth:`_apply_vector_options`)
    autoreset_modes: tuple[AutoresetMode, ...] = tuple(AutoresetMode)

    #: a rough peak of the memory one instance takes (state, step temporaries), measured at the
    #: class's default keywords with a margin; :meth:`instance_bytes` may scale it by them
    bytes_per_instance: int = 16 * 1024

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        """An instance of ``cls``, always; a factory keyword (``num_workers``, ...) that the
        constructor does not take is refused by name first, and a ``num_envs`` whose estimated
        memory does not fit (:func:`check_env_memory`), before any work."""
        check_constructor_keywords(cls, kwargs)
        try:
            bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
        except TypeError:
            bound = None  # the constructor reports its own argument errors
        if bound is not None:
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            arguments.pop(next(iter(arguments)))  # self
            if "num_envs" in arguments:
                check_env_memory(
                    cls, arguments["num_envs"], arguments.get("device", "cpu"), arguments
                )
        return super().__new__(cls)

    @classmethod
    def instance_bytes(cls, kwargs: dict[str, Any]) -> int:
        """The estimated peak memory of one instance built with the constructor's ``kwargs``
        (default :attr:`bytes_per_instance`; a family whose instances grow with a keyword
        scales it)."""
        return cls.bytes_per_instance

    def __init__(
        self,
        num_envs: int,
        single_observation_space: spaces.Space,
        single_action_space: spaces.Space,
        device: torch.device | str = "cpu",
        autoreset: bool = True,
    ) -> None:
        self.num_envs = check_num_envs(num_envs)
        self.device = check_device(device)
        self.autoreset = autoreset
        self.single_observation_space = single_observation_space
        self.single_action_space = single_action_space
        self.observation_space = batch_space(single_observation_space, self.num_envs)
        self.action_space = batch_space(single_action_space, self.num_envs)
        self.rng = InstanceRNG.create([0] * self.num_envs, self.device)
        self._needs_reset = True  # (never reset, or without autoreset every instance finished)
        self._was_reset = False  # (a partial reset needs a full one first)
        self.autoreset_mode = AutoresetMode.SAME_STEP if autoreset else AutoresetMode.DISABLED
        self.array_backend = "torch"
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        # NEXT_STEP: the instances that finished in the last step (reset by the next one)
        self._pending = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)

    def _apply_vector_options(self, mode: AutoresetMode | None, backend: str) -> None:
        """Set the autoreset mode (None: keep) and the array backend (see the module docstring),
        both parsed already: what :func:`~gymforge.core.vector_factory.make_vector` does to the
        env it has just built."""
        if mode is not None and mode != self.autoreset_mode:
            if not self.autoreset:
                raise ValueError(f"autoreset=False is autoreset_mode DISABLED; it cannot be {mode}")
            if mode not in self.autoreset_modes:
                raise ValueError(
                    f"autoreset_mode must be one of {[m.name for m in self.autoreset_modes]} "
                    f"for a {type(self).__name__}, got {mode}"
                )
            self.autoreset_mode = mode
            self.autoreset = mode != AutoresetMode.DISABLED
        self.array_backend = backend
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}

    # --- hooks for subclasses -------------------------------------------------------------
    def _reset_instances(self, mask: torch.Tensor) -> None:
        raise NotImplementedError

    def _step_instances(self, action: torch.Tensor) -> StepOutput:
        raise NotImplementedError

    def _observe(self) -> torch.Tensor:
        raise NotImplementedError

    # --- Gymnasium API ----------------------------------------------------------------------
    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every instance; ``seed=s`` seeds instance ``i`` with ``s + i``.

        ``options={"reset_mask": mask}`` (Gymnasium's partial reset, a bool ``(B,)`` array or
        tensor) resets only the masked instances, which continue their own random streams
        (so ``seed`` must be None); the others keep their state.
        """
        options = check_reset_options(options)
        obs, info = self._reset_torch(seed=seed, options=options)
        return self._to_backend(obs), self._to_backend(info)

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """One step of every instance, with autoreset as ``autoreset_mode`` says."""
        return self._to_backend(self._step_torch(actions))

    def _to_backend(self, value: Any) -> Any:
        return to_numpy(value) if self.array_backend == "numpy" else value

    def _reset_torch(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        if isinstance(options, dict) and options.get("reset_mask") is not None:
            return self._reset_masked(options["reset_mask"], seed)
        seeds = self._instance_seeds(seed)
        everything = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self.rng.reseed(everything, torch.tensor(seeds, dtype=torch.int64, device=self.device))
        self._reset_instances(everything)
        if isinstance(self.single_action_space, CHECKED_SPACES):
            self._action_checker()  # its bounds copied to the device now, not by a step
        self._needs_reset = False
        self._was_reset = True
        self._pending = torch.zeros_like(everything, dtype=torch.bool)
        return self._observe(), {}

    def _reset_masked(self, reset_mask: Any, seed: Any) -> tuple[torch.Tensor, dict[str, Any]]:
        if seed is not None:
            raise ValueError(
                "reset with options['reset_mask'] takes no seed: the masked instances continue "
                "their own random streams"
            )
        if not self._was_reset:
            raise RuntimeError("call reset() on every instance before a partial reset")
        mask = as_bool_mask(reset_mask, self.num_envs, self.device)
        self._reset_instances(mask)
        self._needs_reset = False
        self._pending = self._pending & ~mask
        return self._observe(), {}

    def _step_torch(
        self, actions: Any
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        action = self._checked_action(actions)
        out = self._step_instances(action)
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:
            return self._next_step_autoreset(out)
        everyone = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        infos = self._with_masks(out.info, everyone)
        done = out.terminated | out.truncated
        if not self.autoreset:
            self._needs_reset = bool(done.all())
            return self._observe(), out.reward, out.terminated, out.truncated, infos
        if bool(done.any()):
            infos["final_obs"] = self._observe().clone()
            infos["_final_obs"] = done
            infos["final_info"] = self._with_masks(out.info, done)
            infos["_final_info"] = done
            self._reset_instances(done)
        return self._observe(), out.reward, out.terminated, out.truncated, infos

    def _next_step_autoreset(
        self, out: StepOutput
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        """NEXT_STEP: the instances that finished last step are reset now (their step's
        results replaced by reward 0, flags False and masked-out infos); those that finish now
        return their final observation and are reset by the next step."""
        pending = self._pending
        reward, terminated, truncated = out.reward, out.terminated, out.truncated
        infos = self._with_masks(out.info, ~pending)
        if bool(pending.any()):
            self._reset_instances(pending)
            reward = torch.where(pending, torch.zeros_like(reward), reward)
            terminated = terminated & ~pending
            truncated = truncated & ~pending
        self._pending = terminated | truncated
        return self._observe(), reward, terminated, truncated, infos

    def _instance_seeds(self, seed: int | list[int] | None) -> list[int]:
        """One seed per instance for ``reset(seed=...)`` (validated first), with Gymnasium's
        ``np_random`` seeded from the first (or from entropy when ``seed`` is None)."""
        seeds, generator_seed = batch_reset_seeds(seed, self.num_envs, self.np_random)
        VectorEnv.reset(self, seed=generator_seed)  # (None keeps the generator going)
        return seeds

    def _checked_action(self, actions: Any) -> torch.Tensor:
        """``actions`` as a tensor on the env's device, after checking that a step may be taken
        and that it is a batch of valid actions (before any state changes)."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        action = as_action_tensor(actions, self.device)
        self._action_checker()(action)
        return action

    def _action_checker(self) -> BatchedActionCheck:
        """The action check of this space and batch, with its bounds on the device: built by the
        first full reset (so that no ``step`` pays the copies), again if the space changes."""
        check = getattr(self, "_action_check", None)
        space = self.single_action_space
        if check is None or check.space is not space or check.num_envs != self.num_envs:
            check = BatchedActionCheck(space, self.num_envs, self.device)
            self._action_check = check
        return check

    @staticmethod
    def _with_masks(info: dict[str, torch.Tensor], mask: torch.Tensor) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for key, value in info.items():
            infos[key] = value
            infos[f"_{key}"] = mask
        return infos
