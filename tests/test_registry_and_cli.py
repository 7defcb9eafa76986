"""The registry reaches Gymnasium, and the CLI enumerates it."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

import gymforge.ids
from gymforge import registry
from gymforge.cli import main
from gymforge.registry import all_specs, get_spec, load_entry_point, make_parallel


def test_registry__gymforge_prefix_works_without_a_prior_import():
    code = "import gymnasium as gym; env = gym.make('gymforge:LineFlow-v0'); print(env.spec.id)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "LineFlow-v0"


@pytest.mark.parametrize("spec", all_specs(), ids=[s.id for s in all_specs()])
def test_registry__every_row_is_registered_and_its_entry_points_load(spec):
    assert spec.id in gym.registry
    if spec.capabilities.multi_agent:  # (registered only to point at make_parallel)
        with pytest.raises(gym.error.Error, match=r"gymforge\.make_parallel"):
            gym.make(spec.id)
    entries = (
        spec.entry_point,
        spec.vector_entry_point,
        spec.parallel_entry_point,
        spec.batched_parallel_entry_point,
        spec.dataset_collector,
        *spec.agents.values(),
    )
    for entry in entries:
        if entry is not None:
            assert callable(load_entry_point(entry))
    assert (spec.parallel_entry_point is not None) == spec.capabilities.multi_agent
    assert spec.batched_parallel_entry_point is None or spec.capabilities.multi_agent
    assert (spec.dataset_collector is not None) <= spec.capabilities.offline_dataset


def test_registry__import_registers_every_id_without_loading_torch():
    code = "import sys, gymforge; print(len(gymforge.all_specs()), 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, torch_loaded = out.stdout.split()
    assert int(count) == len(all_specs()) and torch_loaded == "False"


def test_registry__an_id_declared_twice_is_refused(tmp_path, monkeypatch):
    (tmp_path / "zz_duplicate.py").write_text(
        "from gymforge.spec import EnvSpec\n"
        "SPECS = (EnvSpec(id='LineFlow-v0', family='x', summary='dup', entry_point=None),)\n"
    )
    monkeypatch.setattr(gymforge.ids, "__path__", [*gymforge.ids.__path__, str(tmp_path)])
    with pytest.raises(RuntimeError, match="'LineFlow-v0' is declared twice"):
        registry._collect_specs()


def test_registry__make_parallel_refuses_single_agent_ids():
    with pytest.raises(ValueError, match="not a multi-agent id"):
        make_parallel("LineFlow-v0")


def test_registry__unknown_ids_suggest_the_closest_ones_not_all():
    with pytest.raises(ValueError, match="did you mean 'LineFlow-v0'") as error:
        get_spec("LineFlow-v9")
    assert "gymforge list" in str(error.value) and "MetaBBO" not in str(error.value)


def test_cli__list_json_enumerates_the_registry(capsys):
    assert main(["list", "--json"]) == 0
    listed = [row["id"] for row in json.loads(capsys.readouterr().out)]
    assert listed == [s.id for s in all_specs()]


def test_cli__rollout_json_reports_returns(capsys):
    assert (
        main(
            [
                "rollout",
                "LineFlow-WaitingTime-v0",
                "--agent",
                "optimal",
                "--episodes",
                "2",
                "--seed",
                "0",
                "--json",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["seeds"] == [0, 1]
    assert len(result["returns"]) == 2 and result["lengths"] == [4000, 4000]
    assert result["mean_return"] == pytest.approx(sum(result["returns"]) / 2)
    assert 150 <= result["mean_return"] <= 165
    assert "steps_per_second" in result  # (a measurement: benchmarks/ time it, tests do not)


def test_cli__rollout_text_prints_each_episode(capsys):
    assert main(["rollout", "Probe-Match-v0", "--episodes", "3", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert out.count("seed") == 3 and "mean return" in out and "steps/s" in out


def test_cli__unknown_agent_is_a_clear_error(capsys):
    assert main(["rollout", "Probe-Match-v0", "--agent", "optimal"]) == 2
    assert "agent must be one of ['random']" in capsys.readouterr().err


def test_cli__info_shows_spaces_and_docs(capsys):
    assert main(["info", "LineFlow-WaitingTime-v0"]) == 0
    out = capsys.readouterr().out
    assert "MultiDiscrete([100])" in out and "## Observation Space" in out


def test_cli__rollout_records_an_animation(tmp_path, capsys):
    from PIL import Image

    path = tmp_path / "wt.gif"
    assert (
        main(
            [
                "rollout",
                "LineFlow-WaitingTime-v0",
                "--agent",
                "optimal",
                "--record",
                str(path),
                "--record-every",
                "400",
            ]
        )
        == 0
    )
    assert f"recording written to {path}" in capsys.readouterr().out
    with Image.open(path) as gif:
        assert gif.size == (960, 540) and gif.n_frames > 1


def test_cli__record_rejects_unsupported_files_before_running(tmp_path, capsys):
    assert main(["rollout", "LineFlow-WaitingTime-v0", "--record", str(tmp_path / "x.avi")]) == 2
    assert "--record file must end in one of" in capsys.readouterr().err
    assert main(["rollout", "Probe-Match-v0", "--record", str(tmp_path / "x.gif")]) == 2
    assert "render mode 'rgb_array'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_cli__batched_rollout_runs_every_instance_for_its_episodes(capsys):
    assert main(["rollout", "Probe-Match-v0", "--num-envs", "16", "--episodes", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["num_envs"] == 16 and len(result["returns"]) == 32
    assert result["seeds"] == list(range(16))


def test_cli__batched_rollout_over_worker_processes_equals_one_process(capsys):
    args = ["rollout", "Probe-Match-v0", "--num-envs", "6", "--episodes", "2", "--json"]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main([*args, "--num-workers", "2"]) == 0
    sharded = json.loads(capsys.readouterr().out)
    assert sharded["num_workers"] == 2 and plain["num_workers"] == 1
    assert (sharded["returns"], sharded["lengths"]) == (plain["returns"], plain["lengths"])


@pytest.mark.slow
def test_cli__batched_rollout_of_a_lineflow_controller(capsys):
    args = ["rollout", "LineFlow-WaitingTime-v0", "--agent", "optimal", "--num-envs", "4", "--json"]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["lengths"] == [4000] * 4
    assert 150 <= result["mean_return"] <= 165


def test_cli__batched_rollout_of_a_pettingzoo_id_points_to_make_parallel(capsys):
    assert main(["rollout", "MinMax-Bilinear-v0", "--num-envs", "2"]) == 2
    assert "gymforge.make_parallel('MinMax-Bilinear-v0', num_envs=B" in capsys.readouterr().err


def test_cli__dataset_collect_needs_a_single_agent_id(capsys):
    assert main(["dataset", "collect", "MinMax-Bilinear-v0", "--n", "3"]) == 2
    assert "is a PettingZoo id" in capsys.readouterr().err


def test_cli__dataset_info_checks_the_checksum(tmp_path, capsys):
    import numpy as np

    from gymforge.core.datasets import write_dataset

    path = write_dataset(tmp_path / "d", {"x": np.arange(3)}, {"env_id": "X-v0"})
    assert main(["dataset", "info", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["env_id"] == "X-v0"
    (path / "data.npz").write_bytes(b"not the data")
    assert main(["dataset", "info", str(path)]) == 2
    assert "checksum mismatch" in capsys.readouterr().err


def test_cli__train_with_an_unknown_algorithm_lists_the_allowed_ones(capsys):
    assert main(["train", "LineFlow-v0", "--algo", "no-such-algo"]) == 2
    assert "unknown --algo 'no-such-algo'; allowed:" in capsys.readouterr().err


def test_cli__train_help_needs_no_id_and_a_missing_id_is_named(capsys):
    assert main(["train", "--help"]) == 0
    assert "--algo" in capsys.readouterr().out
    assert main(["train", "--algo", "ppo"]) == 2
    assert "an id is required" in capsys.readouterr().err
