"""``TorchVectorEnv``: the batched base every torch family plugs its dynamics into.

A subclass owns a state dataclass of tensors with a leading ``B`` axis and implements three hooks:

- ``_reset_instances(mask)``: re-initialise the instances selected by the boolean ``mask`` (B,),
  drawing randomness only from ``self.rng`` (an :class:`InstanceRNG`);
- ``_step_instances(action)``: advance every instance by one step and return a :class:`StepOutput`;
- ``_observe()``: the batched observation tensor of shape ``(B, *single_observation_space.shape)``.

The base class does the rest exactly once for every family: seeding (instance ``i`` of a batch
reset with seed ``s`` equals a single env reset with ``s + i``), action validation before any state
changes, and Gymnasium's ``SAME_STEP`` autoreset with ``infos["final_obs"]``/``infos["final_info"]``
and their ``_final_obs``/``_final_info`` masks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from gymforge.core.devices import check_device
from gymforge.core.seeding import InstanceRNG
from gymforge.core.seeds import instance_seeds
from gymforge.core.spaces import as_action_tensor, validate_batched_action


@dataclass
class StepOutput:
    """What a batched step returns before autoreset. Every tensor has leading dimension ``B``."""

    reward: torch.Tensor  # (B,) float32
    terminated: torch.Tensor  # (B,) bool
    truncated: torch.Tensor  # (B,) bool
    info: dict[str, torch.Tensor] = field(default_factory=dict)  # each (B, ...)


_NOT_GIVEN: Any = object()


class _SplitsOverWorkers(type):
    """The metaclass of ``TorchVectorEnv``: ``SomeVecEnv(num_envs=B, num_workers=K, ...)`` with
    ``K > 1`` returns a :class:`~gymforge.core.sharded.ShardedVectorEnv` of ``K`` worker
    processes, each holding a ``SomeVecEnv`` of its share of the ``B`` instances; without
    ``num_workers`` (or with 1) the class itself. So every batched id takes ``num_workers``
    through ``gym.make_vec``, whose vector entry points are the classes."""

    def __call__(cls, *args: Any, num_workers: Any = _NOT_GIVEN, **kwargs: Any) -> Any:
        if getattr(cls, "_splits_itself", False):  # (ShardedVectorEnv: its own parameter)
            if num_workers is not _NOT_GIVEN:
                kwargs["num_workers"] = num_workers
            return super().__call__(*args, **kwargs)
        if num_workers is _NOT_GIVEN or (type(num_workers) is int and num_workers == 1):
            return super().__call__(*args, **kwargs)
        from gymforge.core.sharded import split_over_workers  # (imports this module)

        return split_over_workers(cls, args, kwargs, num_workers)


class TorchVectorEnv(VectorEnv, metaclass=_SplitsOverWorkers):
    """A ``gymnasium.vector.VectorEnv`` over batched torch state on one device.

    Args:
        num_envs: number of instances ``B`` (>= 1).
        single_observation_space: the observation space of one instance.
        single_action_space: the action space of one instance.
        device: torch device holding the state, e.g. ``"cpu"`` or ``"cuda"``.
        autoreset: reset finished instances inside ``step`` (SAME_STEP). The scalar adapter turns
            this off to expose the Gymnasium single-env contract.
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

    def __init__(
        self,
        num_envs: int,
        single_observation_space: spaces.Space,
        single_action_space: spaces.Space,
        device: torch.device | str = "cpu",
        autoreset: bool = True,
    ) -> None:
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or num_envs < 1
        ):
            raise ValueError(f"num_envs must be an int >= 1, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.device = check_device(device)
        self.autoreset = autoreset
        self.single_observation_space = single_observation_space
        self.single_action_space = single_action_space
        self.observation_space = batch_space(single_observation_space, self.num_envs)
        self.action_space = batch_space(single_action_space, self.num_envs)
        self.rng = InstanceRNG.create([0] * self.num_envs, self.device)
        self._needs_reset = True

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
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset every instance; ``seed=s`` seeds instance ``i`` with ``s + i``.

        ``options={"reset_mask": mask}`` (Gymnasium's partial reset, a bool ``(B,)`` array or
        tensor) resets only the masked instances, which continue their own random streams
        (so ``seed`` must be None); the others keep their state.
        """
        if isinstance(options, dict) and options.get("reset_mask") is not None:
            return self._reset_masked(options["reset_mask"], seed)
        seeds = self._instance_seeds(seed)
        everything = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        self.rng.reseed(everything, torch.tensor(seeds, dtype=torch.int64, device=self.device))
        self._reset_instances(everything)
        self._needs_reset = False
        return self._observe(), {}

    def _reset_masked(self, reset_mask: Any, seed: Any) -> tuple[torch.Tensor, dict[str, Any]]:
        if seed is not None:
            raise ValueError(
                "reset with options['reset_mask'] takes no seed: the masked instances continue "
                "their own random streams"
            )
        if self._needs_reset:
            raise RuntimeError("call reset() on every instance before a partial reset")
        mask = torch.as_tensor(
            np.asarray(reset_mask) if not torch.is_tensor(reset_mask) else reset_mask
        )
        if mask.dtype != torch.bool or tuple(mask.shape) != (self.num_envs,):
            raise ValueError(
                f"options['reset_mask'] must be a bool array of shape ({self.num_envs},), got "
                f"dtype {mask.dtype} and shape {tuple(mask.shape)}"
            )
        self._reset_instances(mask.to(self.device))
        return self._observe(), {}

    def step(
        self, actions: Any
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        action = self._checked_action(actions)
        out = self._step_instances(action)
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

    def _instance_seeds(self, seed: int | list[int] | None) -> list[int]:
        """One seed per instance for ``reset(seed=...)`` (validated first), with Gymnasium's
        ``np_random`` seeded from the first (or from entropy when ``seed`` is None)."""
        if seed is None:
            VectorEnv.reset(self, seed=None)
            return instance_seeds(None, self.num_envs, self.np_random)
        seeds = instance_seeds(seed, self.num_envs, self.np_random)  # validates first
        VectorEnv.reset(self, seed=seeds[0])
        return seeds

    def _checked_action(self, actions: Any) -> torch.Tensor:
        """``actions`` as a tensor on the env's device, after checking that a step may be taken
        and that it is a batch of valid actions (before any state changes)."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        action = as_action_tensor(actions, self.device)
        validate_batched_action(action, self.single_action_space, self.num_envs)
        return action

    @staticmethod
    def _with_masks(info: dict[str, torch.Tensor], mask: torch.Tensor) -> dict[str, Any]:
        infos: dict[str, Any] = {}
        for key, value in info.items():
            infos[key] = value
            infos[f"_{key}"] = mask
        return infos
