"""Off-CMAB baselines: CUCB-Offline, EMP, LFU, LEC and online CUCB."""
