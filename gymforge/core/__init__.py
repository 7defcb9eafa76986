"""Core adapters shared by every family: batched torch vector env, scalar view, SB3 view, seeding."""

from gymforge.core.scalar_env import TorchScalarEnv
from gymforge.core.seeding import InstanceRNG
from gymforge.core.vector_env import StepOutput, TorchVectorEnv

__all__ = ["InstanceRNG", "StepOutput", "TorchScalarEnv", "TorchVectorEnv"]
