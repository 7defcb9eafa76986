"""What a board's ranking means, where its protocol's own text would leave a reader misled.

A protocol is frozen (changing its description would be a new version), but what the board can
and cannot show may only become clear once rows exist. Such a finding is kept here, keyed by task,
and ``gymforge leaderboard render`` prints it with the protocol summary, on ``LEADERBOARD.md`` and
on the board's site page.
"""

from __future__ import annotations

#: task -> what its ranking means (a sentence or two, shown on the board).
NOTES: dict[str, str] = {
    "minmax/MinMaxTuning": (
        "Simultaneous heavy ball diverges on f = xy for every step size h > 0 and every momentum "
        "(Feng et al., ICML 2025), so no agent converges here: the board ranks how slowly a "
        "method diverges, and standing still (h = 0, a score of exactly 0) would top it. "
        "Convergence is ranked on `minmax/MinMaxTuningAlt` (alternating updates, the same game "
        "and starts); extragradient and OGDA, which this env's action cannot express, on "
        "`minmax/RandomBilinear`"
    ),
    "metabbo/MetaBBO": (
        "Q-Mamba is now a row (the protocol's text predates the trained models): the registry "
        "agents `qmamba` (greedy acting) and `qmamba_regularised`, trained for 12 epochs on "
        "10,000 trajectories of the trained PPO expert and random configuration, and "
        "`qmamba_chosen_epochs`, the greedy checkpoint of a 35-epoch run chosen on the "
        "validation split (epoch 22); with 20 episodes their confidence intervals overlap those "
        "of random and of the expert, and the paired test-split comparison is in "
        "`benchmarks/results/metabbo_reproduction.md`"
    ),
}


def board_note(task: str) -> list[str]:
    """The board's note as a summary sentence (or none)."""
    return [f"What the ranking means: {NOTES[task]}."] if task in NOTES else []
