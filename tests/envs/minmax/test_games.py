"""The games' analytic values and gradients, checked against hand values and torch.autograd."""

from __future__ import annotations

import pytest
import torch

from gymforge.envs.minmax.games import GAME_NAMES, GAME_PARAMS, make_game

GEN = torch.Generator().manual_seed(0)


def _random_point(game, batch=5):
    x = torch.randn(batch, game.x_dim, generator=GEN, dtype=torch.float64)
    y = torch.randn(batch, game.y_dim, generator=GEN, dtype=torch.float64)
    return x.abs() if game.name == "xy2" else x, y


GAMES = {
    "bilinear-3x2": ("bilinear", {"A": [[1.0, -2.0], [0.5, 3.0], [0.0, 1.5]]}),
    "bilinear-per-game": ("bilinear", {"A": torch.randn(5, 2, 4, generator=GEN)}),
    "quadratic-default": ("quadratic", {}),
    "quadratic-2x3": ("quadratic", {"a": 0.3, "B": torch.randn(2, 3, generator=GEN), "c": 0.7}),
    "quadratic-per-game": (
        "quadratic",
        {"a": torch.rand(5, generator=GEN), "B": torch.randn(5, 2, 2, generator=GEN), "c": 0.1},
    ),
    "xy2": ("xy2", {}),
    "sextic": ("sextic", {}),
}


@pytest.mark.parametrize("key", list(GAMES))
def test_gradients_match_autograd(key):
    name, params = GAMES[key]
    game = make_game(name, params)
    x, y = _random_point(game)
    x.requires_grad_(True)
    y.requires_grad_(True)
    gx_auto, gy_auto = torch.autograd.grad(game.value(x, y).sum(), (x, y))
    gx, gy = game.grads(x, y)
    torch.testing.assert_close(gx, gx_auto, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gy, gy_auto, rtol=1e-12, atol=1e-12)


def test_known_values():
    x = torch.tensor([[2.0]], dtype=torch.float64)
    y = torch.tensor([[3.0]], dtype=torch.float64)
    assert float(make_game("bilinear").value(x, y)[0]) == 6.0
    # 0.05·4 + 6 − 0.05·9 = 5.75
    assert float(make_game("quadratic").value(x, y)[0]) == pytest.approx(5.75)
    assert float(make_game("xy2").value(x, y)[0]) == -18.0
    # 2·(3 − 0.45) + φ(2) − φ(3); φ(z) = z²/4 − z⁴/2 + z⁶/6
    phi = lambda z: z**2 / 4 - z**4 / 2 + z**6 / 6  # noqa: E731
    assert float(make_game("sextic").value(x, y)[0]) == pytest.approx(2 * 2.55 + phi(2) - phi(3))


def test_game_jacobian_of_the_regularised_game_has_eigenvalues_minus_point_one_plus_minus_i():
    lam = torch.linalg.eigvals(make_game("quadratic").jacobian()[0])
    assert sorted(lam.imag.tolist()) == pytest.approx([-1.0, 1.0])
    assert lam.real.tolist() == pytest.approx([-0.1, -0.1])


def test_equilibrium_distance_of_a_rank_deficient_bilinear_game_is_distance_to_the_kernels():
    # A = [[1, 0], [0, 0]]: equilibria are x = (0, s), y = (0, t).
    game = make_game("bilinear", {"A": [[1.0, 0.0], [0.0, 0.0]]})
    x = torch.tensor([[3.0, 7.0]], dtype=torch.float64)
    y = torch.tensor([[4.0, -2.0]], dtype=torch.float64)
    assert float(game.equilibrium_distance(x, y)[0]) == pytest.approx(5.0)


def test_xy2_projects_onto_nonnegative_x_and_measures_distance_by_y():
    game = make_game("xy2")
    assert game.project_x(torch.tensor([[-1.0], [2.0]])).tolist() == [[0.0], [2.0]]
    d = game.equilibrium_distance(torch.tensor([[2.0]]), torch.tensor([[-0.5]]))
    assert float(d[0]) == pytest.approx(0.5)
    assert make_game("sextic").equilibrium_distance(torch.zeros(1, 1), torch.zeros(1, 1)) is None


def test_bad_inputs_raise_value_errors_naming_the_field():
    with pytest.raises(ValueError, match=r"game must be one of \['bilinear'"):
        make_game("chess")
    with pytest.raises(ValueError, match="may only contain"):
        make_game("xy2", {"A": [[1.0]]})
    with pytest.raises(ValueError, match="a must be >= 0"):
        make_game("quadratic", {"a": -1.0})
    with pytest.raises(ValueError, match="A must hold finite"):
        make_game("bilinear", {"A": [[float("nan")]]})
    with pytest.raises(ValueError, match=r"A must have shape \(m, n\)"):
        make_game("bilinear", {"A": [1.0, 2.0]})
    with pytest.raises(ValueError, match="shift must be a finite number"):
        make_game("sextic", {"shift": float("inf")})
    with pytest.raises(ValueError, match="share one batch size"):
        make_game("quadratic", {"a": [0.1, 0.2], "B": torch.ones(3, 1, 1)})
    assert set(GAME_PARAMS) == set(GAME_NAMES)
