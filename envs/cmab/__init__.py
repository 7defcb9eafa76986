"""Offline combinatorial bandits (Off-CMAB): cascading ranking, LLM cache, influence maximization, k-path."""
