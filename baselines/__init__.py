"""RL baselines and comparison methods (SB3 training and others); filled by later issues."""
