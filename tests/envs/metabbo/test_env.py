"""MetaBBO-v0: reward and episode semantics, splits, pinned problems, bad input, non-finite values."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import gymforge  # noqa: F401 - registers the ids
from gymforge.core.instance_rng import InstanceRNG
from gymforge.envs.metabbo import dynamics
from gymforge.envs.metabbo.bbob import BBOBInstances
from gymforge.envs.metabbo.dynamics import MetaBBOConfig
from gymforge.envs.metabbo.gym_env import MetaBBOVecEnv
from gymforge.envs.metabbo.presets import get_preset
from gymforge.envs.metabbo.problems import SPLITS, ProblemSet, split_functions


def test_env__return_telescopes_to_perf_with_nonzero_optimum() -> None:
    env = gym.make("MetaBBO-v0", dimension=5, population_size=20, max_generations=40)
    obs, _ = env.reset(seed=3)
    assert obs.shape == (9,) and obs.dtype == np.float32
    total, t = 0.0, 0
    while True:
        obs, reward, terminated, truncated, info = env.step(np.array([8, 8, 14]))
        total += reward
        t += 1
        assert info["evaluations"] == 20 * (t + 1)
        assert info["generation"] == t
        if terminated or truncated:
            break
    assert truncated and not terminated and t == 40
    # random instances have f_opt = 100 k, k >= 1: the error, not the value, is normalised
    assert info["best_error"] < info["initial_error"]
    perf = 1.0 - info["best_error"] / info["initial_error"]
    assert total == pytest.approx(perf, rel=1e-5)
    assert obs[3] == 0.0  # no budget left


def test_env__log_error_reward_telescopes_to_decades_removed() -> None:
    """``reward="log_error"``: the return is log10(e_0 / max(e_T, target)), and the same
    trajectory as the default reward (only the reward differs)."""
    kwargs = {"dimension": 5, "population_size": 20, "max_generations": 60, "split": [1, 8]}
    log_env = MetaBBOVecEnv(num_envs=3, autoreset=False, reward="log_error", **kwargs)
    perf_env = MetaBBOVecEnv(num_envs=3, autoreset=False, **kwargs)
    totals = {}
    for name, venv in (("log", log_env), ("perf", perf_env)):
        venv.reset(seed=11)
        total = torch.zeros(3, dtype=torch.float64)
        action = torch.tensor([[8, 8, 14], [15, 0, 15], [2, 9, 3]])
        for _ in range(60):
            _, reward, _, _, info = venv.step(action)
            total += reward.double()
        totals[name] = (total, info["best_error"].double(), info["initial_error"].double())
    total, best, initial = totals["log"]
    assert torch.equal(best, totals["perf"][1])  # same search, other reward
    expected = torch.log10(initial) - torch.log10(best.clamp_min(1e-8))
    torch.testing.assert_close(total, expected, rtol=1e-5, atol=1e-5)
    assert (total >= 0).all() and (total > 0).any()  # the best error never grows


def test_env__terminates_at_the_target_error() -> None:
    venv = MetaBBOVecEnv(
        num_envs=2, autoreset=False, split=[1], dimension=2, population_size=20, max_generations=500
    )
    venv.reset(seed=0)
    action = torch.tensor([[8, 8, 14]] * 2)
    steps = 0
    while steps < 500:
        _, reward, terminated, truncated, info = venv.step(action)
        steps += 1
        if terminated.any():
            break
    assert terminated.any() and not truncated.any() and steps < 500
    done = terminated.clone()
    assert (info["best_error"][done] <= 1e-8).all()
    # finished instances are frozen with reward 0 until reset
    before = info["evaluations"].clone()
    _, reward, terminated, truncated, info = venv.step(action)
    assert (reward[done] == 0).all() and not terminated[done].any() and not truncated[done].any()
    assert torch.equal(info["evaluations"][done], before[done])


def test_env__splits_follow_metabox() -> None:
    easy_test = (1, 2, 3, 5, 15, 16, 17, 21)
    assert split_functions("easy", "test") == easy_test
    assert split_functions("difficult", "train") == easy_test
    assert set(split_functions("easy", "train")) == set(range(1, 25)) - set(easy_test)
    assert split_functions("all", "test") == tuple(range(1, 25))
    assert split_functions([3, 7], "test") == (3, 7)
    assert set(SPLITS) == {"easy", "difficult", "all"}


def test_env__each_instance_draws_its_problem_from_the_subset() -> None:
    venv = MetaBBOVecEnv(num_envs=32, split="easy", subset="test", population_size=12)
    venv.reset(seed=0)
    fids = set(venv.state.problems.function_id.tolist())
    assert fids <= set(split_functions("easy", "test")) and len(fids) >= 4  # a mixed batch
    coco = MetaBBOVecEnv(num_envs=8, instance_mode="coco", coco_instances=3, population_size=12)
    coco.reset(seed=0)
    assert set(coco.state.problems.instance_id.tolist()) <= {1, 2, 3}


def test_env__pinned_problems_and_seeds() -> None:
    venv = MetaBBOVecEnv(num_envs=3, split="all", population_size=12, autoreset=False)
    opts = {"function_ids": [21, 2, 21], "instance_ids": [5, 5, 6]}
    obs_a, _ = venv.reset(seed=[1, 2, 3], options=opts)
    assert venv.state.problems.function_id.tolist() == [21, 2, 21]
    obs_b, _ = venv.reset(seed=[1, 2, 3], options=opts)
    assert torch.equal(obs_a, obs_b)
    single = MetaBBOVecEnv(num_envs=1, split="all", population_size=12)
    obs_c, _ = single.reset(seed=[2], options={"function_ids": [2], "instance_ids": [5]})
    assert torch.equal(obs_c[0], obs_a[1])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"preset": "alg7"}, "preset must be one of"),
        ({"split": "medium"}, "split must be one of"),
        ({"split": [0, 25]}, "function_ids must be integers in 1..24"),
        ({"split": []}, "function_ids must be a non-empty list"),
        ({"split": ["a"]}, "function_ids must be a non-empty list"),
        ({"subset": "val"}, "subset must be one of"),
        ({"dimension": 1}, "dimension must be an integer in 2..100"),
        ({"dimension": 41, "instance_mode": "coco"}, "dimension must be an integer in 2..40"),
        ({"instance_mode": "ioh"}, "instance_mode must be one of"),
        ({"population_size": 3}, "population_size must be in 4..10000"),
        ({"max_generations": 0}, "max_generations must be an integer >= 1"),
        ({"coco_instances": 0}, "coco_instances must be an integer"),
        ({"reward": "log"}, r"reward must be one of \['perf', 'log_error'\]"),
    ],
)
def test_env__bad_kwargs_name_the_field(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MetaBBOVecEnv(num_envs=1, **kwargs)


def test_env__bad_actions_and_options_change_nothing() -> None:
    venv = MetaBBOVecEnv(num_envs=2, population_size=12)
    obs, _ = venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"action\[1\] must be in"):
        venv.step(torch.tensor([[0, 0, 0], [0, 16, 0]]))
    with pytest.raises(ValueError, match="must have shape"):
        venv.step(torch.tensor([[0, 0], [0, 0]]))
    with pytest.raises(ValueError, match="options must hold exactly"):
        venv.reset(seed=0, options={"function_ids": [1, 1]})
    with pytest.raises(ValueError, match=r"function_ids must be integers in 1\.\.24"):
        venv.reset(seed=0, options={"function_ids": [1, 30], "instance_ids": [1, 1]})
    assert torch.equal(venv._observe(), obs)


def test_env__non_finite_objective_values_never_crash_or_poison() -> None:
    config = MetaBBOConfig(
        preset=get_preset("alg1"),
        problem_set=ProblemSet(function_ids=(1, 10), dimension=4),
        population_size=24,
        max_generations=20,
    )
    rng = InstanceRNG.create([0, 1, 2])
    state = dynamics.initial_state(config, rng, problems=([10, 10, 1], [1, 2, 3]))
    # Blow up the ellipsoid's rotation so that most points overflow to +inf (instance 0) or
    # all do (instance 1); instance 2 stays normal.
    p = state.problems
    scale = torch.tensor([1e150, 1e300, 1.0], dtype=torch.float64)[:, None, None]
    fields = {n: getattr(p, n) for n in BBOBInstances.__dataclass_fields__}
    fields["rot_r"] = p.rot_r * scale
    state = dynamics._fresh(config, BBOBInstances(**fields), rng, torch.ones(3, dtype=torch.bool))
    assert not torch.isfinite(state.subpops[0].fitness[1]).any()
    action = torch.full((3, 10), 8)
    for _ in range(20):
        obs = dynamics.observe(config, state)
        assert torch.isfinite(obs).all() and ((obs >= 0) & (obs <= 1)).all()
        state, reward, _, truncated = dynamics.step(config, state, action, rng)
        assert torch.isfinite(reward).all()
    assert truncated[1] and reward[1] == 0  # nothing finite ever: reward stays 0
    assert math.isfinite(state.error[2].item())


def test_env__vector_mixes_functions_and_matches_separate_runs() -> None:
    kwargs = {"preset": "alg2", "split": "all", "population_size": 24, "max_generations": 6}
    batch = MetaBBOVecEnv(num_envs=3, **kwargs)
    obs, _ = batch.reset(seed=40)
    actions = torch.randint(0, 16, (8, 3, 16), generator=torch.Generator().manual_seed(0))
    trace = [obs]
    for a in actions:
        trace.append(batch.step(a)[0])
    for i in range(3):
        one = MetaBBOVecEnv(num_envs=1, **kwargs)
        o, _ = one.reset(seed=40 + i)
        assert torch.equal(o[0], trace[0][i])
        for t, a in enumerate(actions):
            assert torch.equal(one.step(a[i : i + 1])[0][0], trace[t + 1][i]), (i, t)
