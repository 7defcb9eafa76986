"""Generate the documentation site's pages from the registry, the protocols and the results.

- ``docs/envs/<id>.md`` and ``docs/envs/index.md``: each page is the env class's docstring (the
  docs *are* the docstrings) plus what the registry knows: capabilities, default kwargs,
  reference agents, and the concrete spaces of the id. An id that renders ``rgb_array`` frames
  (every LineFlow id) also gets ``docs/envs/images/<id>.png``, a frame of a seeded episode,
  embedded in its page.
- ``docs/versions.md``: which id and version each leaderboard evaluates, and why the other
  versions of an id are still registered (from the frozen protocols, the archived boards and the
  ids' Version History sections).
- ``docs/results/index.md``: the recorded benchmark results in ``benchmarks/results/``, by
  family, then the archived exploratory runs of ``benchmarks/results/archive/`` in a section of
  their own. The result pages themselves stay where the benchmarks write them; :func:`on_files`, a
  MkDocs hook named in ``mkdocs.yml``, adds them to the site at build time so that the repository
  holds one copy.

Run ``python -m gymforge.docs`` (or ``make docs``, which also builds the site); tests check that
the committed pages are up to date and that the site builds with ``mkdocs build --strict``.
"""

from __future__ import annotations

import argparse
import inspect
import io
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.registry import EnvSpec, all_specs, load_entry_point, make_parallel

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
#: the archived exploratory runs, under ``RESULTS``; the site shows them as ``results/archive/``
ARCHIVE = "archive"
PROTOCOLS = ROOT / "leaderboards" / "protocols"
BOARDS = ROOT / "leaderboards"

#: the env pages' image folder, relative to ``docs/envs``
IMAGES = "images"
#: steps of the seeded episode (seed 0) whose last frame an env page shows
FRAME_STEPS = 400
#: width in pixels of the stored frame (downscaled from the renderer's 960 px: small files)
FRAME_WIDTH = 640


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
        f"Measured by `benchmarks/{source.stem.removesuffix('_controllers')}/controllers.py`"
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


def renders_frames(spec: EnvSpec) -> bool:
    """Whether the id's page shows a frame: single-agent ids with an ``rgb_array`` render mode."""
    return "rgb_array" in spec.capabilities.render_modes and not spec.capabilities.multi_agent


def frame_agent(spec: EnvSpec) -> str:
    """The agent that plays the pictured episode: the first reference agent other than
    ``random`` (a line under control looks like the task), else ``random``."""
    return next((name for name in spec.agents if name != "random"), "random")


def image_markdown(spec: EnvSpec) -> str:
    """The page's Markdown embedding ``images/<id>.png`` with a caption of what it shows."""
    agent = frame_agent(spec)
    caption = f"{spec.id} after {FRAME_STEPS} steps of seed 0 under the `{agent}` agent"
    return f"![{spec.id}]({IMAGES}/{spec.id}.png)\n\n*{caption}.*"


def render_frame_png(spec: EnvSpec) -> bytes:
    """The PNG of the frame ``image_markdown`` describes, downscaled to ``FRAME_WIDTH`` pixels.

    The episode is seeded (env and action space), so a rerun draws the same frame.
    """
    from PIL import Image

    env = gym.make(spec.id, render_mode="rgb_array")
    try:
        observation, info = env.reset(seed=0)
        env.action_space.seed(0)
        agent_name = frame_agent(spec)
        agent: Any = None
        if agent_name != "random":
            agent = load_entry_point(spec.agents[agent_name])(env)
        for _ in range(FRAME_STEPS):
            action = env.action_space.sample() if agent is None else agent.act(observation, info)
            observation, _, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                break
        frame = np.asarray(env.render())
    finally:
        env.close()
    image = Image.fromarray(frame)
    if image.width > FRAME_WIDTH:
        height = round(image.height * FRAME_WIDTH / image.width)
        image = image.resize((FRAME_WIDTH, height), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


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
    if renders_frames(spec):
        lines += [image_markdown(spec), ""]
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


def _section(page: str, heading: str) -> str:
    """The body of ``## heading`` in a generated page, without the heading line."""
    parts = page.split(f"## {heading}\n", 1)
    return parts[1].split("\n## ", 1)[0].strip() if len(parts) == 2 else ""


def _protocols(folder: Path, pattern: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob(pattern))]


