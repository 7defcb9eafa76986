"""Hostile and careless input: each case is silently wrong, gameable or loses work without its fix.

Every test drives the real code path with the bad input and asserts the documented outcome: a
one-line error naming the field (raised before any state changes), or the safe behaviour.
"""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
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


# --- errors before work ----------------------------------------------------------------------


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("gymforge: error: ") and len(err.splitlines()) == 1, err
    return err


def test_faults__unwritable_evaluate_out_fails_before_evaluating(capsys):
    from gymforge.cli import main

    argv = ["evaluate", "--protocol", "lineflow/WaitingTime", "--agent", "random"]
    assert main([*argv, "--out", "/sys/results.json", "--quiet"]) == 2
    assert "--out: cannot write in /sys" in _one_line_error(capsys)


def test_faults__demo_checks_its_output_folder_and_device_before_training():
    from gymforge.demo import main

    with pytest.raises(SystemExit, match="demo: --out: cannot write in /sys"):
        main(["--out", "/sys/demo_output", "--timesteps", "1"])
    with pytest.raises(SystemExit, match="demo: --device must be one of"):
        main(["--device", "tpu", "--timesteps", "1"])


def test_faults__unwritable_train_out_fails_before_training(tmp_path, capsys):
    from gymforge.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    argv = ["train", "Probe-Match-v0", "--algo", "ppo", "--steps", "64"]
    assert main([*argv, "--out", str(blocker / "run")]) == 2
    assert f"--out: {blocker} is not a folder" in _one_line_error(capsys)


@pytest.mark.parametrize("device", ["tpu", "cuda", "mps", "cuda:99"])
def test_faults__unusable_device_is_one_line_naming_the_allowed_ones(device):
    import torch

    usable = {"cuda": torch.cuda.is_available(), "mps": torch.backends.mps.is_available()}
    if usable.get(device):
        pytest.skip(f"{device} is usable on this machine")
    with pytest.raises(ValueError, match="allowed here: cpu") as error:
        gym.make_vec(
            "LineFlow-WaitingTime-v0", num_envs=2, vectorization_mode="vector_entry_point",
            device=device,
        )  # fmt: skip
    assert len(str(error.value).splitlines()) == 1 and repr(device) in str(error.value)


def test_faults__rollout_num_envs_zero_is_an_error(capsys):
    from gymforge.cli import main

    assert main(["rollout", "LineFlow-WaitingTime-v0", "--num-envs", "0"]) == 2
    assert "--num-envs must be an int >= 1, got 0" in _one_line_error(capsys)


def test_faults__train_on_a_multi_agent_id_names_make_parallel(capsys):
    from gymforge.cli import main

    assert main(["train", "MinMax-Bilinear-v0", "--algo", "ppo", "--steps", "10"]) == 2
    assert "gymforge.make_parallel('MinMax-Bilinear-v0')" in _one_line_error(capsys)


def test_faults__sb3_step_rounding_is_announced(tmp_path, capsys):
    from gymforge.cli import main

    config = tmp_path / "small.yaml"
    config.write_text("version: 1\nn_envs: 2\nalgos:\n  ppo: {n_steps: 8, batch_size: 16}\n")
    argv = ["train", "Probe-Match-v0", "--algo", "ppo", "--steps", "20", "--config", str(config)]
    assert main([*argv, "--out", str(tmp_path / "run"), "--eval-every", "0"]) == 0
    err = capsys.readouterr().err
    assert "n_steps x n_envs = 8 x 2 = 16 steps, so 20 steps train 32" in err


@pytest.mark.parametrize("env_id", ["LineFlow-WaitingTime-v0", "OffCMAB-Cascade-v0", "MetaBBO-v0"])
def test_faults__reset_accepts_a_numpy_integer_seed(env_id):
    env = gym.make(env_id)
    first, _ = env.reset(seed=np.int64(3))
    again, _ = env.reset(seed=3)
    np.testing.assert_array_equal(first, again)


