"""Min-max baselines: plain GDA, extragradient and optimistic GDA, batched over games."""

from gymforge.baselines.minmax.extragradient import extragradient_step, run_extragradient
from gymforge.baselines.minmax.gda import gda_step, run_gda
from gymforge.baselines.minmax.ogda import ogda_step, run_ogda

__all__ = [
    "extragradient_step",
    "gda_step",
    "ogda_step",
    "run_extragradient",
    "run_gda",
    "run_ogda",
]
