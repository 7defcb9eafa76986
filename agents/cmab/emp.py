"""EMP (after Liu et al. 2021): plug the empirical means into the oracle, no confidence bounds.

Unobserved arms get mean 0. For influence maximization, EMP plugs the node-level estimates of
:func:`gymforge.agents.cmab.clcb.im_edge_bounds` without intervals into the greedy oracle.
"""

from __future__ import annotations

import torch

from gymforge.agents.cmab.clcb import empirical_means, im_edge_bounds
from gymforge.agents.cmab.oracles import Oracle, default_oracle
from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.influence import InfluenceProblem


def emp(dataset: LoggedDataset, *, oracle: Oracle | None = None) -> torch.Tensor:
    """The super arm of ``ORACLE(μ̂)`` (natural form, batch axis 1)."""
    problem = dataset.problem
    if isinstance(problem, InfluenceProblem):
        index = im_edge_bounds(problem, dataset["seeds"], dataset["activation_round"], None)
    else:
        index = empirical_means(*dataset.arm_statistics())
    return (oracle or default_oracle(problem))(problem, torch.as_tensor(index))
