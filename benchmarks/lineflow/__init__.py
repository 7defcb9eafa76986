"""LineFlow benchmarks: engine speed and parity, controllers, RL baselines and time to score."""
