"""The static leaderboard site: a landing page and one page per board.

``site/index.html`` summarises every board in one row (the landing page of
:mod:`gymforge.leaderboards.site_landing`); ``site/boards/<suite>-<Task>.html`` shows one board's
protocol, plots and table (:mod:`gymforge.leaderboards.site_board`); the plots live in
``site/plots/``. Plain HTML, CSS and JavaScript with relative links and no external resources, so
the folder opens from disk. Every table sorts by a column when its header is clicked (numbers
numerically, from each cell's ``data-value``); a second click reverses the order.
"""

from __future__ import annotations

import html
from typing import Any

BOARDS_DIR = "boards"
INDEX = "index.html"

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 96rem; color: #222;
       padding: 0 1rem; }
section { margin-bottom: 3rem; }
table { border-collapse: collapse; font-size: 0.85rem; }
.wide { overflow-x: auto; max-width: 100%; }
table.summary td { max-width: 16rem; overflow-wrap: anywhere; }
th, td { border-bottom: 1px solid #ddd; padding: 0.3rem 0.5rem; text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
th { cursor: pointer; user-select: none; background: #f4f4f4; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
code { background: #f4f4f4; padding: 0 0.2em; border-radius: 3px; font-size: 0.9em; }
td code { white-space: nowrap; }
.label { color: #555; font-style: italic; }
.muted { color: #777; }
.direction { white-space: nowrap; }
img.plot { max-width: 100%; }
"""

SORT_SCRIPT = """
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
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (header, column) {
      header.addEventListener("click", function () { sortBy(table, header, column); });
    });
  });
})();
"""


def attr(value: Any) -> str:
    """``value`` escaped for HTML text or a double-quoted attribute."""
    return html.escape(str(value), quote=True)


def format_number(value: float | None, digits: int = 2) -> str:
    """A score as every render shows it: ``digits`` decimals, small non-zero values in three
    significant digits (exact gaps such as 2.1e-4), ``–`` when missing."""
    if value is None:
        return "–"
    text = f"{value:.{digits}f}"
    if value != 0 and float(text) == 0:
        return f"{value:.3g}"
    return "0.00" if text == "-0.00" else text


def task_slug(task: str) -> str:
    """``suite/Task`` as one file-name part: ``suite-Task``."""
    return task.replace("/", "-")


def board_page_name(task: str) -> str:
    """A board's page, relative to the site folder."""
    return f"{BOARDS_DIR}/{task_slug(task)}.html"


def sortable_table(
    table_id: str,
    kind: str,
    columns: list[tuple[str, str]],
    rows: list[tuple[str, list[str]]],
) -> str:
    """A sortable table of class ``kind``: ``columns`` are ``(header, "number"|"text")``; each
    row is ``(data-id, cells)`` with its ``<td>`` cells already rendered."""
    head = "".join(
        f'<th scope="col" data-type="{kind}">{attr(title)}</th>' for title, kind in columns
    )
    body = "".join(f'<tr data-id="{attr(i)}">{"".join(cells)}</tr>' for i, cells in rows)
    return (
        f'<table class="sortable {attr(kind)}" id="{attr(table_id)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def number_cell(value: int | float | None, shown: str) -> str:
    """A right-aligned cell sorting by ``value`` (``–`` and lowest when missing)."""
    if value is None:
        return '<td class="number" data-value="">–</td>'
    return f'<td class="number" data-value="{value!r}">{attr(shown)}</td>'


def document(title: str, generated: str, body: list[str]) -> str:
    """A whole HTML page around ``body`` (with the sorting script)."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            f"<!-- {attr(generated)} -->",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            f"<title>{attr(title)}</title>",
            f"<style>{STYLE}</style>",
            "</head>",
            "<body>",
            *body,
            f"<script>{SORT_SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )
