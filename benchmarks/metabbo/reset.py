"""Reset time of the batched MetaBBO env: v1's counter draws beside v0's per-instance generators.

``MetaBBO-v0`` draws each random instance's parameters (shift, rotations, bias, Gallagher
peaks) from its own CPU ``torch.Generator``, one instance at a time on the host; ``MetaBBO-v1``
draws them for the whole batch from counter-based streams on the env's device
(``gymforge.envs.metabbo.bbob_counter``). For each version and batch size this measures a full
``reset(seed=...)`` (problem draws, initial populations and their evaluation, the first
observation), the problem draws alone (``build_instances`` of that reset's problems) and one
``step``, each the median of ``--repeats`` runs in one process, one torch thread, v0 and v1
interleaved. The rest of a reset evaluates the initial population (100 points per instance),
which every step does too.

Run: ``python -m benchmarks.metabbo.reset`` (``--quick``: B = 256 only, 2 repeats).
Writes ``benchmarks/results/metabbo_reset.{json,md}``.
"""

from __future__ import annotations

import torch

import gymforge  # noqa: F401 - registers the ids
from benchmarks import common
from gymforge.envs.metabbo.problems import build_instances

NAME = "metabbo_reset"
IDS = ("MetaBBO-v0", "MetaBBO-v1")


def measure(env_id: str, num_envs: int, repeat: int) -> dict[str, float]:
    """Median-ready seconds of one reset, its problem draws alone and one step."""
    env = common.make_vec_quietly(env_id, num_envs)
    reset = common.elapsed(lambda: env.reset(seed=repeat))
    problems = env.unwrapped.state.problems
    config = env.unwrapped.config.problem_set
    draws = common.elapsed(
        lambda: build_instances(config, problems.function_id, problems.instance_id, "cpu")
    )
    action = torch.as_tensor(env.action_space.sample())
    step = common.elapsed(lambda: env.step(action))
    env.close()
    return {"reset_s": reset, "draws_s": draws, "step_s": step}


def main(argv: list[str] | None = None) -> int:
    quick, result = common.measure_resets(
        IDS, (256, 1024, 4096), measure, argv, __doc__.splitlines()[0]
    )
    lines = common.reset_table(
        "MetaBBO reset: v1 counter draws vs v0 per-instance generators",
        result,
        "problem draws alone",
        "draws_s",
    )
    lines += [
        "",
        "The rest of a reset draws and evaluates the initial populations (100 points per "
        "instance), batched in both versions, about what one step costs.",
    ]
    common.write_report(NAME, quick, result, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
