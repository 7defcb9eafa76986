"""Conformance checks of gymforge-style envs, importable by third-party env authors.

Gymnasium's ``check_env`` covers the API of one env; these checks cover what gymforge promises
on top. Two levels, each check raising ``AssertionError`` (or the error of the failing library
checker) with a message on failure:

- on env objects and factories (``check_*``): seeded determinism, observations inside the space,
  exact pickling, and for batched envs that instance ``i`` of a batch equals a separate run of
  one instance with the same seed, that a vector instance equals the scalar env, and that a
  batch split over worker processes equals the batch in one process;
- on registered ids, the suite: :data:`CHECKS` names one function of an env id per promise, each
  applying to the ids whose capabilities it needs (:func:`applicable`).
  ``tests/test_conformance.py`` parametrizes over the registry with these checks, and an author
  of a new family runs :func:`check_id` on a new id, so both run the very same checks.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from gymforge.registry import EnvSpec, get_spec

Transition = tuple[Any, float, bool, bool]

# --- checks of env objects and factories -------------------------------------------------------


def random_rollout(env: gym.Env, seed: int, steps: int) -> list[Transition]:
    """``(obs, reward, terminated, truncated)`` over ``steps`` seeded random steps (with resets)."""
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    out: list[Transition] = [(obs, 0.0, False, False)]
    for _ in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        out.append((obs, float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            obs, _ = env.reset()
    return out


def assert_same_transitions(a: list[Transition], b: list[Transition]) -> None:
    assert len(a) == len(b), f"lengths differ: {len(a)} != {len(b)}"
    for t, (x, y) in enumerate(zip(a, b, strict=True)):
        np.testing.assert_array_equal(x[0], y[0], err_msg=f"observation differs at step {t}")
        assert x[1:] == y[1:], f"reward/terminated/truncated differ at step {t}: {x[1:]} != {y[1:]}"


def check_determinism(make_env: Callable[[], gym.Env], steps: int = 300) -> None:
    """The same seed gives the same trajectory; another seed gives a different one."""
    first = random_rollout(make_env(), seed=3, steps=steps)
    assert_same_transitions(first, random_rollout(make_env(), seed=3, steps=steps))
    other = random_rollout(make_env(), seed=4, steps=steps)
    assert any(not np.array_equal(x[0], y[0]) for x, y in zip(first, other, strict=True)), (
        "seeds 3 and 4 gave identical observations: the seed is ignored"
    )


def check_observations_in_space(env: gym.Env, steps: int = 1000) -> None:
    for t, (obs, *_) in enumerate(random_rollout(env, seed=0, steps=steps)):
        assert env.observation_space.contains(obs), (
            f"step {t}: {obs} outside {env.observation_space}"
        )


def check_pickling(env: gym.Env, warmup: int = 50, steps: int = 100) -> None:
    """A pickled copy taken mid-episode continues exactly like the original."""
    env.reset(seed=7)
    env.action_space.seed(7)
    for _ in range(warmup):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    clone = pickle.loads(pickle.dumps(env))
    for t in range(steps):
        action = env.action_space.sample()
        a, b = env.step(action), clone.step(action)
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"pickled copy diverged at step {t}")
        assert a[1:4] == b[1:4], f"pickled copy diverged at step {t}: {a[1:4]} != {b[1:4]}"
        if a[2] or a[3]:
            np.testing.assert_array_equal(env.reset()[0], clone.reset()[0])


def _vector_trajectory(
    make_vec: Callable[[int], Any], num_envs: int, seed: int, actions: np.ndarray
) -> list:
    venv = make_vec(num_envs)
    obs, _ = venv.reset(seed=seed)
    out = [(obs.clone(),)]
    for action in actions:
        obs, reward, terminated, truncated, _ = venv.step(torch.as_tensor(action))
        out.append((obs.clone(), reward.clone(), terminated.clone(), truncated.clone()))
    return out


def check_batch_equivalence(
    make_vec: Callable[[int], Any], action_space: gym.Space, num_envs: int = 5, steps: int = 200
) -> None:
    """Instance ``i`` of a batch seeded ``s`` equals a batch of one seeded ``s + i`` (with autoresets).

    Args:
        make_vec: ``make_vec(num_envs)`` returns a torch vector env.
        action_space: the single-instance action space (actions are sampled from it).
    """
    seed = 11
    action_space.seed(0)
    actions = np.stack(
        [np.stack([action_space.sample() for _ in range(num_envs)]) for _ in range(steps)]
    )
    batched = _vector_trajectory(make_vec, num_envs, seed, actions)
    for i in range(num_envs):
        single = _vector_trajectory(make_vec, 1, seed + i, actions[:, i : i + 1])
        for t, (b, s) in enumerate(zip(batched, single, strict=True)):
            for x, y in zip(b, s, strict=True):
                assert torch.equal(x[i], y[0]), f"instance {i} differs from its own run at step {t}"


def check_vector_matches_scalar(
    env: gym.Env, make_vec: Callable[[int], Any], num_envs: int = 3, steps: int = 500
) -> None:
    """Instance 1 of a vector env seeded ``s`` equals the scalar env seeded ``s + 1``, to its first episode end."""
    venv = make_vec(num_envs)
    vobs, _ = venv.reset(seed=20)
    obs, _ = env.reset(seed=21)
    np.testing.assert_array_equal(obs, vobs[1].cpu().numpy())
    env.action_space.seed(1)
    for t in range(steps):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, _ = env.step(action)
        vobs, vreward, vterm, vtrunc, _ = venv.step(torch.as_tensor(np.stack([action] * num_envs)))
        scalar = (float(reward), bool(terminated), bool(truncated))
        vector = (float(vreward[1]), bool(vterm[1]), bool(vtrunc[1]))
        assert scalar == vector, f"step {t}: scalar {scalar} != vector {vector}"
        if terminated or truncated:
            return
        np.testing.assert_array_equal(obs, vobs[1].cpu().numpy(), err_msg=f"step {t}")


def _assert_same_infos(a: dict[str, Any], b: dict[str, Any], where: str) -> None:
    assert a.keys() == b.keys(), f"{where}: info keys {sorted(a)} != {sorted(b)}"
    for key, value in a.items():
        if isinstance(value, dict):
            _assert_same_infos(value, b[key], f"{where}, info {key!r}")
        else:
            assert torch.equal(value, b[key]), f"{where}: info {key!r} differs"


def check_sharded_equivalence(
    make_vec: Callable[..., Any],
    action_space: gym.Space,
    num_envs: int = 5,
    num_workers: int = 2,
    steps: int = 60,
) -> None:
    """A batch split over worker processes (``num_workers``) equals the same batch in one process:
    observations, rewards, flags and every info entry (``final_obs``/``final_info`` included),
    step by step.

    Args:
        make_vec: ``make_vec(num_envs, num_workers)`` returns a torch vector env.
        action_space: the single-instance action space (actions are sampled from it).
    """
    action_space.seed(0)
    actions = [
        torch.as_tensor(np.stack([action_space.sample() for _ in range(num_envs)]))
        for _ in range(steps)
    ]
    plain, sharded = make_vec(num_envs, 1), make_vec(num_envs, num_workers)
    try:
        a, b = plain.reset(seed=3), sharded.reset(seed=3)
        assert torch.equal(a[0], b[0]), "reset observations differ"
        _assert_same_infos(a[1], b[1], "reset")
        for t, action in enumerate(actions):
            a, b = plain.step(action), sharded.step(action)
            for name, x, y in zip(("obs", "reward", "terminated", "truncated"), a, b, strict=False):
                assert torch.equal(x, y), f"step {t}: {name} differs"
            _assert_same_infos(a[4], b[4], f"step {t}")
    finally:
        sharded.close()


# --- the suite of a registered id ---------------------------------------------------------------


def make_vec_of(env_id: str) -> Callable[[int], Any]:
    """``n -> gym.make_vec(env_id, num_envs=n, array_backend="torch")`` through the id's vector
    entry point (torch outputs, which the checks compare with ``torch.equal``)."""
    return lambda n: gym.make_vec(
        env_id, num_envs=n, vectorization_mode="vector_entry_point", array_backend="torch"
    )


def gymnasium_check_env(env_id: str) -> None:
    """Gymnasium's own env checker (render check only where the id has render modes)."""
    from gymnasium.utils.env_checker import check_env

    render = bool(get_spec(env_id).capabilities.render_modes)
    check_env(gym.make(env_id).unwrapped, skip_render_check=not render)


