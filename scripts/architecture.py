"""The project's layers and who imports whom, read from the source: the source of truth for
``tests/test_layering.py`` and the generated part of ``docs/architecture.md``.

``python scripts/architecture.py`` prints the generated block; ``--write`` puts it into
``docs/architecture.md`` between its markers. A module may import its own layer and those below,
never one above; the table counts the imports between layers as they are, so the picture is
never drawn by hand.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- layers:begin (generated) -->", "<!-- layers:end -->"
#: the layer of each ``gymforge.<name>`` (top-level modules of ``gymforge/`` included)
LAYERS = {
    "core": 0, "hashing": 0, "recording": 0,
    "spec": 1, "ids": 1, "registry": 1, "entry_points": 1,
    "adapters": 2, "wrappers": 2,
    "checks": 3,
    "envs": 4,
    "agents": 5,
    "baselines": 6,
    "leaderboards": 7,
    "commands": 8, "cli": 8, "minari_datasets": 8, "demo": 8, "docs": 8, "__main__": 8, "__init__": 8,
}  # fmt: skip
#: source folder of each layered subpackage (the rest live under ``gymforge/``)
FOLDERS = {
    "envs": "envs",
    "agents": "agents",
    "baselines": "baselines",
    "leaderboards": "leaderboards",
}
#: what each layer holds, for the table
ROLES = {
    0: "runtime: vector base, scalar view, factory, spaces, seeding, sharding; hashes; recordings",
    1: "the registry: EnvSpec rows of every id, Gymnasium registration, entry points",
    2: "adapters (SB3 VecEnv, TorchRL EnvBase, info rows) and wrappers (Discrete views)",
    3: "public checks: conformance, golden digests, sync counter, autoreset, device checks",
    4: "the five families' dynamics, batched in torch (LineFlow also in SimPy)",
    5: "the papers' agents and exact solvers; the episode loop",
    6: "baselines and training: SB3, the on-device trainer, their shared base, the agent loader",
    7: "leaderboards: protocols, evaluator, verify, admission, renders, site",
    8: "the command line, the demo, docs generation",
}


def name_of(path: Path) -> str:
    """The top-level name a source file belongs to (``core``, ``envs``, ``cli``, ...)."""
    relative = path.relative_to(ROOT).parts
    name = relative[1] if relative[0] == "gymforge" else relative[0]
    return name.removesuffix(".py")


def imported_modules(tree: ast.AST) -> list[tuple[str, int]]:
    """``(module, line)`` of every absolute import (names imported from a module included)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def source_files() -> list[Path]:
    """Every module of the package, in its source folders."""
    files = [
        path
        for path in (ROOT / "gymforge").rglob("*.py")
        if path.relative_to(ROOT / "gymforge").parts[0].removesuffix(".py") in LAYERS
    ]
    for folder in FOLDERS.values():
        files += list((ROOT / folder).rglob("*.py"))
    return sorted(files)


def layer_imports() -> Counter[tuple[int, int]]:
    """``(importing layer, imported layer) -> number of modules`` (each module counted once
    per layer it imports)."""
    counts: Counter[tuple[int, int]] = Counter()
    for path in source_files():
        own = LAYERS[name_of(path)]
        targets = set()
        for module, _ in imported_modules(ast.parse(path.read_text(), str(path))):
            parts = module.split(".")
            if parts[0] == "gymforge" and len(parts) > 1 and parts[1] in LAYERS:
                targets.add(LAYERS[parts[1]])
        for target in targets - {own}:
            counts[(own, target)] += 1
    return counts


def render() -> str:
    """The generated block: one row per layer, what it holds and which layers it imports."""
    members: dict[int, list[str]] = {}
    for name, layer in LAYERS.items():
        if name not in ("__main__", "__init__"):
            members.setdefault(layer, []).append(name)
    counts = layer_imports()
    lines = [
        BEGIN,
        "",
        "| layer | names (`gymforge.<name>`) | holds | imports from (modules) |",
        "|---:|---|---|---|",
    ]
    for layer in sorted(members):
        below = [(t, n) for (s, t), n in sorted(counts.items()) if s == layer]
        uses = ", ".join(f"{t} ({n})" for t, n in below) or "–"
        names = ", ".join(f"`{m}`" for m in members[layer])
        lines.append(f"| {layer} | {names} | {ROLES[layer]} | {uses} |")
    lines += ["", END]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update docs/architecture.md")
    args = parser.parse_args(argv)
    block = render()
    if not args.write:
        print(block)
        return 0
    text = DOC.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    DOC.write_text(text[:start] + block + text[end:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
