"""The probe id: a tiny batched env that exercises the core adapters."""

from __future__ import annotations

from gymforge.spec import Capabilities, EnvSpec

ORDER = 99  # last: a test fixture more than a benchmark

SPECS: tuple[EnvSpec, ...] = (
    EnvSpec(
        id="Probe-Match-v0",
        family="probe",
        summary="Probe env: name the shown target; exercises termination, truncation, autoreset",
        vector_env="gymforge.envs.probe.gym_env:ProbeVecEnv",
        capabilities=Capabilities(batched=True, devices=("cpu", "cuda")),
    ),
)
