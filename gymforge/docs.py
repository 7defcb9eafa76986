"""Generate ``docs/envs/<id>.md`` and ``docs/envs/index.md`` from the registry.

Each page is the env class's docstring (the docs *are* the docstrings) plus what the registry
knows: capabilities, default kwargs, reference agents, and the concrete spaces of the id.
Run ``python -m gymforge.docs`` (or ``make docs``); a test checks the pages are up to date.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
from collections.abc import Sequence
from pathlib import Path

import gymnasium as gym
import numpy as np

from gymforge.registry import EnvSpec, all_specs, make_parallel

REQUIRED_HEADINGS = (
    "Description",
    "Action Space",
    "Observation Space",
    "Rewards",
    "Starting State",
    "Episode End",
    "Arguments",
    "Version History",
)


ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def reference_figures(env_id: str, results: Path = RESULTS) -> str:
    """The id's measured controller figures from ``benchmarks/results/*_controllers.json``."""
    rows: dict[str, list[dict]] = {}
    findings: list[dict] = []
    source = None
    for path in sorted(results.glob("*_controllers.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for episode in data.get("episodes", []):
            if (
                episode["env_id"] == env_id
                and episode.get("error") is None
                and episode["phase"] == "main"
            ):
                rows.setdefault(episode["controller"], []).append(episode)
                source = path
        findings += [f for f in data.get("findings", []) if f["env_id"] == env_id]
    if not rows:
        return ""
    lines = [
        "## Reference figures",
        "",
        f"Measured by `benchmarks/{source.stem.removesuffix('_controllers')}_controllers.py`"
        f" (results in `{source.relative_to(ROOT).as_posix()}`); mean ± std over the seeds shown.",
        "",
        "| controller | return | parts | scrap | seeds |",
        "|---|---|---:|---:|---|",
    ]
    for controller, episodes in rows.items():
        returns = np.array([e["return"] for e in episodes], dtype=float)
        parts = np.mean([e["parts"] for e in episodes])
        scrap = np.mean([e["scrap"] for e in episodes])
        seeds = sorted(e["seed"] for e in episodes)
        lines.append(
            f"| {controller} | {returns.mean():.1f} ± {returns.std():.1f} | {parts:.1f} | "
            f"{scrap:.1f} | {seeds[0]}–{seeds[-1]} |"
        )
    for finding in findings:
        lines += [
            "",
            f"Upstream's documented optimum: **{finding['documented']:g}** "
            f"({finding['documented_source']}); best found here: **{finding['best_mean_return']:.1f}** "
            f"({finding['best_controller']}) — {finding['verdict']}.",
        ]
    return "\n".join(lines) + "\n"


def _spaces_rows(spec: EnvSpec) -> tuple[object, list[str]]:
    """The env to document and its space rows (per agent for PettingZoo ids)."""
    if spec.capabilities.multi_agent:
        env = make_parallel(spec.id)
        rows = [f"| parallel entry point | `{spec.parallel_entry_point}` |"]
        if spec.batched_parallel_entry_point is not None:
            rows.append(f"| batched parallel view | `{spec.batched_parallel_entry_point}` |")
        for agent in env.possible_agents:
            rows.append(f"| observation space of `{agent}` | `{env.observation_space(agent)}` |")
            rows.append(f"| action space of `{agent}` | `{env.action_space(agent)}` |")
        return env, rows
    env = gym.make(spec.id)
    return env, [
        f"| observation space | `{env.observation_space}` |",
        f"| action space | `{env.action_space}` |",
    ]


def render_page(spec: EnvSpec) -> str:
    env, space_rows = _spaces_rows(spec)
    base = getattr(env, "unwrapped", env)
    caps = spec.capabilities
    lines = [
        f"# {spec.id}",
        "",
        spec.summary,
        "",
        "| | |",
        "|---|---|",
        f"| family | `{spec.family}` |",
        *(
            f"| {label} | `{entry}` |"
            for label, entry in (
                ("entry point", spec.entry_point),
                ("vector entry point", spec.vector_entry_point),
            )
            if entry is not None
        ),
        f"| default kwargs | `{dict(spec.kwargs)}` |",
        f"| batched (torch) | {caps.batched} on {', '.join(caps.devices)}"
        + (" (`num_workers=K`: a CPU batch over K processes)" if spec.vector_entry_point else "")
        + " |",
        f"| render modes | {', '.join(caps.render_modes) or 'none'} |",
        f"| reference agents | {', '.join(f'`{a}`' for a in spec.agents) or 'none'} |",
        *space_rows,
        "",
    ]
    doc = inspect.cleandoc(type(base).__doc__ or "")
    lines += [doc, ""]
    describe = getattr(base, "describe_variant", None)
    if describe is not None:
        lines += [describe()]
    figures = reference_figures(spec.id)
    if figures:
        lines += [figures]
    features = getattr(base, "features", None)
    if features:
        lines += [f"## Observation features of `{spec.id}`", ""]
        lines += ["| Index | Name | Unit | Min | Max |", "|---|---|---|---|---|"]
        low, high = env.observation_space.low, env.observation_space.high
        for i, feature in enumerate(features):
            lines.append(f"| {i} | `{feature.name}` | {feature.unit} | {low[i]:g} | {high[i]:g} |")
        lines.append("")
    env.close()
    return "\n".join(lines)


def render_index(specs: Sequence[EnvSpec]) -> str:
    lines = ["# Environments", "", "Generated from `gymforge/registry.py`.", ""]
    lines += ["| id | family | API | batched | summary |", "|---|---|---|---|---|"]
    for spec in specs:
        api = "PettingZoo" if spec.capabilities.multi_agent else "Gymnasium"
        batched = "yes" if spec.capabilities.batched else "no"
        lines.append(
            f"| [{spec.id}]({spec.id}.md) | {spec.family} | {api} | {batched} | {spec.summary} |"
        )
    return "\n".join(lines) + "\n"


def expected_pages() -> dict[str, str]:
    """File name → content of every generated page."""
    specs = list(all_specs())
    pages = {f"{s.id}.md": render_page(s) for s in specs}
    pages["index.md"] = render_index(specs)
    return pages


def write_pages(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in expected_pages().items():
        path = out / name
        tmp = path.with_suffix(".md.tmp")
        tmp.write_text(content, encoding="utf-8")
        os.replace(tmp, path)
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    import gymforge  # noqa: F401 - registers the ids

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/envs"))
    args = parser.parse_args(argv)
    for path in write_pages(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
