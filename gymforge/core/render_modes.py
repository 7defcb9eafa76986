"""``render_mode`` checked at construction: an env that cannot render a mode refuses it when it
is built, naming the modes it has, rather than failing later inside ``render()``.

One check for every kind of env: the scalar views (:mod:`gymforge.core.scalar_env`), the
PettingZoo games and :func:`gymforge.registry.make_parallel`. It imports nothing heavy, so the
registry can use it before any family is loaded.
"""

from __future__ import annotations

from collections.abc import Iterable


def check_render_mode(render_mode: object, render_modes: Iterable[str], owner: str) -> str | None:
    """``render_mode`` when it is None or one of ``render_modes``; else a ``ValueError`` in one
    line naming ``owner`` and the modes it has."""
    if render_mode is None:
        return None
    modes = list(render_modes)
    if render_mode in modes:
        return str(render_mode)
    have = f"its render modes are {modes}" if modes else "it has no renderer (use render_mode=None)"
    raise ValueError(f"{owner} cannot render render_mode={render_mode!r}: {have}")
