"""The public checks: instruments that the tests, the benchmarks and third-party env authors run.

They sit beside the runtime (:mod:`gymforge.core`), as PettingZoo's ``pettingzoo.test`` and
Gymnasium's ``utils.env_checker`` sit beside theirs, and unlike it they may enumerate the
registry:

- :mod:`gymforge.checks.conformance`: what gymforge promises beyond Gymnasium's ``check_env``
  (determinism, pickling, batch and sharding equivalence), on env objects and as the suite of a
  registered id (``check_id``);
- :mod:`gymforge.checks.golden`: every engine's trajectories per step (integer parts exactly,
  floats within a tolerance), compared with the committed ``tests/golden/trajectories.json``
  (``python -m gymforge.checks.golden check``);
- :mod:`gymforge.checks.autoreset`: Gymnasium's vector conventions (the autoreset modes, a match
  with ``SyncVectorEnv``) on a ``TorchVectorEnv``;
- :mod:`gymforge.checks.batch_and_device`: the same instance alike across batch sizes and
  devices, and host synchronisations per step;
- :mod:`gymforge.checks.sync_counter`: ``SyncCounter``, the calls that would synchronise with a
  CUDA device, counted on any device;
- :mod:`gymforge.checks.machine`: the CPU's model name recorded with results and golden variants.

Nothing is imported here.
"""
