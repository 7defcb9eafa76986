"""MetaBBO family: black-box optimisation problems whose optimiser an agent configures.

:mod:`gymforge.envs.metabbo.bbob` holds the 24 noiseless BBOB functions, batched in torch;
:mod:`gymforge.envs.metabbo.optimizer` a batched modular differential evolution, one generation
per call, with per-instance hyperparameters; :mod:`gymforge.envs.metabbo.presets` the optimizer
presets (Alg0/Alg1/Alg2), :mod:`gymforge.envs.metabbo.features` the 9 status features,
:mod:`gymforge.envs.metabbo.dynamics` the batched env dynamics and
:mod:`gymforge.envs.metabbo.gym_env` the batched ``MetaBBOVecEnv`` of the ``MetaBBO`` ids (their
``gym.make`` env is its batch-of-one view).
"""

from gymforge.envs.metabbo.bbob import (
    FUNCTION_NAMES,
    BBOBInstances,
    coco_instances,
    counter_instances,
    evaluate,
    random_instances,
)

__all__ = [
    "FUNCTION_NAMES",
    "BBOBInstances",
    "coco_instances",
    "counter_instances",
    "evaluate",
    "random_instances",
]
