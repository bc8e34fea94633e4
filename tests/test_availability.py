"""Availability per service: hand-computed vectors, the province sample, AVAIL-001, the command,
the plan's chart (rendered by rsvg-convert) and the Monte Carlo cross-check.

Every vector starts from the lab sample with every element "perfect" (MTBF 10^9 h, MTTR 0.001 h:
q = 10^-12, below the probability cut-off, and < 0.00001 min/yr of switchover) and no shared-risk
events, then gives the elements under test real figures. Minutes per year: 525,960 (365.25 days).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from imsdr.analysis import Analysis
from imsdr.cli.app import app
from tests.inventory_factory import PROVINCE, element, lab_data, province_data, site, topology_from_data

runner = CliRunner()
PERFECT = {"mtbf_hours": 1e9, "mttr_hours": 0.001}
NO_RISKS = {k: {"rate_per_year": 0, "duration_hours": 1} for k in ("site", "power", "route", "region")}


def lab(**elements: dict[str, float]) -> dict[str, Any]:
    data = lab_data()
    ln = data["local_networks"][0]
    ln["access"] = "fixed"
    ln.pop("packet_gateway", None)
    data["availability"] = {
        "types": {t: PERFECT for t in ("enum_dns", "sbc", "pcscf", "cscf", "hss", "slf", "mgcf", "imgw", "as")},
        "shared_risks": dict(NO_RISKS), "elements": dict(elements),
    }
    return data


def row(data: dict[str, Any], tmp_path: Path, service: str, ln: str = "lab-users"):  # type: ignore[no-untyped-def]
    report = Analysis(topology_from_data(data, tmp_path)).availability
    return next(r for r in report.services if r.service == service and r.local_network == ln)


def test_series_of_two(tmp_path: Path) -> None:
    """SBC and HSS in series (nothing takes over either), MTBF 10,000 h, MTTR 10 h each:
    q = 10 / 10,010 = 0.000999001; two single cut sets, exact: 1 − (1 − q)² = 2q − q² =
    0.001997004; × 525,960 = 1050.34 min/yr; no switchover (nothing takes over)."""
    fig = {"mtbf_hours": 10_000, "mttr_hours": 10}
    r = row(lab(**{"lab-sbc-1": fig, "lab-hss-1": fig}), tmp_path, "registration")
    assert r.method == "exact"
    assert sorted(c.events for c in r.cut_sets) == [("element:lab-hss-1",), ("element:lab-sbc-1",)]
    assert f"{r.outage_minutes:.2f}" == "1050.34"
    assert f"{r.downtime_minutes:.2f}" == "1050.34"


def test_one_plus_one_pair(tmp_path: Path) -> None:
    """The two S-CSCFs (either carries all 1,000 users), MTBF 1,000 h, MTTR 10 h each:
    q = 10 / 1,010 = 0.00990099; one cut set {cscf-1, cscf-2}: q² = 0.0000980296 → 51.56 min/yr.
    Switchover: each failure moves its half of the users (split by equal capacity) for the
    detection time, SIP OPTIONS 10 s × 3 + 2 s = 32 s (restoration data: no re-registration):
    2 × (8766 / 1,010 = 8.6792 failures/yr) × 0.5 × 32 s / 60 = 4.63 min/yr."""
    fig = {"mtbf_hours": 1_000, "mttr_hours": 10}
    r = row(lab(**{"lab-cscf-1": fig, "lab-cscf-2": fig}), tmp_path, "registration")
    assert [c.events for c in r.cut_sets] == [("element:lab-cscf-1", "element:lab-cscf-2")]
    assert f"{r.outage_minutes:.2f}" == "51.56"
    assert f"{r.switchover_minutes:.2f}" == "4.63"
    assert f"{r.downtime_minutes:.2f}" == "56.19"


def test_two_of_three_pool(tmp_path: Path) -> None:
    """Three S-CSCFs of 600 users each for 1,000 users, whose S-CSCF load is 1,100 user-equivalents
    (restoration data: × 1.1, docs/capacity.md): two carry it (1,200), one cannot (600: 500 of
    1,100 refused, fraction 5/11 = 0.4545). MTBF 1,000 h, MTTR 10 h: q = 0.00990099. Minimal cut
    sets: the three pairs, each q² × 5/11; rare-event sum 3 × 0.0000980296 × 0.4545 = 0.000133677
    → 70.31 min/yr (all three down is not minimal: a superset of each pair)."""
    fig = {"mtbf_hours": 1_000, "mttr_hours": 10}
    data = lab(**{"lab-cscf-1": fig, "lab-cscf-2": fig, "lab-cscf-3": fig})
    third = dict(element(data, "lab-cscf-2"), id="lab-cscf-3", addresses=["192.0.2.22"])
    data["elements"].append(third)
    for el_id in ("lab-cscf-1", "lab-cscf-2", "lab-cscf-3"):
        next(e for e in data["elements"] if e["id"] == el_id)["capacity"] = {"registered_users": 600}
    data["redundancy"]["pools"][0]["members"].append("lab-cscf-3")
    r = row(data, tmp_path, "registration")
    assert r.method == "rare-event"
    assert len(r.cut_sets) == 3 and all(len(c.events) == 2 and f"{c.fraction:.4f}" == "0.4545" for c in r.cut_sets)
    assert f"{r.outage_minutes:.2f}" == "70.31"


def test_pair_sharing_a_power_feed(tmp_path: Path) -> None:
    """The 1+1 S-CSCFs of test_one_plus_one_pair share the lab's power feed, which fails once a
    year for 10 h: q_p = 10 / (8766 + 10) = 0.00113947. Cut sets {power:lab-ups} and {cscf-1,
    cscf-2}; exact P = q_p + q² − q_p q² = 0.00113947 + 0.0000980296 − 0.000000112 = 0.00123739 →
    650.82 min/yr, of which the common cause alone is 599.32: it dominates."""
    fig = {"mtbf_hours": 1_000, "mttr_hours": 10}
    data = lab(**{"lab-cscf-1": fig, "lab-cscf-2": fig})
    data["availability"]["shared_risks"]["power"] = {"rate_per_year": 1, "duration_hours": 10}
    r = row(data, tmp_path, "registration")
    assert r.method == "exact"
    assert r.cut_sets[0].events == ("power:lab-ups",) and f"{r.cut_sets[0].minutes:.2f}" == "599.32"
    assert f"{r.outage_minutes:.2f}" == "650.82"
    assert r.importance[0].event == "power:lab-ups"


def dr_sbc_network() -> dict[str, Any]:
    """The lab with a second local network whose SBC lab-sbc-2 is lab-users' DR SBC (a ring),
    both SBCs MTBF 50,000 h, MTTR 4 h."""
    fig = {"mtbf_hours": 50_000, "mttr_hours": 4}
    data = lab(**{"lab-sbc-1": fig, "lab-sbc-2": fig})
    data["local_networks"].append(dict(data["local_networks"][0], id="lab-users-2", name="Lab Users 2",
                                       prefixes=["198.51.101.0/24"], resolvers=[]))
    data["elements"].append(dict(element(data, "lab-sbc-1"), id="lab-sbc-2", addresses=["203.0.113.11"],
                                 serves=["lab-users-2"]))
    data["redundancy"]["sbc_dr"] = {"layout": "ring", "order": ["lab-users", "lab-users-2"]}
    return data


def test_sbc_with_dr_sbc_and_1800_s_switchover(tmp_path: Path) -> None:
    """lab-users' SBC with a DR SBC (a ring of two local networks), MTBF 50,000 h, MTTR 4 h:
    q = 4 / 50,004 = 0.0000799936; outage q² = 0.0000000063990 → 0.0034 min/yr. Switchover of
    terminating calls per SBC failure: 32 s detection + 1,800 s re-registration = 1,832 s;
    8766 / 50,004 = 0.175306 failures/yr × 1,832 / 60 = 5.3527 min/yr (the DR SBC carries none of
    lab-users normally: its failures cost them nothing). Total 5.3560 min/yr, 99.99898 %."""
    data = dr_sbc_network()
    r = row(data, tmp_path, "terminating")
    assert [c.events for c in r.cut_sets] == [("element:lab-sbc-1", "element:lab-sbc-2")]
    assert f"{r.outage_minutes:.4f}" == "0.0034"
    assert f"{r.switchover_minutes:.4f}" == "5.3527"
    assert f"{r.downtime_minutes:.4f}" == "5.3560"
    assert f"{r.availability * 100:.5f}" == "99.99898"


def test_rows_per_access_type(tmp_path: Path) -> None:
    """The DR-SBC network of test_sbc_with_dr_sbc_and_1800_s_switchover, lab-users now with fixed
    and PS access (400 of its 1,000 users on PS; the lab has HSS-based P-CSCF restoration). One row
    per access type, the same cut set (outage 0.0034 min/yr) and users split 600/400. Terminating
    calls per SBC failure (0.175306 a year): fixed users wait 32 s detection + 1,800 s
    re-registration = 1,832 s → 5.3527 min/yr; PS users 32 s + 5 s restoration signalling + 2 s
    registration (TS 23.380 §5.4) = 39 s → 0.175306 × 39 / 60 = 0.1140 min/yr. Originating calls
    wait the detection alone on both: 0.175306 × 32 / 60 = 0.0935 min/yr."""
    data = dr_sbc_network()
    data["local_networks"][0].update(access="both", packet_gateway={"id": "lab-pgw", "kind": "smf"},
                                     ps_subscribers=400)
    report = Analysis(topology_from_data(data, tmp_path)).availability
    rows = {(r.service, r.access): r for r in report.services if r.local_network == "lab-users"}
    assert sorted(a for s, a in rows if s == "terminating") == ["fixed", "ps"]
    fixed, ps = rows[("terminating", "fixed")], rows[("terminating", "ps")]
    assert (fixed.users, ps.users) == (600, 400)
    assert f"{fixed.outage_minutes:.4f}" == f"{ps.outage_minutes:.4f}" == "0.0034"
    assert f"{fixed.switchover_minutes:.4f}" == "5.3527"
    assert f"{ps.switchover_minutes:.4f}" == "0.1140"
    assert {f"{rows[('originating', a)].switchover_minutes:.4f}" for a in ("fixed", "ps")} == {"0.0935"}
    assert "ps_subscribers" not in report.defaults
    # a fixed-only network keeps one row
    assert [r.access for r in report.services if r.local_network == "lab-users-2" and r.service == "terminating"] \
        == ["fixed"]
    # without the split, half and half, named as a planning default
    del data["local_networks"][0]["ps_subscribers"]
    report = Analysis(topology_from_data(data, tmp_path)).availability
    assert [r.users for r in report.services if r.local_network == "lab-users" and r.service == "terminating"] \
        == [500, 500]
    assert "ps_subscribers" in report.defaults


@pytest.mark.parametrize(("fields", "reason"), [
    ({"access": "fixed", "ps_subscribers": 10}, "'ps_subscribers' splits the users of access: both only"),
    ({"ps_subscribers": 5000}, "ps_subscribers 5,000 exceeds the local network's subscribers (1,000)"),
])
def test_ps_subscribers_checked(tmp_path: Path, fields: dict[str, Any], reason: str) -> None:
    from tests.inventory_factory import write_inventory

    data = lab_data()
    data["local_networks"][0].update(fields)
    if fields.get("access") == "fixed":
        data["local_networks"][0].pop("packet_gateway", None)
    result = runner.invoke(app, ["validate", str(write_inventory(data, tmp_path))])
    assert result.exit_code == 2, result.output
    assert "local_networks[0].ps_subscribers: " in result.output
    assert reason in result.output


# --- the province sample ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def province():  # type: ignore[no-untyped-def]
    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology

    return Analysis(Topology(*load_inventory(PROVINCE))).availability


def test_province_figures_documented(province) -> None:  # type: ignore[no-untyped-def]
    """docs/availability.md explains every service of the sample with the figures imsdr prints."""
    from imsdr.availability.services import minutes, percent

    doc = (Path(__file__).resolve().parent.parent / "docs" / "availability.md").read_text(encoding="utf-8")
    for r in province.services:
        if r.local_network == "capital":
            assert percent(r.availability) in doc and minutes(r.downtime_minutes) in doc, r.service
            for c in r.contributors[:3]:
                assert c.label in doc
    coast = {r.access: r for r in province.rows("terminating") if r.local_network == "coast"}
    assert sorted(coast) == ["fixed", "ps"] and coast["ps"].users == coast["fixed"].users == 125_000
    assert (f"terminating calls is {minutes(coast['ps'].downtime_minutes)} min/yr against "
            f"{minutes(coast['fixed'].downtime_minutes)} for its fixed row") in doc
    assert coast["ps"].contributors[0].label == "route:backbone-ring-1"


def test_shared_power_feed_moves_avail_001(tmp_path: Path) -> None:
    """A 99.9995 % registration target (2.63 min/yr allowed) holds on the province (1.197 min/yr
    for capital, the most; docs/availability.md).
    Put site-b, home of hss-b-1, on site-a's power feed: the HSS pair's members now share one
    feed, and that feed alone is a cut set of registration: q = 4 / (87,660 + 4) = 0.0000456 →
    +24.00 min/yr of outage (predicted; the cut sets it absorbs were 0.2 min/yr), so AVAIL-001
    fires, naming the feed first."""
    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology

    data = province_data()
    data["network"]["availability_targets"] = {"registration": 99.9995}
    assert _avail_findings(data, tmp_path / "a") == []
    site(data, "site-b")["power"] = ["grid-capital-east"]
    after = _avail_findings(data, tmp_path / "b")
    assert after and all("registration of" in f.message for f in after)
    assert all(f.message.split("largest contributors: ")[1].startswith("power:grid-capital-east") for f in after)
    before = Analysis(Topology(*load_inventory(PROVINCE))).availability.rows("registration")
    moved = Analysis(topology_from_data(data, tmp_path / "b")).availability.rows("registration")
    for old, new in zip(before, moved, strict=True):
        # the feed's 24.00 min/yr, less the cut sets it now contains (0.2 min/yr in all before)
        assert abs(new.outage_minutes - old.outage_minutes - 24.00) <= 0.25, new.local_network


def _avail_findings(data: dict[str, Any], tmp_path: Path) -> list[Any]:
    from imsdr.rules.base import RuleContext
    from imsdr.rules.registry import rules_by_id

    tmp_path.mkdir()
    topo = topology_from_data(data, tmp_path)
    rule = rules_by_id()["AVAIL-001"]
    return list(rule.check(rule, RuleContext(topo, analysis=Analysis(topo))))  # the rule as check runs it


# --- the command, plan page and chart, Monte Carlo -------------------------------------------------


def test_command_json_and_simulation_contains_the_analytic_figure() -> None:
    result = runner.invoke(app, ["availability", str(PROVINCE), "--format", "json", "--simulate", "400"])
    assert result.exit_code == 0, result.stdout
    data = json.loads(result.stdout)
    assert data["format"] == "imsdr.availability/1" and data["importance_measure"] == "fussell-vesely"
    assert all(r["contains"] for r in data["simulation"]["rows"])


def test_generated_network_with_common_cause_events(tmp_path: Path) -> None:
    """A generated province whose power feeds fail 4 times a year for 6 h, with both HSSs on one
    feed: the common cause is frequent enough to be observed many times, and the simulated interval
    still contains the analytic figure."""
    from imsdr.availability.analytic import AvailabilityModel, report_of
    from imsdr.availability.montecarlo import simulate

    out = runner.invoke(app, ["example", "province", "--seed", "3"])
    assert out.exit_code == 0
    import yaml

    data = yaml.safe_load(out.stdout)
    data["availability"] = {"shared_risks": {"power": {"rate_per_year": 4, "duration_hours": 6}}}
    hss = [e for e in data["elements"] if e["type"] == "hss"]
    hss_sites = {e["site"] for e in hss}
    feed = next(s for s in data["sites"] if s["id"] == hss[0]["site"])["power"][0]
    for s in data["sites"]:
        if s["id"] in hss_sites:
            s["power"] = [feed]
    topo = topology_from_data(data, tmp_path)
    analysis = Analysis(topo)
    run = AvailabilityModel(topo, analysis.engine)
    report = report_of(run)
    reg = [r for r in report.services if r.service == "registration"]
    assert reg and all(r.cut_sets[0].events == (f"power:{feed}",) for r in reg)
    estimate = simulate(run, report, 150, seed=5)
    assert all(e.contains for e in estimate.rows)
    assert min(e.outage_episodes for e in estimate.rows if e.service == "registration") > 50


def test_plan_writes_the_page_and_a_chart_rsvg_renders(tmp_path: Path) -> None:
    from tests.inventory_factory import LAB

    out = tmp_path / "plan"
    result = runner.invoke(app, ["plan", str(LAB), "--out", str(out)])
    assert result.exit_code in (0, 1), result.stdout
    page = (out / "runbooks" / "availability.md").read_text(encoding="utf-8")
    assert "![Downtime per year by contributor](availability.svg)" in page
    rsvg = shutil.which("rsvg-convert")
    assert rsvg, "rsvg-convert (Debian librsvg2-bin) is needed"
    png = tmp_path / "chart.png"
    subprocess.run([rsvg, str(out / "runbooks" / "availability.svg"), "-o", str(png)], check=True, timeout=30)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 1000


def test_unknown_override_ids_are_refused_with_their_location(tmp_path: Path) -> None:
    from tests.inventory_factory import write_inventory

    data = lab_data()
    data["availability"] = {"elements": {"lab-sbc-9": {"mtbf_hours": 1000, "mttr_hours": 1}},
                            "groups": {"no-such-pool": {"mtbf_hours": 1000, "mttr_hours": 1}},
                            "platforms": {"nowhere": {"mtbf_hours": 1000, "mttr_hours": 1}},
                            "types": {"sbc": {"mtbf_hours": -5, "mttr_hours": 1}}}
    path = write_inventory(data, tmp_path)
    result = runner.invoke(app, ["availability", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    text = result.output
    for bad in ("lab-sbc-9", "no-such-pool", "nowhere", "mtbf_hours"):
        assert bad in text, text
    assert f"{path.name}:" in text