def sb3_check_env(env_id: str) -> None:
    """Stable-Baselines3's env checker."""
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.make(env_id).unwrapped, warn=True)


def determinism(env_id: str) -> None:
    """The same seed gives the same trajectory, another seed a different one."""
    check_determinism(lambda: gym.make(env_id))


def observations_in_space(env_id: str) -> None:
    """Every observation lies inside the observation space."""
    check_observations_in_space(gym.make(env_id))


def pickling(env_id: str) -> None:
    """A pickled env continues identically."""
    check_pickling(gym.make(env_id))


def same_step_torch_vector_env(env_id: str) -> None:
    """``make_vec`` gives a same-step autoreset vector env whose single spaces are the scalar
    env's, of numpy observations by default and torch ones when a device is named."""
    venv = gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert venv.single_observation_space == gym.make(env_id).observation_space
    assert venv.single_action_space == gym.make(env_id).action_space
    obs, _ = venv.reset(seed=0)
    assert isinstance(obs, np.ndarray) and obs.shape == (4, *venv.single_observation_space.shape)
    on_device = gym.make_vec(
        env_id, num_envs=4, vectorization_mode="vector_entry_point", device="cpu"
    )
    obs, _ = on_device.reset(seed=0)
    assert isinstance(obs, torch.Tensor) and obs.shape == (4, *venv.single_observation_space.shape)


