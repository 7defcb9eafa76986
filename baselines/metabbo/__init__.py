"""MetaBBO baselines: random, static and self-adaptive (jDE/SHADE-style) configurations."""
