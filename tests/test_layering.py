"""Layering as a contract: core ← registry ← adapters ← checks ← envs ← agents ← baselines ←
leaderboards ← CLI.

- ``core`` is the runtime every family runs on (vector base, scalar view, factory, spaces,
  seeding, sharding, limits); it imports no other gymforge layer: not the registry, not the
  checks, not the adapters;
- the registry (``spec``, ``ids``, ``registry``, ``entry_points``) names every id and builds its
  Gymnasium entry points from the family's classes;
- ``adapters`` put a vector env behind another library's API (SB3, TorchRL);
- ``checks`` are the public instruments (conformance, golden digests, sync counting, autoreset
  and device checks) that the tests, the benchmarks and third-party env authors run: they may
  enumerate the registry and use the adapters.

A module may import its own layer and the layers below it, never one above (lazy imports inside
functions count too: they hide the same dependency). The check reads every module's syntax tree,
so it needs no import of the package and names each offending line.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from architecture import (
    DOC,
    LAYERS,
    ROOT,
    imported_modules,
    name_of,
    render,
    source_files,
)


def _layer_of_module(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "gymforge" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def upward_imports(source: str, own: int, name: str) -> list[str]:
    """``name:line imports module (a > own)`` for each import in ``source`` above layer ``own``."""
    problems = []
    for module, line in imported_modules(ast.parse(source, name)):
        layer = _layer_of_module(module)
        if layer is not None and layer > own:
            problems.append(f"{name}:{line} imports {module} ({layer} > {own})")
    return problems


def violations(files: list[Path]) -> list[str]:
    """Every upward import in ``files``."""
    problems = []
    for path in files:
        name = str(path.relative_to(ROOT))
        problems += upward_imports(path.read_text(), LAYERS[name_of(path)], name)
    return sorted(set(problems))


def test_every_top_level_name_has_a_layer() -> None:
    names = {path.name.removesuffix(".py") for path in (ROOT / "gymforge").iterdir()}
    names -= {"__pycache__"}
    assert names <= set(LAYERS), f"give these a layer: {sorted(names - set(LAYERS))}"


def test_core_is_the_lowest_layer_below_the_registry_adapters_and_checks() -> None:
    """So that any import of the registry, an adapter or a check from ``core`` is a violation."""
    assert LAYERS["core"] == min(LAYERS.values())
    assert LAYERS["core"] < LAYERS["registry"] <= LAYERS["adapters"] < LAYERS["checks"]
    assert LAYERS["checks"] < LAYERS["envs"]


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert not violations(source_files())


@pytest.mark.parametrize(
    ("layer", "source", "bad"),
    [
        ("envs", "from gymforge.agents.random_agent import RandomAgent\n", True),
        ("agents", "def f():\n    import gymforge.baselines.sb3\n", True),
        ("agents", "from gymforge import baselines\n", True),
        ("baselines", "from gymforge.envs.cmab import datasets\n", False),
        ("core", "import numpy\n", False),
        ("core", "from gymforge.registry import all_specs\n", True),
        ("core", "def f():\n    from gymforge.registry import get_spec\n", True),
        ("core", "from gymforge.checks import golden\n", True),
        ("core", "from gymforge.checks.sync_counter import SyncCounter\n", True),
        ("core", "from gymforge.adapters.sb3 import as_sb3_vec_env\n", True),
        ("core", "from gymforge.spec import EnvSpec\n", True),
        ("core", "from gymforge.hashing import sha256_file\n", False),
        ("registry", "from gymforge.core.vector_factory import make_vector\n", False),
        ("registry", "from gymforge.checks import conformance\n", True),
        ("adapters", "from gymforge.core.vector_env import TorchVectorEnv\n", False),
        ("adapters", "from gymforge.checks.golden import trajectory\n", True),
        ("checks", "def f():\n    from gymforge.registry import all_specs\n", False),
        ("checks", "from gymforge.adapters.sb3 import as_sb3_vec_env\n", False),
        ("checks", "from gymforge.envs.probe.gym_env import ProbeVecEnv\n", True),
        ("envs", "from gymforge.checks.golden import trajectory\n", False),
    ],
)
def test_check_known_answers(layer: str, source: str, bad: bool) -> None:
    assert bool(upward_imports(source, LAYERS[layer], "probe.py")) is bad


def test_architecture_doc_shows_the_layers_as_the_imports_are() -> None:
    assert render() in DOC.read_text(), (
        "docs/architecture.md is stale: run scripts/architecture.py --write"
    )
