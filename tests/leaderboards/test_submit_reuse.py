"""``submit --results`` reuses a checked ``evaluate`` output; ``submit --init-meta`` starts the
metadata file."""

from __future__ import annotations

import json

import pytest
from leaderboard_helpers import TASK, meta, small_root

from gymforge.cli import main
from gymforge.leaderboards import submission
from gymforge.leaderboards.submission import META_FIELDS, META_TEMPLATE, check_meta


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """A board and a ``gymforge evaluate`` output of the random agent on it."""
    root = small_root(tmp_path_factory.mktemp("board"))
    out = root.parent / "random.json"
    argv = ["evaluate", "--protocol", TASK, "--agent", "random", "--quiet", "--root", str(root)]
    assert main([*argv, "--out", str(out)]) == 0
    return root, out


def _submit(root, results, agent="random", *extra):
    meta_file = root.parent / "meta.json"
    meta_file.write_text(json.dumps(meta("Random")))
    argv = ["submit", "--protocol", TASK, "--agent", agent, "--meta", str(meta_file), "--quiet"]
    return main([*argv, "--root", str(root), "--results", str(results), *extra])


def test_submit__results_are_reused_without_evaluating(evaluated, tmp_path, monkeypatch):
    import shutil

    root = tmp_path / "board"
    shutil.copytree(evaluated[0], root)

    def never(*args, **kwargs):
        raise AssertionError("submit --results evaluated again")

    monkeypatch.setattr(submission, "evaluate", never)
    assert _submit(root, evaluated[1], "random", "--id", "20260101-random") == 0
    stored = json.loads(
        (root / TASK / "submissions" / "20260101-random" / "results.json").read_text()
    )
    assert stored["episodes"] == json.loads(evaluated[1].read_text())["episodes"]


def test_submit__results_of_another_agent_are_refused(evaluated, tmp_path, capsys):
    import shutil

    root = tmp_path / "board"
    shutil.copytree(evaluated[0], root)
    assert _submit(root, evaluated[1], agent="optimal") == 2
    assert "--results evaluated another agent" in capsys.readouterr().err
    assert not list(root.glob(f"{TASK}/submissions/*"))  # nothing stored


def test_submit__edited_results_are_refused(evaluated, tmp_path, capsys):
    import shutil

    root = tmp_path / "board"
    shutil.copytree(evaluated[0], root)
    forged = tmp_path / "forged.json"
    data = json.loads(evaluated[1].read_text())
    data["episodes"][0]["return"] += 50.0
    data["episodes"][0]["metric"] += 50.0
    forged.write_text(json.dumps(data))
    assert _submit(root, forged) == 2
    assert "edited episodes" in capsys.readouterr().err


def test_submit__init_meta_writes_a_template_that_checks(tmp_path, capsys):
    path = tmp_path / "submission.json"
    assert main(["submit", "--init-meta", str(path)]) == 0
    template = json.loads(path.read_text())
    assert template == META_TEMPLATE and set(template) == set(META_FIELDS)
    assert check_meta(template, "template") == template
    assert main(["submit", "--init-meta", str(path)]) == 2  # never over an existing file
    assert "exists" in capsys.readouterr().err


def test_submit__without_the_required_options_names_them(capsys):
    assert main(["submit", "--protocol", TASK]) == 2
    assert "submit needs --agent, --meta" in capsys.readouterr().err
