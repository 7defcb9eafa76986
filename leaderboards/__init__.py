"""File-based leaderboards: frozen protocols, the evaluator, submissions, renders and verify.

This folder is both code (the modules) and data: ``protocols/<suite>/<Task>.json`` (one frozen
protocol per task), ``<suite>/<Task>/`` (a board: ``submissions/``, ``leaderboard.csv``,
``LEADERBOARD.md``), ``LEADERBOARDS.md`` and ``site/`` (generated). The commands are
``gymforge evaluate``, ``gymforge submit`` and ``gymforge leaderboard render|verify|calibrate|list``;
see ``leaderboards/README.md``.
"""

from pathlib import Path

#: the board root of a source checkout (the commands' default ``--root``).
DEFAULT_ROOT = Path(__file__).resolve().parent