def _base_id(env_id: str) -> str:
    """``MetaBBO-Alg1-v1`` → ``MetaBBO-Alg1``."""
    return re.sub(r"-v\d+$", "", env_id)


def render_versions(
    specs: Sequence[EnvSpec],
    pages: dict[str, str],
    protocols: Path = PROTOCOLS,
    boards: Path = BOARDS,
) -> str:
    """``docs/versions.md``: each board's env id and version, the archived board versions, and
    the Version History of every id registered in more than one version."""
    current = _protocols(protocols, "*/*.json")
    archived = _protocols(boards, "*/*/archive/v*/protocol.json")
    lines = [
        "# Versions",
        "",
        "Generated by `python -m gymforge.docs` from the frozen protocols",
        "(`leaderboards/protocols/`), the archived boards (`leaderboards/<suite>/<Task>/archive/`)",
        "and the ids' Version History sections.",
        "",
        "An id's version changes when its dynamics or its random draws change, so that a figure",
        "recorded on `Name-v0` keeps meaning what it meant. A leaderboard freezes the id it",
        "evaluates in its protocol; changing what a board measures freezes a new protocol",
        "version and archives the old board with its rows.",
        "",
        "## The id each board evaluates",
        "",
        "| board | protocol version | env id | env version |",
        "|---|---:|---|---:|",
    ]
    for protocol in current:
        env = protocol["env"]
        lines.append(
            f"| `{protocol['task']}` | {protocol['version']} | [{env['id']}](envs/{env['id']}.md)"
            f" | v{env['version']} |"
        )
    lines += [
        "",
        "## Archived board versions",
        "",
        "| board | archived protocol version | env id |",
        "|---|---:|---|",
    ]
    for protocol in sorted(archived, key=lambda p: (p["task"], p["version"])):
        env_id = protocol["env"]["id"]
        lines.append(f"| `{protocol['task']}` | {protocol['version']} | `{env_id}` |")
    on_boards = {p["env"]["id"] for p in current}
    on_archives = {p["env"]["id"] for p in archived}
    families: dict[str, list[EnvSpec]] = {}
    for spec in specs:
        families.setdefault(_base_id(spec.id), []).append(spec)
    lines += [
        "",
        "## Ids registered in more than one version",
        "",
        "Gymnasium warns that an older version is out of date whenever a newer one is"
        " registered; for the older versions a current board evaluates (marked below) the"
        " warning is silenced, since the board is where they are meant to be used.",
        "",
    ]
    first_with: dict[str, str] = {}  # a Version History text -> the first id base showing it
    for base, versions in families.items():
        if len(versions) < 2:
            continue
        lines += [f"### {base}", ""]
        for spec in versions:
            if spec.id in on_boards:
                where = "evaluated by a current board"
            elif spec.id in on_archives:
                where = "evaluated by archived boards only"
            else:
                where = "on no board"
            lines.append(f"- [{spec.id}](envs/{spec.id}.md): {where}.")
        history = _section(pages[f"{versions[-1].id}.md"], "Version History")
        if history in first_with:
            lines += ["", f"Version History: the same as {first_with[history]}'s.", ""]
        else:
            first_with[history] = base
            lines += ["", "Version History (from the env's docstring):", "", history, ""]
    lines += [
        "Every other id exists in one version, v0: no change to its dynamics or draws has",
        "needed a new one.",
    ]
    return "\n".join(lines) + "\n"


#: title of each family's section in the results index, by file-name prefix
RESULT_FAMILIES = {
    "lineflow": "LineFlow",
    "rl": "LineFlow RL baselines",
    "train": "Training (on-device trainer and SB3)",
    "metabbo": "MetaBBO",
    "cmab": "Offline CMAB",
    "minmax": "Min-max games",
    "confounders": "Confounder streams",
    "sync": "Host synchronisation",
}


#: title of the results index's last section, the archived exploratory runs
ARCHIVE_SECTION = "Archive (exploratory runs)"


def result_pages(results: Path = RESULTS) -> list[Path]:
    """The recorded results pages, ``benchmarks/results/*.md``."""
    return sorted(results.glob("*.md"))