@pytest.fixture
def broken_models(tmp_path):
    """A SB3 model with half its policy.pth, and a zip whose 'data' is not JSON."""
    import zipfile
    from pathlib import Path

    source = Path(__file__).resolve().parents[1] / "baselines" / "models"
    source = source / "LineFlow-WaitingTimeJump-v0" / "ppo-seed42" / "model.zip"
    truncated, bad_json = tmp_path / "truncated.zip", tmp_path / "bad_json.zip"
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(truncated, "w") as out:
        for info in archive.infolist():
            data = archive.read(info.filename)
            out.writestr(
                info.filename, data[: len(data) // 2] if info.filename == "policy.pth" else data
            )
    with zipfile.ZipFile(bad_json, "w") as out:
        out.writestr("data", "{not json")
        out.writestr("policy.pth", b"")
    return truncated, bad_json


def test_faults__corrupt_models_in_evaluate_are_one_line(broken_models, tmp_path, capsys):
    from gymforge.cli import main

    truncated, bad_json = broken_models
    argv = ["evaluate", "--protocol", "lineflow/WaitingTimeJump", "--quiet"]
    out = ["--out", str(tmp_path / "r.json")]
    assert main([*argv, "--agent", str(truncated), *out]) == 2
    error = _one_line_error(capsys)
    assert f"SB3 model {truncated}: 'policy.pth'" in error and "(truncated or corrupt" in error
    assert main([*argv, "--agent", str(bad_json), *out]) == 2
    assert f"--agent {bad_json}: the SB3 model's 'data' entry" in _one_line_error(capsys)
    assert not (tmp_path / "r.json").exists()


def test_faults__bad_sweep_hyperparameter_names_the_job_and_leaves_no_folder(tmp_path, capsys):
    from gymforge.cli import main

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "version: 1\nname: bad-lr\ntasks: [Probe-Match-v0]\nalgos: [ppo]\nseeds: [0]\n"
        "steps: 64\ngrid:\n  learning_rate: [0.001, -1.0]\n"
    )
    out = tmp_path / "sweeps" / "bad-lr"
    assert main(["sweep", str(sweep), "--out", str(out)]) == 2
    err = _one_line_error(capsys)
    assert "sweep job 0001-Probe-Match-v0-ppo-s0" in err and "learning_rate" in err
    assert not out.exists()


@pytest.mark.parametrize("env_id", ["OffCMAB-Cascade-v0", "OffCMAB-KPath-v0"])
def test_faults__expected_reward_takes_the_optimal_pair(env_id):
    env = gym.make(env_id)
    env.reset(seed=0)
    _ids, value = env.unwrapped.optimal_super_arm()
    assert env.unwrapped.expected_reward(env.unwrapped.optimal_super_arm()) == pytest.approx(value)
    venv = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    best = venv.optimal_super_arm()
    assert np.allclose(venv.expected_reward(best).numpy(), best[1].numpy())


def test_faults__list_into_a_closed_pipe_exits_quietly(monkeypatch, capsys):
    import io
    import sys

    from gymforge.cli import main

    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:  # the real stdout's descriptor, redirected to /dev/null
            return sys.__stdout__.fileno()

    saved = os.dup(sys.__stdout__.fileno())
    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    try:
        assert main(["list", "--json"]) == 141
    finally:
        os.dup2(saved, sys.__stdout__.fileno())
        os.close(saved)
    assert "Traceback" not in capsys.readouterr().err


# --- faults survived ---------------------------------------------------------------------------


def _train_argv(out, steps: int, config) -> list[str]:
    return ["train", "Probe-Match-v0", "--algo", "ppo", "--steps", str(steps),
            "--config", str(config), "--out", str(out), "--eval-every", "0"]  # fmt: skip


@pytest.fixture
def small_config(tmp_path):
    config = tmp_path / "small.yaml"
    config.write_text("version: 1\nn_envs: 2\nalgos:\n  ppo: {n_steps: 8, batch_size: 16}\n")
    return config


