"""The scrap-factor curriculum callback raises the factor the envs use, by the rule."""

from __future__ import annotations

import pytest
from stable_baselines3 import PPO

from gymforge.baselines.sb3.callbacks import ScrapFactorCurriculum
from gymforge.baselines.sb3.envs import make_train_env
from gymforge.baselines.training.config import Curriculum

ENV = "LineFlow-ComplexLine-v0"
SHORT = {"horizon": 50.0}  # 50-step episodes: two envs finish two episodes per 100-step rollout


def _train(curriculum: Curriculum, vectorized: bool = False) -> tuple[ScrapFactorCurriculum, list]:
    venv = make_train_env(ENV, SHORT, n_envs=2, seed=0, vectorized=vectorized)
    model = PPO("MlpPolicy", venv, n_steps=50, batch_size=50, n_epochs=1, seed=0, device="cpu")
    callback = ScrapFactorCurriculum(curriculum)
    model.learn(500, callback=callback)  # 5 rollouts of 2 x 50 steps
    factors = (
        venv.get_attr("scrap_factor") if not vectorized else [venv.venv.vector_env.scrap_factor]
    )
    venv.close()
    return callback, factors


@pytest.mark.parametrize("vectorized", [False, True])
def test_curriculum__raises_after_each_qualifying_rollout_up_to_the_cap(vectorized):
    # every rollout ends with 2 new episodes >= threshold: +0.05 five times, capped at 0.2
    callback, factors = _train(
        Curriculum(start=0.0, threshold=-1e9, update=0.05, factor_max=0.2, look_back=2),
        vectorized,
    )
    assert callback.factor == pytest.approx(0.2)
    assert factors == pytest.approx([0.2] * len(factors))


def test_curriculum__needs_look_back_fresh_episodes_between_raises():
    # 3 episodes are needed but each rollout brings 2: raises after rollouts 2 and 4 (window
    # emptied after each raise) -> 0.1 + 2 x 0.03
    callback, factors = _train(Curriculum(start=0.1, threshold=-1e9, update=0.03, look_back=3))
    assert callback.factor == pytest.approx(0.16)
    assert factors == pytest.approx([0.16, 0.16])


def test_curriculum__stays_at_the_start_below_the_threshold():
    callback, factors = _train(Curriculum(start=0.05, threshold=1e9, update=0.5, look_back=1))
    assert callback.factor == 0.05
    assert factors == [0.05, 0.05]
