"""MetaBBO baselines, as agents (``reset(seed)``, batched ``act(observation, info)``):

- random configuration: :class:`gymforge.agents.random_agent.RandomAgent` (``--agent random``);
- static configuration: :mod:`.static` (grid search on the train split, saved winners in
  ``static_configs.json``, :class:`~.static.StaticAgent`, ``--agent static``);
- jDE- and SHADE-style parameter adaptation as policies on the env: :mod:`.adaptive`
  (``--agent jde`` / ``--agent shade``);
- online RL through Stable-Baselines3 (PPO/A2C on the batched env): :mod:`.sb3`; a saved model
  is also the ``sb3`` behaviour policy of offline dataset collection (:mod:`.behaviors`).
"""
