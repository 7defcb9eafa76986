"""Docs are generated from the registry and carry the fixed headings."""

from __future__ import annotations

from pathlib import Path

import pytest

from gymforge.docs import REQUIRED_HEADINGS, expected_pages

DOCS = Path(__file__).resolve().parents[1] / "docs" / "envs"
PAGES = expected_pages()


@pytest.mark.parametrize("name", sorted(PAGES))
def test_docs__committed_pages_are_up_to_date(name):
    path = DOCS / name
    assert path.exists(), f"{path} missing: run `make docs`"
    assert path.read_text(encoding="utf-8") == PAGES[name], f"{path} is stale: run `make docs`"


@pytest.mark.parametrize("name", sorted(n for n in PAGES if n != "index.md"))
def test_docs__every_env_page_has_the_required_headings(name):
    for heading in REQUIRED_HEADINGS:
        assert f"## {heading}\n" in PAGES[name], f"{name} lacks '## {heading}'"
    page = PAGES[name]
    observation_section = page.split("## Observation Space\n", 1)[1].split("\n## ", 1)[0]
    has_space_table = "|---" in observation_section
    has_feature_table = "| Index | Name | Unit | Min | Max |" in page
    assert has_space_table or has_feature_table, f"{name}: the observation needs a space table"
