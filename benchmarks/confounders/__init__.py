"""Confounders benchmarks: speed, reset cost and the behaviour of the reference policies."""
