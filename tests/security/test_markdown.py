"""Submitter text in the generated Markdown is plain text: no HTML, links, images or new cells.

A row's name, method, authors and agent reach ``LEADERBOARD.md`` and ``LEADERBOARDS.md``; the
rows here are built by hand (as a stored record could be) and rendered with the real renderers,
then parsed with a CommonMark parser (tables on, raw HTML on) to see what a reader would get.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest

from gymforge.leaderboards.board import Board, Row
from gymforge.leaderboards.files import write_json_atomic
from gymforge.leaderboards.markup import md_code, md_text
from gymforge.leaderboards.protocol import load_protocol
from gymforge.leaderboards.render import render_markdown, render_overview
from tests.leaderboards.leaderboard_helpers import TASK, meta, protocol_data

PAYLOADS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "![x](http://evil.example/pixel.png)",
    "[click](javascript:alert(1))",
    "<javascript:alert(1)>",
    "see http://evil.example and www.evil.example",
    "**bold** _em_ ~~gone~~ `code`",
    "&#x202E;&lt;b&gt;",
    "back\\slash \\<b>",
]


def _board(tmp_path: Path, name: str, **fields: Any) -> Board:
    """A board with one hand-built row named ``name`` (the rest of its metadata in ``fields``)."""
    data = protocol_data()
    data["normalisation"]["random"]["score"] = 0.0
    data["normalisation"]["reference"]["score"] = 1.0
    write_json_atomic(tmp_path / "protocols" / f"{TASK}.json", data)
    protocol = load_protocol(tmp_path, TASK)
    agent = fields.pop("agent", {"kind": "entry_point", "entry_point": "pkg.mod:Agent"})
    submission = {
        "id": "20261207-row",
        "submitted": "2026-12-07T12:00:00Z",
        "meta": meta(name, **fields),
        "agent": {**agent, "sha256": "0" * 64},
    }
    aggregate = {"mean": 1.5, "std": 0.5, "ci95": [1.0, 2.0], "median": 1.5, "iqm": 1.5, "n": 3}
    results = {"aggregate": {**aggregate, "normalised": 1.5}, "protocol": {"version": 1}}
    row = Row(id="20261207-row", submission=submission, results=results, folder=tmp_path)
    return Board(protocol=protocol, rows=[row])


def _table_rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("| 1 |")]


def _parse(markdown: str) -> str:
    """The HTML of the table bodies of ``markdown`` (where submitter text goes) as a CommonMark
    parser with GitHub's tables and strikethrough, and raw HTML allowed, renders them."""
    markdown_it = pytest.importorskip("markdown_it")
    parser = markdown_it.MarkdownIt("commonmark", {"html": True})
    rendered = parser.enable(["table", "strikethrough"]).render(markdown)
    return "".join(re.findall(r"<tbody>.*?</tbody>", rendered, re.S))


@pytest.mark.parametrize("payload", PAYLOADS)
def test_security__markdown_board_shows_submitter_text_as_text(
    tmp_path: Path, payload: str
) -> None:
    board = _board(tmp_path, payload, method=payload, authors=[payload, "Ada"])
    markdown = render_markdown(board).decode()
    (row,) = _table_rows(markdown)
    assert md_text(payload) in row
    assert not re.search(r"(?<!\\)[<>\[\]`!*_~&|]", md_text(payload))
    rendered = _parse(markdown)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", rendered)
    assert len(cells) == 12  # one row, every cell in place
    shown = html.escape(payload, quote=False).replace('"', "&quot;")
    assert cells[1] == f"{shown} (<code>20261207-row</code>)"
    assert cells[2] == shown
    assert cells[10] == f"{shown}; Ada"
    for tag in ("<script", "<img", "<em>", "<strong>", "<del>", "<s>"):
        assert tag not in rendered
    assert "<a " not in rendered


@pytest.mark.parametrize("payload", PAYLOADS)
def test_security__markdown_overview_shows_submitter_text_as_text(
    tmp_path: Path, payload: str
) -> None:
    overview = render_overview([_board(tmp_path, payload, method=payload)]).decode()
    rows = [line for line in overview.splitlines() if md_text(payload) in line]
    assert len(rows) == 2  # the row in "Every row", the method in "By method"
    rendered = _parse(overview)
    shown = html.escape(payload, quote=False).replace('"', "&quot;")
    assert rendered.count(f"<td>{shown}</td>") == 2
    for tag in ("<script", "<img", "<em>", "<strong>", "<del>", "<s>"):
        assert tag not in rendered
    assert re.findall("<a [^>]*>", rendered) == [f'<a href="{TASK}/LEADERBOARD.md">']


@pytest.mark.parametrize("name", ["one | two", "line\nbreak", "cr\r\nlf", "a \\| b"])
def test_security__pipes_and_newlines_keep_the_table_one_row(tmp_path: Path, name: str) -> None:
    markdown = render_markdown(_board(tmp_path, name, method=name)).decode()
    (row,) = _table_rows(markdown)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", _parse(markdown))
    assert len(cells) == 12
    assert cells[2] == html.escape(" ".join(name.split()) if "\n" in name else name)
    assert len(re.findall(r"(?<!\\)\|", row)) == 13  # the 12 cells' borders only


def test_security__agent_code_span_cannot_be_closed_early(tmp_path: Path) -> None:
    """An artifact name with backticks stays inside its code span."""
    agent = {"kind": "torchscript", "artifact": "policy/x`<img src=x onerror=alert(1)>`|.pt"}
    markdown = render_markdown(_board(tmp_path, "row", agent=agent)).decode()
    rendered = _parse(markdown)
    assert "<img" not in rendered
    assert "<code>torchscript policy/x`&lt;img src=x onerror=alert(1)&gt;`|.pt</code>" in rendered


def test_security__plain_text_is_written_as_before() -> None:
    """Names without markup characters come out byte for byte (the stored boards stay as
    rendered): letters, digits, spaces, ``( ) : - . , = /``, non-ASCII and intraword ``_``."""
    for text in [
        "Q-Mamba (greedy, β = 0.03)",
        "Reference: ppo_expert",
        "reference agent ppo_expert_agent",
    ]:
        assert md_text(text) == text
    assert md_code("pkg.mod:Agent") == "`pkg.mod:Agent`"
    assert md_text("_lead") == "\\_lead" and md_text("tail_") == "tail\\_"


@pytest.mark.parametrize(
    "text", ['=HYPERLINK("http://evil","x")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd"]
)
def test_csv_cells_that_a_spreadsheet_would_run_are_quoted(text):
    from gymforge.leaderboards.render import csv_cell

    assert csv_cell(text) == "'" + text
    assert csv_cell("Random baseline") == "Random baseline"
    assert csv_cell(-2.67) == "-2.67" and csv_cell(None) == ""
