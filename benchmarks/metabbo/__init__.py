"""MetaBBO benchmarks: speed, experts, offline training, hold-out folds and the test split."""
