"""The static HTML page of the boards: one section per task, sortable tables, score plots.

Plain HTML, CSS and JavaScript with no external resources: clicking a column header sorts the
table's rows by that column (numbers numerically, from each cell's ``data-value``), clicking
again reverses the order.
"""

from __future__ import annotations

import html
from typing import Any

COLUMNS: tuple[tuple[str, str, str], ...] = (
    # (field, header, type)
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

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 96rem; color: #222; }
nav ul { columns: 2; }
section { margin-bottom: 3rem; }
table { border-collapse: collapse; font-size: 0.85rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3rem 0.5rem; text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
th { cursor: pointer; user-select: none; background: #f4f4f4; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
.label { color: #555; font-style: italic; }
img.plot { max-width: 100%; }
"""

SCRIPT = """
(function () {
  "use strict";
  function key(cell, numeric) {
    var value = cell.getAttribute("data-value");
    if (numeric) {
      var number = parseFloat(value);
      return isNaN(number) ? -Infinity : number;
    }
    return (value === null ? cell.textContent : value).toLowerCase();
  }
  function sortBy(table, header, column) {
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var numeric = header.getAttribute("data-type") === "number";
    var headers = table.tHead.rows[0].cells;
    for (var i = 0; i < headers.length; i++) { headers[i].removeAttribute("aria-sort"); }
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[column], numeric), y = key(b.cells[column], numeric);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  var tables = document.querySelectorAll("table.board");
  Array.prototype.forEach.call(tables, function (table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (header, column) {
      header.addEventListener("click", function () { sortBy(table, header, column); });
    });
  });
})();
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _code(text: str) -> str:
    """Escape ``text`` and show its Markdown code spans (`x`) as ``<code>``."""
    pieces = _e(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(pieces))


def _cell(field: str, kind: str, row: dict[str, Any]) -> str:
    if field == "ci95":
        low, high = row["ci95_low"], row["ci95_high"]
        return f'<td class="number" data-value="{low!r}">[{low:.2f}, {high:.2f}]</td>'
    value = row[field]
    if kind == "number":
        if value is None:
            return '<td class="number" data-value="">–</td>'
        shown = (
            f"{value:,}"
            if isinstance(value, int)
            else f"{value:.3f}"
            if field == "normalised"
            else f"{value:.2f}"
        )
        return f'<td class="number" data-value="{value!r}">{_e(shown)}</td>'
    return f"<td>{_e(value)}</td>"


def _section(section: dict[str, Any]) -> str:
    board = section["board"]
    task = board.protocol.task
    anchor = "board-" + task.replace("/", "-")
    parts = [
        f'<section class="board-section" id="{_e(anchor)}" data-task="{_e(task)}">',
        f"<h2>{_e(board.protocol.data['title'])}</h2>",
        "<ul>" + "".join(f"<li>{_code(s)}</li>" for s in section["summary"]) + "</ul>",
        f'<img class="plot" src="{_e(section["plot"])}" alt="scores on {_e(task)}">',
    ]
    if section.get("curves"):
        parts.append(
            f'<img class="plot curves" src="{_e(section["curves"])}" '
            f'alt="learning curves on {_e(task)}">'
        )
    if not section["rows"]:
        parts.append("<p>No submissions yet.</p>")
    else:
        head = "".join(
            f'<th scope="col" data-type="{kind}">{_e(title)}</th>' for _, title, kind in COLUMNS
        )
        body = "".join(
            f'<tr data-id="{_e(row["id"])}">'
            + "".join(_cell(field, kind, row) for field, _, kind in COLUMNS)
            + "</tr>"
            for row in section["rows"]
        )
        parts.append(
            f'<table class="board" id="table-{_e(anchor)}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )
    parts.append("</section>")
    return "\n".join(parts)


def page(sections: list[dict[str, Any]], label: str, generated: str) -> str:
    """The whole page."""
    nav = "".join(
        f'<li><a href="#board-{_e(s["board"].protocol.task.replace("/", "-"))}">'
        f"{_e(s['board'].protocol.task)}</a> ({len(s['rows'])} rows)</li>"
        for s in sections
    )
    return "\n".join(
        [
            "<!DOCTYPE html>",
            f"<!-- {_e(generated)} -->",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            "<title>gymforge leaderboards</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            "<h1>gymforge leaderboards</h1>",
            f'<p class="label">{_e(label)}</p>',
            "<p>Click a column header to sort its table; click again to reverse.</p>",
            f"<nav><ul>{nav}</ul></nav>",
            *(_section(s) for s in sections),
            f"<script>{SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
