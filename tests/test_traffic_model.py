"""The one traffic model: selection as data, every capacity dimension, the registration storm,
shared-risk failures — each with figures computed by hand in the comments."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inventory_factory import (
    PROVINCE,
    ROOT,
    element,
    group,
    province_data,
    site,
    topology_from_data,
    write_inventory,
)
from typer.testing import CliRunner

from imsdr.capacity import capacity_report
from imsdr.cli.app import app
from imsdr.scenarios.simulate import simulate

runner = CliRunner()
REGION_LOSS = ROOT / "docs" / "examples" / "province-region-loss.yaml"


def invoke(*args: Any):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


def _loads(report: Any) -> dict[str, Any]:
    return {r.id: r for r in report.loads}


# --- selection: static and DNS-selected pools --------------------------------------------------------------


def _static_pool(selection: str = "static") -> dict[str, Any]:
    """4 S-CSCFs of 300k in one pool for 900k users (the issue's case), nothing else sized."""
    return {
        "version": 1,
        "network": {"name": "Pool", "operator_domain": "example.net", "home_domains": ["ims.example.net"],
                    "country_code": "86", "deployment": "lab", "capacity_model": {"max_utilisation": 1.0}},
        "sites": [{"id": "site-a", "name": "A", "region": "north", "power": ["pa"], "transmission": ["ta"]}],
        "local_networks": [{"id": "ln", "name": "LN", "prefixes": ["198.51.100.0/24"],
                            "home_sites": ["site-a"], "subscribers": 900_000}],
        "elements": [
            {"id": f"s{i}", "type": "cscf", "roles": ["scscf"], "site": "site-a", "vendor": "v",
             "addresses": [f"192.0.2.{i}"], "capacity": {"registered_users": 300_000}}
            for i in range(1, 5)
        ],
        "redundancy": {"pools": [{"id": "spool", "members": ["s1", "s2", "s3", "s4"], "spare": 1,
                                  "selection": selection}]},
    }


def test_static_pool_the_next_member_takes_everything(tmp_path: Path) -> None:
    topo = topology_from_data(_static_pool(), tmp_path)
    # the N+K formula alone says ok: 4 × 225k, after one loss 900k on 3 × 300k = 100%
    (pool,) = capacity_report(topo).pools
    assert "after losing 1: s + spare = 300,000 per member vs 300,000 → ok" in pool.formula
    # but static selection sends s1's 225k to s2 alone: 450k on 300k = 150%, 150k refused
    assert pool.verdict == "fail" and pool.formula[-1] == (
        "simulated: losing s1 → s2 at 150%, 150,000 users unserved (limit 100%) → SHORT")
    sim = simulate(topo, ["s1"])
    assert sim.verdict == "outage" and _loads(sim)["s2"].utilisation == 1.5 and sim.unserved_users == 150_000
    # the same pool sharing the load (capabilities) survives: 300k each after one loss
    (tmp_path / "shared").mkdir()
    shared = topology_from_data(_static_pool("capabilities"), tmp_path / "shared")
    (pool,) = capacity_report(shared).pools
    assert pool.verdict == "ok" and simulate(shared, ["s1"]).verdict == "no loss"


def _dns_province(tmp_path: Path) -> Any:
    data = province_data()
    group(data, "cscf-pool")["selection"] = "dns"  # published as scscf.ims.example.net
    return topology_from_data(data, tmp_path)


def test_dns_selected_pool_follows_the_rendered_first_try_probabilities(tmp_path: Path) -> None:
    from imsdr.dns.plan import build_dns_plan
    from imsdr.resolve.offline import resolve_in
    from imsdr.resolve.planview import ElementIndex, PlanSource

    topo = _dns_province(tmp_path)
    report = capacity_report(topo)
    (pool,) = report.pools
    loads = dict(zip(pool.members, pool.loads, strict=True))
    # Users enter at the P-CSCF first in their SBC's list: site-a 1,200k + 300k, site-b 600k + 250k +
    # 250k, site-c 400k; × 1.1 restoration factor. Each site's view lists its own S-CSCFs first:
    # site-a → cscf-a-1 alone (1,650k = 82.5% of 2,000k), site-b → b-1 and b-2 half each
    # (1,210k / 2 = 605k), site-c → cscf-c-1 (440k) — where load sharing would give 825k each.
    assert loads == {"cscf-a-1": 1_650_000, "cscf-b-1": 605_000, "cscf-c-1": 440_000, "cscf-b-2": 605_000}
    # the split of site-b's users is exactly what `resolve` says a client at site-b tries first
    plan = build_dns_plan(topo, lazy=True)
    res = resolve_in(PlanSource(plan), "scscf.ims.example.net", client="192.0.2.84", transport="udp",
                     index=ElementIndex(topo))
    assert res.view == "core-site-b"
    first_try = {c.element: c.p_first for c in res.candidates}
    assert first_try == {"cscf-b-1": Fraction(1, 2), "cscf-b-2": Fraction(1, 2), "cscf-a-1": 0, "cscf-c-1": 0}
    site_b_users = 1_100_000 * Fraction(11, 10)
    assert {m: loads[m] for m in ("cscf-b-1", "cscf-b-2")} == {
        m: site_b_users * p for m, p in first_try.items() if p}
    # after cscf-b-1 fails the site-b answer has one record left: cscf-b-2 takes all of site-b
    sim = simulate(topo, ["cscf-b-1"])
    assert _loads(sim)["cscf-b-2"].load_after == 1_210_000 and "cscf-a-1" not in _loads(sim)
    # losing both site-b S-CSCFs sends site-b to the other region's tier: a-1 and c-1 half each,
    # cscf-a-1 at 1,650k + 605k = 2,255k of 2,000k: the pool check says so too (N+2)
    assert pool.verdict == "fail" and "cscf-a-1 at 112.8%" in pool.formula[-1]
    both = simulate(topo, ["cscf-b-1", "cscf-b-2"])
    assert both.verdict == "outage" and _loads(both)["cscf-a-1"].utilisation == 1.1275


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    caps=st.lists(st.integers(min_value=1, max_value=40).map(lambda c: c * 25_000), min_size=2, max_size=5),
    users=st.integers(min_value=1, max_value=120).map(lambda u: u * 10_000),
    selection=st.sampled_from(["static", "dns", "weighted", "capabilities", "fixed"]),
    limit=st.sampled_from([0.85, 1.0]),
)
def test_a_pool_verdict_and_its_simulation_agree(
    tmp_path_factory: pytest.TempPathFactory, caps: list[int], users: int, selection: str, limit: float
) -> None:
    """Property: for any pool, `capacity` passes it exactly when simulating the loss of each member
    loses nothing and keeps every survivor within the limit."""
    data = _static_pool(selection)
    data["network"]["capacity_model"]["max_utilisation"] = limit
    data["local_networks"][0]["subscribers"] = users
    members = [f"s{i}" for i in range(1, len(caps) + 1)]
    data["elements"] = [
        {"id": m, "type": "cscf", "roles": ["scscf"], "site": "site-a", "vendor": "v",
         "addresses": [f"192.0.2.{i}"], "capacity": {"registered_users": c}}
        for i, (m, c) in enumerate(zip(members, caps, strict=True), start=1)
    ]
    data["redundancy"]["pools"][0].update(members=members, dns_name="scscf")
    topo = topology_from_data(data, tmp_path_factory.mktemp("pool"))
    (pool,) = capacity_report(topo).pools
    simulated_ok = all(simulate(topo, [m]).verdict == "no loss" for m in members)
    assert (pool.verdict == "ok") == simulated_ok, (pool.formula, pool.loads)


