"""Checks that a batched env behaves alike across batch sizes and devices.

* :func:`batch_independence_problem`: instance ``i`` of a batch must give the same observations,
  rewards, terminations and truncations whatever the batch size, under the same actions.
* :func:`device_agreement`: the same batch run on the CPU and on another device, step by step:
  the fraction of bit-equal values and the largest difference per field.
* :func:`syncs_per_step`: device-to-host synchronisations per ``step``: on CUDA counted with
  ``torch.cuda.set_sync_debug_mode``, on other devices (the CPU) with
  :class:`~gymforge.checks.sync_counter.SyncCounter`, the calls that would synchronise on CUDA.
* :func:`sync_profile`: the counter itself after ``steps`` steps, with kinds and call sites.

Used by the tests (on the CPU) and by ``benchmarks/gpu_check.py`` (on a GPU).
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from gymforge.checks.golden import _actions
from gymforge.checks.sync_counter import SyncCounter

FIELDS = ("obs", "reward", "terminated", "truncated")


def _as_numpy(value: Any) -> np.ndarray:
    return value.cpu().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def _make(env_id: str, batch: int, device: str, env_kwargs: dict[str, Any] | None = None) -> Any:
    return gym.make_vec(
        env_id,
        num_envs=batch,
        vectorization_mode="vector_entry_point",
        device=device,
        **(env_kwargs or {}),
    )


def rows(
    env_id: str, batch: int, device: str, steps: int, seed: int = 7, kept: int | None = None
) -> list[list[np.ndarray]]:
    """Per step (the reset first): obs, reward, terminated, truncated of the first ``kept``
    instances (default all), with per-step actions drawn from ``numpy`` generators so that the
    first ``kept`` instances act alike whatever ``batch`` is."""
    kept = batch if kept is None else kept
    env = _make(env_id, batch, device)
    try:
        obs, _ = env.reset(seed=seed)
        out = [[_as_numpy(obs)[:kept]]]
        for step in range(steps):
            action = _actions(env.single_action_space, np.random.default_rng(1000 + step), batch)
            action[:kept] = _actions(env.single_action_space, np.random.default_rng(step), kept)
            result = env.step(torch.as_tensor(action, device=device))
            out.append([_as_numpy(value)[:kept] for value in result[:4]])
        return out
    finally:
        env.close()


def batch_independence_problem(env_id: str, device: str = "cpu", steps: int = 30) -> str | None:
    """``None`` when the first two instances behave the same in batches of 2 and 5, else where
    they first differ."""
    small, large = rows(env_id, 2, device, steps, kept=2), rows(env_id, 5, device, steps, kept=2)
    for step, (a, b) in enumerate(zip(small, large, strict=True)):
        for field, x, y in zip(FIELDS, a, b, strict=False):
            if not np.array_equal(x, y, equal_nan=True):
                return f"{env_id} on {device}: step {step}, {field} differs between batch sizes"
    return None


def _equal_count(x: np.ndarray, y: np.ndarray) -> int:
    same = x == y
    if x.dtype.kind == "f":
        same |= np.isnan(x) & np.isnan(y)
    return int(np.sum(same))


def _max_abs_diff(x: np.ndarray, y: np.ndarray) -> float:
    diff = np.abs(x.astype(np.float64) - y.astype(np.float64))
    return float(np.nanmax(diff, initial=0.0))


def device_agreement(env_id: str, device: str, batch: int = 256, steps: int = 50) -> dict[str, Any]:
    """Per field over all steps: the fraction of values equal bit for bit between the CPU and
    ``device``, and the largest absolute difference."""
    reference, other = rows(env_id, batch, "cpu", steps), rows(env_id, batch, device, steps)
    result: dict[str, Any] = {}
    for index, field in enumerate(FIELDS):
        pairs = [
            (a[index], b[index]) for a, b in zip(reference, other, strict=True) if len(a) > index
        ]
        total = sum(x.size for x, _ in pairs)
        result[field] = {
            "equal_fraction": sum(_equal_count(x, y) for x, y in pairs) / total if total else 1.0,
            "max_abs_diff": max((_max_abs_diff(x, y) for x, y in pairs), default=0.0),
        }
    return result


def _prepared_actions(env: Any, batch: int, steps: int, device: str) -> list[torch.Tensor]:
    """Seeded random actions of ``env``, built as device tensors before any counting."""
    return [
        torch.as_tensor(
            _actions(env.single_action_space, np.random.default_rng(s), batch), device=device
        )
        for s in range(steps)
    ]


def sync_profile(
    env_id: str,
    device: str = "cpu",
    batch: int = 256,
    steps: int = 20,
    env_kwargs: dict[str, Any] | None = None,
) -> SyncCounter:
    """A :class:`SyncCounter` (call sites recorded) over ``steps`` calls of ``step`` of
    ``env_id`` (made with ``env_kwargs``) at ``batch`` instances, after ``reset(seed=0)``, with
    random actions prepared beforehand as tensors on ``device``."""
    env = _make(env_id, batch, device, env_kwargs)
    try:
        env.reset(seed=0)
        actions = _prepared_actions(env, batch, steps, device)
        with SyncCounter(record_sites=True) as counter:
            for action in actions:
                env.step(action)
        return counter
    finally:
        env.close()


def _cuda_syncs_per_step(env_id: str, device: str, batch: int, steps: int) -> float:
    env = _make(env_id, batch, device)
    try:
        env.reset(seed=0)
        actions = _prepared_actions(env, batch, steps, device)
        torch.cuda.synchronize()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                for action in actions:
                    env.step(action)
            finally:
                torch.cuda.set_sync_debug_mode("default")
        return sum("synchroniz" in str(w.message) for w in caught) / steps
    finally:
        env.close()


def syncs_per_step(env_id: str, device: str = "cpu", batch: int = 256, steps: int = 20) -> float:
    """Mean device-to-host synchronisations per ``step``: on CUDA the ones the driver reports,
    elsewhere the calls that would synchronise on CUDA (:func:`sync_profile`)."""
    if device.startswith("cuda"):
        return _cuda_syncs_per_step(env_id, device, batch, steps)
    return sync_profile(env_id, device, batch, steps).total / steps
