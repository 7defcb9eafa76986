"""The Off-CMAB envs: super-arm validation, action encodings, evaluation helpers, batch views."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from gymforge.envs.cmab.super_arms import check_distinct, decode_choice, encode_choice


def test_choice_encoding_round_trips_random_super_arms():
    generator = torch.Generator().manual_seed(0)
    ids = torch.stack([torch.randperm(30, generator=generator)[:7] for _ in range(200)])
    action = encode_choice(ids)
    assert bool((action >= 0).all()) and bool((action < torch.arange(30, 23, -1)).all())
    assert torch.equal(decode_choice(action, 30), ids)


def _decode_by_hand(action, n_ids):
    """Entry ``j`` takes the ``a_j``-th smallest id still free (the definition of the code)."""
    free = list(range(n_ids))
    return [free.pop(int(a)) for a in action]


@pytest.mark.parametrize(("n_ids", "size"), [(30, 7), (100, 5), (100, 40), (6, 6), (9, 1)])
def test_choice_decoding_matches_the_definition(n_ids, size):
    generator = torch.Generator().manual_seed(n_ids + size)
    action = torch.stack(
        [torch.randint(0, n_ids - j, (300,), generator=generator) for j in range(size)], 1
    ).to(torch.int32)
    before = action.clone()
    ids = decode_choice(action, n_ids)
    assert ids.dtype == torch.int64 and torch.equal(action, before)  # input left untouched
    assert ids.tolist() == [_decode_by_hand(row, n_ids) for row in action.tolist()]
    assert torch.equal(encode_choice(ids), action.long())


@pytest.mark.parametrize(("n_ids", "size"), [(100, 5), (100, 40), (6, 6), (9, 1)])
def test_repeated_ids_are_found_in_the_first_row_that_has_them(n_ids, size):
    generator = torch.Generator().manual_seed(size)
    ids = torch.stack([torch.randperm(n_ids, generator=generator)[:size] for _ in range(50)])
    check_distinct(ids, n_ids)  # distinct rows pass
    if size == 1:
        return
    for row, (i, j) in [(37, (0, size - 1)), (3, (size - 2, size - 1)), (0, (1, 0))]:
        bad = ids.clone()
        bad[row, i] = bad[row, j]
        bad[45, 0] = bad[45, 1]  # a later row with a repeat is not the one named
        with pytest.raises(ValueError, match=rf"^super_arm\[{row}\] must not repeat items"):
            check_distinct(bad, n_ids)


@pytest.mark.parametrize(
    ("action_format", "bad_row", "match"),
    [
        ("ids", [4, 5, 6, 7, 4], r"action\[2\] must not repeat items"),
        ("ids", [4, 5, 6, 7, 100], r"action\[2\] must be in"),
        ("choice", [4, 5, 6, 7, 96], r"action\[2\] must be in"),
    ],
)
def test_an_invalid_row_of_a_batch_is_named_before_any_state_change(action_format, bad_row, match):
    venv = gym.make_vec(
        "OffCMAB-Cascade-v0",
        num_envs=4,
        vectorization_mode="vector_entry_point",
        action_format=action_format,
        horizon=3,
    )
    venv.reset(seed=0)
    good = venv.encode(torch.tensor([0, 1, 2, 3, 4]))
    action = good.expand(4, -1).clone()
    venv.step(action)
    state = venv.steps.clone(), venv.rng.counter.clone(), venv.obs.clone()
    action[2] = torch.tensor(bad_row)
    with pytest.raises(ValueError, match=match):
        venv.step(action)
    assert all(
        torch.equal(a, b)
        for a, b in zip(state, (venv.steps, venv.rng.counter, venv.obs), strict=True)
    )


def test_every_sampled_action_is_a_valid_super_arm():
    env = gym.make("OffCMAB-Cascade-v0").unwrapped
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(200):
        ids = env.decode(env.action_space.sample())
        assert len(set(ids.tolist())) == 5


@pytest.mark.parametrize(
    ("env_id", "bad", "match"),
    [
        ("OffCMAB-Cascade-v0", [1, 2, 3, 4], "shape"),
        ("OffCMAB-Cascade-v0", [1, 2, 3, 4, 4], "must not repeat"),
        ("OffCMAB-Cascade-v0", [1, 2, 3, 4, 100], r"must be in"),
        ("OffCMAB-Cascade-v0", [-1, 2, 3, 4, 5], r"must be in"),
        ("OffCMAB-LLMCache-v0", list(range(41)), "shape"),
        ("OffCMAB-InfluenceMax-v0", [0, 0, 1], "must not repeat"),
    ],
)
def test_invalid_super_arms_raise_before_any_state_change(env_id, bad, match):
    env = gym.make(env_id, action_format="ids").unwrapped
    _obs, _ = env.reset(seed=3)
    steps = env._vector.steps.clone()
    counter = env._vector.rng.counter.clone()
    with pytest.raises(ValueError, match=match):
        env.step(np.array(bad))
    assert torch.equal(env._vector.steps, steps) and torch.equal(env._vector.rng.counter, counter)


def test_over_the_cache_size_is_rejected_by_the_evaluation_helper():
    env = gym.make("OffCMAB-LLMCache-v0").unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match="exactly cache_size=40 distinct queries"):
        env.expected_reward(list(range(41)))


def test_ids_and_choice_formats_play_the_same_super_arm():
    ids = np.array([7, 3, 99, 0, 42])
    a = gym.make("OffCMAB-Cascade-v0", action_format="ids")
    b = gym.make("OffCMAB-Cascade-v0")
    a.reset(seed=5)
    b.reset(seed=5)
    for _ in range(20):
        out_a = a.step(ids)
        out_b = b.step(b.unwrapped.encode(ids))
        np.testing.assert_array_equal(out_a[0], out_b[0])
        assert out_a[1] == out_b[1]
        np.testing.assert_array_equal(out_a[4]["super_arm"], ids)


def test_info_reports_triggered_arms_and_the_reward_is_the_click():
    env = gym.make("OffCMAB-Cascade-v0", action_format="ids")
    env.reset(seed=1)
    ids = np.array([10, 20, 30, 40, 50])
    for _ in range(50):
        obs, reward, _, _, info = env.step(ids)
        position = int(info["click_position"])
        assert reward == float(position < 5)
        examined = np.flatnonzero(info["triggered"])
        assert set(examined) == set(ids[: min(position + 1, 5)])
        assert info["outcomes"].sum() == reward
        np.testing.assert_array_equal(obs[:100], info["triggered"].astype(np.float32))


def test_expected_and_optimal_reward_helpers():
    env = gym.make("OffCMAB-Cascade-v0", n_items=6, list_size=2).unwrapped
    env.reset(seed=4)
    mu = env.params["mu"][0].double().numpy()
    assert env.expected_reward([0, 1]) == pytest.approx(1 - (1 - mu[0]) * (1 - mu[1]))
    best, value = env.optimal_super_arm()
    assert set(best.tolist()) == set(np.argsort(-mu)[:2].tolist())
    assert value == pytest.approx(
        max(env.expected_reward([i, j]) for i in range(6) for j in range(6) if i != j)
    )


def test_the_instance_is_kept_across_autoresets_and_redrawn_on_reset():
    venv = gym.make_vec(
        "OffCMAB-KPath-v0", num_envs=3, vectorization_mode="vector_entry_point", horizon=2
    )
    venv.reset(seed=0)
    mu = venv.params["mu"].clone()
    for _ in range(5):
        venv.step(torch.zeros(3, 1, dtype=torch.int64))
    assert torch.equal(venv.params["mu"], mu)
    venv.reset(seed=100)
    single = gym.make("OffCMAB-KPath-v0")
    single.reset(seed=101)
    assert torch.equal(single.unwrapped.params["mu"][0], venv.params["mu"][1])


def test_vector_env_evaluation_helpers_are_batched():
    venv = gym.make_vec("OffCMAB-LLMCache-v0", num_envs=4, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    ids, value = venv.optimal_super_arm()
    assert ids.shape == (4, 40)
    torch.testing.assert_close(venv.expected_reward(ids), value)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize(
    "env_id",
    ["OffCMAB-Cascade-v0", "OffCMAB-LLMCache-v0", "OffCMAB-InfluenceMax-v0", "OffCMAB-KPath-v0"],
)
def test_cuda_instances_match_the_cpu_in_distribution_and_parameters(env_id):
    kwargs = {"num_envs": 64, "vectorization_mode": "vector_entry_point"}
    cpu = gym.make_vec(env_id, device="cpu", **kwargs)
    gpu = gym.make_vec(env_id, device="cuda", **kwargs)
    cpu.reset(seed=0)
    gpu.reset(seed=0)
    for name, value in cpu.params.items():
        torch.testing.assert_close(gpu.params[name].cpu(), value)
    ids, _ = cpu.optimal_super_arm()
    action = cpu.encode(ids)
    for _ in range(20):
        _, reward_c, *_ = cpu.step(action)
        obs_g, reward_g, *_ = gpu.step(action.cuda())
        assert obs_g.device.type == "cuda"
        torch.testing.assert_close(reward_g.cpu(), reward_c)  # counter-based RNG: same draws
