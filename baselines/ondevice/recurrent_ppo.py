"""Recurrent PPO: :mod:`.ppo` with a GRU between the observation and the actor and critic.

For partially observed tasks (WaitingTimeJump's hidden slowdowns): the GRU's hidden state runs
across steps and is zeroed where an episode starts; updates replay whole instance sequences of
the rollout from the hidden state it started with, so minibatches are groups of instances
rather than random samples. Defaults follow sb3-contrib's RecurrentPPO (one 64-wide recurrent
layer, 64-64 heads) at this trainer's rollout sizes.
"""

from __future__ import annotations

from typing import Any

DEFAULTS: dict[str, Any] = {
    "rnn_hidden": 64,
    "n_steps": 32,
}
