"""A TorchRL ``EnvBase`` over any batched gymforge id (needs the ``torchrl`` extra).

:class:`TorchRLEnv` drives a :class:`~gymforge.core.vector_env.TorchVectorEnv` in Gymnasium's
``DISABLED`` autoreset mode: TorchRL decides when an instance resets and passes the instances to
reset as the ``"_reset"`` mask, which becomes ``reset(options={"reset_mask": mask})``, a partial
reset of the batched dynamics (``_reset_instances(mask)``). Its specs come from the Gymnasium
spaces (``Box`` -> ``Bounded``, ``Discrete`` -> ``Categorical``, ``MultiDiscrete`` ->
``MultiCategorical``) with the batch ``(B,)`` in front; tensors stay on the env's device.

    env = TorchRLEnv("LineFlow-v0", num_envs=64, device="cpu")
    rollout = env.rollout(100, policy)   # a TensorDict of shape (64, 100)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

try:
    from tensordict import TensorDict, TensorDictBase
    from torchrl.data import Bounded, Categorical, Composite, MultiCategorical, Unbounded
    from torchrl.envs import EnvBase
except ImportError as error:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "gymforge.adapters.torchrl needs TorchRL: pip install 'gymforge[torchrl]'"
    ) from error

from gymforge.core.vector_env import TorchVectorEnv


def spec_from_space(space: spaces.Space, num_envs: int, device: torch.device) -> Any:
    """The TorchRL spec of ``num_envs`` stacked samples of the Gymnasium ``space``."""
    if isinstance(space, spaces.Box):
        return Bounded(
            low=torch.as_tensor(np.broadcast_to(space.low, space.shape).copy()).expand(
                num_envs, *space.shape
            ),
            high=torch.as_tensor(np.broadcast_to(space.high, space.shape).copy()).expand(
                num_envs, *space.shape
            ),
            shape=(num_envs, *space.shape),
            dtype=torch.from_numpy(np.empty(0, dtype=space.dtype)).dtype,
            device=device,
        )
    if isinstance(space, spaces.Discrete):
        if space.start != 0:
            raise ValueError(f"Discrete spaces must start at 0 for TorchRL, got {space}")
        return Categorical(int(space.n), shape=(num_envs,), dtype=torch.int64, device=device)
    if isinstance(space, spaces.MultiDiscrete):
        if np.any(space.start != 0):
            raise ValueError(f"MultiDiscrete spaces must start at 0 for TorchRL, got {space}")
        nvec = torch.as_tensor(space.nvec, dtype=torch.int64).expand(num_envs, *space.shape)
        return MultiCategorical(
            nvec, shape=(num_envs, *space.shape), dtype=torch.int64, device=device
        )
    raise TypeError(f"no TorchRL spec for {type(space).__name__} spaces")


class TorchRLEnv(EnvBase):
    """TorchRL's ``EnvBase`` over the batched dynamics of a gymforge id.

    Args:
        env: a batched env id (made with ``gym.make_vec(..., autoreset_mode=DISABLED,
            array_backend="torch")``) or a ``TorchVectorEnv`` already in ``DISABLED`` mode (of
            either array backend: the adapter reads its torch outputs).
        num_envs: instances ``B`` (with an id).
        device: torch device of the dynamics and the tensordicts (with an id).
        **kwargs: keyword overrides of the id's kwargs.
    """

    def __init__(
        self,
        env: str | TorchVectorEnv,
        num_envs: int = 1,
        device: str | torch.device = "cpu",
        **kwargs: Any,
    ) -> None:
        if isinstance(env, str):
            env = gym.make_vec(
                env,
                num_envs=num_envs,
                vectorization_mode="vector_entry_point",
                device=device,
                autoreset_mode=AutoresetMode.DISABLED,
                array_backend="torch",
                **kwargs,
            )
        base = getattr(env, "unwrapped", env)
        if not isinstance(base, TorchVectorEnv):
            raise TypeError(f"env must be a batched gymforge id or a TorchVectorEnv, got {env!r}")
        if base.autoreset_mode != AutoresetMode.DISABLED:
            raise ValueError(
                "the vector env must use autoreset_mode DISABLED (TorchRL resets instances "
                f"itself), got {base.autoreset_mode}"
            )
        super().__init__(device=base.device, batch_size=torch.Size([base.num_envs]))
        self.vector_env = base
        num, dev = base.num_envs, base.device
        self.observation_spec = Composite(
            observation=spec_from_space(base.single_observation_space, num, dev), shape=(num,)
        )
        self.action_spec = spec_from_space(base.single_action_space, num, dev)
        self.reward_spec = Unbounded(shape=(num, 1), dtype=torch.float32, device=dev)
        flag = Categorical(2, shape=(num, 1), dtype=torch.bool, device=dev)
        self.done_spec = Composite(
            done=flag.clone(), terminated=flag.clone(), truncated=flag.clone(), shape=(num,)
        )
        self._next_seed: int | None = None

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        step = self.vector_env.step(tensordict["action"])
        obs, reward, terminated, truncated = (self._tensor(value) for value in step[:4])
        return TensorDict(
            {
                "observation": obs,
                "reward": reward.to(torch.float32).unsqueeze(-1),
                "done": (terminated | truncated).unsqueeze(-1),
                "terminated": terminated.unsqueeze(-1),
                "truncated": truncated.unsqueeze(-1),
            },
            batch_size=self.batch_size,
            device=self.device,
        )

    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        mask = None if tensordict is None else tensordict.get("_reset", None)
        if mask is None or not self.vector_env._was_reset or bool(mask.all()):
            obs, _ = self.vector_env.reset(seed=self._next_seed)
            self._next_seed = None
        else:
            obs, _ = self.vector_env.reset(options={"reset_mask": mask.reshape(-1)})
        obs = self._tensor(obs)
        flags = torch.zeros(*self.batch_size, 1, dtype=torch.bool, device=self.device)
        return TensorDict(
            {
                "observation": obs,
                "done": flags,
                "terminated": flags.clone(),
                "truncated": flags.clone(),
            },
            batch_size=self.batch_size,
            device=self.device,
        )

    def _tensor(self, value: Any) -> torch.Tensor:
        """An output of the vector env as a tensor on its device (a no-op for the torch backend;
        the numpy backend's host copies go back to the device)."""
        return torch.as_tensor(value, device=self.device)

    def _set_seed(self, seed: int | None) -> int | None:
        """Seed the next full reset: instance ``i`` gets ``seed + i`` (as in ``reset(seed=)``)."""
        self._next_seed = seed
        return None if seed is None else seed + self.vector_env.num_envs
