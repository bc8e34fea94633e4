"""Capacity: the load model and the sizing checks of DOMAIN.md (pure functions, no I/O)."""

from imsdr.capacity.erlang import circuits_needed, erlang_b
from imsdr.capacity.report import CapacityReport, capacity_report, capacity_to_dict

__all__ = ["CapacityReport", "capacity_report", "capacity_to_dict", "circuits_needed", "erlang_b"]
