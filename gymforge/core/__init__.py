"""Core adapters shared by every family.

- :mod:`gymforge.core.vector_env`: ``TorchVectorEnv``, the batched base (SAME_STEP autoreset);
- :mod:`gymforge.core.vector_factory`: ``make_vector``, the factory behind every batched id's
  ``gym.make_vec`` entry point (``num_workers``, ``autoreset_mode``, ``array_backend``);
- :mod:`gymforge.core.sharded`: ``sharded``/``ShardedVectorEnv``, one batch over worker processes;
- :mod:`gymforge.core.scalar_env`: ``TorchScalarEnv``, the ``gym.Env`` view at batch size one;
- :mod:`gymforge.adapters.sb3`: ``as_sb3_vec_env``, an SB3 ``VecEnv`` over any SAME_STEP vector env;
- :mod:`gymforge.core.seeding` / :mod:`gymforge.core.seeds`: per-instance random streams and seeds;
- :mod:`gymforge.core.conformance`: checks that third-party envs can run too.

Nothing is imported here, so torch-free users (the SimPy LineFlow engine) never load torch.
"""
