"""The worker side of :class:`~gymforge.core.sharded.ShardedVectorEnv`: one process, one shard.

Started as ``python -m gymforge.core.shard_worker FD`` with one end of a ``multiprocessing``
pipe as file descriptor ``FD`` (a fresh interpreter, not a fork: a forked torch may deadlock, and
``multiprocessing``'s spawn would re-run the user's main script, which breaks every script without
an ``if __name__ == "__main__"`` guard). It receives the parent's ``sys.path``, then the shard's
factory, size and thread count, builds the shard and answers commands until ``close`` (through
an :class:`~gymforge.core.shared_arrays.ArrayChannel`: big arrays in shared memory):

=========  =================================  ==============================================
command    payload                            reply (``("ok", value)`` or ``("error", text)``)
=========  =================================  ==============================================
reset      the shard's seeds (list of int)    ``env.reset(seed=seeds)``, tensors as numpy
step       the shard's actions (numpy)        ``env.step(actions)``, tensors as numpy
apply      ``(function, args, kwargs)``       ``function(env, *args, **kwargs)``
close      ``None``                           none: the worker closes the env and exits
=========  =================================  ==============================================
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from gymforge.core.shared_arrays import ArrayChannel, map_nested


def main(descriptor: int) -> None:
    connection = Connection(descriptor)
    channel = ArrayChannel(connection)
    try:
        sys.path[:] = connection.recv()  # (so that the factory unpickles as in the parent)
        import torch

        make_shard, num_envs, threads = connection.recv()
        torch.set_num_threads(threads)
        env = make_shard(num_envs)
        description = (env.single_observation_space, env.single_action_space)
    except (EOFError, KeyboardInterrupt):
        return
    except Exception:
        channel.send(("error", traceback.format_exc()))
        return
    channel.send(("ok", description))
    try:
        serve(channel, env)
    finally:
        env.close()
        channel.close()


def serve(channel: ArrayChannel, env: Any) -> None:
    """Answer the parent's commands until ``close`` (or until the parent goes away)."""
    import torch

    handlers: dict[str, Callable[[Any], Any]] = {
        "reset": lambda seeds: to_numpy(env.reset(seed=seeds)),
        "step": lambda actions: to_numpy(env.step(torch.from_numpy(actions))),
        "apply": lambda call: call[0](env, *call[1], **call[2]),
    }
    while True:
        try:
            command, payload = channel.recv()
        except (EOFError, KeyboardInterrupt):  # the parent went away or was interrupted
            return
        if command == "close":
            return
        try:
            handler = handlers.get(command)
            if handler is None:
                raise ValueError(f"unknown command {command!r}; known: {sorted(handlers)}")
            reply = ("ok", handler(payload))
        except Exception:
            reply = ("error", traceback.format_exc())
        channel.send(reply)


def to_numpy(value: Any) -> Any:
    """Tensors (in tuples, lists and dicts) as numpy arrays, which the channel sends through
    shared memory or pickles as plain buffers (a pickled tensor would be moved to a
    shared-memory segment of its own, much slower per step)."""
    import torch

    return map_nested(value, lambda v: v.numpy() if isinstance(v, torch.Tensor) else v)


if __name__ == "__main__":
    main(int(sys.argv[1]))
