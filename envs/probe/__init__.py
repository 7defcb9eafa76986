"""Probe env: a tiny batched env that exercises the core adapters (termination, truncation, autoreset)."""

from gymforge.envs.probe.config import ProbeConfig
from gymforge.envs.probe.gym_env import ProbeVecEnv

__all__ = ["ProbeConfig", "ProbeVecEnv"]
