"""A ``Discrete(n)`` view of an env whose action is a small ``MultiDiscrete``.

LineFlow's lines (and OffCMAB-KPath) declare ``MultiDiscrete`` actions, as the upstream project
does, even where the action is one choice (``MultiDiscrete([100])``: a waiting time). Libraries
that handle discrete actions only (cleanrl's ``ppo.py``, DQN implementations, TorchRL's
``GymEnv`` calling ``int(action)``) need ``Discrete(n)``. These wrappers give it, over the
product of the choices (index ``i`` is the ``numpy.unravel_index`` of ``i`` over ``nvec``, the
first entry most significant), refusing products above ``max_actions``::

    env = DiscreteAction(gym.make("LineFlow-WaitingTime-v0"))        # Discrete(100)
    envs = DiscreteActionVector(gym.make_vec("LineFlow-v0", 64, vectorization_mode="vector_entry_point"))

The vector wrapper accepts a numpy array or a torch tensor of indices and hands the env the same
kind it returns.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

#: largest product of choices a flat view is built for (a policy head of this many logits)
MAX_ACTIONS = 65_536


def _flat_space(space: gym.Space, max_actions: int) -> tuple[np.ndarray, gym.spaces.Discrete]:
    if not isinstance(space, gym.spaces.MultiDiscrete) or space.nvec.ndim != 1:
        raise ValueError(
            f"a Discrete view needs a one-dimensional MultiDiscrete action space, got {space}"
        )
    if np.any(space.start != 0):
        raise ValueError(f"a Discrete view needs choices that start at 0, got start={space.start}")
    nvec = space.nvec.astype(np.int64)
    total = int(np.prod(nvec, dtype=object))
    if total > max_actions:
        raise ValueError(
            f"max_actions: the product of the choices {nvec.tolist()} is {total:,}, above "
            f"{max_actions:,}; act on the MultiDiscrete space (or raise max_actions)"
        )
    return nvec, gym.spaces.Discrete(total)


class DiscreteAction(gym.ActionWrapper, gym.utils.RecordConstructorArgs):
    """``Discrete(prod(nvec))`` actions for an env with ``MultiDiscrete(nvec)`` actions."""

    def __init__(self, env: gym.Env, max_actions: int = MAX_ACTIONS) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, max_actions=max_actions)
        gym.ActionWrapper.__init__(self, env)
        self.nvec, self.action_space = _flat_space(env.action_space, max_actions)
        self._dtype = env.action_space.dtype

    def action(self, action: Any) -> np.ndarray:
        index = int(np.asarray(action).reshape(()))
        if not 0 <= index < self.action_space.n:
            raise ValueError(f"action must be in [0, {self.action_space.n}), got {index}")
        return np.array(np.unravel_index(index, tuple(self.nvec)), dtype=self._dtype)


class DiscreteActionVector(gym.vector.VectorActionWrapper):
    """The vector twin of :class:`DiscreteAction`: one index per instance."""

    def __init__(self, env: gym.vector.VectorEnv, max_actions: int = MAX_ACTIONS) -> None:
        super().__init__(env)
        self.nvec, self.single_action_space = _flat_space(env.single_action_space, max_actions)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, env.num_envs)

    def actions(self, actions: Any) -> Any:
        n = self.single_action_space.n
        if type(actions).__module__.startswith("torch"):
            import torch

            index = actions.reshape(-1).to(torch.int64)
            if bool(((index < 0) | (index >= n)).any()):
                raise ValueError(f"actions must be in [0, {n}), got {actions.tolist()}")
            entries = []
            for size in reversed(self.nvec.tolist()):
                entries.append(index % size)
                index = torch.div(index, size, rounding_mode="floor")
            return torch.stack(entries[::-1], dim=1)
        index = np.asarray(actions).reshape(-1).astype(np.int64)
        if np.any((index < 0) | (index >= n)):
            raise ValueError(f"actions must be in [0, {n}), got {index.tolist()}")
        entries = np.unravel_index(index, tuple(self.nvec))
        return np.stack(entries, axis=1).astype(self.env.single_action_space.dtype)
