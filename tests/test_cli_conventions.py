"""The command line's rough edges: help text on every option without markup, --help on every
subcommand, --version, "did you mean", saved agents in rollout, one collector vocabulary."""

from __future__ import annotations

import argparse
import json
from importlib.metadata import version

import gymnasium as gym
import pytest

from gymforge.baselines import stored_model
from gymforge.cli import build_parser, main
from gymforge.commands.train import TRAINERS
from gymforge.registry import all_specs, load_entry_point


class _CapturedError(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _capture(monkeypatch, call) -> argparse.ArgumentParser:
    """The parser that ``call()`` builds and parses with (its parse is interrupted)."""

    def parse(self, *args, **kwargs):
        raise _CapturedError(self)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", parse)
    with pytest.raises(_CapturedError) as caught:
        call()
    return caught.value.parser


def _walk(parser: argparse.ArgumentParser, name: str):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _walk(sub, f"{name} {sub_name}")


def _problems(name: str, parser: argparse.ArgumentParser) -> list[str]:
    found = []
    if "`" in (parser.description or ""):
        found.append(f"{name}: markup in the description")
    for action in parser._actions:
        if isinstance(
            action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
        ):
            continue  # (a subcommand's help is checked on its own parser)
        option = "/".join(action.option_strings) or action.dest
        if not action.help:
            found.append(f"{name} {option}: no help")
        elif "`" in action.help:
            found.append(f"{name} {option}: markup in the help")
    return found


def _parsers(monkeypatch):
    yield from _walk(build_parser(), "gymforge")
    for algo, entry in TRAINERS.items():
        env_id = "MetaBBO-v0" if algo == "qmamba" else "LineFlow-v0"
        trainer = load_entry_point(entry)
        yield f"train --algo {algo}", _capture(monkeypatch, lambda t=trainer, e=env_id: t(e, []))
    from gymforge.baselines.ondevice.cli import run_cli

    yield "train --backend torch", _capture(monkeypatch, lambda: run_cli("LineFlow-v0", "ppo", []))
    for spec in all_specs():
        if spec.dataset_collector:
            collect = load_entry_point(spec.dataset_collector)
            yield (
                f"dataset collect {spec.id}",
                _capture(monkeypatch, lambda c=collect, s=spec: c(s.id, [])),
            )


def test_every_option_has_help_and_no_help_shows_markup(monkeypatch):
    problems = [p for name, parser in _parsers(monkeypatch) for p in _problems(name, parser)]
    assert not problems, "\n".join(problems)


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name)
                yield from _subcommands(sub, (*path, name))


@pytest.mark.parametrize("path", list(_subcommands(build_parser())), ids=" ".join)
def test_every_subcommand_help_works_without_positional_arguments(path, capsys):
    try:
        code = main([*path, "--help"])
    except SystemExit as stop:
        code = stop.code
    assert code == 0
    assert "usage: gymforge" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"gymforge {version('gymforge')}"


def test_unknown_ids_and_agents_get_a_did_you_mean(capsys):
    assert main(["info", "LineFlow-WaitingTme-v0"]) == 2
    assert "did you mean 'LineFlow-WaitingTime-v0'" in capsys.readouterr().err
    assert main(["rollout", "LineFlow-WaitingTime-v0", "--agent", "optimla"]) == 2
    assert "did you mean 'optimal'?" in capsys.readouterr().err


def test_gym_make_on_a_pettingzoo_id_points_at_make_parallel():
    with pytest.raises(gym.error.Error, match=r"gymforge\.make_parallel\('MinMax-Bilinear-v0'\)"):
        gym.make("MinMax-Bilinear-v0")


def test_rollout_takes_a_stored_model_zip_like_evaluate(capsys):
    model = stored_model("LineFlow-WaitingTime-v0", "ppo-seed11")
    assert main(["rollout", "LineFlow-WaitingTime-v0", "--agent", str(model), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["agent"] == str(model) and result["lengths"] == [4000]
    assert result["mean_return"] > 120  # (a trained policy; random scores about 68)


def test_collectors_share_the_agent_and_n_flags(tmp_path, capsys):
    out = tmp_path / "cascade"
    argv = ["dataset", "collect", "OffCMAB-Cascade-v0", "--agent", "uniform", "--n", "50"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "50 uniform plays" in capsys.readouterr().out
    metabbo = ["dataset", "collect", "MetaBBO-v0", "--mix", "0.5", "--n", "2"]
    tiny = ["--max-generations", "3", "--dimension", "2", "--population-size", "6"]
    assert main([*metabbo, *tiny, "--out", str(tmp_path / "bbo")]) == 0
    assert "2 episodes" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["rollut"], "unknown command 'rollut'; did you mean 'rollout'?"),
        (["info", "LineFlow-v9"], "did you mean 'LineFlow-v0'"),
        (
            ["evaluate", "--protocol", "lineflow/WaitngTime", "--agent", "random", "--out", "x"],
            "did you mean 'lineflow/WaitingTime'",
        ),
        (
            ["evaluate", "--protocol", "lineflow/WaitingTime", "--agent", "Optimal", "--out", "x"],
            "did you mean 'optimal'?",
        ),
    ],
)
def test_cli__typos_get_one_line_with_a_short_suggestion(argv, expected, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err
    assert "MetaBBO-v0" not in err  # a suggestion, never every id


def test_cli__a_missing_extra_is_one_line_naming_it(monkeypatch, capsys):
    from gymforge.core import extras

    def missing(args):
        extras.require("not_installed_module_xyz", "this command")

    def parser_with(command):
        import argparse

        from gymforge.cli import build_parser

        parser = build_parser()
        return parser, argparse.Namespace(func=command, passthrough=False)

    monkeypatch.setitem(extras.EXTRAS, "not_installed_module_xyz", "xyz")
    parser, namespace = parser_with(missing)
    monkeypatch.setattr("gymforge.cli.build_parser", lambda: parser)
    monkeypatch.setattr(parser, "parse_known_args", lambda argv: (namespace, []))
    assert main(["list"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "gymforge: error: this command needs not_installed_module_xyz, which is not installed: "
        "pip install 'gymforge[xyz]'"
    )
