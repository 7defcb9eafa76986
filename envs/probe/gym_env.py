"""The probe env's batched ``ProbeVecEnv`` (its ``gym.make`` env is the batch-of-one view the registry builds from it)."""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces

from gymforge.core.vector_env import StepOutput, TorchVectorEnv
from gymforge.envs.probe import dynamics
from gymforge.envs.probe.config import ProbeConfig

_DOC = """Probe-Match: name the target shown in the observation.

    ## Description
    A probe env in the style of SB3's ``IdentityEnv``: it exists to test the core adapters and
    agents end to end in seconds. It exercises both episode ends: too many wrong answers
    *terminate* an episode, reaching ``max_steps`` *truncates* it.

    ## Action Space
    ``Discrete(n_targets)``: the target the agent names.

    ## Observation Space
    ``Box(0, 1, (n_targets + 2,), float32)``:

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | 0 … n_targets−1 | target (one-hot) | – | 0 | 1 |
    | n_targets | elapsed steps ÷ max_steps | fraction | 0 | 1 |
    | n_targets+1 | wrong answers ÷ patience | fraction | 0 | 1 |

    ## Rewards
    1 when the action equals the target, else 0.

    ## Starting State
    A uniformly random target, no steps, no mistakes.

    ## Episode End
    Terminated after ``patience`` wrong answers; truncated after ``max_steps`` steps.

    ## Arguments
    ``n_targets`` (4), ``max_steps`` (32), ``patience`` (3); see :class:`ProbeConfig`.

    ## Version History
    - v0: initial version.
    """


class ProbeVecEnv(TorchVectorEnv):
    __doc__ = _DOC
    #: peak memory per instance (about 0.3 KiB measured)
    bytes_per_instance = 2 * 1024

    def __init__(
        self,
        num_envs: int = 1,
        device: torch.device | str = "cpu",
        autoreset: bool = True,
        n_targets: int = 4,
        max_steps: int = 32,
        patience: int = 3,
    ) -> None:
        self.config = ProbeConfig(n_targets=n_targets, max_steps=max_steps, patience=patience)
        observation_space = spaces.Box(0.0, 1.0, (n_targets + 2,), np.float32)
        super().__init__(num_envs, observation_space, spaces.Discrete(n_targets), device, autoreset)
        self.state = dynamics.initial_state(self.config, self.rng)

    def _reset_instances(self, mask: torch.Tensor) -> None:
        self.state = dynamics.reset_where(self.config, self.state, mask, self.rng)

    def _step_instances(self, action: torch.Tensor) -> StepOutput:
        self.state, reward, terminated, truncated = dynamics.step(
            self.config, self.state, action, self.rng
        )
        return StepOutput(reward, terminated, truncated, {"mistakes": self.state.mistakes})

    def _observe(self) -> torch.Tensor:
        return dynamics.observe(self.config, self.state)
