"""The capacity-check registry: one self-describing unit per report section, each filled by it."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import imsdr.capacity.checks as checks_pkg
from imsdr.capacity.checks.registry import CHECKS, check_ids
from imsdr.capacity.report import CapacityReport

HEADER_FIELDS = {"network", "subscribers", "busy_hour_erlangs", "max_utilisation", "verdict"}


def test_every_report_section_is_filled_by_exactly_one_registered_check() -> None:
    sections = [f.name for f in dataclasses.fields(CapacityReport) if f.name not in HEADER_FIELDS]
    assert sorted(check_ids()) == sorted(sections)


def test_every_check_describes_itself() -> None:
    for check in CHECKS:
        assert check.description and callable(check.run), check.id


def test_element_headroom_runs_after_the_takeovers_it_reads() -> None:
    ids = check_ids()
    assert ids.index("takeovers") < ids.index("element_headroom")


def test_lab_shows_only_the_loss_checks() -> None:
    assert {c.id for c in CHECKS if c.lab_shown} == {"takeovers", "sites", "risks", "storms"}


def test_every_check_module_says_what_it_checks_and_is_registered() -> None:
    registered = {c.run.__module__ for c in CHECKS}
    families = set()
    for info in pkgutil.iter_modules(checks_pkg.__path__):
        module = importlib.import_module(f"{checks_pkg.__name__}.{info.name}")
        assert module.__doc__ and module.__doc__.strip(), info.name
        if info.name not in ("base", "registry"):
            families.add(module.__name__)
    assert families == registered
