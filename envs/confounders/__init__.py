"""Confounder streams: continual learning on streams whose confounding shifts stage by stage."""

from gymforge.envs.confounders.config import StreamConfig, SyntheticConfig
from gymforge.envs.confounders.gym_env import ConfounderStreamVecEnv
from gymforge.envs.confounders.schedules import PAPER_SHIFTS, shift_schedule
from gymforge.envs.confounders.streams import Batch, ConfounderStream, SyntheticStream, TensorStream

__all__ = [
    "PAPER_SHIFTS",
    "Batch",
    "ConfounderStream",
    "ConfounderStreamVecEnv",
    "StreamConfig",
    "SyntheticConfig",
    "SyntheticStream",
    "TensorStream",
    "shift_schedule",
]
