"""Markdown for the boards: submitter text made inert, and inline Markdown to HTML for the site.

Submitter-provided strings (a row's name, method, authors, agent) are written into
``LEADERBOARD.md`` and ``LEADERBOARDS.md`` through :func:`md_text` and :func:`md_code`, which make
them plain text: no HTML, links, images, emphasis or table cells can come out of them.

Protocol descriptions, the board label and notes are written in Markdown (they also appear in
``LEADERBOARD.md``). The site shows them as HTML through :func:`inline_html`, which follows
CommonMark's rules for the subset those texts use:

- code spans: a run of N backticks up to the next run of exactly N (``<code>``; the content is
  escaped and nothing else is parsed in it; one space is stripped from each end when both ends
  have one);
- emphasis ``*a*`` / ``_a_`` (``<em>``) and strong emphasis ``**a**`` / ``__a__`` (``<strong>``),
  with CommonMark's flanking rules, so ``report_regret``, ``e_T`` or ``k*gap`` stay text;
- backslash escapes of ASCII punctuation (``\\*`` is a literal star).

Everything else is text, escaped for HTML (``&``, ``<``, ``>``, ``"``): there are no links, raw
HTML or entity references, so no input can inject markup.
"""

from __future__ import annotations

import html
import re
import string
import unicodedata
from dataclasses import dataclass

ASCII_PUNCTUATION = frozenset(string.punctuation)

#: characters that start Markdown (or GitHub-flavoured Markdown) syntax anywhere in a line:
#: escapes, code, emphasis, strikethrough, links and images, raw HTML and autolinks, entity
#: references and table cells. ``_`` between two letters or digits is left alone: it cannot open
#: or close emphasis there (``ppo_expert`` stays as written).
MD_SPECIAL = frozenset("\\`*_~[]<>!|&")
#: the starts of GitHub's bare-URL autolinks (``http://``, ``www.``): their ``:`` or ``.`` is
#: escaped, which GitHub then shows as text.
_AUTOLINK = re.compile(r"(?<=[A-Za-z]):(?=//)|(?<=[Ww]{3})\.")
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\t\f\v\u2028\u2029]")


def md_text(text: str) -> str:
    """``text`` as inert Markdown inline text (also safe inside a table cell).

    Every character that could start markup is backslash-escaped (CommonMark shows ``\\*`` as
    ``*``), bare URLs are kept from becoming links, and line breaks become spaces so a table row
    stays one row. What a reader sees is ``text`` itself.
    """
    text = _LINE_BREAKS.sub(" ", text)
    out = []
    for index, char in enumerate(text):
        if char in MD_SPECIAL and not (
            char == "_"
            and 0 < index < len(text) - 1
            and text[index - 1].isalnum()
            and text[index + 1].isalnum()
        ):
            out.append("\\" + char)
        else:
            out.append(char)
    escaped = "".join(out)
    return _AUTOLINK.sub(lambda match: "\\" + match.group(0), escaped)


def md_code(text: str) -> str:
    """``text`` as a Markdown code span for a table cell: shown verbatim, whatever it contains.

    The fence is one backtick longer than the longest backtick run inside (CommonMark's rule),
    padded with a space where the text starts or ends with a backtick or a space, so no backtick
    in ``text`` can close the span early; ``|`` is escaped as GitHub's tables require even inside
    code. Text without backticks gets single backticks around it.
    """
    text = _LINE_BREAKS.sub(" ", text)
    if not text:
        return ""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    body = text.replace("|", "\\|")
    return f"{fence}{pad}{body}{pad}{fence}"


def escape(text: str) -> str:
    """``text`` escaped for HTML element content (and double-quoted attributes)."""
    return html.escape(text, quote=False).replace('"', "&quot;")


def _is_space(char: str) -> bool:
    """CommonMark whitespace; the ends of the text count as whitespace (``char == ""``)."""
    return char == "" or char in " \t\n\r\f\v" or unicodedata.category(char) == "Zs"


def _is_punctuation(char: str) -> bool:
    return char != "" and unicodedata.category(char).startswith(("P", "S"))


@dataclass
class _Delimiter:
    """A run of ``*`` or ``_``: how many are left unused, and whether it may open or close."""

    char: str
    count: int
    length: int
    can_open: bool
    can_close: bool
    active: bool = True


