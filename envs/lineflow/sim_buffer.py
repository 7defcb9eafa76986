"""Conveyors and the things that travel on them, for the SimPy LineFlow engine."""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Mapping
from typing import Any

import numpy as np
import simpy

from gymforge.envs.lineflow.spec import BufferSpec

Process = Generator[simpy.Event, Any, Any]


class Part:
    """A part: its creation time, its per-station specs and whether it is not OK."""

    __slots__ = ("created", "nok", "specs")

    def __init__(self, created: float, specs: Mapping[str, Mapping[str, float]], nok: bool) -> None:
        self.created = created
        self.specs = specs
        self.nok = nok


class Carrier:
    """A carrier moving through the line with the parts it holds."""

    __slots__ = ("kind", "parts")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.parts: list[Part] = []


class Buffer:
    """A conveyor of ``capacity`` slots; see :class:`~gymforge.envs.lineflow.spec.BufferSpec`.

    ``_slots[i]`` is the carrier holding slot ``i`` (moving into it or sitting in it) and
    ``_arrived[i]`` says whether it has arrived. A carrier that arrives in slot ``i`` claims slot
    ``i+1`` as soon as it is free, which frees slot ``i``; the last slot is freed by ``get``.
    """

    def __init__(self, env: simpy.Environment, spec: BufferSpec, rng: np.random.Generator) -> None:
        self.env = env
        self.spec = spec
        self.rng = rng
        self.capacity = spec.capacity
        self._slot_time = spec.slot_time
        self._put_scale = spec.put_std * spec.put_time
        self._slots: list[Carrier | None] = [None] * spec.capacity
        self._arrived = [False] * spec.capacity
        self._put_waiters: deque[tuple[simpy.Event, Carrier]] = deque()
        self._get_waiters: deque[simpy.Event] = deque()
        self.n_carriers = 0  # carriers put on and not yet taken off: the `fill` numerator

    @property
    def fill(self) -> float:
        return self.n_carriers / self.capacity

    @property
    def is_full(self) -> bool:
        return self.n_carriers >= self.capacity

    def put(self, carrier: Carrier) -> Process:
        """Wait for the first slot, then spend the put time; use with ``yield from``."""
        if self._slots[0] is None:
            self._slots[0] = carrier
        else:
            claimed = self.env.event()
            self._put_waiters.append((claimed, carrier))
            yield claimed
        put_time = self.spec.put_time
        if self._put_scale > 0:
            put_time += self.rng.exponential(self._put_scale)
        yield self.env.timeout(put_time)
        self.n_carriers += 1
        self._arrive(0)

    def get(self) -> Process:
        """Wait for a carrier in the last slot, take it, spend the get time; returns the carrier."""
        if self._arrived[-1]:
            carrier = self._take()
        else:
            ready = self.env.event()
            self._get_waiters.append(ready)
            carrier = yield ready
        yield self.env.timeout(self.spec.get_time)
        return carrier

    def _arrive(self, i: int) -> None:
        self._arrived[i] = True
        self._advance(i)

    def _advance(self, i: int) -> None:
        """Move the carrier that has arrived in slot ``i`` on, if it can."""
        if i == self.capacity - 1:
            if self._get_waiters:
                self._get_waiters.popleft().succeed(self._take())
            return
        if self._slots[i + 1] is not None:
            return
        self._slots[i + 1] = self._slots[i]
        self._free(i)
        self.env.timeout(self._slot_time).callbacks.append(lambda _: self._arrive(i + 1))

    def _take(self) -> Carrier:
        carrier = self._slots[-1]
        assert carrier is not None
        self.n_carriers -= 1
        self._free(self.capacity - 1)
        return carrier

    def _free(self, i: int) -> None:
        self._slots[i] = None
        self._arrived[i] = False
        if i == 0:
            if self._put_waiters:
                claimed, carrier = self._put_waiters.popleft()
                self._slots[0] = carrier
                claimed.succeed()
        elif self._arrived[i - 1]:
            self._advance(i - 1)
