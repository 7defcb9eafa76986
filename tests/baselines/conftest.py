"""Small, fast training settings for the SB3 baseline tests."""

from __future__ import annotations

from pathlib import Path

import pytest

#: a tiny config: few steps per rollout, small buffers, no periodic evaluation
TINY = """\
version: 1
n_envs: 2
eval: {every: 0}
algos:
  ppo: {n_steps: 64, batch_size: 64, n_epochs: 1}
  a2c: {n_steps: 16}
  trpo: {n_steps: 64, batch_size: 64}
  recurrentppo: {n_steps: 64, batch_size: 64, n_epochs: 1}
  dqn: {buffer_size: 1000, learning_starts: 100, train_freq: 4, target_update_interval: 100}
  sac: {buffer_size: 1000, learning_starts: 100, batch_size: 32}
"""


@pytest.fixture
def tiny_config(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path
