"""The R-MDN layer (Shah et al., ICML 2025), its learners and the continual training protocol."""

from gymforge.agents.confounders.models import ConfounderCNN, ConfounderViT, rmdn_norm
from gymforge.agents.confounders.online import OnlineLearnerAgent
from gymforge.agents.confounders.rmdn import RecursiveMetadataNorm, design_matrix
from gymforge.agents.confounders.training import (
    ContinualResult,
    Evaluation,
    Strategy,
    TrainConfig,
    evaluate,
    run_continual,
)

__all__ = [
    "ConfounderCNN",
    "ConfounderViT",
    "ContinualResult",
    "Evaluation",
    "OnlineLearnerAgent",
    "RecursiveMetadataNorm",
    "Strategy",
    "TrainConfig",
    "design_matrix",
    "evaluate",
    "rmdn_norm",
    "run_continual",
]
