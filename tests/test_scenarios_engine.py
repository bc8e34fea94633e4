"""Failure simulation: takeover by design, switchover parts, unserved users, impact, failback."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inventory_factory import element, group, lab_data, province_data, topology_from_data

from imsdr.errors import ImsdrError
from imsdr.scenarios import Engine, run_scenarios, scenarios_to_dict, simulate, simulation_to_dict
from imsdr.scenarios.run import _row, _Worst


@pytest.fixture
def province(tmp_path: Path):  # type: ignore[no-untyped-def]
    return topology_from_data(province_data(), tmp_path)


def _failed(report, ident):  # type: ignore[no-untyped-def]
    return next(f for f in report.failed if f.id == ident)


def test_site_a_names_dr_sbcs_surviving_cscfs_and_timed_parts(province) -> None:  # type: ignore[no-untyped-def]
    report = simulate(province, ["site-a"])
    assert report.verdict == "no loss" and report.unserved_users == 0
    capital = _failed(report, "sbc-capital")
    assert capital.takeover == ("sbc-coast",) and "DR SBC (ring)" in capital.takeover_how
    assert _failed(report, "sbc-river").takeover == ("sbc-lake",)  # the ring alternates regions
    assert set(_failed(report, "cscf-a-1").takeover) == {"cscf-b-1", "cscf-c-1", "cscf-b-2"}
    assert dict(report.survivors)["cscf-pool"] == ("cscf-b-1", "cscf-b-2", "cscf-c-1")
    parts = {p.name: p.seconds for p in capital.switchover.parts}
    # no DNS TTL: the switchover changes no record (the DR SBC is already in every answer)
    # re-registration: the 1,200 s refresh of the 1,800 s expiry (TS 24.229 §5.1.1.4.1)
    assert parts == {"detection": 10 * 3 + 2, "re_registration": 1200}
    assert capital.switchover.seconds == 1232 and report.switchover_s == 1232
    # restoration data: the S-CSCF switchover has no re-registration part; no TTL although
    # the pool is published in DNS (its SRV answer already lists the survivors)
    assert [p.name for p in _failed(report, "cscf-a-1").switchover.parts] == ["detection"]
    hss = _failed(report, "hss-a-1")
    # the sample declares BFD (3 × 300 ms, counted as 1 s), faster than the watchdog's 2 × Tw
    assert hss.takeover == ("hss-b-1",) and hss.switchover.parts[0].seconds == 1
    loads = {r.id: r for r in report.loads}
    # 3,300k S-CSCF load on three survivors; the HSS holds 3,000k × 1.08 plus the failover surge of
    # cscf-a-1's 750k users × (1.8 − 1) = 600k
    assert loads["sbc-coast"].load_after == 1_450_000 and loads["cscf-b-1"].load_after == 1_100_000
    assert loads["hss-b-1"].load_before == 0 and loads["hss-b-1"].load_after == 3_840_000


def test_impact_and_failback_follow_the_domain(province) -> None:  # type: ignore[no-untyped-def]
    report = simulate(province, ["site-a"])
    sbc = _failed(report, "sbc-capital")
    assert any("504 with the 3GPP restoration body" in x for x in sbc.failback)  # TS 24.229, not the study's 502
    assert any("calls in progress" in x and "lost" in x for x in sbc.impact)
    assert any("long-call protection" in x for x in sbc.impact)
    cscf = _failed(report, "cscf-a-1")
    assert any(x.startswith("no failback") and "unbalanced" in x for x in cscf.failback)
    assert any("passthrough" in x for x in _failed(report, "hss-a-1").impact)
    pcscf = simulate(province, ["pcscf-a-1"])
    assert _failed(pcscf, "pcscf-a-1").takeover == ("pcscf-b-1",)
    assert any("terminating calls" in x and "fail until" in x for x in _failed(pcscf, "pcscf-a-1").impact)


def test_no_takeover_is_an_outage_with_unserved_users_per_local_network(province) -> None:  # type: ignore[no-untyped-def]
    report = simulate(province, ["sbc-capital", "sbc-coast"])  # capital's DR SBC is sbc-coast
    assert report.verdict == "outage"
    capital = _failed(report, "sbc-capital")
    assert capital.takeover == () and capital.switchover is None and capital.unserved == 1_200_000
    lns = {ln.id: ln for ln in report.local_networks}
    assert set(lns) == {"capital"}
    assert lns["capital"].unserved_users == 1_200_000 and lns["capital"].unserved_erlangs == 24_000
    assert _failed(report, "sbc-coast").takeover == ("sbc-river",)


def test_overload_of_survivors_refuses_the_excess(tmp_path: Path) -> None:
    data = province_data()
    element(data, "sbc-harbour")["capacity"]["registered_users"] = 900_000
    report = simulate(topology_from_data(data, tmp_path), ["sbc-hill"])
    assert report.verdict == "outage"
    row = next(r for r in report.loads if r.id == "sbc-harbour")
    assert row.status == "over capacity" and row.load_after == 1_000_000
    assert report.unserved_users == pytest.approx(100_000)
    assert dict(report.unserved_by_service)["sbc"] == pytest.approx(100_000)


def test_max_utilisation_makes_it_degraded_not_outage(tmp_path: Path) -> None:
    data = province_data()
    data["network"]["capacity_model"]["max_utilisation"] = 0.8
    report = simulate(topology_from_data(data, tmp_path), ["sbc-hill"])  # harbour at 1,000k/1,200k
    assert report.verdict == "degraded" and report.unserved_users == 0


def test_static_selection_sends_everything_to_the_next_member(tmp_path: Path) -> None:
    data = province_data()
    group(data, "cscf-pool")["selection"] = "static"
    topo = topology_from_data(data, tmp_path)
    report = simulate(topo, ["cscf-a-1"])
    assert _failed(report, "cscf-a-1").takeover == ("cscf-b-1",)
    assert next(r for r in report.loads if r.id == "cscf-b-1").load_after == 1_650_000  # 825k + 825k
    assert report.verdict == "no loss"
    report = simulate(topo, ["cscf-a-1", "cscf-b-1"])  # both go to the next one in pool order: b-2
    assert report.verdict == "outage"  # 2,475k on a 2,000k S-CSCF
    assert next(r for r in report.loads if r.id == "cscf-b-2").load_after == 2_475_000


def test_fixed_selection_has_no_takeover(tmp_path: Path) -> None:
    data = province_data()
    group(data, "cscf-pool")["selection"] = "fixed"
    report = simulate(topology_from_data(data, tmp_path), ["cscf-b-1"])
    assert _failed(report, "cscf-b-1").takeover == () and report.verdict == "outage"
    assert report.unserved_users == pytest.approx(750_000)  # load 825k ÷ 1.1 restoration factor


def test_without_restoration_data_users_wait_for_re_registration(tmp_path: Path) -> None:
    data = province_data()
    for cscf_id in ("cscf-a-1", "cscf-b-1", "cscf-c-1"):
        element(data, cscf_id)["features"] = []
    data["network"]["timers"]["registration_refresh"] = 900
    failed = _failed(simulate(topology_from_data(data, tmp_path), ["cscf-a-1"]), "cscf-a-1")
    parts = {p.name: p.seconds for p in failed.switchover.parts}
    assert parts["re_registration"] == 900
    assert any("re-register" in x and "terminating calls" in x for x in failed.impact)


def test_timers_are_overridable_per_element(tmp_path: Path) -> None:
    data = province_data()
    element(data, "sbc-capital")["timers"] = {"options_interval": 5, "options_failure_threshold": 2}
    element(data, "hss-a-1")["timers"] = {"diameter_watchdog": 6}
    del data["network"]["timers"]["diameter_transport"]  # the watchdog alone: 2 × 6 s
    data["network"]["ttl"]["a"] = 30
    report = simulate(topology_from_data(data, tmp_path), ["sbc-capital", "hss-a-1"])
    capital = {p.name: p.seconds for p in _failed(report, "sbc-capital").switchover.parts}
    assert capital == {"detection": 5 * 2 + 2, "re_registration": 1200}  # the A TTL adds nothing
    # 2 × 6 s watchdog + 30 s promotion + 32 s reconnect (Tc 30 s + 2 s jitter)
    assert _failed(report, "hss-a-1").switchover.seconds == 12 + 30 + 32


def test_standby_member_carries_nothing(province) -> None:  # type: ignore[no-untyped-def]
    report = simulate(province, ["hss-b-1"])
    assert report.verdict == "no loss" and "no load" in _failed(report, "hss-b-1").takeover_how


def test_lab_hss_loss_is_an_outage(tmp_path: Path) -> None:
    report = simulate(topology_from_data(lab_data(), tmp_path), ["lab-hss-1"])
    assert report.verdict == "outage"
    assert any("registrations" in x and "fail" in x for x in _failed(report, "lab-hss-1").impact)


def test_unknown_ids_are_usage_errors(province) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ImsdrError, match="did you mean .*site-a"):
        simulate(province, ["site-x"])
    with pytest.raises(ImsdrError):
        simulate(province, [])


def test_simulation_json_is_deterministic(province) -> None:  # type: ignore[no-untyped-def]
    a = simulation_to_dict(simulate(province, ["site-b"]))
    assert a == simulation_to_dict(simulate(province, ["site-b"]))
    assert a["failed"][0]["switchover"]["parts"][0]["name"] == "detection"
    assert a["loses_traffic"] is False


def test_province_scenarios_depth_1_and_2(province) -> None:  # type: ignore[no-untyped-def]
    one = run_scenarios(province, 1)
    # 3 sites, 2 regions, 3 power feeds, 3 transmission routes, every element
    assert len(one.rows) == 3 + 2 + 3 + 3 + len(province.elements)
    assert not one.depth1_loses_traffic and dict(one.counts) == {"no loss": len(one.rows)}
    two = run_scenarios(province, 2)
    pairs = {r.id: r.verdict for r in two.rows if r.kind == "site-pair"}
    # site-a + site-c is region north: the south carries everything; the other pairs cross regions
    assert pairs == {"sites:site-a+site-b": "outage", "sites:site-a+site-c": "no loss",
                     "sites:site-b+site-c": "outage"}
    assert not two.depth1_loses_traffic
    worst = {w.subject: w for w in two.worst}
    assert worst["cscf-pool"].utilisation == 1.65 and worst["cscf-pool"].scenario == "sites:site-a+site-b"
    assert worst["sbc"].utilisation == 0.8333 and worst["sbc"].scenario == "site:site-c"
    assert worst["hss-pair"].element == "hss-a-1"
    by_kind = {r.kind: r.id for r in two.worst_by_kind}
    assert by_kind["region"] == "region:north" and by_kind["site-pair"] == "sites:site-a+site-b"
    data = scenarios_to_dict(two)
    assert data["depth"] == 2 and len(data["scenarios"]) == len(two.rows)


def test_depth_1_loss_is_flagged(tmp_path: Path) -> None:
    report = run_scenarios(topology_from_data(lab_data(), tmp_path), 1)
    assert report.depth1_loses_traffic
    assert next(r for r in report.rows if r.id == "site:lab").verdict == "outage"


def test_progress_reaches_the_total(province) -> None:  # type: ignore[no-untyped-def]
    seen: list[tuple[int, int]] = []
    run_scenarios(province, 2, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1] == 3 + 8 + len(province.elements) + 3


def test_bad_depth_is_a_usage_error(province) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ImsdrError):
        run_scenarios(province, 3)


def test_cached_site_pairs_equal_direct_evaluation(tmp_path: Path) -> None:
    from imsdr.example.national import NationalParams, national_yaml
    from imsdr.inventory.build import load_inventory_text
    from imsdr.model.topology import Topology

    params = NationalParams(
        provinces=3, sites_per_province=4, local_networks_per_province=3, seed=5, enum_numbers=0
    )
    inv, source = load_inventory_text(national_yaml(params), "small.yaml")
    topo = Topology(inv, source)
    eng = Engine(topo, exact_numbers=False)
    report = run_scenarios(topo, 2, engine=eng)
    rows = {r.id: r for r in report.rows}
    fresh = Engine(topo, exact_numbers=False)
    tracker = _Worst(topo, fresh)
    for a, b in itertools.combinations(sorted(topo.sites), 2):
        direct = fresh.evaluate(fresh.site_elements([a, b]))
        cached = fresh.evaluate_sites([a, b])
        assert cached.verdict == direct.verdict and cached.loads.keys() == direct.loads.keys()
        assert cached.unserved_users == pytest.approx(direct.unserved_users)
        expected = _row(fresh, "x", "site-pair", 2, (a, b), direct, tracker)
        got = rows[f"sites:{a}+{b}"]
        assert (got.verdict, got.switchover_s, got.busiest_utilisation) == (
            expected.verdict,
            expected.switchover_s,
            expected.busiest_utilisation,
        )
        assert got.unserved_users == pytest.approx(expected.unserved_users, abs=0.2)


def test_losing_a_whole_pcscf_list_strands_the_sbcs_users(province) -> None:  # type: ignore[no-untyped-def]
    report = simulate(province, ["pcscf-a-1", "pcscf-b-1"])
    assert report.verdict == "outage"
    assert [(f.id, f.takeover, f.unserved) for f in report.failed] == [
        # each SBC sends its users to the first P-CSCF of its list (serial failover, as rendered):
        # capital 1,200k + river 300k on pcscf-a-1, harbour 600k on pcscf-b-1
        ("pcscf-a-1", (), 1_500_000),
        ("pcscf-b-1", (), 600_000),
    ]
    assert {ln.id for ln in report.local_networks} == {"capital", "harbour", "river"}
    assert report.unserved_users == 2_100_000


def test_worst_case_names_group_losses(province) -> None:  # type: ignore[no-untyped-def]
    worst = {w.subject: w for w in run_scenarios(province, 2).worst}
    assert (
        worst["hss-pair"].unserved == 3_240_000
        and worst["hss-pair"].unserved_scenario == "sites:site-a+site-b"
    )
    assert worst["pcscf-pair-1"].unserved == 0


def test_hub_layout_sends_every_other_local_network_to_the_hub(tmp_path: Path) -> None:
    data = province_data()
    data["redundancy"]["sbc_dr"] = {"layout": "hub", "hub": "sbc-capital"}
    element(data, "sbc-capital")["capacity"]["registered_users"] = 3_000_000
    topo = topology_from_data(data, tmp_path)
    hill = simulate(topo, ["sbc-hill"])
    assert _failed(hill, "sbc-hill").takeover == ("sbc-capital",) and hill.verdict == "no loss"
    assert "DR SBC (hub)" in _failed(hill, "sbc-hill").takeover_how
    own = simulate(topo, ["sbc-capital"])  # the hub's own local network has no DR SBC
    assert own.verdict == "outage" and [ln.id for ln in own.local_networks] == ["capital"]


_POOLED = ("cscf", "hss", "slf", "mgcf", "imgw", "enum_dns", "as")


@pytest.fixture(scope="module")
def province_engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return Engine(topology_from_data(province_data(), tmp_path_factory.mktemp("engine")))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_load_is_conserved_for_any_failure_set(province_engine: Engine, data: st.DataObject) -> None:
    eng = province_engine
    failed = data.draw(st.sets(st.sampled_from(sorted(eng.ids)), max_size=6))
    outcome = eng.evaluate(failed)
    for t in _POOLED:
        members = [x for x in range(len(eng.ids)) if eng.type_of[x] == t]
        before = sum(eng.normal[x] for x in members)
        after = sum(outcome.loads.get(eng.ids[x], eng.normal[x]) for x in members)
        stranded = sum(v for k, v in outcome.no_takeover.items() if eng.type_of[eng.index[k]] == t)
        surge = 0.0  # the HSS also carries the failover surge of the failed S-CSCFs' users
        if t == "hss" and any(outcome.loads.get(eng.ids[x], eng.normal[x]) > 0
                              for x in members if eng.ids[x] not in failed):
            surge = eng.moved_scscf_users({eng.index[f] for f in failed}) * eng.surge_per_user
        assert after + stranded == pytest.approx(before + surge), (t, sorted(failed))
        assert all(outcome.loads.get(f, 0.0) == 0 for f in failed if eng.type_of[eng.index[f]] == t)
    # outage: load nothing takes over or a survivor past its capacity; degraded: every load taken
    # over, but a survivor whose load grew runs above max_utilisation (0.85 by default)
    assert (outcome.verdict == "outage") == bool(outcome.no_takeover or outcome.overflow)
    above_limit = [x for x in range(len(eng.ids)) if eng.ids[x] in outcome.loads and eng.ids[x] not in failed
                   and outcome.loads[eng.ids[x]] > eng.normal[x] + 1e-9
                   and outcome.loads[eng.ids[x]] > eng.cap_after[x] * eng.limit[x] + 1e-9]
    if outcome.verdict != "outage":
        assert (outcome.verdict == "degraded") == bool(above_limit), (sorted(failed), above_limit)
        assert outcome.users == 0


@pytest.mark.parametrize("name", ["lab.yaml", "province.yaml"])
def test_who_moves_without_the_storm_is_what_the_storm_says(name: str) -> None:
    """`simulate(storm=False)` (the plan's element failures): the same report without the storm at
    the survivors, and who moves with the numbers and spelling of the full storm's entries."""
    from imsdr.capacity.storm import MOVED_KEYS, moved_to_dict, storm_to_dict
    from imsdr.plan import load_topology

    topo = load_topology(Path(__file__).resolve().parent.parent / "inventories" / name)
    eng = Engine(topo, exact_numbers=False)
    seen = {"moved": 0, "restored": 0, "failback": 0}
    for ident in [*sorted(topo.sites), *sorted(topo.elements)]:
        full, light = simulate(topo, [ident], eng), simulate(topo, [ident], eng, storm=False)
        assert light.storm is None and light.moved is not None and full.moved is None
        storm = storm_to_dict(full.storm)  # type: ignore[arg-type]
        assert moved_to_dict(light.moved) == {key: storm[key] for key in MOVED_KEYS}
        assert {**simulation_to_dict(light), "storm": None} == {**simulation_to_dict(full), "storm": None}
        seen["moved"] += storm["moved_users"] > 0
        seen["restored"] += storm["restored_users"] > 0
        seen["failback"] += bool(storm["failback"])
    assert seen["moved"] and seen["failback"], seen  # the comparison covered failures that move users


def test_an_mgcf_failure_names_each_gateway_it_controls_first() -> None:
    """An MGCF's impact lines name the IM-MGWs whose first controller it is (in inventory order,
    with their backup MGCF or none), and only those."""
    from imsdr.plan import load_topology

    topo = load_topology(Path(__file__).resolve().parent.parent / "inventories" / "province.yaml")
    lines = [line for line in simulate(topo, ["mgcf-a-1"]).failed[0].impact if line.startswith("IM-MGW ")]
    assert len(lines) == 1 and lines[0].startswith("IM-MGW imgw-a-1 notices its MGCF is gone")
    assert lines[0].endswith("its backup MGCF mgcf-b-1 (H.248.1 ServiceChange)")
    assert list(topo.imgws_by_mgcf) == ["mgcf-a-1", "mgcf-b-1"]
    assert [g.id for g in topo.imgws_by_mgcf["mgcf-b-1"]] == ["imgw-b-1"]


def test_a_given_storm_index_is_the_only_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan simulates every element with one StormIndex: neither the storm nor who moves (nor
    the failback storm inside them) builds another (nationally one costs more than a simulation)."""
    from imsdr.capacity import storm as storm_module
    from imsdr.plan import load_topology

    topo = load_topology(Path(__file__).resolve().parent.parent / "inventories" / "province.yaml")
    eng = Engine(topo, exact_numbers=False)
    index = storm_module.StormIndex(eng)
    built: list[object] = []
    original = storm_module.StormIndex.__init__

    def counting(self: object, *args: object) -> None:
        built.append(self)
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(storm_module.StormIndex, "__init__", counting)
    for ident in ["sbc-hill", "pcscf-a-1", "cscf-a-1", "site-a"]:
        for full in (True, False):
            simulate(topo, [ident], eng, storm_index=index, storm=full)
    assert built == []
    simulate(topo, ["sbc-hill"], eng, storm=False)
    assert len(built) == 1  # (the count sees a simulation that is given none)


@pytest.mark.parametrize("with_outcome", [False, True])
def test_element_simulation_is_what_simulate_reports_of_the_element(province, with_outcome: bool) -> None:  # type: ignore[no-untyped-def]
    """The plan's element pages read element_simulation; simulate must tell the same about each element."""
    from imsdr.scenarios.simulate import element_simulation, failed_to_dict

    eng = Engine(province)
    outcomes: dict = {}
    run_scenarios(province, 1, engine=eng, element_outcomes=outcomes if with_outcome else None)
    for el_id in sorted(province.elements):
        report = simulate(province, [el_id], eng, storm=False)
        failed, verdict, moved = element_simulation(province, el_id, eng, outcome=outcomes.get(el_id))
        assert failed_to_dict(failed) == simulation_to_dict(report)["failed"][0]
        assert verdict == report.verdict and moved == report.moved, el_id
