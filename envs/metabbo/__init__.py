"""MetaBBO family: black-box optimisation problems whose optimiser an agent configures.

:mod:`gymforge.envs.metabbo.bbob` holds the 24 noiseless BBOB functions, batched in torch;
:mod:`gymforge.envs.metabbo.optimizer` a batched modular differential evolution, one generation
per call, with per-instance hyperparameters. The ``MetaBBO-v0`` env that joins them is to come.
"""

from gymforge.envs.metabbo.bbob import (
    FUNCTION_NAMES,
    BBOBInstances,
    coco_instances,
    evaluate,
    random_instances,
)

__all__ = ["FUNCTION_NAMES", "BBOBInstances", "coco_instances", "evaluate", "random_instances"]
