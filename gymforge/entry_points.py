"""Gymnasium's entry points of the batched ids, built from each family's classes.

A batched id names one class, its ``TorchVectorEnv`` (:attr:`gymforge.spec.EnvSpec.vector_env`),
and where its scalar env is the batch-of-one view, optionally the view's base
(:attr:`~gymforge.spec.EnvSpec.scalar_base`). Gymnasium takes an entry point as a callable or as a
``"module:attribute"`` string; the registry gives strings, because Gymnasium serialises an env's
spec (``EnvSpec.to_json``, which Minari's datasets and the leaderboards' records store) only with
string entry points. The strings name attributes of this module, built on first access:

- ``make_<VecClass>`` (the vector entry point): :func:`~gymforge.core.vector_factory.make_vector`
  bound to the class, so ``gym.make_vec`` takes ``num_workers``, ``autoreset_mode`` and
  ``array_backend`` besides the class's keywords;
- ``<Name>Env`` (the entry point): :func:`~gymforge.core.scalar_env.scalar_view` of the class,
  built once and kept here under that name, which is where ``pickle`` finds it.

Nothing is built (and no family code nor torch is imported) until ``gym.make`` or
``gym.make_vec`` asks for an attribute.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["forget"]


def __getattr__(name: str) -> Any:
    """The entry point ``name`` of a registered id, built and kept on first access."""
    from gymforge.registry import all_specs, load_entry_point

    target = f"{__name__}:{name}"
    for spec in all_specs():
        if spec.vector_env is None:
            continue
        if spec.vector_entry_point == target:
            value: Any = _vector_entry_point(load_entry_point(spec.vector_env), name)
        elif spec.entry_point == target:
            from gymforge.core.scalar_env import TorchScalarEnv, scalar_view

            base = (
                TorchScalarEnv if spec.scalar_base is None else load_entry_point(spec.scalar_base)
            )
            value = scalar_view(load_entry_point(spec.vector_env), base, name=name, module=__name__)
        else:
            continue
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _vector_entry_point(env_class: type, name: str) -> Callable[..., Any]:
    from gymforge.core.vector_factory import make_vector

    def make(**kwargs: Any) -> Any:
        return make_vector(env_class, **kwargs)

    make.__name__ = make.__qualname__ = name
    make.__module__ = __name__
    make.__doc__ = (
        f"``gym.make_vec``'s entry point over :class:`{env_class.__module__}.{env_class.__name__}`"
        ": that class, or with ``num_workers=K > 1`` a ``ShardedVectorEnv`` of its instances "
        "(see :func:`gymforge.core.vector_factory.make_vector`)."
    )
    return make


def forget(names: Iterable[str]) -> None:
    """Drop the entry points ``names`` built so far (the registry calls it for removed ids)."""
    for name in names:
        globals().pop(name, None)
