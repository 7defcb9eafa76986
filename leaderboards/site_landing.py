"""The landing page of the site: one summary row per board, linking to the board's own page.

A row says what a board measures (metric and direction), who leads it (the best row by the
board's metric, as the board ranks it), the reference and random scores that normalise it, how
many rows it has and when the last one was submitted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gymforge.leaderboards.markup import inline_html
from gymforge.leaderboards.site import (
    attr,
    board_page_name,
    document,
    format_number,
    number_cell,
    sortable_table,
)

COLUMNS: tuple[tuple[str, str], ...] = (
    ("task / env id", "text"),
    ("metric", "text"),
    ("leader", "text"),
    ("leader's score", "number"),
    ("normalised", "number"),
    ("reference", "number"),
    ("random", "number"),
    ("rows", "number"),
    ("last submission", "text"),
)


@dataclass(frozen=True)
class BoardSummary:
    """The landing page's facts about one board."""

    task: str
    env_id: str
    metric: str
    higher_is_better: bool
    leader_id: str | None
    leader_name: str | None
    leader_score: float | None
    leader_normalised: float | None
    metric_description: str
    reference_agent: str
    reference_score: float | None
    random_score: float | None
    rows: int
    last_submission: str | None


def summarise_board(section: dict[str, Any]) -> BoardSummary:
    """A board's summary from its section (rows ranked best first, as ``row_fields`` gives them)."""
    protocol = section["board"].protocol
    rows = section["rows"]
    normalisation = protocol.data["normalisation"]
    leader = rows[0] if rows else None
    return BoardSummary(
        task=protocol.task,
        env_id=protocol.env_id,
        metric=protocol.metric,
        higher_is_better=protocol.higher_is_better,
        leader_id=None if leader is None else leader["id"],
        leader_name=None if leader is None else leader["name"],
        leader_score=None if leader is None else leader["mean"],
        leader_normalised=None if leader is None else leader["normalised"],
        metric_description=str(protocol.data["metric"].get("description", "")),
        reference_agent=normalisation["reference"]["agent"],
        reference_score=normalisation["reference"]["score"],
        random_score=normalisation["random"]["score"],
        rows=len(rows),
        last_submission=max((r["submitted"] for r in rows), default=None),
    )


def _cells(summary: BoardSummary) -> list[str]:
    direction = "higher is better" if summary.higher_is_better else "lower is better"
    arrow = "↑" if summary.higher_is_better else "↓"
    if summary.leader_id is None:
        leader = '<td class="muted">no submissions yet</td>'
    else:
        leader = f"<td>{attr(summary.leader_name)}<br><code>{attr(summary.leader_id)}</code></td>"
    sort_value = "" if summary.reference_score is None else repr(summary.reference_score)
    reference = (
        f'<td class="number" data-value="{sort_value}">'
        f"{attr(format_number(summary.reference_score))}<br>"
        f'<code class="muted" title="{attr(summary.reference_agent)}">'
        f"{attr(summary.reference_agent.rsplit(':', 1)[-1])}</code></td>"
    )
    return [
        f'<td><a href="{attr(board_page_name(summary.task))}">{attr(summary.task)}</a><br>'
        f'<code class="muted">{attr(summary.env_id)}</code></td>',
        f'<td title="{attr(summary.metric_description)}"><code>{attr(summary.metric)}</code><br>'
        f'<span class="muted direction">{arrow} {direction}</span></td>',
        leader,
        number_cell(summary.leader_score, format_number(summary.leader_score)),
        number_cell(summary.leader_normalised, format_number(summary.leader_normalised)),
        reference,
        number_cell(summary.random_score, format_number(summary.random_score)),
        number_cell(summary.rows, str(summary.rows)),
        f"<td>{attr(summary.last_submission or '–')}</td>",
    ]


def landing_page(sections: list[dict[str, Any]], label: str, generated: str) -> str:
    """``index.html``: the summary table of every board."""
    summaries = [summarise_board(section) for section in sections]
    table = sortable_table(
        "boards",
        "summary",
        list(COLUMNS),
        [(s.task, _cells(s)) for s in summaries],
    )
    return document(
        "gymforge leaderboards",
        generated,
        [
            "<h1>gymforge leaderboards</h1>",
            f'<p class="label">{inline_html(label)}</p>',
            f"<p>{len(summaries)} boards. Each row is one board: its metric and direction (hover "
            "the metric for what it measures), its leader (the best row, the one its table ranks "
            "first) with the leader's mean score and normalised score (the reference agent "
            "scores 1, random 0), the reference and random scores, how many rows it has and the "
            "date of its last submission. Follow a task to its board: the protocol, the plots "
            "and every row. Click a column header to sort.</p>",
            f'<div class="wide">{table}</div>',
        ],
    )
