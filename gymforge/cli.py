"""The ``gymforge`` command: list, inspect and roll out ids; collect data; train agents.

``list``, ``info`` and ``rollout`` live here; the other subcommands (``dataset``, ``train``, ...)
are the modules of :mod:`gymforge.commands`.

Examples::

    gymforge list
    gymforge info LineFlow-WaitingTime-v0
    gymforge rollout LineFlow-WaitingTime-v0 --agent optimal --episodes 5 --seed 0 --json
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from gymforge.agents.episode import run_episode, run_parallel_episode
from gymforge.registry import EnvSpec, all_specs, did_you_mean, get_spec, load_entry_point


def _spec_summary(spec: EnvSpec) -> dict[str, Any]:
    return {
        "id": spec.id,
        "family": spec.family,
        "summary": spec.summary,
        "entry_point": spec.entry_point,
        "vector_entry_point": spec.vector_entry_point,
        "parallel_entry_point": spec.parallel_entry_point,
        "batched_parallel_entry_point": spec.batched_parallel_entry_point,
        "kwargs": dict(spec.kwargs),
        "capabilities": asdict(spec.capabilities),
        "agents": dict(spec.agents),
    }


def cmd_list(args: argparse.Namespace) -> int:
    specs = all_specs()
    if args.json:
        print(json.dumps([_spec_summary(s) for s in specs], indent=2))
        return 0
    width = max(len(s.id) for s in specs)
    for spec in specs:
        flags = "batched" if spec.capabilities.batched else "scalar"
        print(f"{spec.id:<{width}}  {spec.family:<9} {flags:<8} {spec.summary}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    spec = get_spec(args.id)
    if spec.capabilities.multi_agent:
        from gymforge.registry import make_parallel

        env = make_parallel(spec.id)
        info = _spec_summary(spec)
        for agent in env.possible_agents:
            info[f"observation_space[{agent}]"] = str(env.observation_space(agent))
            info[f"action_space[{agent}]"] = str(env.action_space(agent))
    else:
        env = gym.make(spec.id)
        info = _spec_summary(spec)
        info["observation_space"] = str(env.observation_space)
        info["action_space"] = str(env.action_space)
    try:
        if args.json:
            print(json.dumps(info, indent=2))
            return 0
        for key, value in info.items():
            print(f"{key:>22}: {value}")
        doc = type(env.unwrapped).__doc__ or ""
        print()
        print(doc.strip())
    finally:
        env.close()
    return 0


MAX_RECORDED_FRAMES = 500


class _Film:
    """Frames of a filmed episode: the first after reset, then one every ``every`` steps and the
    last, at most :data:`MAX_RECORDED_FRAMES`."""

    def __init__(self, env: Any, every: int) -> None:
        self.env, self.every = env, every
        self.frames: list[np.ndarray] = []
        self.steps = 0

    def on_reset(self, observation: Any, info: dict[str, Any]) -> None:
        self.frames.append(self.env.render())

    def on_step(self, observation: Any, action: Any, reward: float, terminated: bool,
                truncated: bool, info: dict[str, Any]) -> None:  # fmt: skip
        self.steps += 1
        wanted = self.steps % self.every == 0 or terminated or truncated
        if wanted and len(self.frames) < MAX_RECORDED_FRAMES:
            self.frames.append(self.env.render())


def rollout(
    env_id: str,
    agent_name: str,
    episodes: int,
    seed: int,
    record: str | None = None,
    record_every: int = 20,
    progress: bool = False,
) -> dict[str, Any]:
    """Run ``episodes`` episodes of ``agent_name`` on ``env_id`` with seeds ``seed, seed+1, …``.

    With ``record``, the first episode is written as an animation (one frame every
    ``record_every`` steps, at most 500 frames). ``progress`` shows a bar on stderr, one tick
    per finished episode.
    """
    spec = get_spec(env_id)
    check_agent_name(spec, agent_name)
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    if spec.capabilities.multi_agent:
        if record is not None:
            raise ValueError(f"--record needs a single-agent id; {env_id} is a PettingZoo env")
        return parallel_rollout(spec, agent_name, episodes, seed, progress=progress)
    if record is not None:
        _check_record(spec, record, record_every)
    env = gym.make(env_id, **({"render_mode": "rgb_array"} if record else {}))
    agent = load_agent(spec, agent_name, env, batched=False)
    returns: list[float] = []
    lengths: list[int] = []
    film = _Film(env, record_every)
    bar = episode_bar(env_id, episodes, progress)
    start = time.perf_counter()
    try:
        for episode in range(episodes):
            hooks = {"on_reset": film.on_reset, "on_step": film.on_step}
            played = run_episode(
                env, agent, seed + episode, **(hooks if record and episode == 0 else {})
            )
            returns.append(played.total_return)
            lengths.append(played.length)
            bar.update(1)
    finally:
        bar.close()
        env.close()
    elapsed = time.perf_counter() - start
    seeds = [seed + e for e in range(episodes)]
    result = _summary(env_id, agent_name, seeds, returns, lengths, sum(lengths) / elapsed)
    if record is not None:
        from gymforge.recording import write_animation

        fps = env.metadata.get("render_fps", 20)
        result["recording"] = str(write_animation(film.frames, record, fps=fps))
    return result


def parallel_rollout(
    spec: EnvSpec, players_name: str, episodes: int, seed: int, progress: bool = False
) -> dict[str, Any]:
    """Episodes of a PettingZoo id's ``ParallelEnv`` played by the named players object.

    ``returns`` are the first agent's; ``returns_by_agent`` has every agent's. ``progress``
    shows a bar on stderr, one tick per finished episode.
    """
    from gymforge.registry import make_parallel

    env = make_parallel(spec.id)
    players = load_entry_point(spec.agents[players_name])(env)
    by_agent: dict[str, list[float]] = {agent: [] for agent in env.possible_agents}
    lengths: list[int] = []
    bar = episode_bar(spec.id, episodes, progress)
    start = time.perf_counter()
    try:
        for episode in range(episodes):
            played = run_parallel_episode(env, players, seed + episode)
            for agent, total in played.returns_by_agent.items():
                by_agent[agent].append(total)
            lengths.append(played.length)
            bar.update(1)
    finally:
        bar.close()
        env.close()
    elapsed = time.perf_counter() - start
    seeds = [seed + e for e in range(episodes)]
    first = by_agent[env.possible_agents[0]]
    result = _summary(spec.id, players_name, seeds, first, lengths, sum(lengths) / elapsed)
    return {**result, "returns_by_agent": by_agent}


def batched_rollout(
    env_id: str,
    agent_name: str,
    episodes: int,
    seed: int,
    num_envs: int,
    device: str,
    num_workers: int = 1,
    progress: bool = False,
) -> dict[str, Any]:
    """Run ``num_envs`` instances of the id's vector env until each finished ``episodes`` episodes
    (split over ``num_workers`` processes on the CPU, see ``gymforge.core.sharded``).

    Instance ``i`` is seeded ``seed + i``; its later episodes continue its own random stream.
    ``progress`` first says on stderr how much work that is, then shows a bar of the
    ``episodes x num_envs`` episodes, ticking as each finishes and counting the steps in between
    (the instances of some families all finish at the same step, so the step count is what moves).
    """
    spec = get_spec(env_id)
    if spec.capabilities.multi_agent:
        raise ValueError(
            f"--num-envs/--device run Gymnasium vector envs; {env_id} is a PettingZoo id: use "
            f"gymforge.make_parallel({env_id!r}, num_envs=B, device=D) from Python"
        )
    if spec.vector_entry_point is None:
        raise ValueError(
            f"{env_id} has no batched (vector) implementation; drop --num-envs/--device"
        )
    check_agent_name(spec, agent_name)
    for name, value in (("--episodes", episodes), ("--num-envs", num_envs)):
        if value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value}")
    if num_workers < 1 or num_workers > num_envs:
        raise ValueError(f"--num-workers must be in [1, --num-envs={num_envs}], got {num_workers}")
    import torch

    env = gym.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode="vector_entry_point",
        device=device,
        array_backend="torch",
        num_workers=num_workers,
    )
    agent = load_agent(spec, agent_name, env, batched=True)
    agent.reset(seed=seed)
    obs, info = env.reset(seed=seed)
    totals = np.zeros(num_envs)
    lengths = np.zeros(num_envs, dtype=np.int64)
    returns: list[list[float]] = [[] for _ in range(num_envs)]
    episode_lengths: list[int] = []
    steps = 0
    if progress:
        print(
            f"rollout {env_id}: {num_envs} instances x {episodes} episode(s) each = "
            f"{num_envs * episodes} episodes; the bar ticks per finished episode "
            f"(--quiet hides it)",
            file=sys.stderr,
        )
    bar = episode_bar(env_id, num_envs * episodes, progress)
    shown = time.monotonic()
    start = time.perf_counter()
    while min(len(r) for r in returns) < episodes:
        action = agent.act(obs.cpu().numpy(), {k: _host(v) for k, v in info.items()})
        obs, reward, terminated, truncated, info = env.step(
            torch.as_tensor(np.asarray(action), device=env.device)
        )
        totals += reward.cpu().numpy()
        lengths += 1
        steps += num_envs
        for i in np.flatnonzero((terminated | truncated).cpu().numpy()):
            if hasattr(agent, "episode_done"):  # saved policies with frames or memory
                agent.episode_done(int(i))
            if len(returns[i]) < episodes:
                returns[i].append(float(totals[i]))
                episode_lengths.append(int(lengths[i]))
                bar.update(1)
            totals[i], lengths[i] = 0.0, 0
        if progress:
            bar.set_postfix_str(f"{steps} steps", refresh=False)
            if time.monotonic() - shown >= 1.0:  # alive while no instance has finished yet
                bar.refresh()
                shown = time.monotonic()
    elapsed = time.perf_counter() - start
    bar.close()
    env.close()
    flat = [r for per_instance in returns for r in per_instance]
    seeds = [seed + i for i in range(num_envs)]
    result = _summary(env_id, agent_name, seeds, flat, episode_lengths, steps / elapsed)
    return {**result, "num_envs": num_envs, "device": device, "num_workers": num_workers}


def episode_bar(env_id: str, total: int, progress: bool) -> Any:
    """A tqdm bar on stderr over ``total`` episodes (a disabled one without ``progress``), as
    ``gymforge evaluate`` shows: long rollouts say that they are running and how far they are."""
    from tqdm import tqdm

    return tqdm(total=total, desc=f"rollout {env_id}", unit="episode", disable=not progress)


def check_agent_name(spec: EnvSpec, agent_name: str) -> None:
    """A reference agent of the id or an existing saved agent (file or run folder)."""
    if agent_name in spec.agents or Path(agent_name).exists():
        return
    hint = did_you_mean(agent_name, sorted(spec.agents))
    raise ValueError(
        f"agent must be one of {sorted(spec.agents)} for {spec.id}, or a saved agent (a "
        f"gymforge train run folder, model.zip or policy.pt), got {agent_name!r}{hint}"
    )


def load_agent(spec: EnvSpec, agent_name: str, env: Any, batched: bool) -> Any:
    """A reference agent by name, or a saved agent loaded as `gymforge evaluate` loads it."""
    if agent_name in spec.agents:
        return load_entry_point(spec.agents[agent_name])(env)
    from gymforge.baselines.agent_loader import build_agent, parse_agent_spec

    record = parse_agent_spec(agent_name, spec.id)
    if not batched:
        return build_agent(record, lambda: env)
    if record.kind == "torch_policy":
        from gymforge.baselines.ondevice.agent import TorchPolicyAgent

        return TorchPolicyAgent(record.artifact, device=str(getattr(env, "device", "cpu")))
    if record.kind == "sb3":  # (built on a single env's spaces; it acts on batches too)
        return build_agent(record, lambda: gym.make(spec.id))
    raise ValueError(
        f"batched rollouts take reference agents, SB3 models and on-device policies; "
        f"{agent_name} is a {record.kind} agent (drop --num-envs)"
    )


def _summary(
    env_id: str,
    agent: str,
    seeds: list[int],
    returns: list[float],
    lengths: list[int],
    steps_per_second: float,
) -> dict[str, Any]:
    return {
        "env_id": env_id,
        "agent": agent,
        "seeds": seeds,
        "returns": returns,
        "lengths": lengths,
        "mean_return": float(np.mean(returns)),
        "std_return": float(np.std(returns)),
        "steps_per_second": float(steps_per_second),
    }


def _host(value: Any) -> Any:
    return value.cpu().numpy() if hasattr(value, "cpu") else value


def _check_record(spec: EnvSpec, record: str, record_every: int) -> None:
    """Fail before a long rollout rather than after it."""
    from gymforge.recording import supported_suffixes

    if "rgb_array" not in spec.capabilities.render_modes:
        raise ValueError(f"--record needs an id with render mode 'rgb_array'; {spec.id} has none")
    suffix = Path(record).suffix.lower()
    if suffix not in supported_suffixes():
        raise ValueError(f"--record file must end in one of {supported_suffixes()}, got {record!r}")
    if not Path(record).resolve().parent.is_dir():
        raise ValueError(f"--record folder does not exist: {Path(record).parent}")
    from gymforge.core.outputs import check_writable

    check_writable(Path(record).resolve().parent, "--record")
    if record_every < 1:
        raise ValueError(f"--record-every must be >= 1, got {record_every}")


def cmd_rollout(args: argparse.Namespace) -> int:
    progress = not (args.quiet or args.json)
    if args.threads < 1:
        raise ValueError(f"--threads must be >= 1, got {args.threads}")
    import torch

    torch.set_num_threads(args.threads)
    if args.num_envs is not None or args.device is not None or args.num_workers is not None:
        if args.record is not None:
            raise ValueError(
                "--record works with the single env only; drop --num-envs/--device/--num-workers"
            )
        result = batched_rollout(
            args.id,
            args.agent,
            args.episodes,
            args.seed,
            1 if args.num_envs is None else args.num_envs,
            args.device or "cpu",
            1 if args.num_workers is None else args.num_workers,
            progress=progress,
        )
    else:
        result = rollout(
            args.id,
            args.agent,
            args.episodes,
            args.seed,
            args.record,
            args.record_every,
            progress=progress,
        )
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['env_id']}  agent={result['agent']}  episodes={len(result['returns'])}")
    if "num_envs" in result:
        print(
            f"  {result['num_envs']} instances on {result['device']} "
            f"({result['num_workers']} process(es)), seeds {result['seeds'][0]}…"
        )
    else:
        for s, r, n in zip(result["seeds"], result["returns"], result["lengths"], strict=True):
            print(f"  seed {s:>4}: return {r:10.2f}  ({n} steps)")
    if "returns_by_agent" in result:
        for agent, returns in result["returns_by_agent"].items():
            print(f"  agent {agent}: mean return {float(np.mean(returns)):.2f}")
    print(f"mean return {result['mean_return']:.2f} ± {result['std_return']:.2f}")
    print(f"steps/s     {result['steps_per_second']:.0f}")
    if "recording" in result:
        print(f"recording written to {result['recording']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from gymforge.commands import plain

    parser = argparse.ArgumentParser(prog="gymforge", description=plain(__doc__.splitlines()[0]))
    parser.add_argument(
        "--version",
        action="version",
        version=f"gymforge {package_version()}",
        help="print the version",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_list = sub.add_parser("list", help="list every registered id")
    p_list.add_argument("--json", action="store_true", help="machine-readable output")
    p_list.set_defaults(func=cmd_list)

    p_info = sub.add_parser("info", help="describe one id: spaces, capabilities, docs")
    p_info.add_argument("id", help="a registered id (see gymforge list)")
    p_info.add_argument("--json", action="store_true", help="machine-readable output")
    p_info.set_defaults(func=cmd_info)

    p_roll = sub.add_parser(
        "rollout",
        help="run a reference or saved agent for some episodes",
        description="Run a reference or saved agent for some episodes and print their returns. "
        "A progress bar goes to stderr (--quiet or --json hides it). With --num-envs B every one "
        "of the B instances plays --episodes episodes (default 1, so B episodes in all); the "
        "command first prints that count on stderr. Torch runs on one CPU thread unless "
        "--threads says otherwise: MetaBBO-v0 --num-envs 64 took 246 s with torch's default "
        "threads on a busy 2-core CPU and 13 s with one.",
    )
    p_roll.add_argument("id", help="a registered id (see gymforge list)")
    p_roll.add_argument(
        "--agent",
        default="random",
        help="a reference agent of the id (see gymforge info ID) or a saved agent: a model.zip, "
        "policy.pt or gymforge train run folder, as gymforge evaluate takes (default random)",
    )
    p_roll.add_argument(
        "--episodes",
        type=int,
        default=1,
        help="episodes to run (default 1); with --num-envs B, episodes per instance (B x this in "
        "all)",
    )
    p_roll.add_argument(
        "--seed", type=int, default=0, help="episode k uses seed SEED + k (default 0)"
    )
    p_roll.add_argument("--json", action="store_true", help="machine-readable output (no bar)")
    p_roll.add_argument("--quiet", action="store_true", help="no progress bar")
    p_roll.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="torch CPU threads (default 1, as dataset collect and train: the batched engines' "
        "many small operations run slower over several threads, much slower on a busy CPU)",
    )
    p_roll.add_argument(
        "--record",
        metavar="FILE",
        help="write the first episode as an animation (.gif; .mp4 with the video extra)",
    )
    p_roll.add_argument("--record-every", type=int, default=20, metavar="N", help="steps per frame")
    p_roll.add_argument(
        "--num-envs", type=int, metavar="B", help="run B instances at once on the batched engine"
    )
    p_roll.add_argument("--device", help="torch device of the batched engine (cpu, cuda)")
    p_roll.add_argument(
        "--num-workers",
        type=int,
        metavar="K",
        help="split the B instances over K worker processes, one CPU core each (CPU only)",
    )
    p_roll.set_defaults(func=cmd_rollout)

    import gymforge.commands

    for info in pkgutil.iter_modules(gymforge.commands.__path__):
        importlib.import_module(f"gymforge.commands.{info.name}").register(sub)
    return parser


def package_version() -> str:
    """The installed gymforge's version ("unknown" from a source tree never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gymforge")
    except PackageNotFoundError:  # (imported from a source tree without an install)
        return "unknown"


