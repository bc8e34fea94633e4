"""Availability per service and local network from MTBF/MTTR, shared risks and switchover times.

* :mod:`~imsdr.availability.inputs` — basic events (elements, shared risks) and their figures;
* :mod:`~imsdr.availability.services` — services as chains of blocks from the failure engine;
* :mod:`~imsdr.availability.analytic` — minimal cut sets, outage and switchover loss;
* :mod:`~imsdr.availability.figures` — what a row reports: cut sets, contributors, importance;
* :mod:`~imsdr.availability.importance` — Fussell–Vesely importance, what to fix first;
* :mod:`~imsdr.availability.montecarlo` — the cross-check by simulation.

The model, its formulas and limits: docs/availability.md.
"""
