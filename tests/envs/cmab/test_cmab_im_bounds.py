"""CLCB-IM-N's edge lower bounds: the confidence constant, and the board's vacuous regime."""

from __future__ import annotations

import numpy as np
import torch

from gymforge.agents.cmab.clcb import clcb_im, im_edge_bounds
from gymforge.envs.cmab.collect import collect_records, problem_for
from gymforge.envs.cmab.datasets import LoggedDataset
from gymforge.envs.cmab.problem import instance_params

BOARD_SEED = 2**62 + 1_000_000


def _data(n: int, seed: int = BOARD_SEED):
    problem = problem_for("OffCMAB-InfluenceMax-v0", {})
    params = instance_params(problem, seed)
    arrays = collect_records(problem, params, "independent", n, seed, q=0.5)
    return problem, params, arrays


def test_radius_scale_interpolates_between_the_bound_and_the_plug_in_estimate():
    problem, _, arrays = _data(4000)
    seeds, rounds = arrays["seeds"], arrays["activation_round"]
    plug_in = im_edge_bounds(problem, seeds, rounds, None)
    bounds = [im_edge_bounds(problem, seeds, rounds, 0.1, c) for c in (1.0, 0.3, 0.1, 0.0)]
    np.testing.assert_allclose(bounds[-1], plug_in)
    for tighter, looser in zip(bounds[1:], bounds[:-1], strict=True):
        assert np.all(tighter >= looser - 1e-12)
    assert plug_in.max() > bounds[0].max()


def test_at_the_boards_n_every_bound_is_zero_and_the_oracle_returns_its_tie_break():
    """The influence board's finding: with n = 1000 the bounds are vacuous, so CLCB-IM-N plays
    the greedy oracle's tie-break (the first node ids) while EMP's estimates are informative."""
    problem, params, arrays = _data(1000)
    bounds = im_edge_bounds(problem, arrays["seeds"], arrays["activation_round"], 0.1)
    assert np.all(bounds == 0.0)
    arm = clcb_im(LoggedDataset(arrays, {"n": 1000}, problem, params))
    assert torch.nonzero(arm[0])[:, 0].tolist() == list(range(problem.n_seeds))
    plug_in = im_edge_bounds(problem, arrays["seeds"], arrays["activation_round"], None)
    true_p = params["p"][0].double().numpy()
    assert np.corrcoef(plug_in, true_p)[0, 1] > 0.5
