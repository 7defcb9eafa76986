"""The runtime every family runs on, and nothing else.

- :mod:`gymforge.core.vector_env`: ``TorchVectorEnv``, the batched base (seeding, action
  validation, Gymnasium's autoreset modes and array backends);
- :mod:`gymforge.core.vector_factory`: ``make_vector``, what every batched id's ``gym.make_vec``
  entry point calls (``num_workers``, ``autoreset_mode``, ``array_backend``);
- :mod:`gymforge.core.scalar_env`: ``TorchScalarEnv``, the ``gym.Env`` view at batch size one,
  and ``scalar_view``, the view class of a vector class;
- :mod:`gymforge.core.sharded` (with :mod:`~gymforge.core.shard_worker` and
  :mod:`~gymforge.core.shared_arrays`): one batch over worker processes;
- :mod:`gymforge.core.spaces`, :mod:`gymforge.core.vector_options`,
  :mod:`gymforge.core.reset_options`: checks of actions, vector options and reset options;
- :mod:`gymforge.core.instance_rng` (per-instance counter-based random streams, torch) and
  :mod:`gymforge.core.reset_seeds` (reset seeds checked and expanded per instance, torch-free);
- :mod:`gymforge.core.devices`, :mod:`gymforge.core.limits`, :mod:`gymforge.core.host_guards`:
  devices, memory and worker limits checked before work, and the engines' host-read switch;
- :mod:`gymforge.core.datasets`, :mod:`gymforge.core.minari_folder`: offline data on disk;
- :mod:`gymforge.core.arrays`, :mod:`gymforge.core.extras`, :mod:`gymforge.core.outputs`:
  arrays at an agent's boundary, optional dependencies, output folders checked writable.

Core imports no other gymforge layer (``tests/test_layering.py`` enforces it): the adapters to
other libraries live in :mod:`gymforge.adapters`, the instruments that tests, benchmarks and
third-party env authors run (conformance, golden digests, sync counting) in
:mod:`gymforge.checks`, and the ids in :mod:`gymforge.registry`.

Nothing is imported here, so torch-free users (the SimPy LineFlow engine) never load torch.
"""
