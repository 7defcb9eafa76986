"""Does a board separate its reference agent from the random agent?

A board is useful only where a better method scores visibly better. The check: the mean scores of
the reference row and the random row (the agents the protocol's normalisation names) differ by
more than the sum of their 95% confidence intervals' half-widths, so the two intervals do not
overlap. ``tests/test_leaderboard_discrimination.py`` runs it over every protocol; a board that
cannot pass it is listed in :data:`EXEMPT` with the reason, and the reason is printed on the
board (``gymforge leaderboard render`` adds it to the protocol summary).
"""

from __future__ import annotations

from dataclasses import dataclass

from gymforge.baselines.agent_loader import parse_agent_spec
from gymforge.leaderboards.board import Board, Row

_METABBO = (
    "20 episodes whose spread comes from the test functions the seeds draw (the log10 final "
    "error varies by several decades between functions), so {what} lies inside the 95% confidence "
    "intervals; separating them needs per-function paired comparisons or many more episodes"
)

#: boards that do not separate the reference from random, and why (shown on the board).
EXEMPT: dict[str, str] = {
    "metabbo/MetaBBO": _METABBO.format(what="SHADE's lead over random (about 0.6 decades)"),
    "metabbo/MetaBBOAlg1": _METABBO.format(what="SHADE's lead over random (about 1.4 decades)"),
    "metabbo/MetaBBOAlg2": _METABBO.format(what="SHADE's lead over random (about 0.2 decades)"),
    "metabbo/MetaBBOPSO": _METABBO.format(
        what="SHADE's lead over random (about 0.7 decades; on PSO it plays the default action)"
    ),
}


def exemption_note(task: str) -> list[str]:
    """The board's sentence saying why it does not separate reference and random (or none)."""
    if task not in EXEMPT:
        return []
    return [f"Does not separate the reference from random (their 95% CIs overlap): {EXEMPT[task]}."]


@dataclass(frozen=True)
class Separation:
    """The reference and random rows' means, their CI half-widths, and whether they separate."""

    reference: float
    random: float
    reference_half_width: float
    random_half_width: float

    @property
    def difference(self) -> float:
        return abs(self.reference - self.random)

    @property
    def separates(self) -> bool:
        return self.difference > self.reference_half_width + self.random_half_width


def _half_width(row: Row) -> float:
    low, high = row.results["aggregate"]["ci95"]
    return (float(high) - float(low)) / 2.0


def normalisation_row(board: Board, which: str) -> Row | None:
    """The board's row of the protocol's ``random`` or ``reference`` agent (the first submitted
    when there are several), or ``None``."""
    agent = board.protocol.data["normalisation"][which]["agent"]
    wanted = parse_agent_spec(agent, board.protocol.env_id).to_json()
    rows = [
        r
        for r in sorted(board.rows, key=lambda r: r.id)
        if r.results["agent"].get("entry_point") == wanted.get("entry_point")
        and r.results["agent"].get("kind") == wanted.get("kind")
    ]
    return rows[0] if rows else None


def separation(board: Board) -> Separation | None:
    """The reference-vs-random separation of ``board``, or ``None`` if a row is missing."""
    reference = normalisation_row(board, "reference")
    random = normalisation_row(board, "random")
    if reference is None or random is None:
        return None
    return Separation(reference.mean, random.mean, _half_width(reference), _half_width(random))
