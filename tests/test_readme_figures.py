"""The README's figure tables are what ``benchmarks/readme_figures.py`` writes from the results."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module():
    return importlib.import_module("benchmarks.readme_figures")


def test_readme_figure_blocks_match_the_results_files() -> None:
    figures = _module()
    names = []
    for path in figures.FILES:
        text = path.read_text()
        names += [m.group("name") for m in figures.BLOCK.finditer(text)]
        assert figures.stale_blocks(text) == [], f"{path.name}: python -m benchmarks.readme_figures"
    assert sorted(names) == sorted(figures.GENERATORS), "every generator has exactly one block"


def test_readme_counts_are_the_registry_and_the_boards() -> None:
    from gymforge.leaderboards.protocol import list_tasks
    from gymforge.registry import all_specs

    text = (ROOT / "README.md").read_text()
    assert f"{len(all_specs())} registered ids" in text
    assert f"{len(list_tasks(ROOT / 'leaderboards'))} leaderboards" in text


def test_a_changed_figure_is_caught() -> None:
    figures = _module()
    text = (ROOT / "docs" / "figures.md").read_text()
    block = next(figures.BLOCK.finditer(text))
    body = block.group("body")
    digit = next(i for i, c in enumerate(body) if c.isdigit())
    altered = body[:digit] + str((int(body[digit]) + 1) % 10) + body[digit + 1 :]
    tampered = text[: block.start("body")] + altered + text[block.end("body") :]
    assert figures.stale_blocks(tampered) == [block.group("name")]
    assert figures.render(tampered) == text


def test_unknown_block_is_an_error() -> None:
    figures = _module()
    with pytest.raises(KeyError, match="no generator"):
        figures.render("<!-- BEGIN GENERATED: nope -->\nx\n<!-- END GENERATED: nope -->")
