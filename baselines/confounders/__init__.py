"""Confounder-stream baselines: no normalisation, BatchNorm, MDN, PMDN, and continual-learning strategies."""
