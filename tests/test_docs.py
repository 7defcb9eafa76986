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


def test_docs__archived_results_are_indexed_last_in_their_own_section(tmp_path):
    from gymforge.docs import ARCHIVE_SECTION, render_results_index

    (tmp_path / "archive").mkdir()
    (tmp_path / "metabbo_final.md").write_text("# Final\n", encoding="utf-8")
    (tmp_path / "archive" / "metabbo_try.md").write_text("# Try\n", encoding="utf-8")
    (tmp_path / "archive" / "README.md").write_text("# Archived\n", encoding="utf-8")
    index = render_results_index(tmp_path)
    above, archive = index.split(f"## {ARCHIVE_SECTION}\n", 1)
    assert "[Final](metabbo_final.md)" in above and "metabbo_try" not in above
    assert "[Try](archive/metabbo_try.md)" in archive and "\n## " not in archive
    assert "(archive/README.md)" not in index


def test_docs__every_archived_result_is_described_in_the_archive_readme():
    archive = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "archive"
    readme = (archive / "README.md").read_text(encoding="utf-8")
    stems = {p.name.split(".", 1)[0] for p in archive.iterdir() if p.name != "README.md"}
    assert stems, "the archive is empty: the check would be vacuous"
    assert not [s for s in sorted(stems) if f"`{s}." not in readme]