def _delimiter(text: str, start: int, end: int) -> _Delimiter:
    """The delimiter run ``text[start:end]`` with CommonMark's flanking rules."""
    char = text[start]
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    left = not _is_space(after) and (
        not _is_punctuation(after) or _is_space(before) or _is_punctuation(before)
    )
    right = not _is_space(before) and (
        not _is_punctuation(before) or _is_space(after) or _is_punctuation(after)
    )
    if char == "*":
        can_open, can_close = left, right
    else:  # "_" must not open or close inside a word
        can_open = left and (not right or _is_punctuation(before))
        can_close = right and (not left or _is_punctuation(after))
    return _Delimiter(char, end - start, end - start, can_open, can_close)


def _code_span(text: str, start: int) -> tuple[str, int] | None:
    """``(html, end)`` of the code span opened by the backtick run at ``start``, or ``None``."""
    run_end = start
    while run_end < len(text) and text[run_end] == "`":
        run_end += 1
    width = run_end - start
    search = run_end
    while (found := text.find("`" * width, search)) != -1:
        close_end = found + width
        while close_end < len(text) and text[close_end] == "`":
            close_end += 1
        if close_end - found == width:
            content = text[run_end:found].replace("\r\n", " ").replace("\n", " ")
            if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
                content = content[1:-1]
            return f"<code>{escape(content)}</code>", close_end
        search = close_end
    return None


def _tokens(text: str) -> list[str | _Delimiter]:
    """HTML pieces and delimiter runs, left to right (code spans and escapes resolved)."""
    nodes: list[str | _Delimiter] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in ASCII_PUNCTUATION:
            nodes.append(escape(text[i + 1]))
            i += 2
        elif char == "`":
            span = _code_span(text, i)
            if span is None:
                end = i
                while end < len(text) and text[end] == "`":
                    end += 1
                nodes.append(text[i:end])
                i = end
            else:
                nodes.append(span[0])
                i = span[1]
        elif char in "*_":
            end = i
            while end < len(text) and text[end] == char:
                end += 1
            nodes.append(_delimiter(text, i, end))
            i = end
        else:
            nodes.append(escape(char))
            i += 1
    return nodes


def _render(nodes: list[str | _Delimiter]) -> str:
    return "".join(n if isinstance(n, str) else n.char * n.count for n in nodes)


def _odd_match(opener: _Delimiter, closer: _Delimiter) -> bool:
    """CommonMark's "rule of 3": a run that can both open and close pairs only in some sums."""
    both = closer.can_open or opener.can_close
    return (
        both
        and (opener.length + closer.length) % 3 == 0
        and not (opener.length % 3 == 0 and closer.length % 3 == 0)
    )


def _process_emphasis(nodes: list[str | _Delimiter]) -> None:
    """Pair delimiter runs into ``<em>``/``<strong>`` in place (CommonMark's algorithm)."""
    bottoms: dict[tuple[str, bool, int], int] = {}
    position = 0
    while position < len(nodes):
        closer = nodes[position]
        if not (isinstance(closer, _Delimiter) and closer.active and closer.can_close):
            position += 1
            continue
        key = (closer.char, closer.can_open, closer.length % 3)
        bottom = bottoms.get(key, -1)
        found = None
        for index in range(position - 1, bottom, -1):
            opener = nodes[index]
            if (
                isinstance(opener, _Delimiter)
                and opener.active
                and opener.char == closer.char
                and opener.can_open
                and not _odd_match(opener, closer)
            ):
                found = index
                break
        if found is None:
            bottoms[key] = position - 1
            if not closer.can_open:
                closer.active = False
            position += 1
            continue
        opener = nodes[found]
        assert isinstance(opener, _Delimiter)
        used = 2 if opener.count >= 2 and closer.count >= 2 else 1
        tag = "strong" if used == 2 else "em"
        opener.count -= used
        closer.count -= used
        inner = _render(nodes[found + 1 : position])  # delimiters inside are literal now
        nodes[found + 1 : position] = [f"<{tag}>{inner}</{tag}>"]
        position = found + 2
        # bottoms inside the replaced slice move down to the opener (rejected for them before)
        bottoms = {k: min(v, found) for k, v in bottoms.items()}
        if opener.count == 0:
            del nodes[found]
            position -= 1
            bottoms = {k: v - 1 if v == found else v for k, v in bottoms.items()}
        if closer.count == 0:
            closer.active = False
            position += 1


def inline_html(text: str) -> str:
    """``text``, an inline Markdown string, as HTML (see the module docstring for the subset)."""
    nodes = _tokens(text)
    _process_emphasis(nodes)
    return _render(nodes)
