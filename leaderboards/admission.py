"""Which agents a public board takes: registered agents and weight files, never code.

A board takes submissions from strangers, and verify re-runs them in CI, so nothing a submission
names may run as code: a board runs the registered agents of its env id (by name or entry
point), the agents its protocol names, and weight files read as data (SB3 zips rebuilt by
:mod:`gymforge.baselines.sb3.zip_reader`, on-device policies loaded weights-only). Anything else
(an arbitrary ``module:factory``, a TorchScript program) stays usable with ``gymforge evaluate``
on one's own machine. :func:`check_submittable` is called by ``submit`` before the evaluation
and by ``verify`` before anything of a row is loaded.
"""

from __future__ import annotations

from typing import Any

from gymforge.baselines.agent_loader import AgentRecord
from gymforge.registry import get_spec


def submittable_entry_points(protocol: Any) -> set[str]:
    """The entry points a board of ``protocol`` runs: the registered agents of its env id and
    the agents its protocol names (``agents``, and the offline learners of its offline track).
    Nothing else named by a submission is imported."""
    allowed = set(get_spec(protocol.env_id).agents.values())
    allowed |= set(protocol.data.get("agents", {}).values())
    offline = protocol.offline_dataset or {}
    allowed |= set(offline.get("agents", {}).values())
    return allowed


def check_submittable(record: AgentRecord, protocol: Any) -> None:
    """Refuse an agent a public board must not run; raises ``ValueError`` naming why.

    A board takes registered agents (by name or their entry point) and weight files read as
    data: SB3 zips (:mod:`gymforge.baselines.sb3.zip_reader`) and on-device policies (loaded
    weights-only). An arbitrary ``module:factory`` would import code named by the submission,
    and a TorchScript file is a program: both stay usable with ``gymforge evaluate`` on one's
    own machine, never on a board.
    """
    if record.kind == "entry_point":
        allowed = submittable_entry_points(protocol)
        if record.entry_point not in allowed:
            raise ValueError(
                f"agent entry point {record.entry_point!r} is not a registered agent of "
                f"{protocol.env_id}; a board runs only registered agents ({sorted(allowed)}) "
                "and weight files (SB3 model.zip, on-device policy.pt), never code named by "
                "a submission"
            )
    elif record.kind == "torchscript":
        raise ValueError(
            "a TorchScript module is a program, not weights; a board takes registered agents "
            "and weight files (SB3 model.zip, on-device policy.pt) only"
        )
