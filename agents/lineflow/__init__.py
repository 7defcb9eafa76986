"""Reference controllers for LineFlow lines; each is named in the registry for the CLI."""

from gymforge.agents.lineflow.complex_line import ComplexLineHeuristicAgent
from gymforge.agents.lineflow.routing import GreedyRoutingAgent, OptimalShareAgent
from gymforge.agents.lineflow.waiting_time import (
    LastObservationAgent,
    OptimalWaitingTimeAgent,
    optimal_waiting_time,
)
from gymforge.agents.lineflow.workers import BestPartitionAgent, balanced_partition, best_partition

__all__ = [
    "BestPartitionAgent",
    "ComplexLineHeuristicAgent",
    "GreedyRoutingAgent",
    "LastObservationAgent",
    "OptimalShareAgent",
    "OptimalWaitingTimeAgent",
    "balanced_partition",
    "best_partition",
    "optimal_waiting_time",
]
