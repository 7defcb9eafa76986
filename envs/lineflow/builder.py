"""``LineBuilder``: a small fluent API for users to describe their own line.

Example::

    line = LineBuilder("my_line")
    line.source("S", processing_time=2, unlimited_carriers=True, waiting_time_step=1)
    line.process("P", processing_time=5)
    line.sink("Sink", processing_time=1)
    line.connect("S", "P", capacity=3, transition_time=4)
    line.connect("P", "Sink")
    env = gym.make("LineFlow-v0", line=line.build())
"""

from __future__ import annotations

from typing import Any

from gymforge.envs.lineflow.spec import (
    AssemblySpec,
    BufferKind,
    BufferSpec,
    LineSpec,
    MagazineSpec,
    ProcessSpec,
    SequentialProcessSpec,
    SinkSpec,
    SourceSpec,
    StationSpec,
    SwitchSpec,
    WorkerPoolSpec,
)


class LineBuilder:
    """Collects stations and buffers in order; :meth:`build` validates them into a ``LineSpec``."""

    def __init__(self, name: str, scrap_factor: float = 1.0) -> None:
        self.name = name
        self.scrap_factor = scrap_factor
        self._stations: list[StationSpec] = []
        self._buffers: list[BufferSpec] = []
        self._pools: list[WorkerPoolSpec] = []

    def _add(self, station: StationSpec) -> str:
        self._stations.append(station)
        return station.name

    def source(self, name: str, **params: Any) -> str:
        """Add a :class:`SourceSpec`; returns its name."""
        return self._add(SourceSpec(name, **params))

    def process(self, name: str, **params: Any) -> str:
        """Add a :class:`ProcessSpec`; returns its name."""
        return self._add(ProcessSpec(name, **params))

    def assembly(self, name: str, **params: Any) -> str:
        """Add an :class:`AssemblySpec`; returns its name."""
        return self._add(AssemblySpec(name, **params))

    def sink(self, name: str, **params: Any) -> str:
        """Add a :class:`SinkSpec`; returns its name."""
        return self._add(SinkSpec(name, **params))

    def sequential_process(self, name: str, **params: Any) -> str:
        """Add a :class:`SequentialProcessSpec`; returns its name."""
        return self._add(SequentialProcessSpec(name, **params))

    def switch(self, name: str, **params: Any) -> str:
        """Add a :class:`SwitchSpec`; returns its name."""
        return self._add(SwitchSpec(name, **params))

    def magazine(self, name: str, **params: Any) -> str:
        """Add a :class:`MagazineSpec`; returns its name."""
        return self._add(MagazineSpec(name, **params))

    def worker_pool(self, name: str, n_workers: int, **params: Any) -> str:
        """Add a :class:`WorkerPoolSpec`; stations join it with ``worker_pool=name``."""
        self._pools.append(WorkerPoolSpec(name, n_workers, **params))
        return name

    def connect(
        self, upstream: str, downstream: str, kind: BufferKind = "main", **params: Any
    ) -> str:
        """Add a buffer from ``upstream`` to ``downstream``; returns the buffer's name."""
        buffer = BufferSpec(upstream, downstream, kind, **params)
        self._buffers.append(buffer)
        return buffer.name

    def build(self) -> LineSpec:
        return LineSpec(
            self.name,
            tuple(self._stations),
            tuple(self._buffers),
            tuple(self._pools),
            self.scrap_factor,
        )
