"""MetaBBO reference agents: the Q-Mamba-style offline agent."""