# --- every dimension --------------------------------------------------------------------------------------


def test_sessions_against_busy_hour_erlangs(tmp_path: Path) -> None:
    data = province_data()
    element(data, "as-a-1")["capacity"]["sessions"] = 5_000
    report = capacity_report(topology_from_data(data, tmp_path))
    checks = {d.id: d for d in report.dimensions}
    # 60,000 E / 3,000,000 subscribers = 0.02 E per user. The AS pool is DNS-selected (mmtel):
    # S-CSCFs of site-a and site-c (north) reach as-a-1 first, site-b's reach as-b-1, so each
    # carries 1,500k users = 30,000 E; losing site-b puts all 3,000k (60,000 E) on as-a-1.
    as_a = checks["as-a-1"]
    assert as_a.per_user == 0.02 and as_a.normal == 30_000 and as_a.worst == 60_000
    assert as_a.worst_scenario == "site:site-b" and as_a.verdict == "fail" and as_a.utilisation == 12
    assert checks["as-b-1"].verdict == "ok" and checks["as-b-1"].utilisation == 0.75  # 60,000 / 80,000
    # SBC sessions too: sbc-capital carries 1,200k + harbour's 600k after site-b = 36,000 E of 55,000
    assert checks["sbc-capital"].worst == 36_000 and checks["sbc-capital"].verdict == "ok"
    assert report.verdict == "fail"
    result = invoke("check", write_inventory(data, tmp_path), "--format", "json")
    cap011 = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "CAP-011"]
    assert result.exit_code == 1 and [f["subjects"] for f in cap011] == [["as-a-1"]]
    assert "60,000 E when site:site-b is lost, 1,200% of its 5,000 sessions" in cap011[0]["message"]


