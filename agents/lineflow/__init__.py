"""Reference controllers for LineFlow lines."""

from gymforge.agents.lineflow.waiting_time import OptimalWaitingTimeAgent, optimal_waiting_time

__all__ = ["OptimalWaitingTimeAgent", "optimal_waiting_time"]
