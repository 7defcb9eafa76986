"""The one table of every gymforge environment id.

Each family declares its ids in :mod:`gymforge.ids` (``gymforge/ids/<family>.py``); this module
gathers them into :data:`SPECS`. Everything else — Gymnasium registration, the CLI, the
conformance tests, the docs, the leaderboards — enumerates :data:`SPECS`; nothing keeps a
hand-written list of ids.

A batched id names its ``TorchVectorEnv`` class; its Gymnasium entry points (``gym.make``'s
batch-of-one view and ``gym.make_vec``'s factory) are built from that class by
:mod:`gymforge.entry_points`, so a family writes no registration code of its own.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import gymnasium as gym

import gymforge.ids
from gymforge import entry_points
from gymforge.core.render_modes import check_render_mode
from gymforge.spec import ENTRY_POINTS, RANDOM_AGENT, Capabilities, EnvSpec

__all__ = [
    "RANDOM_AGENT",
    "SPECS",
    "Capabilities",
    "EnvSpec",
    "add_specs",
    "all_specs",
    "get_spec",
    "load_entry_point",
    "make_parallel",
    "register_all",
    "remove_specs",
]


def _collect_specs() -> tuple[EnvSpec, ...]:
    modules = [
        importlib.import_module(f"gymforge.ids.{info.name}")
        for info in pkgutil.iter_modules(gymforge.ids.__path__)
    ]
    modules.sort(key=lambda m: (getattr(m, "ORDER", 1_000), m.__name__))
    specs = tuple(spec for module in modules for spec in module.SPECS)
    seen: set[str] = set()
    for spec in specs:
        if spec.id in seen:
            raise RuntimeError(f"env id {spec.id!r} is declared twice in gymforge.ids")
        seen.add(spec.id)
    problem = entry_point_clash(specs)
    if problem:
        raise RuntimeError(problem)
    return specs


def _built_entry_points(spec: EnvSpec) -> dict[str, tuple[str | None, ...]]:
    """``{entry point: what it is built from}`` for the entry points :mod:`gymforge.entry_points`
    builds for ``spec``."""
    if spec.vector_env is None:
        return {}
    built: dict[str, tuple[str | None, ...]] = {
        spec.vector_entry_point: ("vector", spec.vector_env)
    }
    if spec.entry_point is not None and spec.entry_point.startswith(f"{ENTRY_POINTS}:"):
        built[spec.entry_point] = ("scalar", spec.vector_env, spec.scalar_base)
    return built


def entry_point_clash(specs: Iterable[EnvSpec]) -> str | None:
    """A message naming two ids whose built entry points share a name but not their classes (two
    vector classes of one name in different modules, or one class over two scalar bases), or
    None."""
    owners: dict[str, tuple[str, tuple[str | None, ...]]] = {}
    for spec in specs:
        for entry_point, source in _built_entry_points(spec).items():
            first = owners.setdefault(entry_point, (spec.id, source))
            if first[1] != source:
                return (
                    f"{spec.id} and {first[0]} would share the entry point {entry_point} built "
                    f"from different classes ({source[1:]} vs {first[1][1:]}): rename one class"
                )
    return None


SPECS: tuple[EnvSpec, ...] = _collect_specs()
_BUILTIN: tuple[EnvSpec, ...] = SPECS  # the ids of gymforge.ids, which remove_specs keeps


def all_specs() -> tuple[EnvSpec, ...]:
    return SPECS


def add_specs(specs: Sequence[EnvSpec]) -> None:
    """Add ``specs`` to :data:`SPECS` at runtime and register them with Gymnasium.

    This is how a family that lives outside the package (a user's own, or a guide's) joins every
    tool that enumerates the registry. Ids must be new: a clash raises ``ValueError`` and changes
    nothing. Undo with :func:`remove_specs`.
    """
    global SPECS
    new = tuple(specs)
    taken = {s.id for s in SPECS}
    ids = [s.id for s in new]
    clashes = sorted({i for i in ids if i in taken or ids.count(i) > 1})
    if clashes:
        raise ValueError(f"env ids already registered or given twice: {clashes}")
    clashes = sorted(i for i in ids if i in gym.registry)
    if clashes:
        raise ValueError(f"env ids already registered with Gymnasium: {clashes}")
    problem = entry_point_clash(SPECS + new)
    if problem:
        raise ValueError(problem)
    SPECS = SPECS + new
    register_all()


def remove_specs(env_ids: Iterable[str]) -> None:
    """Remove the ids added by :func:`add_specs` from :data:`SPECS` and from Gymnasium's
    registry, so that the registry is exactly what it was before they were added.

    Ids declared in ``gymforge.ids`` cannot be removed (``ValueError``): they are the package's.
    """
    global SPECS
    wanted = set(env_ids)
    unknown = sorted(wanted - {s.id for s in SPECS})
    if unknown:
        raise ValueError(f"unknown env ids: {unknown}")
    builtin = sorted(wanted & {s.id for s in _BUILTIN})
    if builtin:
        raise ValueError(f"ids declared in gymforge.ids cannot be removed: {builtin}")
    removed = [s for s in SPECS if s.id in wanted]
    SPECS = tuple(s for s in SPECS if s.id not in wanted)
    for env_id in sorted(wanted):
        gym.registry.pop(env_id, None)
    kept = {name for spec in SPECS for name in _built_entry_points(spec)}
    gone = {name for spec in removed for name in _built_entry_points(spec)} - kept
    entry_points.forget(name.partition(":")[2] for name in gone)


def get_spec(env_id: str) -> EnvSpec:
    """The spec of ``env_id``; unknown ids raise ``ValueError`` with the closest registered ids
    ("did you mean") and then all of them."""
    for spec in SPECS:
        if spec.id == env_id:
            return spec
    known = [s.id for s in SPECS]
    raise ValueError(
        f"unknown env id {env_id!r}{did_you_mean(env_id, known)} (`gymforge list` shows the "
        f"{len(known)} registered ids)"
    )


def did_you_mean(name: str, choices: list[str]) -> str:
    """``"; did you mean 'X'?"`` for the choices closest to ``name`` (case-insensitive), or ``""``."""
    lowered = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(lowered[c]) for c in close) + "?"


def pettingzoo_hint(env_id: str, **_: Any) -> Any:
    """The Gymnasium entry point of a multi-agent id: it cannot be a ``gym.Env``, so making it
    raises an error that points at :func:`make_parallel`."""
    raise gym.error.Error(
        f"{env_id} is a multi-agent PettingZoo env, not a Gymnasium one: use "
        f"gymforge.make_parallel({env_id!r}) (or num_envs=B for the batched view)"
    )


def load_entry_point(entry_point: str) -> Any:
    """Import ``"module:attribute"``."""
    module_name, _, attribute = entry_point.partition(":")
    if not attribute:
        raise ValueError(f"entry point must look like 'module:attribute', got {entry_point!r}")
    return getattr(importlib.import_module(module_name), attribute)


#: older versions that a current leaderboard evaluates (the boards freeze them; a newer version
#: exists beside them for other work). Gymnasium's "out of date, consider upgrading" warning is
#: silenced for exactly these ids, because the boards tell users to use them; every other older
#: id keeps the warning. A test keeps this list equal to the boards' protocols.
BOARD_PINNED_VERSIONS = ("MetaBBO-v0", "MetaBBO-Alg1-v0", "MetaBBO-Alg2-v0", "MetaBBO-PSO-v0")


def _quiet_board_pinned_versions() -> None:
    for env_id in BOARD_PINNED_VERSIONS:
        warnings.filterwarnings(
            "ignore",
            message=rf".*The environment {re.escape(env_id)} is out of date",
            category=DeprecationWarning,
        )


def register_all() -> None:
    """Register every single-agent id with Gymnasium (idempotent); a multi-agent id is registered
    with an entry point that says to use :func:`make_parallel` instead."""
    _quiet_board_pinned_versions()
    for spec in SPECS:
        if spec.id in gym.registry:
            continue
        if spec.capabilities.multi_agent:
            gym.register(
                id=spec.id,
                entry_point="gymforge.registry:pettingzoo_hint",
                kwargs={"env_id": spec.id},
                disable_env_checker=True,
            )
            continue
        gym.register(
            id=spec.id,
            entry_point=spec.entry_point,
            vector_entry_point=spec.vector_entry_point,
            kwargs=dict(spec.kwargs),
            disable_env_checker=False,
        )


def make_parallel(
    env_id: str,
    num_envs: int | None = None,
    device: str = "cpu",
    render_mode: str | None = None,
    **kwargs: Any,
) -> Any:
    """A PettingZoo ``ParallelEnv`` of a multi-agent id, with keyword overrides of its kwargs.

    ``render_mode`` (PettingZoo's keyword) must be None or one of the id's declared
    ``capabilities.render_modes``; any other is refused here, before the env is built. With
    ``num_envs``, the id's batched view instead: ``num_envs`` instances on ``device`` with the
    parallel API over dicts of batched torch tensors (``batched_parallel_entry_point``).
    """
    spec = get_spec(env_id)
    if spec.parallel_entry_point is None:
        multi = [s.id for s in SPECS if s.parallel_entry_point is not None]
        raise ValueError(f"{env_id!r} is not a multi-agent id; multi-agent ids: {multi}")
    render_mode = check_render_mode(render_mode, spec.capabilities.render_modes, env_id)
    if num_envs is None:
        given = {} if render_mode is None else {"render_mode": render_mode}
        return load_entry_point(spec.parallel_entry_point)(**{**spec.kwargs, **kwargs, **given})
    if spec.batched_parallel_entry_point is None:
        raise ValueError(f"{env_id} has no batched view; drop num_envs")
    factory = load_entry_point(spec.batched_parallel_entry_point)
    return factory(num_envs=num_envs, device=device, **{**spec.kwargs, **kwargs})
