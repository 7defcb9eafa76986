"""Layering as a contract: core ← envs ← agents ← baselines ← leaderboards ← CLI.

A module may import its own layer and the layers below it, never one above (lazy imports inside
functions count too: they hide the same dependency). The check reads every module's syntax tree,
so it needs no import of the package and names each offending line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the layer of each ``gymforge.<name>`` (top-level modules of ``gymforge/`` included)
LAYERS = {
    "core": 0, "spec": 0, "ids": 0, "registry": 0, "recording": 0, "conformance": 0, "hashing": 0,
    "envs": 1,
    "agents": 2,
    "baselines": 3,
    "leaderboards": 4,
    "commands": 5, "cli": 5, "minari_datasets": 5, "demo": 5, "docs": 5, "__main__": 5, "__init__": 5,
}  # fmt: skip
#: source folder of each layered subpackage (the rest live under ``gymforge/``)
FOLDERS = {
    "envs": "envs",
    "agents": "agents",
    "baselines": "baselines",
    "leaderboards": "leaderboards",
}


def _layer_of_file(path: Path) -> int:
    relative = path.relative_to(ROOT).parts
    name = relative[1] if relative[0] == "gymforge" else relative[0]
    return LAYERS[name.removesuffix(".py")]


def _layer_of_module(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "gymforge" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def _imported_modules(tree: ast.AST) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def upward_imports(source: str, own: int, name: str) -> list[str]:
    """``name:line imports module (a > own)`` for each import in ``source`` above layer ``own``."""
    problems = []
    for module, line in _imported_modules(ast.parse(source, name)):
        layer = _layer_of_module(module)
        if layer is not None and layer > own:
            problems.append(f"{name}:{line} imports {module} ({layer} > {own})")
    return problems


def violations(files: list[Path]) -> list[str]:
    """Every upward import in ``files``."""
    problems = []
    for path in files:
        name = str(path.relative_to(ROOT))
        problems += upward_imports(path.read_text(), _layer_of_file(path), name)
    return sorted(set(problems))


def _all_modules() -> list[Path]:
    files = [
        path
        for path in (ROOT / "gymforge").rglob("*.py")
        if path.relative_to(ROOT / "gymforge").parts[0] in LAYERS
        or path.relative_to(ROOT / "gymforge").parts[0].removesuffix(".py") in LAYERS
    ]
    for folder in FOLDERS.values():
        files += list((ROOT / folder).rglob("*.py"))
    return files


def test_every_top_level_name_has_a_layer() -> None:
    names = {path.name.removesuffix(".py") for path in (ROOT / "gymforge").iterdir()}
    names -= {"__pycache__"}
    assert names <= set(LAYERS), f"give these a layer: {sorted(names - set(LAYERS))}"


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert not violations(_all_modules())


@pytest.mark.parametrize(
    ("layer", "source", "bad"),
    [
        ("envs", "from gymforge.agents.random_agent import RandomAgent\n", True),
        ("agents", "def f():\n    import gymforge.baselines.sb3\n", True),
        ("agents", "from gymforge import baselines\n", True),
        ("baselines", "from gymforge.envs.cmab import datasets\n", False),
        ("core", "import numpy\n", False),
    ],
)
def test_check_known_answers(layer: str, source: str, bad: bool) -> None:
    assert bool(upward_imports(source, LAYERS[layer], "probe.py")) is bad
