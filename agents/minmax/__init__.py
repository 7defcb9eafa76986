"""Min-max reference solvers: simultaneous and alternating heavy-ball GDA, ODE models, spectral radii."""

from gymforge.agents.minmax.heavy_ball import (
    ORDERS,
    HBState,
    Trajectory,
    avg_slope,
    hb_step,
    run_heavy_ball,
)
from gymforge.agents.minmax.ode import integrate_ode, local_error, modified_field
from gymforge.agents.minmax.spectral import (
    max_stable_step,
    simulated_growth_rate,
    spectral_radius,
    stability_map,
    thm46_step_bound,
    update_matrix,
)

__all__ = [
    "ORDERS",
    "HBState",
    "Trajectory",
    "avg_slope",
    "hb_step",
    "integrate_ode",
    "local_error",
    "max_stable_step",
    "modified_field",
    "run_heavy_ball",
    "simulated_growth_rate",
    "spectral_radius",
    "stability_map",
    "thm46_step_bound",
    "update_matrix",
]
