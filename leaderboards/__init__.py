"""File-based leaderboards: frozen protocols, the evaluator, submissions, renders and verify.

This folder is both code (the modules) and data: ``protocols/<suite>/<Task>.json`` (one frozen
protocol per task), ``<suite>/<Task>/`` (a board: ``submissions/``, ``leaderboard.csv``,
``LEADERBOARD.md``), ``LEADERBOARDS.md`` and ``site/`` (generated). The commands are
``gymforge evaluate``, ``gymforge submit`` and ``gymforge leaderboard render|verify|calibrate|list``;
see ``leaderboards/README.md``. Installed from a wheel, the package holds the protocols only.
"""

from pathlib import Path

#: the package's own folder: the board root of a source checkout (the commands' default there;
#: see :mod:`gymforge.leaderboards.roots` for the default elsewhere).
DEFAULT_ROOT = Path(__file__).resolve().parent