def test_dns_queries_per_second_against_the_query_model(tmp_path: Path) -> None:
    data = province_data()
    element(data, "dns-a-1")["capacity"]["queries_per_second"] = 10
    checks = {d.id: d for d in capacity_report(topology_from_data(data, tmp_path)).dimensions}
    # per user: 1 BHCA × 2 queries / 3,600 s + 1 query / 1,200 s refresh (the 1,800 s expiry − 600) = 1/720
    # qps; the two sets share 3,000k users: 1,500k / 720 = 2,083.3 qps each, 4,166.7 after losing site-b
    dns = checks["dns-a-1"]
    assert dns.per_user == round(1 / 720, 8) and dns.normal == 2083.333 and dns.worst == 4166.667
    assert dns.verdict == "fail" and checks["dns-b-1"].verdict == "ok"  # 3,333 of 50,000
    # the query model is a parameter: 3 call attempts per subscriber
    data["network"]["capacity_model"]["busy_hour_call_attempts"] = 3
    (tmp_path / "b").mkdir()
    dns = {d.id: d for d in capacity_report(topology_from_data(data, tmp_path / "b")).dimensions}["dns-b-1"]
    assert dns.worst == pytest.approx(3_000_000 * (3 * 2 / 3600 + 1 / 1200), abs=0.001)  # 7,500


def test_missing_and_unchecked_dimensions_are_findings(tmp_path: Path) -> None:
    data = province_data()
    del element(data, "cscf-a-1")["capacity"]["registrations_per_second"]
    element(data, "hss-a-1")["capacity"]["circuits"] = 100  # no HSS check reads circuits
    result = invoke("check", write_inventory(data, tmp_path), "--format", "json", "--fail-on", "warning")
    found = {(f["rule"], tuple(f["subjects"])): f["message"] for f in json.loads(result.stdout)["findings"]}
    assert result.exit_code == 1
    assert "registrations_per_second" in found[("CAP-012", ("cscf-a-1",))]
    assert "capacity.circuits" in found[("CAP-013", ("hss-a-1",))]


# --- the registration storm -----------------------------------------------------------------------------


def test_storm_of_a_site_loss_per_element() -> None:
    result = invoke("simulate", PROVINCE, "--fail", "site-a", "--format", "json")
    storm = json.loads(result.stdout)["storm"]
    # Users whose SBC or P-CSCF is lost register again: capital 1,200k (→ sbc-coast → pcscf-b-2)
    # and river 300k (→ sbc-lake → pcscf-b-2) = 1,500k; 30 % within 60 s, the rest over the 1,200 s
    # refresh: 1,500k × (0.3 / 60 + 0.7 / 1,200) = 8,375/s at the peak, 875/s after.
    # cscf-a-1's 825k load / 1.1 = 750k users are restored from the HSS (one SAR each).
    assert storm["moved_users"] == 1_500_000 and storm["restored_users"] == 750_000
    assert storm["window_s"] == 1200 and storm["registrations_per_second"] == 8375
    rates = {e["id"]: e["peak_rate"] for e in storm["elements"]}
    assert rates == {
        "sbc-coast": 13400,  # 1,200k × (0.3 / 60 + 0.7 / 1,200) × 2 REGISTER, as offered (the limit admits 1,000)
        "sbc-lake": 3350,  # 300k × (0.005 + 0.000583) × 2
        "pcscf-b-2": 2000,  # behind the SBCs' 500 registrations/s limits (test_capacity_storm_profile)
        # 500k each: capital's share evenly over 2,400 s (2,400k / 1,000 at sbc-coast) and river's burst
        # spread over 276.9 s: (400k × 2 / 2,400) + (30k × 2 / 276.92) + 100k × 0.7 × 2 / 1,200 = 666.67
        "cscf-b-1": 666.67, "cscf-b-2": 666.67, "cscf-c-1": 666.67,
        "hss-b-1": 5625,  # the same at × 5 (4 Cx + 1 Sh): 3 × 666.67 / 2 × 5 = 5,000, + 750k SAR / 1,200 = 625
        "slf-b-1": 4000,  # 3 × 666.67 / 2 × 4 Dx
    }
    by_id = {e["id"]: e for e in storm["elements"]}
    # sbc-coast admits 1,000 REGISTER/s: 2,400k REGISTERs take 2,400 s, + 30 s Retry-After
    assert by_id["sbc-coast"]["background_rate"] == 1208.33 and by_id["sbc-coast"]["drain_s"] == 2430
    assert storm["bottleneck"] == "sbc-coast" and storm["drain_s"] == 2430 and storm["verdict"] == "ok"
    table = invoke("simulate", PROVINCE, "--fail", "site-a").stdout
    assert "Registration storm: 1,500,000 users re-register, peak 8,375 registrations/s" in table
    assert "5,625 Diameter/s" in table


