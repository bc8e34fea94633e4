"""One run's analysis of one inventory: the computed model every part of imsdr reads.

A command (or the plan pipeline) creates one :class:`Analysis` for the topology it loaded and
passes it down; capacity rules, the capacity report, scenarios, simulations and the runbooks then
read the same compiled load model instead of each building (or secretly sharing) their own.
Each part is computed on first use and lives exactly as long as the Analysis object: no module
keeps anything between calls, and two runs never see each other's results.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.availability.analytic import AvailabilityModel, AvailabilityReport
    from imsdr.capacity.engine import Engine
    from imsdr.capacity.report import CapacityReport
    from imsdr.capacity.storm import Storm
    from imsdr.model.topology import Topology


class Analysis:
    """The per-run analysis of ``topology``.

    * :attr:`engine` — the failure Engine over the exact-number (``Fraction``) load model: the
      capacity report, ``check``'s CAP rules and every analysis of ``plan`` read it;
    * :attr:`capacity` — the capacity report computed from :attr:`engine`; computing it fills
      :attr:`storms`, the registration storm of every site and region loss by scenario label
      (``site:<id>``), which the plan's site simulations read instead of computing them again;
    * :attr:`float_engine` — the same model in floats, for the interactive ``simulate`` and
      ``scenarios`` commands, which need no audit-exact arithmetic and must be fast;
    * :attr:`availability` — availability per service and local network (cut sets, outage and
      switchover loss) over :attr:`engine`: ``imsdr availability``, AVAIL-001 and the plan's
      availability runbook read this one report.
    """

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.storms: dict[str, Storm] = {}

    @cached_property
    def engine(self) -> Engine:
        from imsdr.capacity.engine import Engine

        with cyclic_gc_paused():
            return Engine(self.topology)

    @cached_property
    def float_engine(self) -> Engine:
        from imsdr.capacity.engine import Engine

        with cyclic_gc_paused():
            return Engine(self.topology, exact_numbers=False)

    @cached_property
    def capacity(self) -> CapacityReport:
        from imsdr.capacity.report import capacity_report

        engine = self.engine
        with cyclic_gc_paused():
            return capacity_report(self.topology, engine, storms=self.storms)

    @cached_property
    def availability_model(self) -> AvailabilityModel:
        """Basic events, blocks and their memoised losses: the report and ``--simulate`` read it."""
        from imsdr.availability.analytic import AvailabilityModel

        return AvailabilityModel(self.topology, self.engine)

    @cached_property
    def availability(self) -> AvailabilityReport:
        from imsdr.availability.analytic import report_of

        model = self.availability_model
        with cyclic_gc_paused():
            return report_of(model)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a model, report or sweep is built.

    They build hundreds of thousands of objects at national scale and none is garbage yet (the
    temporaries hold no reference cycles: reference counting frees them); each full collection
    would walk the whole inventory and model again, for nothing. ``load_inventory`` pauses it too.

    When it resumes, what the pause built is moved to the oldest generation at once (freeze, then
    unfreeze: two list splices): left young, the first collection after the pause would walk every
    object built meanwhile (~0.1 s after a national load) only to find them alive, and the next
    ones again as they age. They are still collected, by the next full collection. (Not while
    something else holds objects frozen: unfreezing would hand those back too.)"""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()
