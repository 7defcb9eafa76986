"""The site's pages as files: the landing row of a board says what its files say, every link
and image of the committed site points at a rendered file, no Markdown is left raw, a board
without rows still renders, and verify owns the board pages."""

from __future__ import annotations

import csv
import json
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from leaderboard_helpers import TASK, copy_board, meta, small_root

from gymforge.leaderboards import DEFAULT_ROOT
from gymforge.leaderboards.protocol import list_tasks, load_protocol
from gymforge.leaderboards.render import SITE_DIR, write_all
from gymforge.leaderboards.site import board_page_name
from gymforge.leaderboards.submission import submit
from gymforge.leaderboards.verify import verify


class _Page(HTMLParser):
    """The links, images, visible text and table rows (cells as text, with their
    ``data-value``) of a page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.links: list[str] = []
        self.text: list[str] = []
        self._hidden = 0  # inside <script> or <style>
        self.rows: dict[str, list[tuple[str, str | None]]] = {}
        self._row: list[tuple[str, str | None]] | None = None
        self._cell: list[str] | None = None
        self._value: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self._hidden += tag in ("script", "style")
        if tag in ("a", "img", "link", "script") and (found.get("href") or found.get("src")):
            self.links.append(str(found.get("href") or found.get("src")))
        if tag == "tr" and "data-id" in found:
            self._row = self.rows.setdefault(str(found["data-id"]), [])
        if tag == "td":
            self._cell, self._value = [], found.get("data-value")
        if tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._hidden -= tag in ("script", "style")
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append(("".join(self._cell).strip(), self._value))
            self._cell = None
        if tag == "tr":
            self._row = None


def _site_pages(root: Path) -> dict[str, str]:
    site = root / SITE_DIR
    pages = [site / "index.html", *sorted((site / "boards").glob("*.html"))]
    return {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in pages}


@pytest.fixture(scope="module")
def two_row_site(tmp_path_factory):
    root = small_root(tmp_path_factory.mktemp("site-pages"))
    submit(root, TASK, "random", meta("Random"), submission_id="20260101-random")
    submit(root, TASK, "optimal", meta("Optimal"), submission_id="20260102-optimal")
    write_all(root)
    return root


def test_site__landing_row_says_what_the_board_files_say(two_row_site):
    (row,) = _Page(_site_pages(two_row_site)["index.html"]).rows.values()
    with (two_row_site / TASK / "leaderboard.csv").open() as file:
        best = next(csv.DictReader(file))
    submitted = [
        json.loads((two_row_site / TASK / "submissions" / name / "submission.json").read_text())
        for name in ("20260101-random", "20260102-optimal")
    ]
    normalisation = load_protocol(two_row_site, TASK).data["normalisation"]
    task, metric, leader, score, normalised, reference, random_, rows, last = row
    assert task[0] == f"{TASK} LineFlow-WaitingTime-v0"
    assert metric[0] == "return ↑ higher is better"
    assert best["id"] == "20260102-optimal" and leader[0] == "Optimal 20260102-optimal"
    assert float(score[1]) == float(best["mean"])
    assert float(normalised[1]) == float(best["normalised"])
    assert float(reference[1]) == normalisation["reference"]["score"]
    assert reference[0].endswith(normalisation["reference"]["agent"])
    assert float(random_[1]) == normalisation["random"]["score"]
    assert rows == ("2", "2")
    assert last[0] == max(s["submitted"][:10] for s in submitted)


def test_site__a_board_without_rows_renders(tmp_path):
    root = small_root(tmp_path)
    write_all(root)
    pages = _site_pages(root)
    (row,) = _Page(pages["index.html"]).rows.values()
    assert row[2][0] == "no submissions yet" and row[7] == ("0", "0") and row[8][0] == "–"
    assert "No submissions yet." in pages[board_page_name(TASK)]


def test_site__committed_pages_link_only_to_rendered_files():
    site = DEFAULT_ROOT / SITE_DIR
    pages = _site_pages(DEFAULT_ROOT)
    assert set(pages) == {"index.html"} | {board_page_name(t) for t in list_tasks(DEFAULT_ROOT)}
    landing_links = [link for link in _Page(pages["index.html"]).links if link != "data:,"]
    assert sorted(landing_links) == sorted(board_page_name(t) for t in list_tasks(DEFAULT_ROOT))
    for name, text in pages.items():
        links = [link for link in _Page(text).links if not link.startswith("data:")]
        for link in links:
            assert not urlsplit(link).scheme, f"{name}: external {link}"
            assert ((site / name).parent / link).resolve().is_file(), f"{name}: broken {link}"
        if name != "index.html":
            assert "../index.html" in links and any(link.endswith(".svg") for link in links)


def test_site__committed_pages_show_no_raw_markdown():
    for name, page in _site_pages(DEFAULT_ROOT).items():
        text = "".join(_Page(page).text)
        assert "`" not in text and "**" not in text, name
    assert "<code>gymforge submit</code>" in _site_pages(DEFAULT_ROOT)["index.html"]


def test_site__verify_rejects_an_edited_or_leftover_board_page(two_row_site, tmp_path):
    assert verify(two_row_site, rerun=False).ok
    board = copy_board(two_row_site, tmp_path)
    page = board / SITE_DIR / board_page_name(TASK)
    page.write_text(page.read_text().replace("Optimal", "0ptimal"))
    (board / SITE_DIR / "boards" / "lineflow-Gone.html").write_text("<p>old</p>")
    problems = "\n".join(verify(board, rerun=False).problems)
    assert f"site/{board_page_name(TASK)}: differs from a fresh render" in problems
    assert "site/boards/lineflow-Gone.html: not produced by a fresh render" in problems