def test_storm_overload_is_a_finding_and_in_the_runbook(tmp_path: Path) -> None:
    data = province_data()
    element(data, "hss-b-1")["capacity"]["transactions_per_second"] = 12000
    result = invoke("check", write_inventory(data, tmp_path), "--format", "json")
    cap010 = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "CAP-010"]
    # site-a lost: 5,625 storm + 5,416.67 background (3,000k × (2 / 1,200 + 0.5 / 3,600)) = 11,041.67/s
    # of 12,000 (92 %, above 85 %)
    assert result.exit_code == 1 and any(
        "site:site-a lost" in f["message"] and "hss-b-1 needs 11,041.67 Diameter/s of 12,000 (92%)" in f["message"]
        for f in cap010), cap010
    site_a = (ROOT / "docs" / "sample-runbook" / "capacity.md").read_text(encoding="utf-8")
    assert "| site:site-a | 1,500,000 users: peak 8,375 registrations/s, then 875/s" in site_a


# --- limits ------------------------------------------------------------------------------------------------


def test_defaults_hold_survivors_to_85_percent_and_trunks_to_the_failure_grade_of_service(tmp_path: Path) -> None:
    from imsdr.inventory.schema import CapacityModel

    model = CapacityModel()
    assert model.max_utilisation == 0.85 and model.grade_of_service_failure == 0.05
    data = province_data()
    element(data, "sbc-harbour")["capacity"]["registered_users"] = 1_100_000
    report = capacity_report(topology_from_data(data, tmp_path))
    hill = next(t for t in report.takeovers if t.failed == "sbc-hill")
    # 600k + hill's 400k = 1,000k of 1,100k = 90.9%: within capacity, above the 85% limit
    assert hill.verdict == "fail" and hill.takers[0][3] == 0.9091


def test_hss_surge_applies_in_site_scenarios() -> None:
    result = invoke("simulate", PROVINCE, "--fail", "site-a", "--format", "json")
    hss = next(r for r in json.loads(result.stdout)["loads"] if r["id"] == "hss-b-1")
    # 3,000k × 1.08 restoration overhead + cscf-a-1's 750k users × (1.8 − 1) = 3,840k of 6,000k
    assert hss["after"] == 3_840_000 and hss["utilisation"] == 0.64


# --- shared risks ------------------------------------------------------------------------------------------


def test_region_loss_of_the_non_compliant_example_gates_check_scenarios_and_plan(tmp_path: Path) -> None:
    result = invoke("simulate", REGION_LOSS, "--fail", "region:north", "--format", "json")
    data = json.loads(result.stdout)
    # region north = site-a + site-c: every SLF and AS is there, so every user is lost
    assert result.exit_code == 1 and data["failed_sites"] == ["site-a", "site-c"]
    assert data["unserved_users"] == 3_000_000 and data["verdict"] == "outage"
    scen = invoke("scenarios", REGION_LOSS, "--format", "json")
    rows = {r["id"]: r for r in json.loads(scen.stdout)["scenarios"]}
    assert scen.exit_code == 1 and rows["region:north"]["unserved_users"] == 3_000_000
    assert json.loads(scen.stdout)["worst_by_kind"]["region"] == "region:north"
    check = json.loads(invoke("check", REGION_LOSS, "--format", "json").stdout)
    rules = {(f["rule"], f["message"].split(" (")[0]) for f in check["findings"]}
    assert ("DEP-002", "every SLF") in rules and ("DEP-002", "every AS") in rules
    assert any(f["rule"] == "CAP-009" and "service region north" in f["message"] for f in check["findings"])
    plan = invoke("plan", REGION_LOSS, "--out", tmp_path / "out", "--format", "json")
    assert plan.exit_code == 1 and json.loads(plan.stdout)["passed"] is False
    # the showcase itself is compliant: losing either region loses nobody
    for region in ("north", "south"):
        assert invoke("simulate", PROVINCE, "--fail", f"region:{region}").exit_code == 0


