"""Heavy-ball solvers, exact update maps and the baselines: hand values and cross-checks."""

from __future__ import annotations

import pytest
import torch

from gymforge.agents.minmax.heavy_ball import HBState, avg_slope, hb_step, run_heavy_ball
from gymforge.agents.minmax.spectral import (
    simulated_growth_rate,
    spectral_radius,
    stability_map,
    thm46_step_bound,
    update_matrix,
)
from gymforge.baselines.minmax import run_extragradient, run_gda, run_ogda
from gymforge.envs.minmax.games import make_game

ONE = torch.ones(1, 1, dtype=torch.float64)


def test_heavy_ball_first_two_steps_by_hand():
    # f = xy from (1, 1), h = 0.1, β = 0.5, at rest.
    sim = run_heavy_ball(make_game("bilinear"), ONE, ONE.clone(), 0.1, 0.5, "simultaneous", 2)
    # k=1: x = 1 − 0.1·1 = 0.9, y = 1 + 0.1·1 = 1.1
    # k=2: x = 0.9 − 0.1·1.1 + 0.5·(0.9 − 1) = 0.74, y = 1.1 + 0.1·0.9 + 0.5·0.1 = 1.24
    assert sim.x[:, 0, 0].tolist() == pytest.approx([1.0, 0.9, 0.74])
    assert sim.y[:, 0, 0].tolist() == pytest.approx([1.0, 1.1, 1.24])
    alt = run_heavy_ball(make_game("bilinear"), ONE, ONE.clone(), 0.1, 0.5, "alternating", 2)
    # k=1: x = 0.9, y = 1 + 0.1·0.9 = 1.09
    # k=2: x = 0.9 − 0.109 − 0.05 = 0.741, y = 1.09 + 0.1·0.741 + 0.5·0.09 = 1.2091
    assert alt.x[:, 0, 0].tolist() == pytest.approx([1.0, 0.9, 0.741])
    assert alt.y[:, 0, 0].tolist() == pytest.approx([1.0, 1.09, 1.2091])


def test_xy2_iterates_stay_feasible():
    traj = run_heavy_ball(make_game("xy2"), 0.1 * ONE, ONE.clone(), 0.2, 0.3, "simultaneous", 50)
    assert bool((traj.x >= 0).all())


@pytest.mark.parametrize("order", ["simultaneous", "alternating"])
def test_update_matrix_equals_one_heavy_ball_step(order):
    gen = torch.Generator().manual_seed(1)
    game = make_game("quadratic", {"a": 0.2, "B": torch.randn(2, 3, generator=gen), "c": 0.1})
    state = HBState(*(torch.randn(4, d, generator=gen, dtype=torch.float64) for d in (2, 3, 2, 3)))
    h = torch.tensor([0.1, 0.3, 0.05, 0.7], dtype=torch.float64)
    beta = torch.tensor([-0.4, 0.0, 0.5, 0.9], dtype=torch.float64)
    new = hb_step(game, state, h[:, None], beta[:, None], order)
    s = torch.cat([state.x, state.y, state.x_prev, state.y_prev], 1)
    mapped = (update_matrix(game, h, beta, order) @ s[:, :, None])[:, :, 0]
    expected = torch.cat([new.x, new.y, new.x_prev, new.y_prev], 1)
    torch.testing.assert_close(mapped, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("order", ["simultaneous", "alternating"])
def test_simulated_growth_rate_matches_log_spectral_radius(order):
    game = make_game("quadratic")
    hs = torch.linspace(0.02, 1.2, 12, dtype=torch.float64)
    betas = torch.linspace(-0.8, 0.8, 9, dtype=torch.float64)
    rate = simulated_growth_rate(game, hs, betas, order, iterations=2000)
    exact = stability_map(game, hs, betas, order).log()
    torch.testing.assert_close(rate, exact, atol=3e-3, rtol=0)


def test_spectral_radius_of_gda_on_xy_by_hand():
    # Sim-GDA on f = xy: eigenvalues 1 ± ih, ρ = sqrt(1 + h²).
    rho = spectral_radius(make_game("bilinear"), torch.tensor([0.1, 0.5]), 0.0, "simultaneous")
    assert rho.tolist() == pytest.approx([1.01**0.5, 1.25**0.5])


def test_bad_solver_inputs_raise_value_errors():
    game = make_game("bilinear")
    with pytest.raises(ValueError, match="order must be one of"):
        run_heavy_ball(game, ONE, ONE, 0.1, 0.0, "sequential", 3)
    with pytest.raises(ValueError, match=r"h \(step size\) must be >= 0"):
        run_heavy_ball(game, ONE, ONE, -0.1, 0.0, "simultaneous", 3)
    with pytest.raises(ValueError, match=r"beta \(momentum\) must be finite"):
        run_heavy_ball(game, ONE, ONE, 0.1, float("nan"), "simultaneous", 3)
    with pytest.raises(ValueError, match="Hamiltonian-dominated"):
        thm46_step_bound(make_game("quadratic", {"a": 1.0, "c": 1.0}), 0.0)
    with pytest.raises(ValueError, match=r"beta \(momentum\) must lie in \(-1, 1\)"):
        thm46_step_bound(make_game("quadratic"), 1.0)


def test_avg_slope_is_the_running_mean_of_squared_gradient_norms():
    traj = run_heavy_ball(make_game("bilinear"), ONE, ONE.clone(), 0.1, 0.0, "simultaneous", 1)
    # ‖∇‖² at (1, 1) is 2; at (0.9, 1.1) it is 1.21 + 0.81 = 2.02.
    assert avg_slope(traj)[:, 0].tolist() == pytest.approx([2.0, 2.01])


def test_baseline_first_steps_by_hand_on_xy():
    game = make_game("bilinear")
    gda = run_gda(game, ONE, ONE.clone(), 0.1, "simultaneous", 1)
    assert (float(gda.x[1]), float(gda.y[1])) == pytest.approx((0.9, 1.1))
    alt = run_gda(game, ONE, ONE.clone(), 0.1, "alternating", 1)
    assert (float(alt.x[1]), float(alt.y[1])) == pytest.approx((0.9, 1.09))
    eg = run_extragradient(game, ONE, ONE.clone(), 0.1, 1)
    assert (float(eg.x[1]), float(eg.y[1])) == pytest.approx((0.89, 1.09))
    og = run_ogda(game, ONE, ONE.clone(), 0.1, 2)
    assert (float(og.x[2]), float(og.y[2])) == pytest.approx((0.78, 1.18))


def test_gda_equals_heavy_ball_without_momentum():
    game = make_game("sextic")
    for order in ("simultaneous", "alternating"):
        a = run_gda(game, 0.3 * ONE, -0.2 * ONE, 0.05, order, 40)
        b = run_heavy_ball(game, 0.3 * ONE, -0.2 * ONE, 0.05, 0.0, order, 40)
        torch.testing.assert_close(a.x, b.x)
        torch.testing.assert_close(a.y, b.y)


def test_extragradient_and_ogda_converge_on_xy_where_sim_gda_diverges():
    game = make_game("bilinear", {"A": [[1.0, 0.5], [-0.3, 2.0]]})
    x0 = torch.ones(1, 2, dtype=torch.float64)

    def final_norm(traj):
        return float(torch.sqrt((traj.x[-1] ** 2).sum() + (traj.y[-1] ** 2).sum()))

    start = 2.0**0.5 * 2**0.5
    assert final_norm(run_gda(game, x0, x0.clone(), 0.1, "simultaneous", 1500)) > 10 * start
    assert final_norm(run_extragradient(game, x0, x0.clone(), 0.1, 1500)) < 1e-3 * start
    assert final_norm(run_ogda(game, x0, x0.clone(), 0.1, 1500)) < 1e-3 * start


@pytest.mark.parametrize("order", ["simultaneous", "alternating"])
def test_growth_rate_fast_scalar_path_equals_the_generic_path(order):
    from gymforge.agents.minmax import spectral

    game = make_game("quadratic", {"a": 0.02, "B": [[1.3]], "c": 0.07})
    h = torch.linspace(0.05, 0.9, 7, dtype=torch.float64)[:, None]
    beta = torch.linspace(-0.6, 0.6, 7, dtype=torch.float64)[:, None]
    z0 = torch.tensor([[0.6, -0.8]], dtype=torch.float64)
    fast = spectral._scalar_growth(game, h, beta, z0, order, 300, 50)
    generic = spectral._generic_growth(game, h, beta, z0, order, 300, 50)
    torch.testing.assert_close(fast, generic, rtol=1e-12, atol=1e-12)


def test_simulated_growth_rate_on_a_2x2_game_matches_the_spectrum():
    game = make_game("quadratic", {"a": 0.05, "B": [[1.0, 0.3], [-0.2, 0.8]], "c": 0.05})
    hs = torch.tensor([0.05, 0.2, 0.6], dtype=torch.float64)
    betas = torch.tensor([-0.3, 0.0, 0.3], dtype=torch.float64)
    for order in ("simultaneous", "alternating"):
        rate = simulated_growth_rate(game, hs, betas, order, iterations=3000)
        exact = stability_map(game, hs, betas, order).log()
        torch.testing.assert_close(rate, exact, atol=3e-3, rtol=0)


def test_spectral_radius_of_per_game_parameters():
    # f = a x² + xy (c = 0) for three values of a: each game gets its own ρ.
    game = make_game("quadratic", {"a": [0.1, 0.2, 0.3], "B": torch.ones(3, 1, 1), "c": 0.0})
    per_game = spectral_radius(game, 0.1, 0.0, "simultaneous")
    one_by_one = [
        float(
            spectral_radius(make_game("quadratic", {"a": a, "c": 0.0}), 0.1, 0.0, "simultaneous")[0]
        )
        for a in (0.1, 0.2, 0.3)
    ]
    assert per_game.tolist() == pytest.approx(one_by_one)
    with pytest.raises(ValueError, match="one entry per game"):
        spectral_radius(game, torch.full((5,), 0.1), 0.0, "simultaneous")
