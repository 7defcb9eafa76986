"""RL baselines on every single-agent id: Stable-Baselines3's PPO, A2C, DQN, SAC and
sb3-contrib's RecurrentPPO and TRPO, behind ``gymforge train ID --algo NAME``.

- :mod:`.algorithms` — which algorithm fits which spaces;
- :mod:`.config` — versioned per-task defaults (``baselines/configs/*.yaml``) and user files;
- :mod:`.envs` — training envs (single envs or the batched torch env), disjoint seeds;
- :mod:`.callbacks` — scrap-factor curriculum, held-out evaluation, checkpoints;
- :mod:`.run` — one training run and its saved artifacts;
- :mod:`.agent` — a saved run as a deterministic agent (:func:`load_agent`);
- :mod:`.cli` — the ``gymforge train`` trainers.
"""

from gymforge.baselines.sb3.agent import SB3Agent, load_agent
from gymforge.baselines.sb3.algorithms import ALGORITHMS

__all__ = ["ALGORITHMS", "SB3Agent", "load_agent"]