def test_power_feed_failure_takes_down_every_site_on_it(tmp_path: Path) -> None:
    data = province_data()
    site(data, "site-b")["power"] = ["grid-harbour", "grid-capital-east"]  # a second feed, shared
    path = write_inventory(data, tmp_path)
    result = invoke("simulate", path, "--fail", "power:grid-capital-east", "--format", "json")
    sim = json.loads(result.stdout)
    # site-a and site-b both lose power: the ring's DR SBCs for capital and river are at site-b
    assert sim["failed_sites"] == ["site-a", "site-b"] and sim["verdict"] == "outage"
    lost = {ln["id"]: ln["unserved_users"] for ln in sim["local_networks"]}
    assert lost["capital"] == 1_200_000 and lost["harbour"] == 600_000
    rows = {r["id"]: r for r in json.loads(invoke("scenarios", path, "--format", "json").stdout)["scenarios"]}
    assert rows["power:grid-capital-east"]["failed"] == ["site-a", "site-b"]
    assert rows["power:grid-capital-east"]["verdict"] == "outage"
    assert invoke("scenarios", path).exit_code == 1


def test_radius_fails_the_sites_inside_it() -> None:
    # site-a at 39.90,116.40; site-b 114 km away; site-c 190 km away
    result = invoke("simulate", PROVINCE, "--radius", "39.9,116.4,50", "--format", "json")
    assert json.loads(result.stdout)["failed_sites"] == ["site-a"]
    wide = json.loads(invoke("simulate", PROVINCE, "--radius", "39.9,116.4,150", "--format", "json").stdout)
    assert wide["failed_sites"] == ["site-a", "site-b"] and wide["requested"] == ["radius:39.9,116.4,150"]
    bad = invoke("simulate", PROVINCE, "--radius", "39.9,116.4")
    assert bad.exit_code == 2 and "expected LAT,LON,KM" in bad.stderr


def test_unknown_and_ambiguous_fail_ids_exit_2(tmp_path: Path) -> None:
    data = province_data()
    site(data, "site-b")["power"] = ["site-c"]  # a feed named like a site
    path = write_inventory(data, tmp_path)
    result = invoke("simulate", path, "--fail", "site-c")
    assert result.exit_code == 2 and "ambiguous" in result.stderr and "power:site-c" in result.stderr
    assert invoke("simulate", path, "--fail", "power:site-c", "--format", "json").exit_code in (0, 1)
    assert invoke("simulate", path, "--fail", "region:west").exit_code == 2


# --- DNS-level checks in `check` -------------------------------------------------------------------------


def test_check_refuses_what_plan_refuses(tmp_path: Path) -> None:
    data = province_data()
    element(data, "cscf-a-1")["fqdn"] = "cscf-a-1.other.example.org"
    path = write_inventory(data, tmp_path)
    line = next(i for i, text in enumerate(path.read_text().splitlines(), start=1)
                if "fqdn: cscf-a-1.other.example.org" in text)
    result = invoke("check", path, "--format", "json", "--jobs", "2")  # the lint in a child: its problems come back
    dns = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "DNS-005"]
    assert result.exit_code == 1 and any(f["location"]["line"] == line for f in dns), dns
    assert any("not under any home domain" in f["message"] for f in dns), dns
    alone = invoke("check", path, "--format", "json", "--jobs", "1")
    assert (alone.exit_code, alone.stdout) == (result.exit_code, result.stdout)
    plan = invoke("plan", path, "--out", tmp_path / "out")
    assert plan.exit_code == 2 and f"{path}:{line}:" in plan.stderr


def test_scenarios_run_every_region_feed_and_route() -> None:
    from imsdr.model.risk import shared_risks
    from imsdr.plan import load_topology
    from imsdr.scenarios.run import run_scenarios

    topo = load_topology(REGION_LOSS)
    report = run_scenarios(topo, 1)
    kinds = {r.kind for r in report.rows}
    assert kinds == {"site", "region", "power", "route", "element"}
    assert len([r for r in report.rows if r.kind in ("region", "power", "route")]) == len(shared_risks(topo))
    assert yaml.safe_load(REGION_LOSS.read_text())["network"]["deployment"] == "production"
