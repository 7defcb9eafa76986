"""Min-max benchmarks: tuning the paper's baselines and the speed of a batched stability map."""
