"""SB3's per-instance info dicts as views of Gymnasium's per-key arrays, built without a loop.

Gymnasium's vector envs report ``info`` as one array per key (with a ``_key`` mask of the
instances that have it); SB3 wants a list of one dict per instance. Copying every key of every
instance into its own dict costs a Python loop over the batch per key each step (more than a
LineFlow step at B = 4096). :func:`info_rows` returns one :class:`InfoRow` per instance instead:
a mutable mapping that reads its values from the shared arrays when asked (SB3 asks for a few
keys, mostly of the instances whose episode ended) and keeps what is written to it.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

import numpy as np

#: per key: the values (one per instance) and the mask of instances that have it (None: all)
Columns = dict[str, tuple[Any, np.ndarray | None]]


class InfoRow(MutableMapping[str, Any]):
    """Instance ``index``'s info: the columns' entries where its mask is set, plus own items."""

    __slots__ = ("_columns", "_deleted", "_index", "_own")

    def __init__(self, columns: Columns, index: int) -> None:
        self._columns, self._index = columns, index
        self._own: dict[str, Any] = {}
        self._deleted: set[str] = set()

    def _has_column(self, key: str) -> bool:
        found = self._columns.get(key)
        if found is None or key in self._deleted:
            return False
        mask = found[1]
        return mask is None or bool(mask[self._index])

    def __getitem__(self, key: str) -> Any:
        if key in self._own:
            return self._own[key]
        if not self._has_column(key):
            raise KeyError(key)
        item = self._columns[key][0][self._index]
        return item.item() if isinstance(item, np.generic) else item

    def __setitem__(self, key: str, value: Any) -> None:
        self._own[key] = value

    def __delitem__(self, key: str) -> None:
        if key in self._own:
            del self._own[key]
        elif self._has_column(key):
            self._deleted.add(key)
        else:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        yield from self._own
        yield from (key for key in self._columns if key not in self._own and self._has_column(key))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def copy(self) -> dict[str, Any]:
        """A plain dict of the same items (SB3's ``VecMonitor`` copies infos)."""
        return dict(self)

    def __repr__(self) -> str:
        return f"InfoRow({dict(self)!r})"


def info_rows(columns: Columns, num_envs: int) -> list[InfoRow]:
    """One :class:`InfoRow` per instance over the same ``columns``."""
    return [InfoRow(columns, index) for index in range(num_envs)]
