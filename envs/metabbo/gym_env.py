"""The MetaBBO ids' batched ``MetaBBOVecEnv`` (its ``gym.make`` env is the batch-of-one view the registry builds from it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from gymforge.core.host_guards import default_guards, host_guards
from gymforge.core.reset_options import check_reset_options
from gymforge.core.vector_env import StepOutput, TorchVectorEnv
from gymforge.envs.metabbo import dynamics
from gymforge.envs.metabbo.dynamics import MetaBBOConfig
from gymforge.envs.metabbo.features import NUM_FEATURES
from gymforge.envs.metabbo.presets import BINS, get_preset
from gymforge.envs.metabbo.problems import ProblemSet, split_functions

_DOC = """MetaBBO: configure a differential evolution optimizer, generation by generation.

    ## Description
    Dynamic algorithm configuration after Q-Mamba (ICML 2025) and MetaBox: each step the agent
    sets the controlled hyperparameters of a modular differential evolution (DE) for one
    generation, on a BBOB problem drawn from a train/test split. The optimizer, the 24 BBOB
    functions and the features are batched torch code, so ``gym.make_vec`` runs thousands of
    instances at once, on CPU or GPU (GPU results may differ from CPU in the last bits).

    Presets (``preset=``): ``alg0`` (Q-Mamba's Alg0, K = 3: DE/current-to-rand/1, exponential
    crossover, crowding selection, controlling F1, F2, Cr), ``alg1`` (K = 10: three DE
    sub-populations and their migration probability) and ``alg2`` (K = 16: four DE
    sub-populations, each with F1, F2, Cr and its bound handling) and ``pso`` (K = 4: a particle
    swarm's w, c1, c2, c3); see
    ``gymforge.envs.metabbo.presets`` for the modules and value grids.

    ## Action Space
    ``MultiDiscrete([16] * K)``: one bin per controlled hyperparameter, in the preset's order. A
    continuous hyperparameter in ``[lo, hi]`` takes ``lo + bin / 15 (hi - lo)`` (``[0, 1]``;
    ``[0, 2]`` for PSO's c1-c3); a choice among ``n`` options takes option ``floor(bin n / 16)``.

    ## Observation Space
    ``Box(0, 1, (9,), float32)``, Q-Mamba's optimization-status features (``c`` population
    costs, ``g`` best cost so far, ``c*`` current best, ``c_max`` worst initial cost, ``diag``
    the box diagonal):

    | Index | Name | Formula | Min | Max |
    |---|---|---|---|---|
    | 0 | mean cost gap to gbest | mean (c − g) / (c_max − g) | 0 | 1 |
    | 1 | mean pairwise distance | mean ‖x_i − x_j‖ / diag | 0 | 1 |
    | 2 | cost spread | std(c) / ((c_max − g) / 2) | 0 | 1 |
    | 3 | remaining budget | (T − t) / T | 0 | 1 |
    | 4 | stagnation | generations since g improved / T | 0 | 1 |
    | 5 | mean distance to cbest | mean ‖x_i − x_c*‖ / diag | 0 | 1 |
    | 6 | mean cost gap to cbest | mean (c − c*) / (c_max − g) | 0 | 1 |
    | 7 | mean distance to gbest | mean ‖x_i − x_g‖ / diag | 0 | 1 |
    | 8 | improved | 1 if the last generation improved g | 0 | 1 |

    Non-finite objective values count as ``c_max``; every feature is clipped to ``[0, 1]``.

    ## Rewards
    ``r_t = (e_{t−1} − e_t) / e_0`` with ``e_t = f*_t − f_opt`` the error of the best value found
    so far, using the problem's known optimum (right also when ``f_opt ≠ 0``). The return is
    Q-Mamba's ``Perf = 1 − e_T / e_0``. With ``reward="log_error"``,
    ``r_t = log10 max(e_{t−1}, ε) − log10 max(e_t, ε)`` (``ε`` the target error, at least 1e-12):
    the return is the decades of error removed, a signal that stays informative late in the
    episode, where Perf's rewards are all near 0 (for training configurators).

    ## Starting State
    Each instance draws, from its own seed, a function of the split's subset, an instance
    (MetaBox-style random or a COCO instance id) and a uniform initial population in
    ``[−5, 5]^D``. ``reset(options={"function_ids": [...], "instance_ids": [...]})`` pins the
    problems of that reset (one per instance).

    ## Episode End
    Terminated when the best error reaches ``1e-8``; truncated after ``max_generations``
    generations (500). ``info`` holds ``best_error``, ``initial_error``, ``evaluations``,
    ``generation``, ``function_id`` and ``instance_id``.

    ## Arguments
    ``preset`` ("alg0" | "alg1" | "alg2" | "pso"), ``split`` ("easy" | "difficult" | "all" | a list of
    function ids), ``subset`` ("train" | "test"), ``dimension`` (10; 2..100, 2..40 for COCO
    instances), ``population_size`` (100), ``max_generations`` (500), ``instance_mode``
    ("random" | "coco"), ``coco_instances`` (15: COCO ids drawn from 1..15), ``draws``
    ("generator" | "counter": how random instances are drawn, one CPU generator per instance on
    the host, or batched counter-based streams on the env's device),
    ``target_error`` (1e-8), ``reward`` ("perf" | "log_error"), ``guards`` (None: on except on CUDA; False skips the host reads
    that pick cheaper paths, for a GPU: the same trajectories with fewer syncs).

    ## Version History
    - v0: initial version. The opt-in `reward="log_error"` came later; the default reward is unchanged.
    - v1: random instances drawn for the whole batch from counter-based streams
      (``draws="counter"``): no per-instance generators or host loop at reset, the same on every
      device. Same distribution as v0, other instances for a given seed; v0 keeps the recorded
      boards, experts and datasets.
    """


class MetaBBOVecEnv(TorchVectorEnv):
    __doc__ = _DOC

    @classmethod
    def instance_bytes(cls, kwargs: dict[str, Any]) -> int:
        """Peak memory per instance: the population's tensors dominate (about 120 bytes per
        member and dimension measured, so 115 KiB at the defaults), with a 2x margin."""
        population, dimension = kwargs.get("population_size"), kwargs.get("dimension")
        if not all(isinstance(v, int) and v > 0 for v in (population, dimension)):
            return cls.bytes_per_instance  # the constructor refuses them by name
        return 256 * population * dimension + 16 * 1024

    def __init__(
        self,
        num_envs: int = 1,
        device: torch.device | str = "cpu",
        autoreset: bool = True,
        preset: str = "alg0",
        split: str | Sequence[int] = "easy",
        subset: str = "train",
        dimension: int = 10,
        population_size: int = 100,
        max_generations: int = 500,
        instance_mode: str = "random",
        coco_instances: int = 15,
        draws: str = "generator",
        target_error: float = 1e-8,
        reward: str = "perf",
        guards: bool | None = None,
    ) -> None:
        problem_set = ProblemSet(
            function_ids=split_functions(split, subset),
            dimension=dimension,
            instance_mode=instance_mode,
            coco_instances=coco_instances,
            draws=draws,
        )
        self.config = MetaBBOConfig(
            preset=get_preset(preset),
            problem_set=problem_set,
            population_size=population_size,
            max_generations=max_generations,
            target_error=target_error,
            reward=reward,
        )
        k = self.config.preset.num_controlled
        observation_space = spaces.Box(0.0, 1.0, (NUM_FEATURES,), np.float32)
        action_space = spaces.MultiDiscrete(np.full(k, BINS, dtype=np.int64))
        super().__init__(num_envs, observation_space, action_space, device, autoreset)
        # host reads that pick cheaper paths: off on CUDA, where each is a sync (same bits)
        self.guards = default_guards(self.device, guards)
        self._pinned: tuple[list[int], list[int]] | None = None
        self.state = dynamics.initial_state(self.config, self.rng, self.device)

    @property
    def max_steps(self) -> int:
        """Steps (generations) of a full episode: trainers spread their instances' episodes over
        it (an episode may end earlier, at the target error)."""
        return self.config.max_generations

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset every instance; ``options`` may pin ``function_ids`` and ``instance_ids`` (and
        hold Gymnasium's ``reset_mask``)."""
        own = options
        if isinstance(options, dict) and "reset_mask" in options:
            own = {key: value for key, value in options.items() if key != "reset_mask"}
        self._pinned = self._parse_options(own)
        try:
            obs, info = super().reset(seed=seed, options=options)
        finally:
            self._pinned = None
        return obs, info

    def _parse_options(self, options: dict[str, Any] | None) -> tuple[list[int], list[int]] | None:
        options = check_reset_options(options)  # SB3's per-instance empty dicts are None
        if not options:
            return None
        unknown = sorted(set(options) - {"function_ids", "instance_ids"})
        if unknown or set(options) != {"function_ids", "instance_ids"}:
            raise ValueError(
                "options must hold exactly the keys 'function_ids' and 'instance_ids', "
                f"got {sorted(options)}"
            )
        fids = [int(v) for v in np.asarray(options["function_ids"]).reshape(-1)]
        iids = [int(v) for v in np.asarray(options["instance_ids"]).reshape(-1)]
        if len(fids) != self.num_envs or len(iids) != self.num_envs:
            raise ValueError(
                f"options['function_ids'] and options['instance_ids'] must have num_envs="
                f"{self.num_envs} entries, got {len(fids)} and {len(iids)}"
            )
        # Build once here so that bad ids raise before any state changes.
        from gymforge.envs.metabbo.problems import build_instances

        build_instances(self.config.problem_set, fids, iids, "cpu")
        return fids, iids

    def _reset_instances(self, mask: torch.Tensor) -> None:
        with host_guards(self.guards):
            self._reset_where(mask)

    def _reset_where(self, mask: torch.Tensor) -> None:
        if self._pinned is not None and bool(mask.all()):
            self.state = dynamics.initial_state(self.config, self.rng, self.device, self._pinned)
        else:
            self.state = dynamics.reset_where(self.config, self.state, mask, self.rng)

    def _step_instances(self, action: torch.Tensor) -> StepOutput:
        with host_guards(self.guards):
            self.state, reward, terminated, truncated = dynamics.step(
                self.config, self.state, action, self.rng
            )
            return StepOutput(reward, terminated, truncated, dynamics.info(self.state))

    def _observe(self) -> torch.Tensor:
        with host_guards(self.guards):
            return dynamics.observe(self.config, self.state)
