"""Capacity: the load model and the sizing checks of docs/domain.md §4.5-§4.7 (pure functions, no I/O)."""

from imsdr.capacity.erlang import circuits_needed, erlang_b
from imsdr.capacity.report import CapacityReport, capacity_report, capacity_to_dict

__all__ = ["CapacityReport", "capacity_report", "capacity_to_dict", "circuits_needed", "erlang_b"]
