"""Extra behaviour policies for offline MetaBBO datasets, registered without importing them.

:func:`register_behavior` adds ``sb3`` (a saved Stable-Baselines3 model, see
:class:`gymforge.baselines.metabbo.sb3.SB3Expert`) to
:data:`gymforge.envs.metabbo.dataset.BEHAVIORS`. Only the entry-point string is added, so this
module does not need Stable-Baselines3: where it is not installed,
:func:`~gymforge.envs.metabbo.dataset.available_behaviors` skips ``sb3`` as for any other missing
module. :func:`collect_cli` is the MetaBBO ids' ``gymforge dataset collect`` with it registered.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["BEHAVIOR_NAME", "collect_cli", "register_behavior"]

#: behaviour-policy name of a saved SB3 model in offline dataset collection
BEHAVIOR_NAME = "sb3"
_ENTRY = "gymforge.baselines.metabbo.sb3:SB3Expert"


def register_behavior() -> None:
    """Add the ``sb3`` behaviour to the MetaBBO dataset behaviours (idempotent)."""
    from gymforge.envs.metabbo import dataset

    dataset.BEHAVIORS.setdefault(BEHAVIOR_NAME, _ENTRY)


def collect_cli(env_id: str, argv: Sequence[str]) -> int:
    """``gymforge dataset collect`` for MetaBBO ids, with the ``sb3`` behaviour registered."""
    from gymforge.envs.metabbo.dataset import collect_cli as collect

    register_behavior()
    return collect(env_id, argv)
