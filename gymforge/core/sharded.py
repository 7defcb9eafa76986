"""``ShardedVectorEnv``: one batch of instances split over processes, one CPU core each.

A ``TorchVectorEnv`` runs its whole batch in one process, and on the CPU one process uses one
core well: torch's own threads help little at these sizes (each engine op is short), and Python
threads share one interpreter lock, so two threads stepping two halves of a batch run slower than
one. A ``ShardedVectorEnv`` of ``B`` instances over ``K`` processes instead holds ``K``
``TorchVectorEnv`` of about ``B / K`` instances each (*shards*, instances ``start:stop`` of the
batch): the first in this process, the others in ``K - 1`` worker processes, all stepped at the
same time::

    import gymnasium as gym
    import gymforge

    envs = gym.make_vec(
        "LineFlow-WorkerAssignment-v0",
        num_envs=4096,
        vectorization_mode="vector_entry_point",
        num_workers=2,  # 2048 instances here, 2048 in one worker (one torch thread)
    )

Every id with a vector entry point takes ``num_workers`` (default 1: the plain ``TorchVectorEnv``
in this process): its entry point calls the factory :func:`gymforge.core.vector_factory.make_vector`.
From a class, :func:`sharded` builds the split batch, always a ``ShardedVectorEnv``
(``sharded(LineFlowVecEnv, num_workers=2, num_envs=4096)``); a class constructor builds the class
in this process and refuses ``num_workers`` by name. The result is the same env,
bit for bit: instance ``i`` reset with seed ``s`` follows the stream of seed ``s + i`` whatever
batch it is in, so shard ``k`` is reset with the seeds of its own instances; observations,
rewards, flags and infos (``final_obs`` and ``final_info`` of SAME_STEP autoreset included) are
the shards' own, concatenated in instance order. Actions are checked here, before any shard sees
them.

It pays when a step's element work outweighs what splitting costs: two process wake-ups and the
results' copies per step (a few hundred microseconds on the 2-core development machine), and a
smaller batch per shard, whose fixed per-op costs do not shrink (``benchmarks/lineflow/batched.py``
measures it as ``torch-workers``). Starting a worker imports torch and gymforge (about 1.5 s, in
parallel). The workers' results come through pipes, their big arrays through shared memory
(``gymforge.core.shared_arrays``). The state lives in the shards, so attributes of the engine
(``env.state``, ``env.engine``) are reached through :meth:`ShardedVectorEnv.apply_to_shards`,
while the attributes that describe the env and never change (the class's ``shared_attributes``,
e.g. a LineFlow env's ``line`` and ``features``, which its agents read) are copied from the first
shard. CPU only, and with ``autoreset=True`` only (a shard whose instances are all done would
need a reset that the batch as a whole does not). POSIX only (a worker's pipe is passed as a file
descriptor).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import multiprocessing
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from gymnasium.vector import AutoresetMode

from gymforge.core.devices import check_device
from gymforge.core.limits import check_workers
from gymforge.core.shared_arrays import ArrayChannel, map_nested
from gymforge.core.vector_env import (
    TorchVectorEnv,
    check_constructor_keywords,
    check_env_memory,
    check_num_envs,
)

# keys of SAME_STEP autoreset infos that a shard without a finished instance leaves out
_FINAL_KEYS = ("final_obs", "_final_obs", "final_info", "_final_info")
_JOIN_TIMEOUT_S = 5.0


def sharded(
    env_class: type[TorchVectorEnv],
    num_workers: int,
    *,
    threads_per_worker: int = 1,
    **env_kwargs: Any,
) -> ShardedVectorEnv:
    """The ``num_envs`` instances of ``env_class(num_envs=..., **env_kwargs)`` split over
    ``num_workers`` processes: always a :class:`ShardedVectorEnv` (with ``num_workers=1``, one
    shard in this process and no worker). ``num_envs`` is a keyword of ``env_kwargs`` (default:
    the class's). ``num_workers``, the device (CPU only), ``autoreset`` (True only) and the
    keywords are checked first, before any process starts.
    :func:`gymforge.core.vector_factory.make_vector` calls it for ``num_workers > 1``."""
    check_constructor_keywords(env_class, env_kwargs)
    shard_kwargs = dict(env_kwargs)
    num_envs = check_num_envs(shard_kwargs.pop("num_envs", default_num_envs(env_class)))
    workers = check_num_workers(num_workers, num_envs)
    device = shard_kwargs.get("device", "cpu")
    if check_device(device).type != "cpu":
        raise ValueError(
            f"a batch over worker processes (num_workers) runs on the CPU only: device must be "
            f"'cpu', got {device!r}"
        )
    check_env_memory(env_class, num_envs, device, shard_kwargs)  # all shards together
    if not shard_kwargs.get("autoreset", True):
        raise ValueError(
            "a batch over worker processes (num_workers) needs autoreset=True (SAME_STEP "
            "autoreset in every shard)"
        )
    make_shard = functools.partial(_make_shard, env_class, shard_kwargs)
    return ShardedVectorEnv(make_shard, num_envs, workers, threads_per_worker)


def default_num_envs(env_class: type[TorchVectorEnv]) -> object:
    """The default of ``env_class``'s ``num_envs`` parameter (a ``TypeError`` if it has none)."""
    default = inspect.signature(env_class.__init__).parameters["num_envs"].default
    if default is inspect.Parameter.empty:
        raise TypeError(f"{env_class.__name__} needs num_envs")
    return default


def check_num_workers(num_workers: object, num_envs: int) -> int:
    """``num_workers`` as an int in ``[1, num_envs]`` and at most
    :func:`~gymforge.core.limits.max_workers` (a few per CPU core: more processes than that only
    add start-up time and memory), else a ``ValueError`` naming the field."""
    if (
        isinstance(num_workers, bool)
        or not isinstance(num_workers, (int, np.integer))
        or not 1 <= num_workers <= num_envs
    ):
        raise ValueError(
            f"num_workers must be an int in [1, num_envs={num_envs}], got {num_workers!r}"
        )
    return check_workers("num_workers", num_workers)


def _make_shard(cls: type[TorchVectorEnv], kwargs: dict[str, Any], num_envs: int) -> Any:
    return cls(num_envs=num_envs, **kwargs)


def shard_bounds(num_envs: int, num_workers: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of each shard: sizes differ by at most one, larger shards first."""
    size, extra = divmod(num_envs, num_workers)
    bounds, start = [], 0
    for k in range(num_workers):
        stop = start + size + (k < extra)
        bounds.append((start, stop))
        start = stop
    return bounds


class ShardedVectorEnv(TorchVectorEnv):
    """``num_envs`` instances of the env ``make_shard`` builds, over ``num_workers`` processes:
    this one, which runs the first shard itself, and ``num_workers - 1`` workers.

    Running a shard here instead of waiting for a worker saves a process wake-up on each side of
    every step (on a 2-core virtual machine a few hundred microseconds each), and the worker's
    wake-up overlaps with this process's own shard.

    Args:
        make_shard: a picklable callable (a module-level function, or a ``functools.partial``
            of one) that returns a CPU ``TorchVectorEnv`` of the given number of instances, with
            SAME_STEP autoreset; it runs here (shard 0) and in each worker.
        num_envs: instances in all (``B``).
        num_workers: processes in all (``K``, 1 to ``B``), this one included; shard ``k`` holds
            instances ``shard_bounds(B, K)[k]``.
        threads_per_worker: ``torch.set_num_threads`` in each worker (1: one core each); shard
            0 uses this process's setting.
    """

    supports_reset_mask = False  # the shards reset together
    autoreset_modes = (AutoresetMode.SAME_STEP,)  # (each shard autoresets itself)

    #: the instances live in the shards, each of which checks its own memory when built (and
    #: :func:`sharded` checks them all together first)
    bytes_per_instance = 0

    def __init__(
        self,
        make_shard: Callable[[int], TorchVectorEnv],
        num_envs: int,
        num_workers: int,
        threads_per_worker: int = 1,
    ) -> None:
        workers = check_num_workers(num_workers, num_envs)
        self.bounds = shard_bounds(num_envs, workers)
        self._local: TorchVectorEnv | None = None
        self._channels: list[ArrayChannel] = []  # the workers', for shards 1, 2, ...
        self._processes: list[subprocess.Popen] = []
        try:
            for start, stop in self.bounds[1:]:
                self._start_worker(make_shard, stop - start, threads_per_worker)
            local = self._local = make_shard(self.bounds[0][1])  # (while the workers start)
            described = self._gather(copy=True)
        except Exception:
            self._shut_down()
            raise
        spaces = (local.single_observation_space, local.single_action_space)
        for k, other in enumerate(described, start=1):
            if tuple(other) != spaces:
                self._shut_down()
                raise RuntimeError(f"shard {k} has other spaces than shard 0: {other}")
        if not local.autoreset:
            self._shut_down()
            raise ValueError("the shards must use SAME_STEP autoreset (autoreset=True)")
        super().__init__(num_envs, *spaces, "cpu", autoreset=True)
        for name in local.shared_attributes:  # (attributes that describe the env)
            setattr(self, name, getattr(local, name))

    @property
    def num_workers(self) -> int:
        return len(self.bounds)

    # --- Gymnasium API ----------------------------------------------------------------------
    def _reset_torch(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Reset every instance; ``seed=s`` seeds instance ``i`` with ``s + i`` (in its shard)."""
        if isinstance(options, dict) and options.get("reset_mask") is not None:
            raise ValueError(
                "a batch split over num_workers processes resets every instance at once; "
                "options['reset_mask'] needs num_workers=1"
            )
        seeds = self._instance_seeds(seed)
        self._needs_reset = True  # (until every shard has reset)
        parts = self._run_everywhere(
            "reset", [seeds[start:stop] for start, stop in self.bounds], self._reset_local, True
        )
        observations = [obs for obs, _ in parts]
        infos = _merge_infos([info for _, info in parts], observations)
        self._needs_reset = False
        return torch.cat(observations), infos

    def _step_torch(
        self, actions: Any
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        action = self._checked_action(actions)
        batch = action.numpy()
        slices = [batch[start:stop] for start, stop in self.bounds]
        try:
            parts = self._run_everywhere("step", slices, self._step_local, tensors=True)
        except Exception:
            self._needs_reset = True  # (some shards may have stepped, others not)
            raise
        observations = [part[0] for part in parts]
        return (
            torch.cat(observations),
            torch.cat([part[1] for part in parts]),
            torch.cat([part[2] for part in parts]),
            torch.cat([part[3] for part in parts]),
            _merge_infos([part[4] for part in parts], observations),
        )

    def apply_to_shards(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> list[Any]:
        """``function(shard_env, start, *args, **kwargs)`` for every shard, in parallel, where
        ``start`` is the shard's first instance in the batch (see ``bounds``); the results in
        shard order. ``function`` and its arguments must be picklable (a module-level
        function: the workers import its module)."""
        calls = [(function, (start, *args), kwargs) for start, _ in self.bounds]
        return self._run_everywhere("apply", calls, self._apply_local, tensors=False)

    def close_extras(self, **kwargs: Any) -> None:
        self._shut_down()

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Refused, before any pipe is touched (a half-made copy would close the workers'
        pipes under this env): the instances live in the worker processes."""
        raise TypeError(
            f"a sharded vector env (num_workers={self.num_workers}) cannot be copied or pickled: "
            "its instances live in worker processes; build another one with gym.make_vec(..., "
            "num_workers=K), or use num_workers=1 for a copyable env"
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return self.__reduce_ex__(4)

    # --- shards -----------------------------------------------------------------------------
    def _reset_local(self, seeds: list[int]) -> Any:
        return self._local.reset(seed=seeds)

    def _step_local(self, actions: np.ndarray) -> Any:
        return self._local.step(torch.from_numpy(actions))

    def _apply_local(self, call: tuple[Callable[..., Any], tuple, dict]) -> Any:
        function, args, kwargs = call
        return function(self._local, *args, **kwargs)

    def _run_everywhere(
        self, command: str, payloads: list[Any], run_local: Callable[[Any], Any], tensors: bool
    ) -> list[Any]:
        """Send ``command`` with ``payloads[k]`` to the worker of each shard ``k >= 1``, run
        shard 0 here (``run_local(payloads[0])``) meanwhile, and return every shard's result in
        shard order. ``tensors``: the workers' arrays as tensors on views of the shared memory,
        valid until the next command (``reset`` and ``step`` concatenate them at once, which
        copies); else as sent (copied out)."""
        for k, (channel, payload) in enumerate(zip(self._channels, payloads[1:], strict=True)):
            try:
                channel.send((command, payload))
            except OSError as error:  # (a worker that died, or no room for a shared file)
                self._gather(copy=True, errors=False, count=k)  # (the shards sent to reply)
                raise RuntimeError(
                    f"shard {k + 1} (instances {self.bounds[k + 1]}) could not be sent "
                    f"{command!r}: {error!r}"
                ) from error
        try:
            local = run_local(payloads[0])
        except Exception as error:
            self._gather(copy=True, errors=False)  # (read, so that the pipes stay in step)
            raise RuntimeError(f"shard 0 (instances {self.bounds[0]}) failed: {error!r}") from error
        remote = self._gather(copy=not tensors)
        return [local, *(map(_to_torch, remote) if tensors else remote)]

    def _start_worker(
        self, make_shard: Callable[[int], TorchVectorEnv], num_envs: int, threads: int
    ) -> None:
        """Start one worker (``gymforge.core.shard_worker``) and send it its shard."""
        parent, child = multiprocessing.Pipe()
        process = subprocess.Popen(
            [sys.executable, "-m", "gymforge.core.shard_worker", str(child.fileno())],
            pass_fds=(child.fileno(),),
            start_new_session=True,  # (Ctrl-C reaches this process, which closes the workers)
        )
        child.close()
        self._channels.append(ArrayChannel(parent))
        self._processes.append(process)
        parent.send(list(sys.path))
        parent.send((make_shard, num_envs, threads))  # (the worker answers through the channel)

    def _gather(self, copy: bool, errors: bool = True, count: int | None = None) -> list[Any]:
        """One reply from every worker (the first ``count`` only, if given), in shard order; a
        worker's error raises here (after all replies are in, so the pipes stay in step) unless
        ``errors`` is False."""
        replies = []
        for channel in self._channels[:count]:
            try:
                replies.append(channel.recv(copy))
            except EOFError:
                replies.append(("error", "the worker process died"))
        for k, (status, value) in enumerate(replies, start=1):
            if status == "error" and errors:
                raise RuntimeError(f"shard {k} (instances {self.bounds[k]}) failed:\n{value}")
        return [value for _, value in replies]

    def _shut_down(self) -> None:
        for channel in self._channels:
            with contextlib.suppress(BrokenPipeError, OSError):  # (a worker that died)
                channel.send(("close", None))
        if self._local is not None:
            self._local.close()
            self._local = None
        for process in self._processes:
            try:
                process.wait(_JOIN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for channel in self._channels:
            channel.close()
            channel.connection.close()
        self._channels, self._processes = [], []


def _to_torch(value: Any) -> Any:
    """The numpy arrays of a worker's reply (see ``shard_worker.to_numpy``) as tensors."""
    return map_nested(value, lambda v: torch.from_numpy(v) if isinstance(v, np.ndarray) else v)


def _merge_infos(
    infos: Sequence[dict[str, Any]], observations: Sequence[torch.Tensor]
) -> dict[str, Any]:
    """The shards' infos as one batch's: every entry concatenated in shard order.

    A shard in which no instance finished has no ``final_obs``/``final_info`` (and masks) when
    another shard has them; it gets what an unsharded env gives its unfinished instances: its
    observations as ``final_obs`` and its info entries as ``final_info``, masked out.
    """
    if any(key in info for info in infos for key in _FINAL_KEYS):
        infos = [_with_final(info, obs) for info, obs in zip(infos, observations, strict=True)]
    keys = list(dict.fromkeys(key for info in infos for key in info))
    merged: dict[str, Any] = {}
    for key in keys:
        values = [info[key] for info in infos if key in info]
        if len(values) != len(infos):
            raise RuntimeError(f"info key {key!r} is missing from some shards")
        merged[key] = _concatenate(key, values, observations)
    return merged


def _with_final(info: dict[str, Any], observation: torch.Tensor) -> dict[str, Any]:
    if all(key in info for key in _FINAL_KEYS):
        return info
    nobody = torch.zeros(observation.shape[0], dtype=torch.bool)
    entries = {key: value for key, value in info.items() if not key.startswith("_")}
    final_info: dict[str, Any] = {}
    for key, value in entries.items():
        final_info[key] = value
        final_info[f"_{key}"] = nobody
    return {
        **info,
        "final_obs": observation,
        "_final_obs": nobody,
        "final_info": final_info,
        "_final_info": nobody,
    }


def _concatenate(key: str, values: list[Any], observations: Sequence[torch.Tensor]) -> Any:
    if all(isinstance(v, torch.Tensor) for v in values):
        return torch.cat(values)
    if all(isinstance(v, dict) for v in values):
        return _merge_infos(values, observations)
    raise TypeError(f"info entry {key!r} is not a tensor or dict in every shard: {values!r}")