def subcommand_names(parser: argparse.ArgumentParser) -> list[str]:
    """The names of the parser's subcommands, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def main(argv: Sequence[str] | None = None) -> int:
    import gymforge  # noqa: F401 - registers the ids

    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    commands = subcommand_names(parser)
    if words and not words[0].startswith("-") and words[0] not in commands:
        print(
            f"gymforge: error: unknown command {words[0]!r}{did_you_mean(words[0], commands)} "
            f"(commands: {', '.join(commands)})",
            file=sys.stderr,
        )
        return 2
    args, extra = parser.parse_known_args(argv)
    if getattr(args, "passthrough", False):
        args.options = extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args))
    except ValueError as error:
        print(f"gymforge: error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:  # an optional extra that is not installed: one line
        if "pip install" not in str(error):
            raise
        print(f"gymforge: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`gymforge list --json | head`)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the exit's flush does not fail again
        return 141
    except KeyboardInterrupt:
        print(f"gymforge: interrupted; {resume_hint(args)}", file=sys.stderr)
        return 130
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        print(
            f"gymforge: error: {error.strerror or error}{where}; {resume_hint(args)}",
            file=sys.stderr,
        )
        return 1


def _option(options: list[str], name: str) -> str | None:
    """The value of ``--name VALUE`` or ``--name=VALUE`` in a trainer's options."""
    for i, item in enumerate(options):
        if item == name and i + 1 < len(options):
            return options[i + 1]
        if item.startswith(f"{name}="):
            return item.split("=", 1)[1]
    return None


def resume_hint(args: argparse.Namespace) -> str:
    """What to run after an interruption: ``train`` resumes from its run folder; ``submit``
    stores nothing unless complete; anything else is simply run again."""
    if args.command == "train" and args.id and args.algo:
        options = list(getattr(args, "options", []))
        run = _option(options, "--resume") or _option(options, "--out")
        if run is None:
            seed = _option(options, "--seed") or "0"
            torch_part = "-torch" if args.backend == "torch" else ""
            run = f"runs/{args.id}/{args.algo}{torch_part}-seed{seed}"
        steps = _option(options, "--steps") or "N"
        backend = " --backend torch" if args.backend == "torch" else ""
        return (
            f"resume with: gymforge train {args.id} --algo {args.algo}{backend} --steps {steps} "
            f"--resume {run}"
        )
    if args.command == "submit":
        return "nothing was added to the board; run the same command again"
    return "nothing to resume; run the command again"


if __name__ == "__main__":
    sys.exit(main())
