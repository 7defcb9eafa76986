"""Adapters of gymforge's vector envs to other libraries' APIs.

- :mod:`gymforge.adapters.sb3`: ``as_sb3_vec_env``, an SB3 ``VecEnv`` over any SAME_STEP vector
  env;
- :mod:`gymforge.adapters.info_rows`: SB3's per-instance info dicts as views of Gymnasium's
  per-key arrays (what the SB3 adapter hands to SB3);
- :mod:`gymforge.adapters.torchrl`: ``TorchRLEnv``, a TorchRL ``EnvBase`` over any batched id
  (needs the ``torchrl`` extra).

They sit above :mod:`gymforge.core` (the runtime they wrap) and import nothing here, so loading
the package loads neither SB3 nor TorchRL.
"""