def archive_pages(results: Path = RESULTS) -> list[Path]:
    """The archived results pages, ``benchmarks/results/archive/*.md`` (its README aside: the
    index's archive section says what it says)."""
    return sorted(p for p in (results / ARCHIVE).glob("*.md") if p.name != "README.md")


def _title(path: Path) -> str:
    return path.read_text(encoding="utf-8").splitlines()[0].removeprefix("# ").strip()


def render_results_index(results: Path = RESULTS) -> str:
    """``docs/results/index.md``: every results page by family, described by its title, then
    the archived pages in a section of their own."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for path in result_pages(results):
        family = RESULT_FAMILIES.get(path.stem.split("_", 1)[0], "Other")
        groups.setdefault(family, []).append((path.name, _title(path)))
    lines = [
        "# Results",
        "",
        "The figures the project reports, as recorded by the benchmark scripts in `benchmarks/`",
        "(each page says how it was measured, on which machine and with which command). The pages",
        "are `benchmarks/results/*.md`, added to this site when it is built; the JSON beside each",
        "one holds the raw numbers. Generated by `python -m gymforge.docs`.",
        "",
    ]
    for family in [*RESULT_FAMILIES.values(), "Other"]:
        if family not in groups:
            continue
        lines += [f"## {family}", ""]
        lines += [f"- [{title}]({name}) (`{name}`)" for name, title in groups[family]]
        lines.append("")
    archived = archive_pages(results)
    if archived:
        lines += [
            f"## {ARCHIVE_SECTION}",
            "",
            "Exploratory runs kept for the record (extra training seeds, ablations, side variants,",
            "quick runs); the results the project cites are in the sections above. The pages are",
            f"`benchmarks/results/{ARCHIVE}/*.md`; the folder's `README.md` says what each one was.",
            "",
        ]
        lines += [
            f"- [{_title(path)}]({ARCHIVE}/{path.name}) (`{ARCHIVE}/{path.name}`)"
            for path in archived
        ]
        lines.append("")
    return "\n".join(lines)


def site_pages(specs: Sequence[EnvSpec], pages: dict[str, str]) -> dict[str, str]:
    """Path under ``docs/`` → content of the generated site pages outside ``docs/envs``."""
    return {
        "versions.md": render_versions(specs, pages),
        "results/index.md": render_results_index(),
    }


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add ``benchmarks/results/*.md`` and their figures as ``results/<name>``,
    and the archived ones (``benchmarks/results/archive/``) as ``results/archive/<name>``.

    The pages are built from where the benchmarks write them, so the repository keeps a single
    copy and the site always shows the recorded results.
    """
    from mkdocs.structure.files import File

    archive = RESULTS / ARCHIVE
    for path in [
        *result_pages(),
        *sorted(RESULTS.glob("*.png")),
        *archive_pages(),
        *sorted(archive.glob("*.png")),
    ]:
        name = path.relative_to(RESULTS).as_posix()
        files.append(File.generated(config, f"results/{name}", abs_src_path=str(path)))
    return files


def expected_pages() -> dict[str, str]:
    """File name → content of every generated page."""
    specs = list(all_specs())
    pages = {f"{s.id}.md": render_page(s) for s in specs}
    pages["index.md"] = render_index(specs)
    return pages


def _write(path: Path, content: str | bytes) -> Path:
    """Write atomically (a reader never sees half a page)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    if isinstance(content, bytes):
        tmp.write_bytes(content)
    else:
        tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_pages(out: Path, docs: Path | None = None) -> list[Path]:
    """Write the env pages and their images into ``out`` and, when ``docs`` is given, the other
    generated site pages into ``docs``."""
    pages = expected_pages()
    written = [_write(out / name, content) for name, content in pages.items()]
    specs = list(all_specs())
    written += [
        _write(out / IMAGES / f"{s.id}.png", render_frame_png(s))
        for s in specs
        if renders_frames(s)
    ]
    if docs is not None:
        written += [_write(docs / name, text) for name, text in site_pages(specs, pages).items()]
    return written


def main(argv: Sequence[str] | None = None) -> int:
    import gymforge  # noqa: F401 - registers the ids

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=Path("docs"), help="the site's docs folder")
    parser.add_argument("--out", type=Path, default=None, help="env pages (default: DOCS/envs)")
    args = parser.parse_args(argv)
    for path in write_pages(args.out or args.docs / "envs", args.docs):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
