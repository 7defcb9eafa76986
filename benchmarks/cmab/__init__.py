"""Contextual-bandit (CMAB) benchmarks: speed, the paper's tables, boards and the LLM cache."""