def batch_equivalence(env_id: str) -> None:
    """Batched instances equal separate runs with the same seeds."""
    action_space = gym.make(env_id).action_space
    check_batch_equivalence(make_vec_of(env_id), action_space, steps=60)


def vector_matches_scalar(env_id: str) -> None:
    """A vector instance matches the scalar env until its first episode ends."""
    check_vector_matches_scalar(gym.make(env_id), make_vec_of(env_id))


def num_workers_argument(env_id: str) -> None:
    """``make_vec`` takes ``num_workers`` (one worker runs in this process) and refuses more
    workers than instances."""
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", num_workers=1)
    assert type(venv).__name__ != "ShardedVectorEnv"  # (one worker: this process)
    try:
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", num_workers=3)
    except ValueError as error:
        assert "num_workers must be an int in [1, num_envs=2]" in str(error), error
    else:
        raise AssertionError("num_workers=3 > num_envs=2 was accepted")


def sharded_equivalence(env_id: str) -> None:
    """A batch over worker processes equals the same batch in one process."""

    def make_vec(n: int, workers: int) -> Any:
        return gym.make_vec(
            env_id,
            num_envs=n,
            vectorization_mode="vector_entry_point",
            num_workers=workers,
            array_backend="torch",
        )

    check_sharded_equivalence(make_vec, gym.make(env_id).action_space, steps=40)


def ppo_trains_through_sb3(env_id: str) -> None:
    """SB3's PPO trains a few hundred steps through the SB3 adapter and acts inside the space."""
    from stable_baselines3 import PPO

    from gymforge.adapters.sb3 import as_sb3_vec_env

    if get_spec(env_id).capabilities.batched:
        vec_env = as_sb3_vec_env(
            gym.make_vec(env_id, num_envs=4, vectorization_mode="vector_entry_point")
        )
    else:
        vec_env = as_sb3_vec_env(
            gym.make_vec(
                env_id,
                num_envs=2,
                vectorization_mode="sync",
                vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
            )
        )
    model = PPO("MlpPolicy", vec_env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    obs = vec_env.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert vec_env.action_space.contains(action[0])


def _single(spec: EnvSpec) -> bool:
    return not spec.capabilities.multi_agent


def _batched(spec: EnvSpec) -> bool:
    return _single(spec) and spec.capabilities.batched


def _same_engine(spec: EnvSpec) -> bool:
    return _batched(spec) and spec.capabilities.same_engine


@dataclass(frozen=True)
class Check:
    """One conformance check: the function of an env id and the ids it applies to."""

    run: Callable[[str], None]
    applies: Callable[[EnvSpec], bool]


#: name -> check, in the order :func:`check_id` runs them.
CHECKS: dict[str, Check] = {
    "gymnasium_check_env": Check(gymnasium_check_env, _single),
    "sb3_check_env": Check(sb3_check_env, _single),
    "determinism": Check(determinism, _single),
    "observations_in_space": Check(observations_in_space, _single),
    "pickling": Check(pickling, _single),
    "same_step_torch_vector_env": Check(same_step_torch_vector_env, _batched),
    "batch_equivalence": Check(batch_equivalence, _batched),
    "vector_matches_scalar": Check(vector_matches_scalar, _same_engine),
    "num_workers_argument": Check(num_workers_argument, _batched),
    "sharded_equivalence": Check(sharded_equivalence, _batched),
    "ppo_trains_through_sb3": Check(ppo_trains_through_sb3, _single),
}


def applicable(env_id: str) -> list[str]:
    """The names of the checks that apply to ``env_id``, in :data:`CHECKS` order."""
    spec = get_spec(env_id)
    return [name for name, check in CHECKS.items() if check.applies(spec)]


def run_check(name: str, env_id: str) -> None:
    """Run the check ``name`` on ``env_id``; its failure propagates."""
    if name not in CHECKS:
        raise ValueError(f"unknown conformance check {name!r}; known: {list(CHECKS)}")
    CHECKS[name].run(env_id)


def check_id(env_id: str, names: list[str] | None = None) -> list[str]:
    """Run the applicable checks (or only ``names``) on ``env_id``; one ``"name: error"`` line
    per failed check, an empty list when the id conforms."""
    problems = []
    for name in applicable(env_id) if names is None else names:
        try:
            run_check(name, env_id)
        except Exception as error:  # every failure is reported; none stops the rest
            problems.append(f"{name}: {type(error).__name__}: {error}")
    return problems
