"""Comparison words follow the paired interval: "beats" only where the interval excludes 0.

``benchmarks.claims.verdict`` turns a paired difference's interval into a word. The MetaBBO
results table of those words must agree with the intervals printed beside them, and every
"beats" or "wins" in the README, the figures and tour pages and every results file under
``benchmarks/results`` must sit in a sentence whose next paired interval excludes 0.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.claims import bonferroni_note, bonferroni_threshold, verdict

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
NUMBER = r"[−+-]?\d[\d,]*(?:\.\d+)?"
INTERVAL = re.compile(rf"\[\s*({NUMBER})\s*,\s*({NUMBER})\s*\]")
CLAIM = re.compile(r"\b(beats|wins)\b", re.IGNORECASE)
#: the texts whose comparison words must carry an interval that supports them (the generated
#: MetaBBO table is checked against its own intervals below)
SCANNED = (
    ROOT / "README.md",
    ROOT / "docs" / "figures.md",
    ROOT / "docs" / "tour.md",
    *sorted(RESULTS.glob("**/*.md")),
)
#: metabbo_test.md's table of words, one cell per word beside the cell of its interval
WORDS_TABLE = RESULTS / "metabbo_test.md"
WORDS_TABLE_HEAD = "| method | preset | against | ΔPerf [95% CI] |"


def _number(text: str) -> float:
    return float(text.replace("−", "-").replace(",", ""))


def _clauses(text: str) -> list[str]:
    """Sentences of ``text``, table cells apart, whitespace collapsed."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text):
        for cell in paragraph.split("|"):
            for sentence in re.split(r"(?<=[.;!?])\s+(?=[A-Z(])", cell):
                out.append(" ".join(sentence.split()))
    return out


def scanned_text(path: Path, text: str | None = None) -> str:
    """The text of ``path`` (or ``text`` as its contents) to scan: all of it, less the MetaBBO
    table of words, whose words are checked against their own intervals below."""
    if text is None:
        text = path.read_text(encoding="utf-8")
    if path == WORDS_TABLE and WORDS_TABLE_HEAD in text:
        before, table = text.split(WORDS_TABLE_HEAD, 1)
        text = before + table.partition("\n\n")[2]
    return text


def unsupported_claims(text: str) -> list[str]:
    """Clauses with "beats"/"wins" whose next interval is missing or holds 0."""
    bad = []
    for clause in _clauses(text):
        for match in CLAIM.finditer(clause):
            interval = INTERVAL.search(clause, match.end())
            if interval is None:
                bad.append(clause)
                continue
            low, high = (_number(x) for x in interval.groups())
            if verdict(low, high) == "ties with":
                bad.append(clause)
    return bad


@pytest.mark.parametrize(
    ("low", "high", "higher_is_better", "word"),
    [
        (0.002, 0.0116, True, "beats"),
        (-0.0002, 0.0239, True, "ties with"),
        (-0.0036, 0.0083, True, "ties with"),
        (-0.02, -0.001, True, "loses to"),
        (-0.86, -0.44, False, "beats"),
        (0.38, 0.72, False, "loses to"),
        (0.0, 0.5, True, "ties with"),
    ],
)
def test_verdict_reads_the_interval(low, high, higher_is_better, word):
    assert verdict(low, high, higher_is_better) == word


def test_verdict_refuses_a_reversed_interval():
    with pytest.raises(ValueError):
        verdict(1.0, 0.0)


def test_bonferroni_note_states_the_candidates():
    assert bonferroni_threshold(11) == pytest.approx(0.05 / 11)
    note = bonferroni_note(0.005, 11)
    assert "0.05 / 11" in note and "does not survive" in note
    assert "survives" in bonferroni_note(0.001, 11)


def test_the_scanner_flags_a_win_whose_interval_holds_zero():
    assert unsupported_claims("The model wins Perf (+0.0115 [−0.0002, +0.0239]).")
    assert unsupported_claims("Alg2 beats static on all three metrics.")
    assert not unsupported_claims("It beats random on Perf (+0.0068 [+0.0020, +0.0116]).")


def test_the_scan_covers_every_results_file():
    names = {p.relative_to(RESULTS).as_posix() for p in SCANNED if RESULTS in p.parents}
    assert {"metabbo_reproduction.md", "metabbo_offline.md", "metabbo_test.md"} <= names
    assert any("/" in name for name in names)


def test_only_the_checked_table_is_left_out_of_the_scan():
    text = WORDS_TABLE.read_text(encoding="utf-8")
    kept = scanned_text(WORDS_TABLE)
    assert WORDS_TABLE_HEAD in text and WORDS_TABLE_HEAD not in kept
    assert "### Multiplicity" in kept
    assert scanned_text(ROOT / "README.md", text) == text


@pytest.mark.parametrize("path", SCANNED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_beats_or_wins_has_a_paired_interval_that_excludes_zero(path):
    bad = unsupported_claims(scanned_text(path))
    assert not bad, "claims without a supporting paired interval:\n" + "\n".join(bad)


def test_the_metabbo_words_table_agrees_with_its_intervals():
    """Every word in metabbo_test.md's table of learned rows is the verdict of the interval
    printed before it (log10 error: lower is better)."""
    text = WORDS_TABLE.read_text(encoding="utf-8")
    assert WORDS_TABLE_HEAD in text
    table = text.split(WORDS_TABLE_HEAD, 1)[1].split("\n\n", 1)[0]
    rows = table.splitlines()[2:]
    assert len(rows) >= 30
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for (figures, word), higher in zip(
            zip(cells[3::2], cells[4::2], strict=True), (True, False, True), strict=True
        ):
            low, high = (_number(x) for x in INTERVAL.search(figures).groups())
            assert word == verdict(low, high, higher), line
    chosen = text.split("### Multiplicity", 1)[1]
    assert "highest validation Perf of 18 candidates" in chosen
    assert "0.05 / 11" in chosen
