"""The batched ``ConfounderStreamVecEnv`` (its ``gym.make`` env is the batch-of-one view the registry builds from it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from gymforge.core.vector_env import StepOutput, TorchVectorEnv
from gymforge.envs.confounders import counter_draws, dynamics
from gymforge.envs.confounders.config import IMAGE_SIZE, StreamConfig, SyntheticConfig
from gymforge.envs.confounders.dynamics import EnvConfig
from gymforge.envs.confounders.schedules import shift_schedule
from gymforge.envs.confounders.synthetic import quadrant_templates
from gymforge.envs.confounders.types import StreamState

PIXELS = IMAGE_SIZE * IMAGE_SIZE
#: how an instance draws its episode (see the class docstring)
DRAWS = ("generator", "counter")

_DOC = """Confounder stream: classify images whose confounder shifts stage by stage (R-MDN).

    ## Description
    A continual-learning stream after Shah et al., "Confounder-Free Continual Learning via
    Recursive Feature Normalization" (ICML 2025). Each 32x32 image shows a Gaussian blob in three
    quadrants: top-left and bottom-right scaled by the *main effect* ``mf``, bottom-left by the
    *confounder* ``cf``; both differ between group A (y = 0) and group B (y = 1). Stage ``k`` has
    shift ``s_k`` (default 0, 0.125, 0.25, 0.375, 0.5): ``cf_A ~ U(3,5) - s``,
    ``cf_B ~ U(4,6) + s``, ``mf_A ~ U(3,5) + s``, ``mf_B ~ U(4,6) - s``, plus N(0, 0.01) noise.
    As ``s`` grows the confounder separates the groups more and the true signal less; at
    ``s = 0.5`` only the confounder does, so a confounder-free learner falls to chance there.

    Every step shows one batch of ``batch_size`` images with their confounder values; the agent
    answers with a probability of group B per image and is then told the labels in ``info`` (so
    an online learner can train). Each stage holds ``2 * samples_per_group`` images, streamed
    ``passes_per_stage`` times in a new shuffled order; every stage is rendered from the same
    draws with its own shift, as in the reference. The episode is the whole stream.

    How an instance draws its episode at reset (``draws``):

    - ``"counter"`` (the v1 ids): batched over the instances from their counter-based streams,
      the pixel noise read from a shared noise table drawn once from a fixed seed (see
      ``gymforge.envs.confounders.counter_draws``): no per-instance loop, ``O(N)`` numbers per
      instance, the same draws on CPU and GPU (rendered pixels may still differ in the last
      bits, as any matrix product's do).
    - ``"generator"`` (the v0 ids): from its own ``torch.Generator`` on the env's device, seeded
      from the instance's counter-based stream (a Python loop over the instances being reset),
      keeping its pixel noise in memory: ``2 * samples_per_group * 4 KiB`` per instance (1 MiB at
      the defaults, so 1 GiB at B = 1024). CPU and GPU draw different numbers for the same seed.

    Stepping is fully batched either way.

    ## Action Space
    ``Box(0, 1, (batch_size,), float32)``: the predicted probability that each image of the batch
    belongs to group B (y = 1). A prediction counts as B when it is >= 0.5.

    ## Observation Space
    ``Box(-inf, inf, (batch_size, 1025), float32)``, one row per image:

    | Index | Name | Unit | Min | Max |
    |---|---|---|---|---|
    | 0 … 1023 | pixels of the 32x32 image, row-major | intensity | -inf | inf |
    | 1024 | confounder ``cf`` | – | -inf | inf |

    ## Rewards
    The batch's balanced accuracy: the mean over the groups present of the fraction of that
    group's images classified correctly (0.5 for constant or random guessing).

    ## Starting State
    A fresh stream: new uniform draws, pixel noise and shuffling orders from the instance's seed
    (see ``draws`` above); the first batch of stage 0.

    ## Episode End
    Terminated after the last batch of the last stage
    (``stages * passes_per_stage * (2 * samples_per_group // batch_size)`` steps); never truncated.

    ``info`` after each step: ``y`` (batch_size,) labels of the batch just scored,
    ``balanced_accuracy``, ``group_accuracy`` (2,) (NaN for a group absent from the batch) and,
    unless ``task_free``, ``stage`` (the scored batch's stage) and ``stage_boundary`` (True when
    the next observation starts a new stage).

    ## Arguments
    | Parameter | Type | Default | Description |
    |---|---|---|---|
    | ``samples_per_group`` | int | 128 | images per group and stage (the reference uses 1024) |
    | ``batch_size`` | int | 32 | images per step (<= 2 * samples_per_group) |
    | ``passes_per_stage`` | int | 1 | shuffled passes over each stage |
    | ``schedule`` | str | ``"paper"`` | ``paper``, ``linear``, ``step`` or ``cyclic`` |
    | ``n_stages``, ``shift_low``, ``shift_high``, ``period`` | | 5, 0, 0.5, 4 | schedule shape |
    | ``shifts`` | tuple of float | None | explicit shifts in [0, 1] (override ``schedule``) |
    | ``confounder_gap`` | float | 1.0 | confounding strength at s = 0 |
    | ``signal_gap`` | float | 1.0 | main-effect separation at s = 0 (overlap = 2 - gap) |
    | ``noise_std`` | float | 0.01 | pixel noise |
    | ``task_free`` | bool | False | hide ``stage`` and ``stage_boundary`` from ``info`` |
    | ``draws`` | str | ``"generator"`` | ``"counter"`` (v1 ids) or ``"generator"`` (v0 ids) |

    Example:
        >>> import gymnasium as gym, gymforge
        >>> env = gym.make("ConfounderStream-v1")
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape
        (32, 1025)

    ## Version History
    - v1: ``draws="counter"``: episodes drawn batched from counter-based streams, pixel noise
      from a shared table (reset at B = 1024 in milliseconds instead of seconds, no per-instance
      state of ``2N x 1024`` floats, the same draws on CPU and GPU). The same distribution
      per instance; other numbers than v0 for the same seed.
    - v0: initial version (``draws="generator"``).
    """


def _env_config(
    samples_per_group: int,
    batch_size: int,
    passes_per_stage: int,
    schedule: str,
    n_stages: int,
    shift_low: float,
    shift_high: float,
    period: int,
    shifts: Sequence[float] | None,
    confounder_gap: float,
    signal_gap: float,
    noise_std: float,
) -> EnvConfig:
    if shifts is None:
        shifts = shift_schedule(schedule, n_stages, shift_low, shift_high, period)
    synthetic = SyntheticConfig(
        samples_per_group=samples_per_group,
        confounder_gap=confounder_gap,
        signal_gap=signal_gap,
        noise_std=noise_std,
    )
    stream = StreamConfig(
        shifts=tuple(shifts), batch_size=batch_size, passes_per_stage=passes_per_stage
    )
    if batch_size > synthetic.samples_per_stage:
        raise ValueError(
            f"batch_size must be <= 2 * samples_per_group = {synthetic.samples_per_stage}, "
            f"got {batch_size}"
        )
    return EnvConfig(synthetic=synthetic, stream=stream)


class ConfounderStreamVecEnv(TorchVectorEnv):
    __doc__ = _DOC

    @classmethod
    def instance_bytes(cls, kwargs: dict[str, Any]) -> int:
        """Peak memory per instance: each stream's images dominate (about 23 KiB per batch item
        and 100 KiB more measured, so 840 KiB at the default ``batch_size=32``), with a 2x
        margin."""
        batch_size = kwargs.get("batch_size")
        if not isinstance(batch_size, int) or batch_size < 1:
            return cls.bytes_per_instance  # the constructor refuses it by name
        return 48 * 1024 * batch_size + 256 * 1024

    def __init__(
        self,
        num_envs: int = 1,
        device: torch.device | str = "cpu",
        autoreset: bool = True,
        samples_per_group: int = 128,
        batch_size: int = 32,
        passes_per_stage: int = 1,
        schedule: str = "paper",
        n_stages: int = 5,
        shift_low: float = 0.0,
        shift_high: float = 0.5,
        period: int = 4,
        shifts: Sequence[float] | None = None,
        confounder_gap: float = 1.0,
        signal_gap: float = 1.0,
        noise_std: float = 0.01,
        task_free: bool = False,
        draws: str = "generator",
    ) -> None:
        self.config = _env_config(
            samples_per_group,
            batch_size,
            passes_per_stage,
            schedule,
            n_stages,
            shift_low,
            shift_high,
            period,
            shifts,
            confounder_gap,
            signal_gap,
            noise_std,
        )
        if not isinstance(task_free, bool):
            raise ValueError(f"task_free must be a bool, got {task_free!r}")
        self.task_free = task_free
        if draws not in DRAWS:
            raise ValueError(f"draws must be one of {list(DRAWS)}, got {draws!r}")
        self.draws = draws
        observation_space = spaces.Box(-np.inf, np.inf, (batch_size, PIXELS + 1), np.float32)
        action_space = spaces.Box(0.0, 1.0, (batch_size,), np.float32)
        super().__init__(num_envs, observation_space, action_space, device, autoreset)
        self._shifts = torch.tensor(self.config.stream.shifts, device=self.device)
        self._templates = quadrant_templates(self.device)
        self._table: torch.Tensor | None = None
        if draws == "counter":
            n = self.config.synthetic.samples_per_stage
            self._table = counter_draws.noise_table(counter_draws.table_rows(n), self.device)
            self.state = self._counter_episode(torch.ones(self.num_envs, dtype=torch.bool))
        else:
            self.state = dynamics.draw_episode(self.config, [0] * self.num_envs, self.device)

    @property
    def episode_length(self) -> int:
        """Steps of one episode (the whole stream)."""
        return self.config.episode_length

    def _counter_episode(self, mask: torch.Tensor) -> StreamState:
        """Fresh counter draws for every instance (the streams of ``mask``'s advance)."""
        assert self._table is not None
        stream = self.config.stream
        fresh = counter_draws.draw(
            self.rng,
            mask.to(self.device),
            self.config.synthetic.samples_per_stage,
            stream.num_stages * stream.passes_per_stage,
            self._table.shape[0],
        )
        t = torch.zeros(self.num_envs, dtype=torch.int64, device=self.device)
        return StreamState(
            fresh["u_cf"], fresh["u_mf"], None, fresh["order"], t, fresh["noise_rows"]
        )

    def _reset_instances(self, mask: torch.Tensor) -> None:
        if self.draws == "counter":
            fresh = self._counter_episode(mask)
            self.state = StreamState(
                **{
                    name: None if old is None else _where(mask, getattr(fresh, name), old)
                    for name, old in vars(self.state).items()
                }
            )
            return
        # Each instance's episode seed comes from its own counter-based stream, so instance i
        # depends only on its seed; the episode is then drawn from a generator seeded with it.
        u = self.rng.uniform(2, where=mask)
        bits = (u * 16777216.0).long()
        episode_seeds = (bits[:, 0] << 24) | bits[:, 1]
        seeds = episode_seeds[mask].tolist()
        fresh = dynamics.draw_episode(self.config, seeds, self.device)
        self.state = dynamics.replace_where(self.state, mask, fresh)

    def _step_instances(self, action: torch.Tensor) -> StepOutput:
        self.state, info, terminated = dynamics.step(self.config, self.state, action)
        if self.task_free:
            info = {k: v for k, v in info.items() if k not in ("stage", "stage_boundary")}
        reward = info["balanced_accuracy"]
        return StepOutput(reward, terminated, torch.zeros_like(terminated), info)

    def _observe(self) -> torch.Tensor:
        return dynamics.observe(self.config, self.state, self._shifts, self._templates, self._table)


def _where(mask: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    """``new`` in the instances of ``mask`` (B,), ``old`` elsewhere (any trailing shape)."""
    return torch.where(mask.reshape(-1, *([1] * (new.dim() - 1))), new, old)
