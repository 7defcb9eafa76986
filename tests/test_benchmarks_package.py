"""``benchmarks`` is a package: its scripts import as modules and are run with ``python -m``.

A family's scripts live in its subpackage (``benchmarks.lineflow.scalar``, ...), the shared ones
at the top (``benchmarks.common``, ...). Importing a script must do no work (the measurement
starts only under ``__main__``), nothing in the folder may edit ``sys.path`` (the package import
replaces that), and no tracked text may still tell people to run ``python benchmarks/<name>.py``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
FAMILIES = ("cmab", "confounders", "lineflow", "metabbo", "minmax")
# every module but the packages' __init__, by its name under ``benchmarks``: "lineflow.scalar"
SCRIPTS = sorted(
    ".".join(p.relative_to(BENCHMARKS).with_suffix("").parts)
    for p in BENCHMARKS.rglob("*.py")
    if p.stem != "__init__"
)

# `python benchmarks/x.py`, `.venv/bin/python -m benchmarks.lineflow.x`, `$(PY) benchmarks/...`
OLD_FORM = re.compile(r"(python\S*|\$\(PY\)|\"\$python\")\s+benchmarks/(\w+/)*\w+\.py")
MAX_LINES = 600  # a longer script is split into modules with one job each


def _path(name: str) -> Path:
    return BENCHMARKS.joinpath(*name.split(".")).with_suffix(".py")


def _main_guarded(tree: ast.Module) -> bool:
    """Whether the module ends its top level with an ``if __name__ == "__main__":`` block."""
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name)
            and node.test.left.id == "__name__"
        ):
            return True
    return False


def _top_level_calls(tree: ast.Module) -> list[int]:
    """Lines of bare top-level expression statements that call something (work at import)."""
    return [
        node.lineno
        for node in tree.body
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    ]


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_has_a_main_guard_and_no_top_level_calls(name: str) -> None:
    tree = ast.parse(_path(name).read_text(), f"{name}.py")
    assert _top_level_calls(tree) == [], f"{name} calls something at import"
    if name != "common" and any(
        isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body
    ):
        assert _main_guarded(tree), f"{name} has main() but no __main__ guard"


def test_each_family_is_a_subpackage_and_no_family_script_is_left_at_the_top() -> None:
    for family in FAMILIES:
        init = BENCHMARKS / family / "__init__.py"
        assert init.is_file(), f"benchmarks/{family}/ has no __init__.py"
        assert ast.get_docstring(ast.parse(init.read_text())), f"{init} has no docstring"
    flat = [p.name for p in BENCHMARKS.glob("*.py") if p.stem.startswith(FAMILIES)]
    assert flat == [], "family scripts belong in their subpackage (benchmarks/<family>/)"


def test_every_script_imports_as_a_module_without_side_effects(tmp_path: Path) -> None:
    """One fresh interpreter imports them all from a scratch folder: no output, no files."""
    code = (
        "import importlib, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        f"for name in {SCRIPTS!r}:\n"
        "    importlib.import_module('benchmarks.' + name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_no_benchmark_module_is_too_long_to_read() -> None:
    lengths = {name: len(_path(name).read_text().splitlines()) for name in SCRIPTS}
    assert {name: n for name, n in lengths.items() if n > MAX_LINES} == {}


def test_no_sys_path_edits_in_benchmarks() -> None:
    offenders = [
        f"{path.relative_to(BENCHMARKS)}:{number}"
        for path in sorted(BENCHMARKS.rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"sys\.path\.(insert|append|extend)|sys\.path\s*\+?=", line)
    ]
    assert offenders == []


def test_no_tracked_text_runs_a_benchmark_by_its_file_path() -> None:
    """Docs, scripts and configs say ``python -m benchmarks.<name>``; recorded results are exempt."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    offenders = []
    for name in files:
        path = ROOT / name
        if name.startswith("benchmarks/results/") or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary (models, figures)
        offenders += [
            f"{name}:{number}"
            for number, line in enumerate(text.splitlines(), 1)
            if OLD_FORM.search(line) and name != "tests/test_benchmarks_package.py"
        ]
    assert offenders == []


def test_command_line_records_the_module_form() -> None:
    from benchmarks import common

    argv = [str(BENCHMARKS / "lineflow" / "scalar.py"), "--episodes", "3", "--out", "a b"]
    assert (
        common.command_line(argv) == "python -m benchmarks.lineflow.scalar --episodes 3 --out 'a b'"
    )
    assert common.command_line(["benchmarks/cmab/speed.py"]) == "python -m benchmarks.cmab.speed"
    assert common.command_line(["benchmarks/train_speed.py"]) == "python -m benchmarks.train_speed"


@pytest.mark.parametrize(
    ("line", "bad"),
    [
        ("python benchmarks/lineflow/scalar.py --quick", True),
        (".venv/bin/python benchmarks/cmab/speed.py", True),
        ("\t$(PY) benchmarks/lineflow/scalar.py", True),
        ('"$python" benchmarks/train_speed.py \\', True),
        ("python benchmarks/lineflow_scalar.py", True),
        ("python -m benchmarks.lineflow.scalar --quick", False),
        ("measured by `benchmarks/lineflow/parity.py`", False),
    ],
)
def test_old_form_known_answers(line: str, bad: bool) -> None:
    assert bool(OLD_FORM.search(line)) is bad
