"""One board's page of the site: its protocol in prose, its plots and its sortable table.

The page lives in ``site/boards/``, so its links to the plots and back to the landing page go one
folder up. The prose (the protocol summary shared with ``LEADERBOARD.md``) is Markdown, shown
through :func:`gymforge.leaderboards.markup.inline_html`.
"""

from __future__ import annotations

from typing import Any

from gymforge.leaderboards.board import TIE_MARK, TIE_NOTE
from gymforge.leaderboards.markup import inline_html
from gymforge.leaderboards.site import (
    INDEX,
    attr,
    document,
    format_number,
    number_cell,
    sortable_table,
    task_slug,
)

#: (field of ``render.row_fields``, header, type) of each column of a board's table.
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("rank", "#", "number"),
    ("name", "submission", "text"),
    ("method", "method", "text"),
    ("agent", "agent", "text"),
    ("mean", "mean", "number"),
    ("std", "std", "number"),
    ("ci95", "95% CI", "number"),
    ("iqm", "IQM", "number"),
    ("normalised", "normalised", "number"),
    ("episodes", "episodes", "number"),
    ("training_env_steps", "training steps", "number"),
    ("authors", "authors", "text"),
    ("submitted", "submitted", "text"),
)


def _cell(field: str, kind: str, row: dict[str, Any]) -> str:
    if field == "rank" and row.get("tied_above"):
        return (
            f'<td class="number" data-value="{row["rank"]!r}" title="{attr(TIE_NOTE)}">'
            f"{row['rank']} {TIE_MARK}</td>"
        )
    if field == "ci95":
        low, high = row["ci95_low"], row["ci95_high"]
        return number_cell(low, f"[{format_number(low)}, {format_number(high)}]")
    value = row[field]
    if kind == "text":
        return f"<td>{attr(value)}</td>"
    if value is None or isinstance(value, int):
        return number_cell(value, f"{value:,}" if value is not None else "")
    return number_cell(value, format_number(value, 3 if field == "normalised" else 2))


def board_table(section: dict[str, Any]) -> str:
    """The board's rows as a sortable table (or a sentence when it has none)."""
    if not section["rows"]:
        return "<p>No submissions yet.</p>"
    table_id = "table-board-" + task_slug(section["board"].protocol.task)
    rows = [
        (row["id"], [_cell(field, kind, row) for field, _, kind in COLUMNS])
        for row in section["rows"]
    ]
    return sortable_table(table_id, "board", [(h, k) for _, h, k in COLUMNS], rows)


def board_page(section: dict[str, Any], label: str, generated: str) -> str:
    """The page of one board; ``section`` is what :func:`gymforge.leaderboards.render.render_all`
    gathers (board, summary sentences, plot paths relative to the site folder, table rows)."""
    protocol = section["board"].protocol
    task = protocol.task
    back = f'<nav><a class="back" href="../{INDEX}">← all leaderboards</a></nav>'
    parts = [
        back,
        f'<section class="board-section" id="board-{attr(task_slug(task))}" '
        f'data-task="{attr(task)}">',
        f"<h1>{attr(protocol.data['title'])}</h1>",
        f'<p class="label">{inline_html(label)}</p>',
        "<ul>" + "".join(f"<li>{inline_html(s)}</li>" for s in section["summary"]) + "</ul>",
        f'<img class="plot" src="../{attr(section["plot"])}" alt="scores on {attr(task)}">',
    ]
    if section.get("curves"):
        parts.append(
            f'<img class="plot curves" src="../{attr(section["curves"])}" '
            f'alt="learning curves on {attr(task)}">'
        )
    if section["rows"]:
        note = f" {TIE_NOTE}" if any(r.get("tied_above") for r in section["rows"]) else ""
        parts.append(
            f"<p>Click a column header to sort the table; click again to reverse.{attr(note)}</p>"
        )
    parts += [board_table(section), "</section>", back]
    return document(f"{task} · gymforge leaderboards", generated, parts)
