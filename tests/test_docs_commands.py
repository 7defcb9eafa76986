"""Every shell command block of the hand-written pages says how long it runs.

A reader who copies a command from the README, the tour, a guide or a family page should know
before pressing enter whether it takes seconds or an hour. Each fenced shell block (```bash,
```sh, ```console, ```shell) of those pages needs a run-time statement, a number with a unit of
time ("13 s here", "about 2 min", "1,187 s"), in a comment inside the block or within the three
lines before its opening fence or after its closing one. Blocks that only install (pip install,
make setup, git clone) are exempt. The generated pages (docs/envs, docs/api, docs/results,
docs/versions.md) are not scanned.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = {"bash", "sh", "console", "shell"}
WINDOW = 3  # lines before the opening fence and after the closing one
TIME = re.compile(
    r"\d(?:[\d,.]*\d)?\s*(?:ms|s|sec|secs|seconds?|min|mins|minutes?|h|hours?)\b", re.IGNORECASE
)
# A line of an install-only block: fetching the code or installing it, nothing that runs it.
INSTALL_LINE = re.compile(
    r"^\s*(?:\$\s*)?(?:[A-Z_]+=\S*\s+)*"
    r"(?:git clone\b|cd\s|pip install\b|python -m pip install\b|make setup\b)"
)
OPENING = re.compile(r"^\s*```\s*([\w+-]*)")
CLOSING = re.compile(r"^\s*```\s*$")


def hand_written_pages() -> list[Path]:
    docs = ROOT / "docs"
    pages = [ROOT / "README.md"]
    pages += [docs / name for name in ("index.md", "tour.md", "figures.md", "architecture.md")]
    pages += sorted((docs / "guides").glob("*.md")) + sorted((docs / "families").glob("*.md"))
    return [page for page in pages if page.is_file()]


def shell_blocks(text: str) -> list[tuple[int, int, list[str]]]:
    """(opening line, closing line, body lines) of each fenced shell block; lines count from 1."""
    lines = text.splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = OPENING.match(lines[index])
        if not opening:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not CLOSING.match(lines[end]):
            end += 1
        if opening.group(1).lower() in SHELL_LANGUAGES:
            blocks.append((index + 1, end + 1, lines[index + 1 : end]))
        index = end + 1
    return blocks


def is_install_only(body: list[str]) -> bool:
    commands = [line for line in body if line.strip() and not line.lstrip().startswith("#")]
    return bool(commands) and all(INSTALL_LINE.match(line) for line in commands)


def untimed_blocks(text: str) -> list[int]:
    """Opening-fence line numbers of the shell blocks that state no run time nearby."""
    lines = text.splitlines()
    missing = []
    for opening, closing, body in shell_blocks(text):
        if is_install_only(body):
            continue
        before = lines[max(0, opening - 1 - WINDOW) : opening - 1]
        after = lines[closing : closing + WINDOW]
        if not any(TIME.search(line) for line in before + body + after):
            missing.append(opening)
    return missing


def test_the_scan_finds_the_pages_and_their_blocks() -> None:
    pages = {page.relative_to(ROOT).as_posix() for page in hand_written_pages()}
    assert {"README.md", "docs/tour.md", "docs/index.md"} <= pages
    assert not any(name.startswith(("docs/envs/", "docs/api/", "docs/results/")) for name in pages)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(shell_blocks(readme)) >= 3


@pytest.mark.parametrize(
    ("page", "untimed"),
    [
        ("Run it:\n\n```bash\ngymforge list\n```\n\nIt prints every id.\n", [3]),
        ("Run it:\n\n```bash\ngymforge list   # 3 s here, 36 ids\n```\n", []),
        ("```sh\ngymforge list\n```\n\nAbout 3 s on 2 cores.\n", []),
        ("Takes 1,187 s.\n```console\n$ gymforge list\n```\n", []),
        ("```bash\ngymforge list\n```\n\n\n\nfour lines below: 3 s\n", [1]),
        ("```bash\ngymforge train X --steps 1000000   # 1M steps, 64 lines\n```\n", [1]),
        ("```bash\ngit clone URL && cd gymforge\npip install '.[dev]'\n```\n", []),
        ("```bash\nTORCH_INDEX_URL= make setup\n```\n", []),
        ("```bash\npip install .\nmake demo\n```\n", [1]),
        ("```python\nprint(1)\n```\n", []),
    ],
)
def test_known_answers(page: str, untimed: list[int]) -> None:
    assert untimed_blocks(page) == untimed


def test_every_shell_block_states_its_run_time() -> None:
    offenders = []
    for page in hand_written_pages():
        for line in untimed_blocks(page.read_text(encoding="utf-8")):
            offenders.append(f"{page.relative_to(ROOT)}:{line}")
    assert not offenders, (
        "shell blocks without a run time (a number with s/min/h in the block's comments or "
        "within 3 lines of it):\n" + "\n".join(offenders)
    )