def test_faults__ctrl_c_in_train_prints_the_resume_command(tmp_path, small_config):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    argv = _train_argv(out, 10**9, small_config)
    code = "import sys; from gymforge.cli import main; sys.exit(main(sys.argv[1:]))"
    process = subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        stderr=subprocess.PIPE,
        text=True,
        # (a shell's background job starts with SIGINT ignored, which Python then keeps)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    while not out.exists() and process.poll() is None:  # training has started
        time.sleep(0.05)
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert (
        f"gymforge: interrupted; resume with: gymforge train Probe-Match-v0 --algo ppo "
        f"--steps {10**9} --resume {out}" in err
    )


def test_faults__os_error_mid_command_is_one_line(capsys, monkeypatch):
    import gymforge.envs.cmab.collect as collect
    from gymforge.cli import main

    argv = ["dataset", "collect", "OffCMAB-Cascade-v0", "--logging", "uniform", "--n", "10"]
    argv.append("--quiet")  # (the error is the only line on stderr)
    # an unwritable --out is refused before any work, naming the option
    assert main([*argv, "--out", "/sys/gymforge-data"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gymforge: error: --out: ") and len(err.splitlines()) == 1

    def fail(path, *args, **kwargs):
        raise OSError(5, "Input/output error", str(path))

    monkeypatch.setattr(collect, "write_dataset", fail)  # the disk fails after the check
    assert main([*argv, "--out", "/tmp/gymforge-never-written"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("gymforge: error: ") and len(err.splitlines()) == 1
    assert ": /tmp/gymforge-never-written" in err and "run the command again" in err


def test_faults__resume_falls_back_past_corrupt_artifacts(tmp_path, small_config, capsys):
    from gymforge.cli import main

    out = tmp_path / "run"
    assert main([*_train_argv(out, 48, small_config), "--checkpoint-every", "16"]) == 0
    final = out / "model.zip"
    final.write_bytes(final.read_bytes()[:200])  # truncated final model
    newest = sorted((out / "checkpoints").glob("step_*"), key=lambda p: int(p.name[5:]))[-1]
    (newest / "config.json").write_text('{"steps": ')  # corrupt newest checkpoint
    capsys.readouterr()
    assert main(["train", "Probe-Match-v0", "--algo", "ppo", "--steps", "64",
                 "--resume", str(out)]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert f"--resume: skipping {final}: corrupt or truncated" in err
    assert f"--resume: skipping {newest / 'config.json'}: corrupt or truncated JSON" in err


def test_faults__sharded_env_refuses_copies_and_stays_usable():
    import copy
    import pickle

    env = gym.make_vec(
        "LineFlow-WaitingTime-v0", num_envs=4, vectorization_mode="vector_entry_point",
        num_workers=2,
    )  # fmt: skip
    try:
        env.reset(seed=0)
        for attempt in (copy.deepcopy, pickle.dumps, copy.copy):
            with pytest.raises(TypeError, match=r"num_workers=2\) cannot be copied or pickled"):
                attempt(env)
        action = np.zeros((4, *env.single_action_space.shape), dtype=np.int64)
        obs, *_ = env.step(action)
        assert obs.shape[0] == 4
    finally:
        env.close()


def test_faults__buffer_capacity_has_an_upper_bound():
    from gymforge.envs.lineflow import LineBuilder
    from gymforge.envs.lineflow.spec import MAX_BUFFER_CAPACITY

    line = LineBuilder("huge")
    line.source("S", processing_time=2, unlimited_carriers=True, waiting_time_step=1)
    line.sink("Sink", processing_time=1)
    with pytest.raises(
        ValueError, match=rf"capacity must be an int in \[1, {MAX_BUFFER_CAPACITY}\]"
    ):
        line.connect("S", "Sink", capacity=10**9)
    line.connect("S", "Sink", capacity=MAX_BUFFER_CAPACITY)
    assert line.build()
