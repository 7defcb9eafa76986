"""Hostile and careless input: each case is silently wrong, gameable or loses work without its fix.

Every test drives the real code path with the bad input and asserts the documented outcome: a
one-line error naming the field (raised before any state changes), or the safe behaviour.
"""

from __future__ import annotations

import gymnasium as gym
import pytest

import gymforge  # noqa: F401 - registers the ids

# --- datasets bound to their instance ------------------------------------------------------


@pytest.fixture(scope="module")
def cascade_seed7(tmp_path_factory):
    from gymforge.envs.cmab.collect import collect

    return collect("OffCMAB-Cascade-v0", "uniform", 200, tmp_path_factory.mktemp("d") / "d", seed=7)


def test_faults__dataset_of_another_instance_is_refused_naming_both(cascade_seed7):
    from gymforge.agents.cmab.agent import OfflineAgent

    env = gym.make("OffCMAB-Cascade-v0")
    env.reset(seed=0)
    agent = OfflineAgent(env)
    with pytest.raises(ValueError, match=r"seed 7 .*seed 0") as error:
        agent.fit(cascade_seed7)
    assert "reset the env with seed=7" in str(error.value)
    assert agent.super_arm is None  # nothing learned


def test_faults__dataset_checked_again_when_the_env_moves_to_another_instance(cascade_seed7):
    from gymforge.agents.cmab.agent import OfflineAgent

    env = gym.make("OffCMAB-Cascade-v0")
    agent = OfflineAgent(env)
    agent.fit(cascade_seed7)  # no instance chosen yet: accepted
    obs, info = env.reset(seed=7)
    agent.act(obs, info)  # the logged instance
    obs, info = env.reset(seed=1)
    with pytest.raises(ValueError, match=r"instance of seed 7 .*instance of seed 1"):
        agent.act(obs, info)


# --- non-finite input never poisons state --------------------------------------------------


def _rmdn_batch(n: int = 16, d: int = 6, seed: int = 0):
    import torch

    from gymforge.agents.confounders.rmdn import design_matrix

    g = torch.Generator().manual_seed(seed)
    y, c = torch.randint(0, 2, (n,), generator=g), torch.randn(n, generator=g)
    return torch.randn(n, d, generator=g) + c[:, None], design_matrix(y, c)


@pytest.mark.parametrize("dtype", ["float32", "float64"])  # NumPy and torch update paths
@pytest.mark.parametrize("where", ["x", "design"])
def test_faults__rmdn_skips_a_nonfinite_batch_and_stays_clean(dtype, where):
    import torch

    from gymforge.agents.confounders.rmdn import RecursiveMetadataNorm

    layer = RecursiveMetadataNorm(6).to(getattr(torch, dtype))
    x, design = _rmdn_batch()
    x, design = x.to(layer.beta.dtype), design.to(layer.beta.dtype)
    layer(x, design)
    beta, p = layer.beta.clone(), layer.P.clone()
    bad_x, bad_design = x.clone(), design.clone()
    (bad_x if where == "x" else bad_design)[3, 1] = float("nan")
    layer(bad_x, bad_design)
    layer.update(bad_x, bad_design)
    assert torch.equal(layer.beta, beta) and torch.equal(layer.P, p)
    assert layer.skipped_batches == 2
    clean = layer(*[t.to(layer.beta.dtype) for t in _rmdn_batch(seed=1)])
    assert torch.isfinite(clean).all() and torch.isfinite(layer.beta).all()


def test_faults__rmdn_raise_option_raises_before_changing_state():
    import torch

    from gymforge.agents.confounders.rmdn import RecursiveMetadataNorm

    layer = RecursiveMetadataNorm(6, nonfinite="raise")
    x, design = _rmdn_batch()
    x[0, 0] = float("inf")
    beta, p = layer.beta.clone(), layer.P.clone()
    with pytest.raises(ValueError, match="R-MDN batch holds NaN or inf"):
        layer(x, design)
    assert torch.equal(layer.beta, beta) and torch.equal(layer.P, p)
    with pytest.raises(ValueError, match=r"nonfinite must be one of \('skip', 'raise'\)"):
        RecursiveMetadataNorm(6, nonfinite="ignore")


def test_faults__baseline_norm_statistics_skip_a_nonfinite_batch():
    import torch

    from gymforge.baselines.confounders.norms import BatchNormLayer, MetadataNorm

    x, design = _rmdn_batch()
    bn = BatchNormLayer((6,))
    bn(x)
    mdn = MetadataNorm(6)
    mdn.set_training_design(design)
    mdn(x, design)
    saved = [t.clone() for t in (bn.bn.running_mean, bn.bn.running_var, mdn.beta)]
    bad = x.clone()
    bad[2, 2] = float("nan")
    bn(bad)
    mdn(bad, design)
    for now, before in zip((bn.bn.running_mean, bn.bn.running_var, mdn.beta), saved, strict=True):
        assert torch.equal(now, before)
    bn.eval()
    mdn.eval()
    assert torch.isfinite(bn(x)).all() and torch.isfinite(mdn(x, design)).all()
