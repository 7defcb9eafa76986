"""Upstream LineFlow RL figures are listed with their sources and budgets, and the README says
what has run on a GPU."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "design" / "lineflow_upstream_figures.md"


def _rl_rows() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Upstream's RL results", 1)[1]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| ") and "(" in line.split("|")[1]:
            key = line.split("|")[1].split("(")[1].split(")")[0]
            rows[key] = line
    return rows


def test_every_upstream_rl_figure_has_a_source_and_a_budget():
    rows = _rl_rows()
    assert set(rows) == {"WT", "WTJ", "PD", "WA", "CL"}
    for key, row in rows.items():
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 5 and all(cells), key
        assert "steps" in cells[3], key
        assert "documentation" in cells[2] or "**unsourced**" in cells[2], key
    assert "**unsourced**" in rows["PD"]
    assert "0.5M steps" in rows["WA"]


def test_the_figures_are_not_called_the_papers_and_wa_is_met_only_at_20x():
    text = DOC.read_text(encoding="utf-8")
    assert "the paper's figures" not in text
    assert "**WorkerAssignment is met only at 20× upstream's budget.**" in text
    assert "10,027,008" in text and 10_027_008 / 500_000 > 20


def test_the_figures_page_says_what_has_run_on_a_gpu():
    readme = (ROOT / "docs" / "figures.md").read_text(encoding="utf-8")
    assert "It has not been run on a GPU yet" not in readme
    assert "The env-only benchmark has not been run on a GPU" in readme
    assert "`benchmarks/results/gpu/`" in readme
