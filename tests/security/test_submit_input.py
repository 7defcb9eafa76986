"""Hostile submission input is refused by ``submit`` before any evaluation, with nothing written.

Metadata must be plain text (no control characters, no bidi overrides, links only over
http(s)); the id must be ``YYYYMMDD-slug`` in full, with a real date and at most 64 characters;
the board must be writable. Each check runs before the (minutes-long) evaluation: the evaluator
is replaced by one that fails the test if it is ever called.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from gymforge.leaderboards import submission
from gymforge.leaderboards.files import write_json_atomic
from gymforge.leaderboards.submission import (
    SUBMISSION_SCHEMA,
    check_meta,
    check_submission_record,
    submit,
)
from tests.leaderboards.leaderboard_helpers import TASK, meta, protocol_data, tree


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A board root whose one protocol carries normalisation scores (calibrated by hand)."""
    data = protocol_data()
    data["normalisation"]["random"]["score"] = 0.0
    data["normalisation"]["reference"]["score"] = 1.0
    write_json_atomic(tmp_path / "protocols" / f"{TASK}.json", data)
    return tmp_path


@pytest.fixture(autouse=True)
def no_evaluation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any evaluation fails the test: every refusal here must come before it."""

    def evaluate(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the evaluation started before the input was refused")

    monkeypatch.setattr(submission, "evaluate", evaluate)


def _refused(root: Path, match: str, **kwargs: Any) -> None:
    """``submit`` raises ``ValueError`` matching ``match`` and leaves ``root`` as it was."""
    before = tree(root)
    arguments = {"agent_spec": "random", "meta": meta(), "submission_id": None, **kwargs}
    with pytest.raises(ValueError, match=match):
        submit(root, TASK, arguments.pop("agent_spec"), **arguments)
    assert tree(root) == before
    assert not (root / TASK).exists() and not (root / submission.STAGING_DIR).exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "nul\x00byte"),
        ("name", "\x1b[31mred\x1b[0m"),
        ("name", "evil\u202eexe.txt"),
        ("name", "two\nlines"),
        ("method", "tab\tseparated"),
        ("method", "isolate\u2066x\u2069"),
        ("method", "delete\x7f"),
        ("method", "c1\x85next line"),
        ("description", "escape \x1b]0;title\x07"),
        ("notes", "nul \x00"),
        ("license", "MIT\u2028Apache"),
        ("command", "python train.py\r\nrm -rf /"),
    ],
)
def test_security__control_characters_refused_naming_the_field(
    root: Path, field: str, value: str
) -> None:
    _refused(
        root,
        rf"metadata field '{field}' contains the control character",
        meta=meta(**{field: value}),
    )


def test_security__control_character_in_an_author_refused(root: Path) -> None:
    authors = ["Ada", "Mallory\x1b[2J"]
    _refused(
        root,
        "metadata field 'authors' contains the control character U\\+001B",
        meta={**meta(), "authors": authors},
    )


@pytest.mark.parametrize("field", ["code_url", "paper_url"])
@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JavaScript://%0aalert(1)",
        "data:text/html,<script>",
        "ftp://x.org/a",
        "example.org/code",
    ],
)
def test_security__non_http_links_refused(root: Path, field: str, url: str) -> None:
    _refused(
        root,
        rf"metadata field '{field}' must be an http:// or https:// URL",
        meta=meta(**{field: url}),
    )


def test_security__plain_metadata_still_accepted() -> None:
    accepted = meta(
        "Q-Mamba (greedy, β = 0.5)",
        description="line one\nline two\twith a tab",
        notes="see ppo_expert_agent",
        code_url="https://github.com/example/code",
        paper_url="http://arxiv.org/abs/2101.00001",
    )
    assert check_meta(accepted, "--meta") is accepted


@pytest.mark.parametrize(
    ("sid", "match"),
    [
        ("20261207-nl\n", "must look like YYYYMMDD-slug"),
        ("20261207-" + "x" * 291, "has 300 characters; at most 64"),
        ("99999999-x", "must start with a real date"),
        ("20260230-x", "must start with a real date"),
    ],
)
def test_security__bad_ids_refused_before_evaluation(root: Path, sid: str, match: str) -> None:
    _refused(root, match, submission_id=sid)


def test_security__default_id_of_a_long_name_fits(root: Path) -> None:
    """A long name's default id is cut to fit the 64-character bound (it would pass to the
    evaluation, which the fixture turns into the failure checked here)."""
    with pytest.raises(AssertionError, match="evaluation started"):
        submit(root, TASK, "random", meta("x" * 80))


@pytest.mark.parametrize("blocked", [f"{TASK}/submissions", submission.STAGING_DIR])
def test_security__unwritable_board_refused_before_evaluation(root: Path, blocked: str) -> None:
    """A file where the submissions or staging folder must go makes the board unwritable."""
    path = root / blocked
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not a folder")
    before = tree(root)
    with pytest.raises(ValueError, match=f"board {TASK}: .* is not a folder"):
        submit(root, TASK, "random", meta(), submission_id="20261207-blocked")
    assert tree(root) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_security__read_only_submissions_folder_refused_before_evaluation(root: Path) -> None:
    folder = root / TASK / "submissions"
    folder.mkdir(parents=True)
    folder.chmod(0o555)
    try:
        with pytest.raises(ValueError, match=f"board {TASK}: cannot write in"):
            submit(root, TASK, "random", meta(), submission_id="20261207-readonly")
    finally:
        folder.chmod(0o755)
    assert not any(folder.iterdir())


@pytest.mark.parametrize(
    ("spec", "match"), [("json:loads", "is not a registered agent"), ("os:system", "registered")]
)
def test_security__unregistered_entry_point_refused_before_evaluation(
    root: Path, spec: str, match: str
) -> None:
    _refused(root, match, agent_spec=spec, submission_id="20261207-code")


def _record(**changes: Any) -> dict[str, Any]:
    record = {
        "schema": SUBMISSION_SCHEMA,
        "task": TASK,
        "id": "20261207-row",
        "submitted": "2026-12-07T12:00:00Z",
        "meta": meta(),
        "agent": {"kind": "entry_point", "entry_point": "x:y", "sha256": "0" * 64},
        "results_sha256": "0" * 64,
        "files": {},
    }
    return {**record, **changes}


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"id": "20261207-nl\n"}, "must look like YYYYMMDD-slug"),
        ({"id": "99999999-x"}, "real date"),
        ({"submitted": "2026-12-07T12:00:00Z\n"}, "'submitted' must be a UTC time"),
        ({"meta": meta("\u202eevil")}, "metadata field 'name' contains the control character"),
    ],
)
def test_security__stored_records_checked_the_same_way(changes: dict[str, Any], match: str) -> None:
    """Verify and render read stored records through ``check_submission_record``: a record
    written by hand gets the same checks as one submitted."""
    record = _record(**changes)
    with pytest.raises(ValueError, match=match):
        check_submission_record(record, "submission.json", TASK, record["id"])
