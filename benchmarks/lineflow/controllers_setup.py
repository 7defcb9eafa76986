"""What ``controllers.py`` compares against: upstream's reported figures and documented
optima, the tolerance, and the records of a controller, an episode job and the run settings.

One definition shared by the policies, the episode workers, the summary and the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FAMILY = "lineflow"
VERSIONED_PACKAGES = ("gymforge", "numpy", "simpy", "gymnasium")
RESULT_NAME = "lineflow_controllers"

REFERENCE_SOURCE = (
    "lineflow-rl 0.5.0's controllers on its own simulator, mean (min–max) over seeds 0–2, "
    "measured by `benchmarks/lineflow/upstream_anchors.py`"
)

# Upstream's documented optima (docs), as (scenario, k) -> (figure, how upstream obtained it).
DOCUMENTED_OPTIMA: dict[tuple[str, int | None], tuple[float, str]] = {
    ("waiting_time", None): (160.0, "closed-form waiting time 18.5, ≈ 4000/25.1"),
    ("waiting_time_jump", None): (115.0, "empirical last-observation heuristic"),
    ("part_distribution", 5): (738.0, "dashed line in the docs figure"),
    ("worker_assignment", 3): (287.0, "enumeration of all partitions, (2,3,4)"),
    ("complex_line", 3): (254.0, "docs, heuristic make_agent"),
}
TOLERANCE = 0.02  # a documented optimum "reproduces" when the best found is within 2 % of it


# --------------------------------------------------------------------------------------------
# Controllers: what to evaluate


@dataclass(frozen=True)
class Controller:
    """A policy to evaluate on one id.

    Attributes:
        name: the row label (registry agent name, or a baseline's description).
        kind: ``registry``, ``fixed_waiting_time``, ``workers``, ``routing``, ``cl_heuristic`` or
            ``cl_emptiest``; :func:`build_policy` turns it into an agent.
        params: the kind's keyword arguments.
        group: ``agent`` (registry), ``baseline`` (all seeds) or ``search:<name>`` (search seeds
            first, the best re-evaluated on all seeds).
    """

    name: str
    kind: str
    params: tuple[tuple[str, Any], ...] = ()
    group: str = "agent"

    @property
    def kwargs(self) -> dict[str, Any]:
        return dict(self.params)


@dataclass(frozen=True)
class Job:
    """One episode: a controller on an id with a seed."""

    env_id: str
    controller: Controller
    seed: int
    phase: str  # "main" or "confirm"


@dataclass
class Settings:
    """What the run covers (from the command line)."""

    seeds: int
    search_seeds: int
    top: int
    processes: int
    quick: bool

    @property
    def seed_list(self) -> list[int]:
        return list(range(self.seeds))

    @property
    def search_seed_list(self) -> list[int]:
        return list(range(self.search_seeds))
