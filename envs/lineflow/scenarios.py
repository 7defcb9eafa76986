"""The benchmark lines, each built once as a ``LineSpec`` with the reference's parameters."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from gymforge.envs.lineflow.builder import LineBuilder
from gymforge.envs.lineflow.spec import LineSpec, Slowdown


def waiting_time(
    processing_time_source: float = 5.0,
    transition_time: float = 5.0,
    assembly_condition: float = 35.0,
    scrap_factor: float = 1.0,
) -> LineSpec:
    """WaitingTime (WT): a component source feeds an assembly whose parts expire.

    ``S_main`` (no processing time, unlimited carriers) feeds ``Assembly`` (T = 20); the actionable
    source ``S_component`` (T = ``processing_time_source``, waiting time in steps of 1) supplies one
    component per carrier, which must reach the assembly within ``assembly_condition`` time units
    of its creation or it is scrapped (5 time units lost). ``Sink`` counts finished parts.

    Too short a waiting time floods the component buffer and parts expire; too long starves the
    assembly. The reference optimum is ``(1.1·20 + 3.1) − (1.1·T_S + 1.1) = 18.5`` (≈ 160 parts).
    """
    line = LineBuilder("waiting_time", scrap_factor=scrap_factor)
    line.source(
        "S_main",
        processing_time=0.0,
        carrier_capacity=2,
        actionable_waiting_time=False,
        unlimited_carriers=True,
    )
    line.source(
        "S_component",
        processing_time=processing_time_source,
        waiting_time=0.0,
        waiting_time_step=1.0,
        carrier_capacity=1,
        carrier_specs={
            "carrier": {"Part": {"Assembly": {"assembly_condition": assembly_condition}}}
        },
        unlimited_carriers=True,
        actionable_waiting_time=True,
    )
    line.assembly("Assembly", processing_time=20.0, nok_part_error_time=5.0)
    line.sink("Sink", processing_time=0.0)
    line.connect(
        "S_component", "Assembly", kind="component", capacity=3, transition_time=transition_time
    )
    line.connect("S_main", "Assembly", capacity=2, transition_time=2.0)
    line.connect("Assembly", "Sink", capacity=2, transition_time=2.0)
    return line.build()


def waiting_time_jump(
    processing_time_source: float = 5.0,
    transition_time: float = 5.0,
    assembly_condition: float = 35.0,
    t_jump_max: float = 2000.0,
    ratio: float = 0.75,
    scrap_factor: float = 1.0,
) -> LineSpec:
    """WaitingTimeJump (WTJ): WaitingTime whose assembly slows down for a seeded while.

    The slowdown lasts ``U(0.8, 1)·t_jump_max`` and starts at ``U(0.25, 0.75)·t_jump_max``, both
    drawn from the line's seeded generator (the reference draws them from numpy's global state, so
    its episodes are not reproducible); its size makes the expected output ``ratio`` times the
    undisturbed one. The waiting time must follow the observed assembly time.
    """
    base = waiting_time(processing_time_source, transition_time, assembly_condition, scrap_factor)
    stations = tuple(
        dataclasses.replace(s, slowdown=Slowdown(t_jump_max, ratio)) if s.name == "Assembly" else s
        for s in base.stations
    )
    return base.replace(name="waiting_time_jump", stations=stations)


def part_distribution(n_processes: int = 5) -> LineSpec:
    """PartDistribution (PD): route parts over ``n_processes`` parallel processes of different speed.

    ``Source`` (T = 2, no noise) → ``SwitchD`` → processes ``P0 … P{k−1}`` (T = 12 + 10·i) →
    ``SwitchF`` → ``Sink``. The actions are SwitchD's output and SwitchF's input index. Shares
    ∝ 1/T_i balance the load; the reference's documented optimum, 738 for k = 5, is the bound
    ``Σ 4000/(1.1·T_i)`` without get and put times, which no policy reaches (best found: 660).
    """
    _check_size("n_processes", n_processes, 2)
    line = LineBuilder(f"part_distribution_{n_processes}")
    line.source(
        "Source",
        processing_time=2.0,
        processing_std=0.0,
        actionable_waiting_time=False,
        unlimited_carriers=True,
        carrier_capacity=1,
    )
    line.switch("SwitchD", processing_time=1.0, alternate=False)
    for i in range(n_processes):
        line.process(f"P{i}", processing_time=12.0 + 10.0 * i, processing_std=0.1)
    line.switch("SwitchF", processing_time=1.0, alternate=False)
    line.sink("Sink", processing_time=1.0, processing_std=0.0)
    line.connect("Source", "SwitchD", capacity=2, transition_time=5.0)
    for i in range(n_processes):
        line.connect("SwitchD", f"P{i}", capacity=8, transition_time=7.0)
    for i in range(n_processes):
        line.connect(f"P{i}", "SwitchF", capacity=5, transition_time=7.0)
    line.connect("SwitchF", "Sink", capacity=2, transition_time=5.0)
    return line.build()


def worker_assignment(n_assemblies: int = 3, n_carriers: int = 20) -> LineSpec:
    """WorkerAssignment (WA): assign ``3·k`` workers to ``k`` assemblies in series.

    A magazine (``Setup``, ``n_carriers`` carriers) feeds assemblies ``A0 … A{k−1}``
    (T = 16 + 4·i) in series, each fed components by its own source ``SA<i>``; ``EOL`` returns
    the carriers to the magazine. Each worker at an assembly multiplies its time by exp(−0.3).
    The actions are the ``3·k`` workers' stations.
    """
    _check_size("n_assemblies", n_assemblies, 2)
    line = LineBuilder(f"worker_assignment_{n_assemblies}")
    line.magazine(
        "Setup",
        unlimited_carriers=False,
        carriers_in_magazine=n_carriers,
        max_carriers=max(n_carriers, 1),
        actionable_magazine=False,
        carrier_capacity=n_assemblies,
    )
    line.worker_pool("Pool", n_workers=3 * n_assemblies, transition_time=5.0)
    for i in range(n_assemblies):
        line.assembly(f"A{i}", processing_time=16.0 + 4.0 * i, worker_pool="Pool")
        line.source(
            f"SA{i}",
            processing_time=2.0,
            unlimited_carriers=True,
            carrier_capacity=1,
            actionable_waiting_time=False,
        )
    line.sink("EOL", processing_time=4.0)
    line.connect("Setup", "A0", capacity=4, transition_time=10.0)
    for i in range(n_assemblies):
        line.connect(f"SA{i}", f"A{i}", kind="component", capacity=2, transition_time=4.0)
        downstream = f"A{i + 1}" if i + 1 < n_assemblies else "EOL"
        line.connect(
            f"A{i}", downstream, capacity=2 if i + 1 < n_assemblies else 4, transition_time=10.0
        )
    line.connect("EOL", "Setup", capacity=6, transition_time=10.0)
    return line.build()


def complex_line(
    n_assemblies: int = 3,
    n_workers: int | None = None,
    n_carriers: int = 20,
    assembly_condition: float = 30.0,
    alternate: bool = False,
    scrap_factor: float | None = None,
) -> LineSpec:
    """ComplexLine (CL): WorkerAssignment with one timed component source routed by a switch.

    One ``Source`` (T = 1, waiting time in steps of 0.5) feeds a ``Switch`` that routes each
    component to one of ``k`` assemblies in series; components expire after
    ``assembly_condition``. The actions are the workers' stations (``n_workers``, default 3·k), the
    switch output and the source waiting time. The default scrap factor is ``1/k``.
    """
    _check_size("n_assemblies", n_assemblies, 2)
    n_workers = 3 * n_assemblies if n_workers is None else n_workers
    scrap_factor = 1.0 / n_assemblies if scrap_factor is None else scrap_factor
    line = LineBuilder(f"complex_line_{n_assemblies}", scrap_factor=scrap_factor)
    line.magazine(
        "Setup",
        unlimited_carriers=False,
        carriers_in_magazine=n_carriers,
        max_carriers=max(n_carriers, 1),
        actionable_magazine=False,
        carrier_capacity=n_assemblies,
    )
    line.worker_pool("Pool", n_workers=n_workers, transition_time=2.0)
    line.source(
        "Source",
        processing_time=1.0,
        unlimited_carriers=True,
        carrier_capacity=1,
        actionable_waiting_time=True,
        carrier_specs={
            "Carrier": {
                "Part": {
                    f"A{i}": {"assembly_condition": assembly_condition} for i in range(n_assemblies)
                }
            }
        },
    )
    line.switch("Switch", processing_time=0.0, alternate=alternate)
    for i in range(n_assemblies):
        line.assembly(
            f"A{i}", processing_time=16.0 + 4.0 * i, worker_pool="Pool", nok_part_error_time=2.0
        )
    line.sink("EOL", processing_time=2.0)
    line.connect("Source", "Switch", capacity=2, transition_time=2.0)
    for i in range(n_assemblies):
        line.connect("Switch", f"A{i}", kind="component", capacity=4, transition_time=4.0)
    line.connect("Setup", "A0", capacity=4, transition_time=4.0)
    for i in range(n_assemblies - 1):
        line.connect(f"A{i}", f"A{i + 1}", capacity=2, transition_time=10.0)
    line.connect(f"A{n_assemblies - 1}", "EOL", capacity=4, transition_time=4.0)
    line.connect("EOL", "Setup", capacity=6, transition_time=6.0)
    return line.build()


def part_dependent_process() -> LineSpec:
    """PartDependentProcess: two carrier types whose parts need different times at each process.

    ``Source`` (T = 10) emits runs of 10–20 identical carriers of type ``Type_A`` or ``Type_B``,
    each with two parts; ``P1`` and ``P2`` (T = 10) add per-part extra times, ``P3`` is a
    sequential process (T = 5 per part). The action is the source waiting time.
    """
    extra = {"Type_A": (20.0, 0.0), "Type_B": (5.0, 20.0)}
    specs = {
        kind: {
            part: {
                "P1": {"extra_processing_time": p1},
                "P2": {"extra_processing_time": p2},
                "P3": {"extra_processing_time": 0.0},
            }
            for part in ("Part1", "Part2")
        }
        for kind, (p1, p2) in extra.items()
    }
    line = LineBuilder("part_dependent_process")
    line.source(
        "Source",
        processing_time=10.0,
        unlimited_carriers=True,
        carrier_capacity=2,
        carrier_min_creation=10,
        carrier_specs=specs,
    )
    line.process("P1", processing_time=10.0)
    line.process("P2", processing_time=10.0)
    line.sequential_process("P3", processing_time=5.0)
    line.sink("Sink")
    line.connect("Source", "P1", capacity=10)
    line.connect("P1", "P2", capacity=10)
    line.connect("P2", "P3", capacity=10)
    line.connect("P3", "Sink")
    return line.build()


def simple_line() -> LineSpec:
    """SimpleLine: source (T = 5, waiting time 10, actionable) → process (T = 5) → sink."""
    line = LineBuilder("simple_line")
    line.source(
        "Source",
        processing_time=5.0,
        waiting_time=10.0,
        unlimited_carriers=True,
        carrier_capacity=1,
    )
    line.process("Process")
    line.sink("Sink")
    line.connect("Source", "Process", capacity=5, transition_time=5.0, name="Buffer2")
    line.connect("Process", "Sink", capacity=3, transition_time=3.0, name="Buffer3")
    return line.build()


def multi_sink(n_sinks: int = 5, alternate: bool = False) -> LineSpec:
    """MultiSink: one source (T = 5) and a switch routing to ``n_sinks`` sinks (T = 10 + 30·i).

    With ``alternate=False`` (the default here, so that the line has an action) the switch's
    output is the action; the reference defaults to round-robin.
    """
    _check_size("n_sinks", n_sinks, 2)
    line = LineBuilder(f"multi_sink_{n_sinks}")
    line.source(
        "Source",
        processing_time=5.0,
        processing_std=0.0,
        unlimited_carriers=True,
        carrier_capacity=1,
        actionable_waiting_time=False,
    )
    line.switch("Switch", processing_time=0.0, alternate=alternate)
    for i in range(n_sinks):
        line.sink(f"Sink_{i}", processing_time=10.0 + 30.0 * i, processing_std=0.0)
    line.connect("Source", "Switch", capacity=2, transition_time=5.0)
    for i in range(n_sinks):
        line.connect("Switch", f"Sink_{i}", capacity=4, transition_time=5.0)
    return line.build()


def double_source(alternate: bool = True) -> LineSpec:
    """DoubleSource: a fast (T = 10) and a slow (T = 20) source merge through a switch into a sink.

    The actions are both sources' waiting times (and the switch input with ``alternate=False``).
    """
    line = LineBuilder("double_source")
    line.source(
        "Source fast",
        processing_time=10.0,
        processing_std=0.0,
        unlimited_carriers=True,
        carrier_capacity=1,
    )
    line.source(
        "Source slow",
        processing_time=20.0,
        processing_std=0.0,
        unlimited_carriers=True,
        carrier_capacity=1,
    )
    line.switch("Switch", processing_time=0.0, alternate=alternate)
    line.sink("Sink", processing_time=1.0, processing_std=0.0)
    line.connect("Source fast", "Switch", capacity=4, transition_time=5.0)
    line.connect("Source slow", "Switch", capacity=4, transition_time=5.0)
    line.connect("Switch", "Sink", capacity=4, transition_time=5.0)
    return line.build()


def component_assembly(max_carriers: int = 60) -> LineSpec:
    """ComponentAssembly: a closed carrier loop with two assemblies, a rework-prone process stage.

    A magazine (30 carriers, actionable up to ``max_carriers``) feeds source ``C1``; switches
    ``S1 … S5`` alternate round-robin; ``C21``/``C22`` assemble components from ``A1`` (expiring
    after 40), ``C3`` processes, ``C41 … C43`` (T = 15, rework 0.1/0.5/0.1) work in parallel,
    ``C5`` assembles a component from ``A2``, and sink ``C6`` returns the carriers. Actions: the
    waiting times of C1, A1, A2 and the magazine's stored count (upstream cannot wrap this line).
    """
    component_a = {
        "A": {
            "ComponentA": {"C21": {"assembly_condition": 40.0}, "C22": {"assembly_condition": 40.0}}
        }
    }
    component_b = {"B": {"Component_B": {"C5": {"assembly_condition": 400.0}}}}
    line = LineBuilder("component_assembly")
    line.magazine(
        "Magazin",
        unlimited_carriers=False,
        carriers_in_magazine=30,
        actionable_magazine=True,
        max_carriers=max_carriers,
        carrier_capacity=3,
    )
    line.source("C1", processing_time=2.0)
    line.source(
        "A1",
        processing_time=4.0,
        carrier_specs=component_a,
        unlimited_carriers=True,
        carrier_capacity=1,
    )
    for name in ("S1", "S2", "S3", "S4", "S5"):
        line.switch(name, alternate=True)
    line.assembly("C21", processing_time=8.0)
    line.assembly("C22", processing_time=10.0)
    line.process("C3", processing_time=6.0)
    line.process("C41", processing_time=15.0, processing_std=0.1, rework_probability=0.1)
    line.process("C42", processing_time=15.0, processing_std=0.5, rework_probability=0.5)
    line.process("C43", processing_time=15.0, processing_std=0.1, rework_probability=0.1)
    line.source(
        "A2",
        processing_time=5.0,
        carrier_specs=component_b,
        unlimited_carriers=True,
        carrier_capacity=1,
    )
    line.assembly("C5", processing_time=8.0)
    line.sink("C6")
    line.connect("Magazin", "C1", capacity=4)
    line.connect("C1", "S1", capacity=2, transition_time=10.0)
    line.connect("A1", "S2", capacity=2, transition_time=5.0)
    for assembly in ("C21", "C22"):
        line.connect("S1", assembly, capacity=4, transition_time=10.0)
        line.connect("S2", assembly, kind="component", capacity=4, transition_time=10.0)
        line.connect(assembly, "S3", capacity=5, transition_time=15.0)
    line.connect("S3", "C3", capacity=3, transition_time=6.0)
    line.connect("C3", "S4", capacity=2, transition_time=6.0)
    for process in ("C41", "C42", "C43"):
        line.connect("S4", process, capacity=3, transition_time=10.0)
        line.connect(process, "S5", capacity=3, transition_time=10.0)
    line.connect("S5", "C5", capacity=4, transition_time=10.0)
    line.connect("A2", "C5", kind="component", capacity=3)
    line.connect("C5", "C6", capacity=3, transition_time=10.0)
    line.connect("C6", "Magazin", capacity=8)
    return line.build()


def carrier_magazine(max_carriers: int = 20) -> LineSpec:
    """CarrierMagazine: the simplest closed carrier loop, magazine → source → process → sink → magazine.

    Actions: the source waiting time and the magazine's stored count (10 at the start).
    """
    line = LineBuilder("carrier_magazine")
    line.magazine(
        "Magazine",
        unlimited_carriers=False,
        carriers_in_magazine=10,
        actionable_magazine=True,
        max_carriers=max_carriers,
        carrier_capacity=1,
    )
    line.source("Source")
    line.process("Process", processing_time=2.0)
    line.sink("Sink")
    line.connect("Magazine", "Source", capacity=5, transition_time=5.0, name="Buffer4")
    line.connect("Source", "Process", capacity=5, transition_time=5.0, name="Buffer1")
    line.connect("Process", "Sink", capacity=5, transition_time=5.0, name="Buffer2")
    line.connect("Sink", "Magazine", capacity=5, transition_time=5.0, name="Buffer3")
    return line.build()


def _check_size(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


SCENARIOS: dict[str, Callable[..., LineSpec]] = {
    "waiting_time": waiting_time,
    "waiting_time_jump": waiting_time_jump,
    "part_distribution": part_distribution,
    "worker_assignment": worker_assignment,
    "complex_line": complex_line,
    "part_dependent_process": part_dependent_process,
    "simple_line": simple_line,
    "multi_sink": multi_sink,
    "double_source": double_source,
    "component_assembly": component_assembly,
    "carrier_magazine": carrier_magazine,
}


def make_scenario(name: str, **kwargs: Any) -> LineSpec:
    """Build scenario ``name`` with keyword overrides; unknown names or arguments raise ``ValueError``."""
    if name not in SCENARIOS:
        raise ValueError(f"scenario must be one of {sorted(SCENARIOS)}, got {name!r}")
    factory = SCENARIOS[name]
    allowed = list(inspect.signature(factory).parameters)
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(f"scenario {name!r} takes arguments {allowed}, got unknown {unknown}")
    return factory(**kwargs)
