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


def test_dns_capacity_is_what_the_rendered_areas_send(national: Topology) -> None:
    """Each ENUM/DNS server is loaded by the local networks whose views it holds (its service
    area), the national pair by none (it answers delegation referrals only, cached for the NS TTL).

    Hand computation, network defaults (busy_hour_call_attempts 1, dns_queries_per_call_attempt 2,
    dns_queries_per_registration 1, registration_refresh 1,800 s): q = 1 x 2 / 3,600 + 1 / 1,800 =
    1/900 qps per registered user. Beijing's ten local networks hold U = 5,520,000 subscribers; its
    four servers form two active-active pairs of equal capacity (75,000 qps each member), so each
    server carries U / 4 = 1,380,000 users, i.e. 1,380,000 / 900 = 1,533.3 qps in normal operation.
    """
    from imsdr.capacity.report import capacity_report

    report = capacity_report(national)
    qps = {d.id: d for d in report.dimensions if d.element_type == "enum_dns"}
    subscribers = sum(ln.subscribers for ln in national.local_networks.values() if ln.id.startswith("beijing-"))
    assert subscribers == 5_520_000
    for server in ("beijing-dns-01", "beijing-dns-02", "beijing-dns-03", "beijing-dns-04"):
        assert qps[server].normal == pytest.approx(1533.33, rel=0.01)
        assert qps[server].normal == pytest.approx(subscribers / 4 / 900, rel=0.01)
    assert qps["national-dns-01"].normal == 0 and qps["national-dns-02"].normal == 0
    # every province server is loaded by its own province only: the sum over the country is
    # every subscriber once
    total = sum(d.normal for i, d in qps.items() if not i.startswith("national-"))
    everyone = sum(ln.subscribers for ln in national.local_networks.values())
    assert total == pytest.approx(everyone / 900, rel=0.001)
