"""Reference agents: the papers' own methods and exact or optimal solvers, plus a random agent."""

from gymforge.agents.base import Agent
from gymforge.agents.random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent"]
