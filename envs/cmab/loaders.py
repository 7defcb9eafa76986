"""Instance data from user files: ratings → attraction probabilities, edge lists, prompt costs."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


def attraction_from_ratings(
    path: str | Path,
    *,
    user: str | None = None,
    n_items: int | None = None,
    rating_max: float = 5.0,
    seed: int = 0,
) -> np.ndarray:
    """Attraction probabilities from a ratings file, as in the paper's Yelp setting.

    The file is CSV with a header holding ``user``, ``item`` and ``rating`` columns. Each item's
    attraction is its mean rating (over ``user``'s ratings only, when given) divided by
    ``rating_max``. With ``n_items``, that many rated items are drawn at random (``seed``), as
    the paper draws 200 rated businesses per user.

    Raises:
        ValueError: a missing column, a rating outside ``[0, rating_max]``, no ratings for
            ``user``, or fewer than ``n_items`` rated items.
    """
    path = Path(path)
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"user", "item", "rating"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(f"{path}: ratings file lacks columns {sorted(missing)}")
        totals: dict[str, list[float]] = {}
        for row in reader:
            if user is not None and row["user"] != user:
                continue
            rating = float(row["rating"])
            if not 0.0 <= rating <= rating_max:
                raise ValueError(f"{path}: rating {rating} outside [0, {rating_max}]")
            totals.setdefault(row["item"], []).append(rating)
    if not totals:
        raise ValueError(f"{path}: no ratings" + (f" for user {user!r}" if user else ""))
    items = sorted(totals)
    if n_items is not None:
        if n_items > len(items):
            raise ValueError(f"n_items={n_items} exceeds the {len(items)} rated items in {path}")
        chosen = np.random.default_rng(seed).choice(len(items), size=n_items, replace=False)
        items = [items[i] for i in sorted(chosen)]
    return np.array([np.mean(totals[item]) / rating_max for item in items], dtype=np.float64)


def read_edge_list(path: str | Path) -> tuple[int, np.ndarray, np.ndarray | None]:
    """A directed edge list: lines ``u v`` or ``u v p`` (``#`` comments), nodes ``0 … V−1``.

    Returns the node count, the edges ``(E, 2)`` int64 and the probabilities ``(E,)`` if every
    line has one (else ``None``).
    """
    path = Path(path)
    edges: list[tuple[int, int]] = []
    probs: list[float] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        if len(parts) not in (2, 3):
            raise ValueError(f"{path}:{number}: expected 'u v' or 'u v p', got {line!r}")
        u, v = int(parts[0]), int(parts[1])
        if u < 0 or v < 0 or u == v:
            raise ValueError(f"{path}:{number}: nodes must be distinct ints >= 0, got {u} {v}")
        edges.append((u, v))
        if len(parts) == 3:
            probs.append(float(parts[2]))
    if not edges:
        raise ValueError(f"{path}: no edges")
    if probs and len(probs) != len(edges):
        raise ValueError(f"{path}: give a probability on every line or on none")
    array = np.array(edges, dtype=np.int64)
    return int(array.max()) + 1, array, (np.array(probs) if probs else None)


_WORD_PIECES = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str, encoding: str | None = None) -> int:
    """Token count of ``text``: with tiktoken's ``encoding`` (e.g. ``"o200k_base"``) when named
    (requires ``tiktoken``), else a dependency-free word-piece count (words and punctuation)."""
    if encoding is None:
        return len(_WORD_PIECES.findall(text))
    try:
        import tiktoken
    except ImportError:
        raise ValueError(
            f"token_encoding={encoding!r} needs the 'tiktoken' package; install it or pass "
            "token_encoding=None for the built-in word-piece count"
        ) from None
    return len(tiktoken.get_encoding(encoding).encode(text))


def costs_from_prompts(
    prompts: Sequence[str],
    *,
    price_per_token: float = 1.0,
    encoding: str | None = None,
    tokenizer: Callable[[str], int] | None = None,
) -> np.ndarray:
    """Per-query costs ``price_per_token × tokens``, normalised by their maximum into (0, 1].

    The paper prices SciQ prompts at OpenAI API rates from tiktoken counts; the normalisation keeps
    costs in [0, 1], which the confidence bounds assume. ``tokenizer`` overrides ``encoding``.
    """
    if len(prompts) == 0:
        raise ValueError("prompts must not be empty")
    count = tokenizer or (lambda text: count_tokens(text, encoding))
    costs = np.array([price_per_token * count(str(p)) for p in prompts], dtype=np.float64)
    if costs.max() <= 0:
        raise ValueError("every prompt has zero tokens")
    return costs / costs.max()
