"""``gymforge leaderboard verify``: the checks CI runs over every board.

For every protocol: the file's schema. For every submission on its board:

1. ``submission.json``: schema, metadata, agent record;
2. ``results.json``: its sha256 equals the one ``submission.json`` recorded (edited results);
   schema; task; the protocol sha256 it was evaluated under equals the protocol file's now
   (changed protocol); its agent record equals the submission's;
3. the artifact (SB3 zip, TorchScript) hashes to the recorded sha256 (swapped artifact), or the
   entry point string does;
4. the episodes are the protocol's seeds in order, the content hash over them matches, and the
   aggregates recomputed from them equal the stored ones;
5. episodes are re-run with the stored agent and must match within the protocol's tolerance
   (for the ids whose bits depend on BLAS kernels, a difference within
   :data:`CROSS_MACHINE_RTOL` is a note; beyond it a failure for every row a change adds or
   touches, and a note only for the sampled rows it does not touch, already on the board; the
   CPU a results file claims changes nothing):
   every episode of the submissions in ``full`` (new or changed ones, see
   :mod:`gymforge.leaderboards.changes`), and for the others a sample of ``verify_episodes``
   (the protocol's choice, or ``--sample``) drawn from ``seed``, which defaults to fresh
   randomness so that nobody can know in advance which episodes will be re-run.

Offline protocols: every evaluation seed's dataset is rebuilt by the collector and must hash to
the sha256 the protocol records, and every episode of a result must name that hash.

Agents are checked before anything of them is loaded: a board runs registered agents and weight
files read as data, never code a submission names (``check_submittable``). Every file on a
board belongs to a row or a render, and no path on it is a symbolic link
(:mod:`gymforge.leaderboards.board_files`).

Finally every generated file is rendered afresh and compared with the one on disk (stale or
hand-edited renders, leftovers). Each problem is one line naming the file and what is wrong.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gymforge.baselines.agent_loader import AgentRecord
from gymforge.checks.machine import cpu_model
from gymforge.hashing import sha256_bytes, sha256_file
from gymforge.leaderboards.admission import check_submittable
from gymforge.leaderboards.board_files import (
    board_problems,
    site_stray_files,
    submission_stray_files,
)
from gymforge.leaderboards.changes import fresh_sample_seed
from gymforge.leaderboards.evaluator import run_episodes
from gymforge.leaderboards.files import is_temporary, read_json
from gymforge.leaderboards.offline import episode_datasets
from gymforge.leaderboards.protocol import Protocol, ProtocolError, list_tasks, load_protocol
from gymforge.leaderboards.render import SITE_DIR, generated_paths, render_all
from gymforge.leaderboards.results import check_results
from gymforge.leaderboards.stats import close
from gymforge.leaderboards.submission import (
    check_submission_record,
    list_submissions,
    submissions_dir,
)


@dataclass
class Report:
    """What verify found: problems (any fails the run), notes, and what it checked."""

    problems: list[str] = field(default_factory=list)
    #: re-run differences within the bounded cross-machine tolerance (reported, not failures)
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    episodes_rerun: int = 0
    sample_seed: int = 0
    fully_rerun: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


#: ids whose dynamics take matrix products (BBOB rotations, the confounder renderer): the BLAS
#: kernels differ between CPU generations in the last bits, which an episode amplifies. A re-run
#: of these may differ from the stored figure by at most this relative amount (of the larger
#: magnitude, and at least of 1) and is then a note; beyond it, a failure, whatever CPU the
#: results claim. Sizes measured by ``benchmarks/verify_cross_machine.py`` (AMD EPYC records
#: re-run on an Intel Xeon), with headroom.
CROSS_MACHINE_RTOL: dict[str, float] = {"MetaBBO-": 1e-4, "ConfounderStream-": 1e-4}
KERNEL_DEPENDENT_IDS = tuple(CROSS_MACHINE_RTOL)


def cross_machine_rtol(env_id: str) -> float:
    """The relative difference a re-run of ``env_id`` may show as a note (0: none)."""
    for prefix, rtol in CROSS_MACHINE_RTOL.items():
        if env_id.startswith(prefix):
            return rtol
    return 0.0


def within_cross_machine(env_id: str, fresh: float, stored: float) -> bool:
    """Whether a re-run's difference from the stored figure is one that BLAS kernels of another
    CPU produce (bounded; never widened by the CPU a results file claims)."""
    rtol = cross_machine_rtol(env_id)
    return abs(fresh - stored) <= rtol * max(abs(fresh), abs(stored), 1.0)


def sample_indices(protocol: Protocol, submission_id: str, count: int, seed: int) -> list[int]:
    """The episodes verify re-runs: ``count`` of them, drawn with ``Random(f"{seed}:{id}")``."""
    count = min(count, len(protocol.seeds))
    rng = random.Random(f"{seed}:{protocol.task}:{submission_id}")
    return sorted(rng.sample(range(len(protocol.seeds)), count))


def verify_submission(
    root: Path,
    protocol: Protocol,
    folder: Path,
    sample: int | None,
    seed: int,
    rerun: bool,
    report: Report,
    everything: bool = False,
) -> None:
    """Check one submission folder; problems go to ``report`` (raises nothing)."""
    name = f"{protocol.task}/{folder.name}"
    try:
        submission = read_json(folder / "submission.json", f"{name}/submission.json")
        check_submission_record(submission, f"{name}/submission.json", protocol.task, folder.name)
        results_path = folder / "results.json"
        if not results_path.is_file():
            raise ValueError(f"{name}/results.json: file not found")
        if sha256_file(results_path) != submission["results_sha256"]:
            raise ValueError(
                f"{name}/results.json: sha256 differs from the one in submission.json "
                "(results edited after submission)"
            )
        results = read_json(results_path, f"{name}/results.json")
        check_results(results, protocol, f"{name}/results.json")
        if results["agent"] != submission["agent"]:
            raise ValueError(f"{name}: results.json and submission.json name different agents")
        record = AgentRecord.from_json(submission["agent"], f"{name}/submission.json")
        check_submittable(record, protocol)  # before anything of it is loaded
        if record.kind == "entry_point":
            if sha256_bytes(record.entry_point.encode()) != record.sha256:
                raise ValueError(f"{name}: the entry point does not match its sha256")
        else:
            artifact = folder / record.artifact
            if not artifact.is_file() or folder.resolve() not in artifact.resolve().parents:
                raise ValueError(f"{name}: artifact {record.artifact} is missing from the folder")
            if sha256_file(artifact) != record.sha256:
                raise ValueError(
                    f"{name}: artifact {record.artifact} does not match its recorded sha256 "
                    "(swapped artifact)"
                )
        for relative, digest in submission.get("files", {}).items():
            path = folder / relative
            if not path.is_file() or sha256_file(path) != digest:
                raise ValueError(f"{name}: {relative} is missing or does not match its sha256")
    except ValueError as error:
        report.problems.append(str(error))
        return
    expected = {"submission.json", "results.json", *submission.get("files", {})}
    if record.artifact is not None:
        expected.add(Path(record.artifact).as_posix())
    stray = submission_stray_files(root, folder, expected)
    if stray:
        report.problems += stray
        return
    report.checked.append(name)
    if not rerun:
        return
    if everything:
        indices = list(range(len(protocol.seeds)))
        report.fully_rerun.append(name)
    else:
        indices = sample_indices(protocol, folder.name, sample or protocol.verify_episodes, seed)
    try:
        fresh = run_episodes(protocol, record, indices=indices, base=folder)
    except Exception as error:  # the agent may fail in any way; report it, keep verifying
        report.problems.append(f"{name}: re-running episodes {indices} failed: {error!r}")
        return
    report.episodes_rerun += len(fresh)
    stored = results["episodes"]
    here = cpu_model()
    for episode in fresh:
        problems, notes = compare_episode(
            name, protocol, episode, stored[episode["index"]], touched=everything, host=here
        )
        report.problems += problems
        report.notes += notes


def compare_episode(
    name: str, protocol: Protocol, fresh: dict, stored: dict, touched: bool, host: str
) -> tuple[list[str], list[str]]:
    """Problems and notes from one re-run episode against its stored record.

    A difference within the protocol's tolerance is nothing. On kernel-dependent ids a
    difference within :data:`CROSS_MACHINE_RTOL` is a note; beyond it, a failure on a row the
    change adds or edits (``touched``) and a note on an untouched sampled row: an agent whose
    choices depend on BLAS kernels (a network picking a discrete action) can take another path
    on another CPU, which changes every figure of the episode, its length included. What a
    change adds is never excused this way.
    """
    env_id = protocol.env_id
    where = f"{name}: episode {fresh['index']} (seed {fresh['seed']})"
    untouched_kernel_row = not touched and cross_machine_rtol(env_id) > 0
    problems: list[str] = []
    notes: list[str] = []
    for key in ("metric", "return"):
        if close(fresh[key], stored[key], protocol.tolerance):
            continue
        line = (
            f"{where} re-ran to {key} {fresh[key]!r}, results.json says {stored[key]!r} "
            f"(tolerance {protocol.tolerance:g}"
        )
        if within_cross_machine(env_id, fresh[key], stored[key]):
            notes.append(
                f"{line}; within the cross-machine bound {cross_machine_rtol(env_id):g} "
                f"relative, re-run on {host})"
            )
        elif untouched_kernel_row:
            notes.append(
                f"{line}; beyond the cross-machine bound on a row this change does not "
                f"touch, re-run on {host})"
            )
        else:
            bound = cross_machine_rtol(env_id)
            extra = f", cross-machine bound {bound:g} relative" if bound else ""
            problems.append(f"{line}{extra})")
    if fresh["length"] != stored["length"]:
        line = f"{where} re-ran to length {fresh['length']}, results.json says {stored['length']}"
        if untouched_kernel_row:
            notes.append(f"{line} (a row this change does not touch, re-run on {host})")
        else:
            problems.append(line)
    return problems, notes


def verify_renders(root: Path, report: Report, progress: bool = False) -> None:
    """Compare every generated file with a fresh render."""
    try:
        fresh = render_all(root, progress=progress)
    except ValueError as error:
        report.problems.append(f"render failed: {error}")
        return
    for relative, data in sorted(fresh.items()):
        path = Path(root) / relative
        if not path.is_file():
            report.problems.append(f"{relative}: missing; run `gymforge leaderboard render`")
        elif path.read_bytes() != data:
            report.problems.append(
                f"{relative}: differs from a fresh render (stale or edited); run "
                "`gymforge leaderboard render`"
            )
    for stale in sorted(generated_paths(root) - set(fresh)):
        report.problems.append(f"{stale}: not produced by a fresh render (stale leftover)")
    screenshots = {f"{SITE_DIR}/screenshots/page.png"} | {
        f"{SITE_DIR}/screenshots/board-{task.replace('/', '-')}.png" for task in list_tasks(root)
    }
    report.problems += site_stray_files(root, set(fresh) | screenshots)


def verify(
    root: Path,
    sample: int | None = None,
    seed: int | None = None,
    rerun: bool = True,
    full: set[str] | None = None,
    progress: bool = False,
) -> Report:
    """Run every check over every board under ``root``.

    ``full`` holds ``"task/id"`` (or ``"task/*"``) of the submissions whose every episode is
    re-run; ``seed`` (default: fresh randomness, kept in the report) draws the others' sample.
    ``progress`` shows a bar per board (stderr).
    """
    full = full or set()
    seed = fresh_sample_seed() if seed is None else seed
    report = Report(sample_seed=seed)
    tasks = list_tasks(root)
    for orphan in sorted(Path(root).glob("*/*/submissions")):
        task = f"{orphan.parent.parent.name}/{orphan.parent.name}"
        if task not in tasks:
            report.problems.append(f"{task}: a board without a protocol file ({orphan})")
    iterator: Any = tasks
    if progress:
        from tqdm import tqdm

        iterator = tqdm(tasks, desc="verify", unit="board")
    for task in iterator:
        if progress:
            iterator.set_postfix_str(task)
        try:
            protocol = load_protocol(root, task)
        except ProtocolError as error:
            report.problems.append(str(error))
            continue
        if protocol.offline_dataset is not None and protocol.offline_dataset["sha256"]:
            try:  # every dataset the protocol hands out must rebuild to its recorded hash
                episode_datasets(protocol, list(range(len(protocol.seeds))))
            except ValueError as error:
                report.problems.append(str(error))
        leftovers = [p.name for p in submissions_dir(root, task).glob("*") if is_temporary(p)]
        if leftovers:
            report.problems.append(f"{task}: unfinished submission leftovers {leftovers}")
        report.problems += board_problems(root, task)
        for folder in list_submissions(root, task):
            if folder.is_symlink():
                continue  # (refused by board_problems; never followed)
            everything = f"{task}/{folder.name}" in full or f"{task}/*" in full
            verify_submission(root, protocol, folder, sample, seed, rerun, report, everything)
    verify_renders(root, report, progress=progress)
    return report
