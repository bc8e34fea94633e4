"""A DRA pair in the one load model: sized in Diameter/s from the Cx/Sh load of the clients it
relays (the HSS's background and storm), checked by CAP-010/011/012, shown in ``imsdr capacity``,
the capacity runbook page and the simulation (losing the pair loses its province)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inventory_factory import load_from_data, province_data, topology_from_data, with_dras

from imsdr.capacity import capacity_report, capacity_to_dict
from imsdr.model.topology import Topology
from imsdr.rules.base import RuleContext
from imsdr.rules.capacity_rules import RULES


def _findings(data: dict[str, Any], tmp_path: Path, name: str = "inventory.yaml") -> list[Any]:
    inv, source = load_from_data(data, tmp_path, name)
    ctx = RuleContext(Topology(inv, source))
    return [f for rule in RULES for f in rule.check(rule, ctx)]


def test_dra_background_is_the_hss_load_of_its_clients(tmp_path: Path) -> None:
    """One model: the DRAs together relay exactly the Cx load the HSSs of the province serve, with
    the same per-subscriber rate; after losing one DRA's site the mate carries it all."""
    report = capacity_report(topology_from_data(with_dras(province_data()), tmp_path))
    rows = {d.id: d for d in report.dimensions if d.dimension == "transactions_per_second"}
    dras, hss = [rows["dra-a-1"], rows["dra-b-1"]], rows["hss-a-1"]
    assert all(d.per_user == hss.per_user for d in dras)
    assert sum(d.normal for d in dras) == pytest.approx(hss.normal)  # 3,000,000 subscribers' UAR/SAR/LIR
    assert hss.normal == pytest.approx(3_000_000 * (2 / 1200 + 0.5 / 3600))
    assert all(d.worst == pytest.approx(hss.normal) for d in dras)  # one DRA alone after a site loss
    assert {d.worst_scenario for d in dras} == {"site:site-a", "site:site-b"}
    assert all(d.verdict == "ok" for d in dras)
    # the storm of a site loss reaches the surviving DRA as it reaches the HSS (Cx + Sh relayed)
    storm = next(s for s in capacity_to_dict(report)["storms"] if s["scenario"] == "site:site-b")
    assert storm["verdict"] == "ok"


def test_a_small_dra_fails_its_storm_and_background_checks(tmp_path: Path) -> None:
    findings = _findings(with_dras(province_data(), tps=6000), tmp_path)
    background = [f for f in findings if f.rule_id == "CAP-011"]
    assert {f.subjects[0] for f in background} == {"dra-a-1", "dra-b-1"}
    assert "5,416.7 Diameter/s" in background[0].message and "6,000 transactions per second" in background[0].message
    storms = [f for f in findings if f.rule_id == "CAP-010"]
    assert storms and all("dra-" in f.message for f in storms)
    assert any("site:site-b lost" in f.message and "dra-a-1 needs 14,166.67 Diameter/s of 9,000" in f.message
               for f in _findings(with_dras(province_data(), tps=9000), tmp_path, "9000.yaml"))  # docs/diameter.md
    assert any("overloads dra-a-1" in f.message for f in storms)
    # a DRA of ample capacity passes both
    ids = {f.rule_id for f in _findings(with_dras(province_data(), tps=40000), tmp_path, "big.yaml")}
    assert not ids & {"CAP-010", "CAP-011"}


def test_a_dra_without_transactions_per_second_is_cap_012(tmp_path: Path) -> None:
    data = with_dras(province_data())
    for el in data["elements"]:
        if el["type"] == "dra":
            el["capacity"] = {}
    missing = [f for f in _findings(data, tmp_path) if f.rule_id == "CAP-012"]
    assert {f.subjects[0] for f in missing} == {"dra-a-1", "dra-b-1"}
    assert "transactions_per_second" in missing[0].message


def test_capacity_cli_and_runbook_show_the_dra(tmp_path: Path) -> None:
    from inventory_factory import write_inventory
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    inv = write_inventory(with_dras(province_data(), tps=6000), tmp_path)
    result = CliRunner().invoke(app, ["capacity", str(inv), "--all"])
    assert result.exit_code == 1, result.output
    assert "dra-a-1      transactions per second" in result.output and "bottleneck dra-" in result.output
    out = tmp_path / "rb"
    CliRunner().invoke(app, ["render", "runbook", str(inv), "--out", str(out)])
    page = (out / "capacity.md").read_text(encoding="utf-8")
    assert "| dra-a-1 (transactions per second) |" in page and "overloads dra-" in page
    # the HSS/SLF/DRA page sees a lost DRA as its clients do: a Diameter peer no longer OPEN
    hss_page = (out / "hss-slf.md").read_text(encoding="utf-8")
    assert "| dra-a-1 | 1 s | Diameter peer state not OPEN" in hss_page
    assert "Move the Diameter routes of dra-a-1's clients to its mate" in hss_page


def test_losing_the_dra_pair_loses_its_province(tmp_path: Path) -> None:
    from imsdr.scenarios.simulate import simulate

    topo = topology_from_data(with_dras(province_data()), tmp_path)
    both = simulate(topo, ["dra-a-1", "dra-b-1"])
    assert both.verdict == "outage"
    assert both.unserved_users == pytest.approx(3_000_000)
    assert dict(both.unserved_by_service) == {"dra": pytest.approx(3_000_000)}
    assert any("DRA pair lost" in line and "province example" in line for line in both.failed[0].impact)
    assert any("nothing to resynchronise" in line for line in both.failed[0].failback)
    one = simulate(topo, ["dra-a-1"])
    assert one.failed[0].takeover == ("dra-b-1",) and one.unserved_users == 0


def test_the_dra_pair_is_a_block_of_registration_and_terminating_calls(tmp_path: Path) -> None:
    """Availability reads the same flows: with every other element perfect, the one cut set of
    registration and of terminating calls is the DRA pair (either member serves the province)."""
    from imsdr.analysis import Analysis

    data = with_dras(province_data())
    perfect = {"mtbf_hours": 1e9, "mttr_hours": 0.001}
    types = ("enum_dns", "sbc", "pcscf", "cscf", "hss", "slf", "mgcf", "imgw", "as")
    data["availability"] = {
        "types": {**{t: perfect for t in types}, "dra": {"mtbf_hours": 1000, "mttr_hours": 10}},
        "shared_risks": {k: {"rate_per_year": 0, "duration_hours": 1} for k in ("site", "power", "route", "region")},
    }
    report = Analysis(topology_from_data(data, tmp_path)).availability
    for service in ("registration", "terminating"):
        row = next(r for r in report.services if r.service == service and r.local_network == "capital")
        assert [c.events for c in row.cut_sets] == [("element:dra-a-1", "element:dra-b-1")], row.cut_sets
    # the default figures cover a DRA too (no inventory figures at all)
    assert Analysis(topology_from_data(with_dras(province_data()), tmp_path, "plain.yaml")).availability.services
