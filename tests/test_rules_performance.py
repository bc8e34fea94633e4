"""Design rules stay fast at national scale (~5,000 elements): per-run indices, no O(n^2) scans."""

from __future__ import annotations

import time
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
    start = time.perf_counter()
    report = run_checks(national, rules=DESIGN)
    elapsed = time.perf_counter() - start
    assert len(report.rules) == len(DESIGN)
    assert elapsed < 3.0, f"design rules took {elapsed:.2f} s at {len(national.elements)} elements"


def test_topology_export_at_national_scale(national: Topology) -> None:
    start = time.perf_counter()
    text = to_mermaid(national)
    dot = to_dot(national)
    errors = mermaid_errors(text, require_declared=True)
    elapsed = time.perf_counter() - start
    assert errors == [] and dot.endswith("}\n")
    assert elapsed < 6.0, f"export + validation took {elapsed:.2f} s"
