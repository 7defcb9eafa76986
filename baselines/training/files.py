"""Config and sweep files read safely: YAML or JSON, with a size cap and YAML alias limits.

Config files come from users (``--config``, sweep files) and may be hostile or broken: a file
over :data:`MAX_FILE_BYTES` is refused before it is read, and YAML whose aliases expand to a
huge document ("billion laughs") is refused while it is composed, before anything is built in
memory. Parsed files are cached by path, modification time and size, since a sweep reads the
packaged defaults once per job.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import yaml

#: the largest config or sweep file read (bytes): real ones are a few kB
MAX_FILE_BYTES = 1 << 20
#: aliases (``*name``) a YAML file may use: real configs use none or a few
MAX_YAML_ALIASES = 100
#: nodes a YAML document may hold once its aliases are expanded: a few nested anchors can
#: otherwise stand for billions of nodes ("billion laughs"), which copying the parsed mapping
#: (merging layers, expanding a sweep's jobs) would then build in memory
MAX_YAML_NODES = 100_000


class _LimitedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses more than :data:`MAX_YAML_ALIASES` aliases, a recursive
    alias, and a document of more than :data:`MAX_YAML_NODES` nodes once expanded."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_YAML_ALIASES:
                raise yaml.YAMLError(
                    f"more than {MAX_YAML_ALIASES} aliases (*name); write the values out"
                )
        return super().compose_node(parent, index)

    def compose_document(self) -> Any:
        node = super().compose_document()
        expanded = _expanded_nodes(node, {}, set())
        if expanded > MAX_YAML_NODES:
            raise yaml.YAMLError(
                f"its aliases (*name) expand to more than {MAX_YAML_NODES:,} nodes (a "
                "'billion laughs' document); write the values out"
            )
        return node


def _expanded_nodes(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """Nodes under ``node`` with every alias expanded, counted once per distinct node (so in
    time linear in the document, however large the expansion)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise yaml.YAMLError("a recursive alias (an anchor used inside itself)")
    open_nodes.add(key)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        total += sum(_expanded_nodes(item, sizes, open_nodes) for item in node.value)
    elif isinstance(node, yaml.MappingNode):
        for item_key, item_value in node.value:
            total += _expanded_nodes(item_key, sizes, open_nodes)
            total += _expanded_nodes(item_value, sizes, open_nodes)
    open_nodes.discard(key)
    sizes[key] = min(total, MAX_YAML_NODES + 1)  # capped: the count only needs to cross it
    return sizes[key]


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` with the alias limits of :class:`_LimitedLoader` (raises
    ``yaml.YAMLError`` naming the limit); every config and sweep file is read through it."""
    loader = _LimitedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


@functools.lru_cache(maxsize=64)
def _parse_file(path: str, mtime_ns: int, size: int) -> Any:
    """The parsed contents of ``path`` (cached by modification time and size: a sweep reads the
    packaged defaults once per job, and the pure-Python YAML parser is slow)."""
    text = Path(path).read_text()
    return json.loads(text) if path.endswith(".json") else load_yaml(text)


def read_file(path: str | Path) -> dict[str, Any]:
    """Parse a YAML (``.yaml``/``.yml``) or JSON (``.json``) file into a mapping.

    Files over :data:`MAX_FILE_BYTES`, and YAML whose aliases expand too far (see
    :func:`load_yaml`), are refused before they are parsed or expanded.
    """
    path = Path(path)
    if path.suffix not in (".yaml", ".yml", ".json"):
        raise ValueError(f"config file must end in .yaml, .yml or .json, got {str(path)!r}")
    if not path.is_file():
        raise ValueError(f"config file not found: {path}")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{path}: {size:,} bytes, more than the {MAX_FILE_BYTES:,} a config or sweep file "
            "may have"
        )
    try:
        parsed = _parse_file(str(path.resolve()), path.stat().st_mtime_ns, size)
    except (json.JSONDecodeError, yaml.YAMLError) as error:
        raise ValueError(f"{path}: not valid {path.suffix[1:].upper()}: {error}") from None
    data = copy.deepcopy(parsed)  # the caller may change it; the cache keeps its own
    if not isinstance(data, dict):
        raise ValueError(f"{path}: the top level must be a mapping, got {type(data).__name__}")
    return data
