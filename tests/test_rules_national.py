"""Design rules and topology export run at national scale (~5,000 elements).

Timings are measured by benchmarks/run.py, never asserted here."""

from __future__ import annotations

from pathlib import Path

import pytest

from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology
from imsdr.output.mermaid_check import mermaid_errors
from imsdr.output.topology import to_dot, to_mermaid
from imsdr.rules.engine import run_checks
from imsdr.rules.registry import all_rules

DESIGN = [r for r in all_rules() if not r.id.startswith("CAP-")]


@pytest.fixture(scope="module")
def national(tmp_path_factory: pytest.TempPathFactory) -> Topology:
    from imsdr.example.national import NationalParams, write_yaml

    path = Path(tmp_path_factory.mktemp("national")) / "national.yaml"
    with path.open("w", encoding="utf-8") as out:
        write_yaml(NationalParams(enum_numbers=100_000), out)
    return Topology(*load_inventory(path))


def test_design_rules_at_national_scale(national: Topology) -> None:
    assert len(national.elements) >= 4500
    report = run_checks(national, rules=DESIGN)
    assert len(report.rules) == len(DESIGN)
    assert [f for f in report.findings if f.severity.value == "error"] == []


def test_topology_export_at_national_scale(national: Topology) -> None:
    text = to_mermaid(national)
    dot = to_dot(national)
    assert mermaid_errors(text, require_declared=True) == [] and dot.endswith("}\n")
