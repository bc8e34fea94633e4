"""Failure simulation: what takes over, how long it takes, who is hurt meanwhile."""

from imsdr.capacity.engine import DEGRADED, NO_LOSS, OUTAGE, Engine
from imsdr.scenarios.run import ScenariosReport, run_scenarios, scenarios_to_dict
from imsdr.scenarios.simulate import SimulationReport, simulate, simulation_to_dict

__all__ = [
    "DEGRADED",
    "NO_LOSS",
    "OUTAGE",
    "Engine",
    "ScenariosReport",
    "SimulationReport",
    "run_scenarios",
    "scenarios_to_dict",
    "simulate",
    "simulation_to_dict",
]
