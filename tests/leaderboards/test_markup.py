"""The site's inline Markdown: known answers, and agreement with markdown-it-py (CommonMark).

markdown-it-py is an independent CommonMark implementation; on the subset the converter
supports (code spans, ``*``/``_`` emphasis and strong emphasis, backslash escapes, plain text)
both must give the same HTML, for the boards' own prose and for random strings of those marks.
"""

from __future__ import annotations

import random

import pytest

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.board import load_boards
from gymforge.leaderboards.markup import inline_html
from gymforge.leaderboards.render import LABEL, protocol_summary


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("run `gymforge submit` now", "run <code>gymforge submit</code> now"),
        ("a *b* c", "a <em>b</em> c"),
        ("a _b_ c", "a <em>b</em> c"),
        ("**strong** and __strong__", "<strong>strong</strong> and <strong>strong</strong>"),
        ("***both***", "<em><strong>both</strong></em>"),
        # underscores and stars inside words or before punctuation stay text
        ("env kwarg report_regret and e_T = f(best) - f_opt", None),
        ("k*gap = 0.5", None),
        ("r(S*; mu) - r(S_t; mu)", None),
        # ... but, as in CommonMark, two intra-word stars do pair up
        ("k*gap and S*;", "k<em>gap and S</em>;"),
        ("snake_case_name", None),
        # escaping: text and code span content, and no markup inside code spans
        ('<b>bold</b> & "quotes"', "&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quotes&quot;"),
        ("`<script>` & `*not em*`", "<code>&lt;script&gt;</code> &amp; <code>*not em*</code>"),
        ("``a ` b``", "<code>a ` b</code>"),
        ("`` `x` ``", "<code>`x`</code>"),
        ("an `unclosed code span", "an `unclosed code span"),
        ("\\*literal\\* star", "*literal* star"),
        ("*unclosed emphasis", "*unclosed emphasis"),
        ("*a `*` b*", "<em>a <code>*</code> b</em>"),
    ],
)
def test_markup__known_answers(text: str, expected: str | None) -> None:
    assert inline_html(text) == (text if expected is None else expected)


def _reference():
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py not installed")
    return markdown_it.MarkdownIt("commonmark", {"html": False})


def test_markup__matches_commonmark_on_the_boards_prose() -> None:
    reference = _reference()
    texts = [LABEL] + [s for board in load_boards(DEFAULT_ROOT) for s in protocol_summary(board)]
    assert any("`" in text for text in texts)
    for text in texts:
        assert inline_html(text) == reference.renderInline(text), text


def test_markup__matches_commonmark_on_random_strings_of_marks() -> None:
    reference = _reference()
    pieces = [*"ab *_`", "**", "__", " ", "<", '"', "'", ".", "(", ")", "\\", "−", "&"]
    rng = random.Random(0)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 24)))
        assert inline_html(text) == reference.renderInline(text), repr(text)
