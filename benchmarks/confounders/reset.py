"""Reset time of the batched confounder stream: v1's counter draws beside v0's generators.

``ConfounderStream-v0`` draws each instance's episode from its own ``torch.Generator`` and keeps
its ``2N x 1024`` pixel noise; ``ConfounderStream-v1`` draws the whole batch from counter-based
streams and reads its noise from a shared table (``gymforge.envs.confounders.counter_draws``).
For each version and batch size this measures a full ``reset(seed=...)`` (draws plus the first
observation), the draws alone (``_reset_instances`` on every instance) and one ``step``, each
the median of ``--repeats`` runs in one process, one torch thread, v0 and v1 interleaved.
Target: v1's reset at B = 1024 <= 0.5 s on this CPU.

Run: ``python -m benchmarks.confounders.reset`` (``--quick``: B = 256 only, 2 repeats).
Writes ``benchmarks/results/confounders_reset.{json,md}``.
"""

from __future__ import annotations

import torch

import gymforge  # noqa: F401 - registers the ids
from benchmarks import common

NAME = "confounders_reset"
IDS = ("ConfounderStream-v0", "ConfounderStream-v1")
TARGET_S = 0.5


def measure(env_id: str, num_envs: int, repeat: int) -> dict[str, float]:
    """Median seconds of one reset, the draws alone and one step (run ``repeat``)."""
    env = common.make_vec_quietly(env_id, num_envs)
    everyone = torch.ones(num_envs, dtype=torch.bool)
    action = torch.full((num_envs, env.single_action_space.shape[0]), 0.5)
    reset = common.elapsed(lambda: env.reset(seed=repeat))
    draws = common.elapsed(lambda: env.unwrapped._reset_instances(everyone))
    step = common.elapsed(lambda: env.step(action))
    env.close()
    return {"reset_s": reset, "draws_s": draws, "step_s": step}


def main(argv: list[str] | None = None) -> int:
    quick, result = common.measure_resets(IDS, (256, 1024), measure, argv, __doc__.splitlines()[0])
    v1_1024 = next(
        (
            r
            for r in result["rows"]
            if r["env_id"] == "ConfounderStream-v1" and r["num_envs"] == 1024
        ),
        None,
    )
    result["target_s"] = TARGET_S
    result["target_met"] = None if v1_1024 is None else v1_1024["reset_s"] <= TARGET_S
    lines = common.reset_table(
        "Confounder stream reset: v1 counter draws vs v0 generators",
        result,
        "draws alone",
        "reset_s",
    )
    if v1_1024 is not None:
        verdict = "met" if result["target_met"] else "not met"
        lines += [
            "",
            f"Target (v1 reset at B = 1024 <= {TARGET_S} s): **{verdict}** "
            f"({v1_1024['reset_s']:.3f} s, of which {v1_1024['draws_s']:.3f} s draws; the rest "
            "renders the first observation, as every step does).",
        ]
    common.write_report(NAME, quick, result, lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
