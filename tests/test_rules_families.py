"""Every DR design rule: a minimal failing variant of a sample inventory raises it at the right
line (the line written in the file is checked, not just the number), and the passing variant
does not. CAP-… rules are tested with the capacity engine."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inventory_factory import (
    element,
    group,
    line_of,
    local_network,
    path_of,
    remove_group,
    sample_data,
    site,
    write_inventory,
)

from imsdr.diagnostics import Finding
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology
from imsdr.rules.engine import run_checks
from imsdr.rules.registry import all_rules

TODAY = dt.date(2026, 6, 1)
# CAP-… have their own tests (test_capacity_*); INV-001 reports invalid input and never runs on a
# valid inventory (tests/test_ci_formats.py checks it in every machine format); DNS-005 reports the
# DNS plan's own problems, which the caller hands in (tests/test_traffic_model.py runs it through
# `imsdr check`)
DESIGN_RULES = [r for r in all_rules() if not r.id.startswith(("CAP-", "INV-")) and r.id != "DNS-005"]

Data = dict[str, Any]
Path_ = tuple[str | int, ...]


@dataclass
class Case:
    rule: str
    fail: Callable[[Data], None]
    where: Callable[[Data], Path_]  # YAML path the finding must point at
    text: str  # ... and a substring of that line of the written file
    fix: Callable[[Data], None] | None = None  # turns the base into the passing inventory
    base: str = "province"
    subjects: tuple[str, ...] = ()
    message: str = ""


def _set(obj_fn: Callable[[Data], dict[str, Any]], key: str, value: Any) -> Callable[[Data], None]:
    def mutate(data: Data) -> None:
        obj_fn(data)[key] = value

    return mutate


def _el(ident: str, key: str, value: Any) -> Callable[[Data], None]:
    return _set(lambda d: element(d, ident), key, value)


def _grp(ident: str, key: str, value: Any) -> Callable[[Data], None]:
    return _set(lambda d: group(d, ident), key, value)


def _timers(key: str, value: Any) -> Callable[[Data], None]:
    return _set(lambda d: d["network"]["timers"], key, value)


def _all_regions_north(d: Data) -> None:
    for s in d["sites"]:
        s["region"] = "north"


#: the earlier showcase province, kept in docs/examples because it is not a compliant design
REGION_LOSS = "../docs/examples/province-region-loss"


def _slf_to_south(d: Data) -> None:
    element(d, "slf-c-1")["site"] = "site-b"
    element(d, "as-c-1")["site"] = "site-b"


def _drop_roles(role: str, *ids: str) -> Callable[[Data], None]:
    def mutate(d: Data) -> None:
        for ident in ids:
            element(d, ident)["roles"] = [r for r in element(d, ident)["roles"] if r != role]

    return mutate


def _del(container: Callable[[Data], dict[str, Any]], key: str) -> Callable[[Data], None]:
    def mutate(d: Data) -> None:
        container(d).pop(key, None)

    return mutate


def _waiver(rule: str, scope: list[str], expires: str) -> Callable[[Data], None]:
    def mutate(d: Data) -> None:
        d["waivers"] = [
            {
                "rule": rule,
                "scope": scope,
                "reason": "accepted for the test",
                "expires": dt.date.fromisoformat(expires),
            }
        ]

    return mutate


def _both(*fns: Callable[[Data], None]) -> Callable[[Data], None]:
    def mutate(d: Data) -> None:
        for fn in fns:
            fn(d)

    return mutate


def _second_hss_pair_without_slf(d: Data) -> None:
    """A second HSS pair in the province and no SLF: nothing says which pair holds a user."""
    d["elements"] = [e for e in d["elements"] if e["type"] != "slf"]
    remove_group(d, "slf-pair")
    d["elements"] += [{**element(d, "hss-a-1"), "id": "hss-c-1", "addresses": ["192.0.2.34"]},
                      {**element(d, "hss-b-1"), "id": "hss-d-1", "addresses": ["192.0.2.98"]}]
    d["redundancy"]["pairs"].append({"id": "hss-pair-2", "members": ["hss-c-1", "hss-d-1"],
                                     "mode": "active-standby", "sync": "realtime"})


def _second_hss_pair_with_ranges(d: Data) -> None:
    _second_hss_pair_without_slf(d)
    group(d, "hss-pair")["user_ranges"] = ["8610"]
    group(d, "hss-pair-2")["user_ranges"] = ["8622"]


def _enum(d: Data) -> dict[str, Any]:
    return d["redundancy"]["enum_dns"]


CASES = [
    Case("DEP-001", _all_regions_north, lambda d: ("network", "deployment"), "deployment: production"),
    Case(
        "DEP-002",
        lambda d: None,
        lambda d: path_of(d, "slf-c-1", "site"),
        "site: site-c",
        fix=_slf_to_south,
        subjects=("slf-a-1", "slf-c-1", "south"),
        base=REGION_LOSS,
    ),
    Case(
        "GEO-001",
        _el("hss-b-1", "site", "site-a"),
        lambda d: path_of(d, "hss-b-1", "site"),
        "site: site-a",
        subjects=("hss-pair", "hss-a-1", "hss-b-1", "site-a"),
        message="losing site-a",
    ),
    Case(
        "GEO-002",
        _set(lambda d: site(d, "site-b"), "power", ["grid-capital-east"]),
        lambda d: path_of(d, "site-b", "power", 0),
        "grid-capital-east",
        subjects=("site-a", "site-b", "hss-pair"),
    ),
    Case(
        "GEO-003",
        _set(lambda d: site(d, "site-c"), "transmission", ["backbone-ring-1"]),
        lambda d: path_of(d, "site-c", "transmission", 0),
        "backbone-ring-1",
        subjects=("site-a", "site-c", "cscf-pool"),
    ),
    Case(
        "GEO-004",
        _both(
            _set(lambda d: site(d, "site-b"), "lat", 39.95), _set(lambda d: site(d, "site-b"), "lon", 116.45)
        ),
        lambda d: path_of(d, "site-b", "lat"),
        "lat: 39.95",
        subjects=("site-a", "site-b"),
        message="km apart",
    ),
    Case(
        "GEO-005",
        _both(_del(lambda d: site(d, "site-c"), "lat"), _del(lambda d: site(d, "site-c"), "lon")),
        lambda d: path_of(d, "site-c"),
        "id: site-c",
        subjects=("site-c",),
    ),
    Case(
        "PAIR-001",
        lambda d: remove_group(d, "pcscf-pair-2"),
        lambda d: path_of(d, "pcscf-c-1"),
        "id: pcscf-c-1",
        subjects=("pcscf-c-1",),
    ),
    Case(
        "PAIR-002",
        _grp("as-pool", "members", ["as-a-1"]),
        lambda d: path_of(d, "as-pool", "members"),
        "as-a-1",
        subjects=("as-pool",),
    ),
    Case(
        "PAIR-003",
        _grp("hss-pair", "members", ["hss-a-1", "slf-b-1"]),
        lambda d: path_of(d, "hss-pair", "members", 1),
        "slf-b-1",
        subjects=("hss-pair",),
    ),
    Case(
        "PAIR-004",
        _grp("pcscf-pair-2", "members", ["pcscf-c-1", "pcscf-b-1"]),
        lambda d: path_of(d, "pcscf-pair-2", "members", 1),
        "pcscf-b-1",
        subjects=("pcscf-b-1", "pcscf-pair-1", "pcscf-pair-2"),
    ),
    Case("PAIR-005", lambda d: remove_group(d, "as-pool"), lambda d: path_of(d, "as-a-1"), "id: as-a-1"),
    Case(
        "ENUM-001",
        _el("dns-b-1", "site", "site-a"),
        lambda d: path_of(d, "dns-b-1", "site"),
        "site: site-a",
        subjects=("dns-a-1", "dns-b-1"),
    ),
    Case(
        "ENUM-002",
        _both(_set(_enum, "sync", "master-slave"), _el("dns-b-1", "vendor", "vendor-e")),
        lambda d: ("redundancy", "enum_dns", "sync"),
        "sync: master-slave",
        message="vendor-e",
    ),
    Case("ENUM-003", _del(_enum, "sync"), lambda d: ("redundancy", "enum_dns"), "load_sharing: rtt"),
    Case("ENUM-004", _del(_enum, "load_sharing"), lambda d: ("redundancy", "enum_dns"), "sync: provisioning"),
    Case(
        "ENUM-005",
        _set(_enum, "load_sharing", "anycast"),
        lambda d: ("redundancy", "enum_dns", "load_sharing"),
        "anycast",
    ),
    Case(
        "SBC-001", _el("sbc-lake", "serves", []), lambda d: path_of(d, "lake"), "id: lake", subjects=("lake",)
    ),
    Case(
        "SBC-002",
        lambda d: d["redundancy"].pop("sbc_dr"),
        lambda d: path_of(d, "capital"),
        "id: capital",
        subjects=("capital", "sbc-capital"),
    ),
    Case(
        "SBC-003",
        _set(lambda d: d["redundancy"]["sbc_dr"], "order", ["capital", "harbour", "river", "lake", "coast"]),
        lambda d: ("redundancy", "sbc_dr", "order"),
        "- capital",
        subjects=("hill", "sbc-hill"),
        message="skips local network hill",
    ),
    Case(
        "SBC-004",
        _set(lambda d: d["redundancy"], "sbc_dr", {"layout": "hub", "hub": "sbc-capital"}),
        lambda d: ("redundancy", "sbc_dr", "hub"),
        "hub: sbc-capital",
        subjects=("sbc-capital", "capital"),
    ),
    Case(
        "SBC-005",
        _el("sbc-coast", "features", []),
        lambda d: path_of(d, "sbc-coast", "features"),
        "features: []",
        subjects=("sbc-coast", "capital"),
    ),
    Case(
        "SBC-006",
        _el("sbc-coast", "site", "site-a"),
        lambda d: path_of(d, "sbc-coast", "site"),
        "site: site-a",
        subjects=("capital", "sbc-coast", "sbc-capital"),
    ),
    Case(
        "SBC-007",
        _el("sbc-capital", "pcscfs", ["pcscf-b-1", "pcscf-b-2"]),
        lambda d: path_of(d, "sbc-capital", "pcscfs"),
        "pcscf-b-1",
        subjects=("sbc-capital", "site-b"),
    ),
    Case(
        "CSCF-001",
        _el("cscf-b-1", "features", []),
        lambda d: path_of(d, "cscf-b-1", "features"),
        "features: []",
        subjects=("cscf-b-1", "cscf-pool"),
        message="1200 s (20 min)",
    ),
    Case(
        "CSCF-002",
        _drop_roles("icscf", "cscf-b-1", "cscf-c-1", "cscf-b-2"),
        lambda d: path_of(d, "cscf-a-1", "site"),
        "site: site-a",
        subjects=("cscf-a-1", "site-a"),
    ),
    Case(
        "CSCF-003",
        _grp("cscf-pool", "selection", "fixed"),
        lambda d: path_of(d, "cscf-pool", "selection"),
        "selection: fixed",
        subjects=("cscf-pool",),
    ),
    Case(
        "CSCF-004",
        _drop_roles("icscf", "cscf-a-1", "cscf-b-1", "cscf-c-1", "cscf-b-2"),
        lambda d: path_of(d, "cscf-a-1", "roles"),
        "- scscf",
        message="icscf role",
    ),
    Case(
        "HSS-001",
        lambda d: remove_group(d, "slf-pair"),
        lambda d: path_of(d, "slf-a-1"),
        "id: slf-a-1",
        subjects=("slf-a-1",),
    ),
    Case(
        "HSS-002",
        _both(_grp("hss-pair", "sync", "periodic"), _grp("hss-pair", "backup_interval", 86400)),
        lambda d: path_of(d, "hss-pair", "backup_interval"),
        "backup_interval: 86400",
        subjects=("hss-pair",),
        message="86400 s (24 h)",
    ),
    Case("HSS-003", _grp("hss-pair", "sync", "none"), lambda d: path_of(d, "hss-pair", "sync"), "sync: none"),
    Case(
        "HSS-004",
        _both(_el("hss-a-1", "features", []), _el("hss-b-1", "features", [])),
        lambda d: path_of(d, "hss-a-1", "features"),
        "features: []",
    ),
    Case(
        "HSS-005",
        _second_hss_pair_without_slf,
        lambda d: path_of(d, "hss-pair"),
        "id: hss-pair",
        fix=_second_hss_pair_with_ranges,
        subjects=("hss-a-1", "hss-c-1"),
        message="no SLF, no DRA and no user_ranges",
    ),
    Case(
        "MGCF-001",
        _el("imgw-b-1", "site", "site-a"),
        lambda d: path_of(d, "imgw-b-1", "site"),
        "site: site-a",
        subjects=("imgw-a-1", "imgw-b-1"),
        message="IM-MGW",
    ),
    Case(
        "TIMER-001",
        _timers("diameter_watchdog", 15),
        lambda d: ("network", "timers", "diameter_watchdog"),
        "diameter_watchdog: 15",
        message="15 s",
    ),
    Case(
        "TIMER-002",
        _timers("registration_refresh", 7200),
        lambda d: ("network", "timers", "registration_refresh"),
        "registration_refresh: 7200",
    ),
    Case(
        "TIMER-003",
        _el("sbc-hill", "options_probing", "passive"),
        lambda d: path_of(d, "sbc-hill", "options_probing"),
        "options_probing: passive",
        subjects=("sbc-hill",),
    ),
    Case(
        "TIMER-004",
        _el("pcscf-c-1", "answers_options", False),
        lambda d: path_of(d, "pcscf-c-1", "answers_options"),
        "answers_options: false",
        subjects=("pcscf-c-1", "sbc-hill", "sbc-lake", "sbc-coast"),
    ),
    Case(
        "TIMER-005",
        _el("cscf-a-1", "options_probing", "active"),
        lambda d: path_of(d, "cscf-a-1", "options_probing"),
        "options_probing: active",
    ),
    Case(
        "TIMER-006",
        _timers("ps_registration_expiry", 1800),
        lambda d: ("network", "timers", "ps_registration_expiry"),
        "ps_registration_expiry: 1800",
        message="1800 s",
    ),
    Case(
        "TIMER-007",
        _del(lambda d: d["network"]["timers"], "diameter_transport"),
        lambda d: ("network", "timers", "diameter_detection_target"),
        "diameter_detection_target: 10",
        subjects=("hss-a-1",),
        message="16 s",
    ),
    Case(
        "RESTO-001",
        _set(lambda d: d["network"]["restoration"], "pcscf_restoration", "none"),
        lambda d: ("network", "restoration", "pcscf_restoration"),
        "pcscf_restoration: none",
        subjects=("coast",),
    ),
    Case(
        "RESTO-002",
        _del(lambda d: local_network(d, "coast"), "packet_gateway"),
        lambda d: path_of(d, "coast", "access"),
        "access: both",
        subjects=("coast",),
    ),
    Case(
        "RESTO-003",
        _both(_grp("hss-pair", "sync", "periodic"), _grp("hss-pair", "backup_interval", 3600)),
        lambda d: path_of(d, "hss-pair", "backup_interval"),
        "backup_interval: 3600",
        subjects=("hss-pair",),
    ),
    Case(
        "EMERG-001",
        _del(lambda d: local_network(d, "harbour"), "emergency"),
        lambda d: path_of(d, "harbour"),
        "id: harbour",
        subjects=("harbour", "sbc-capital"),
    ),
    Case(
        "MGCF-002",
        _el("imgw-a-1", "controlled_by", ["mgcf-a-1"]),
        lambda d: path_of(d, "imgw-a-1", "controlled_by"),
        "mgcf-a-1",
        subjects=("imgw-a-1", "mgcf-a-1"),
        message="no backup MGCF",
    ),
    Case(
        "MGCF-003",
        _both(_set(lambda d: d["redundancy"]["enum_dns"], "sync", "master-slave"),
              _set(lambda d: d["redundancy"]["enum_dns"], "primaries", ["dns-a-1"])),
        lambda d: ("network", "capacity_model", "onnet_share"),
        "onnet_share: 0.5",
        fix=_set(lambda d: d["network"]["capacity_model"], "onnet_share", 0.01),
        subjects=("imgw-a-1", "imgw-b-1"),
        message="61,800 Erl",
    ),
    Case(
        "MGCF-004",
        lambda d: None,
        lambda d: ("network", "capacity_model", "onnet_share"),
        "onnet_share: 0.5",
        fix=_set(lambda d: d["network"]["capacity_model"], "onnet_share", 0.01),
        subjects=("imgw-a-1", "imgw-b-1"),
        message="sync: provisioning pushes to every ENUM/DNS set at once",
    ),
    Case(
        "DNS-001",
        _both(
            _el("as-a-1", "features", ["sticky_clients"]),
            _el("as-a-1", "addresses", ["192.0.2.50", "192.0.2.51", "2001:db8:a::50"]),
        ),
        lambda d: path_of(d, "as-a-1", "addresses"),
        "192.0.2.50",
        subjects=("as-a-1",),
        message="2 A addresses",
    ),
    Case(
        "DNS-002",
        _set(lambda d: d["network"]["ttl"], "srv", 3600),
        lambda d: ("network", "ttl", "srv"),
        "srv: 3600",
    ),
    Case(
        "DNS-003",
        _set(lambda d: d["network"]["dns"], "nameservers", ["dns-a-1"]),
        lambda d: ("network", "dns", "nameservers"),
        "dns-a-1",
        subjects=("dns-a-1", "dns-b-1"),
    ),
    Case(
        "DNS-004",
        lambda d: d["enum_blocks"].append({
            "id": "nested-trial", "prefix": "+86105550012", "length": 13, "style": "numbers",
            "domain": "ims.example.net", "first": "+8610555001200", "last": "+8610555001209"}),
        lambda d: ("enum_blocks", len(d["enum_blocks"]) - 1, "prefix"),
        "+86105550012",
        subjects=("nested-trial", "capital-fixed"),
        message="+8610555001210…+8610555001299",
    ),
    Case(
        "DNS-006",
        lambda d: d["local_networks"][1].update(resolvers=["203.0.113.131"]),
        lambda d: ("local_networks", 1, "resolvers", 0),
        "203.0.113.131",
        subjects=("users-harbour", "users-capital"),
        message="also in the match list",
    ),
    Case(
        "ENUM-006",
        _set(lambda d: d["network"]["dns"], "nameservers", ["dns-a-1"]),
        lambda d: path_of(d, "dns-b-1"),
        "id: dns-b-1",
        subjects=("dns-b-1",),
        message="serves nothing",
    ),
    Case(
        "AVAIL-001",
        _set(lambda d: d["network"], "availability_targets", {"terminating": 99.999}),
        lambda d: ("network", "availability_targets", "terminating"),
        "terminating: 99.999",
        fix=_set(lambda d: d["network"], "availability_targets", {"terminating": 99.0}),
        message="below its target",
    ),
    Case(
        "WAIVER-001",
        _waiver("DEP-002", ["slf-c-1"], "2026-05-31"),
        lambda d: ("waivers", 0, "expires"),
        "expires: 2026-05-31",
        fix=_waiver("DEP-002", ["slf-c-1"], "2026-06-01"),
        message="expired on 2026-05-31",
        base=REGION_LOSS,
    ),
    Case(
        "WAIVER-002",
        _waiver("GEO-001", ["hss-pair"], "2099-01-01"),
        lambda d: ("waivers", 0),
        "rule: GEO-001",
        fix=_both(_waiver("GEO-001", ["hss-pair"], "2099-01-01"), _el("hss-b-1", "site", "site-a")),
    ),
]


def _run(data: Data, tmp_path: Path, name: str) -> tuple[list[Finding], Path, Any]:
    path = write_inventory(data, tmp_path, name)
    inv, source = load_inventory(path)
    report = run_checks(Topology(inv, source), today=TODAY, rules=DESIGN_RULES)
    return report.findings, path, source


def test_every_design_rule_has_a_case() -> None:
    ids = [c.rule for c in CASES]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(r.id for r in DESIGN_RULES)


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
def test_rule_fails_with_location(case: Case, tmp_path: Path) -> None:
    data = sample_data(case.base)
    case.fail(data)
    findings, path, source = _run(data, tmp_path, "failing.yaml")
    mine = [f for f in findings if f.rule_id == case.rule]
    assert mine, f"{case.rule} not raised; got {[f.rule_id for f in findings]}"
    expected = source.locate(*case.where(data))
    assert expected is not None
    at_line = [f for f in mine if f.location is not None and f.location.line == expected.line]
    assert at_line, (
        f"{case.rule} at lines {[f.location.line for f in mine if f.location]}, expected {expected.line}"
    )
    finding = at_line[0]
    assert finding.location.file == str(path)
    assert case.text in line_of(path, finding.location.line)
    assert set(case.subjects) <= set(finding.subjects), finding.subjects
    assert case.message in finding.message
    assert finding.hint and finding.message


@pytest.mark.parametrize("case", CASES, ids=[c.rule for c in CASES])
def test_rule_passes(case: Case, tmp_path: Path) -> None:
    data = sample_data(case.base)
    if case.fix is not None:
        case.fix(data)
    findings, _path, _source = _run(data, tmp_path, "passing.yaml")
    assert [f for f in findings if f.rule_id == case.rule] == []


def test_pool_losing_more_than_its_spare_in_one_site(tmp_path: Path) -> None:
    data = sample_data("province")
    element(data, "cscf-c-1")["site"] = "site-a"
    group(data, "cscf-pool")["spare"] = 1
    element(data, "cscf-b-2")["site"] = "site-c"
    findings, path, source = _run(data, tmp_path, "pool.yaml")
    geo = [f for f in findings if f.rule_id == "GEO-001"]
    assert len(geo) == 1 and "cscf-pool" in geo[0].subjects and "2 of its 4 members" in geo[0].message
    # points at the site of the member to move (the later one at the crowded site)
    assert geo[0].location.line == source.locate(*path_of(data, "cscf-c-1", "site")).line
    assert "site: site-a" in line_of(path, geo[0].location.line)
    # a pool designed to lose two members at once tolerates it
    group(data, "cscf-pool")["spare"] = 2
    findings, _, _ = _run(data, tmp_path, "pool2.yaml")
    assert not [f for f in findings if f.rule_id == "GEO-001"]


def test_pool_role_missing_on_member(tmp_path: Path) -> None:
    data = sample_data("province")
    element(data, "cscf-c-1")["roles"] = ["icscf", "ecscf", "bgcf"]
    findings, _, _ = _run(data, tmp_path, "role.yaml")
    pair3 = [f for f in findings if f.rule_id == "PAIR-003"]
    assert len(pair3) == 1 and "cscf-c-1" in pair3[0].subjects and "scscf" in pair3[0].message


def test_ring_broken_and_duplicated(tmp_path: Path) -> None:
    data = sample_data("province")
    data["redundancy"]["sbc_dr"]["order"] = ["capital", "harbour", "hill", "river", "lake", "coast", "hill"]
    element(data, "sbc-river")["serves"] = []
    findings, _, _ = _run(data, tmp_path, "ring.yaml")
    messages = [f.message for f in findings if f.rule_id == "SBC-003"]
    assert any("lists local network hill twice" in m for m in messages)
    assert any("broken at river" in m and "lake" in m for m in messages)


def test_single_sbc_local_network_with_two_sbcs_is_fine(tmp_path: Path) -> None:
    data = sample_data("province")
    data["redundancy"].pop("sbc_dr")
    for ln in ("harbour", "hill", "river", "lake", "coast"):
        element(data, f"sbc-{ln}")["serves"] = ["capital", "harbour", "hill", "river", "lake", "coast"]
    findings, _, _ = _run(data, tmp_path, "pools.yaml")
    assert not [f for f in findings if f.rule_id == "SBC-002"]


def test_per_element_timer_override(tmp_path: Path) -> None:
    data = sample_data("province")
    element(data, "cscf-b-1")["timers"] = {"diameter_watchdog": 5, "registration_refresh": 300}
    findings, path, _ = _run(data, tmp_path, "override.yaml")
    tw = [f for f in findings if f.rule_id == "TIMER-001"]
    assert len(tw) == 1 and tw[0].subjects == ("cscf-b-1",)
    assert "diameter_watchdog: 5" in line_of(path, tw[0].location.line)
    refresh = [f for f in findings if f.rule_id == "TIMER-002"]
    assert len(refresh) == 1 and "registration_refresh: 300" in line_of(path, refresh[0].location.line)


def test_watchdog_boundaries(tmp_path: Path) -> None:
    for value, expected in ((5, True), (6, False), (10, False), (11, True)):
        data = sample_data("province")
        data["network"]["timers"]["diameter_watchdog"] = value
        findings, _, _ = _run(data, tmp_path, f"tw{value}.yaml")
        assert bool([f for f in findings if f.rule_id == "TIMER-001"]) is expected, value


def test_refresh_boundaries(tmp_path: Path) -> None:
    for value, expected in ((599, True), (600, False), (3600, False), (3601, True)):
        data = sample_data("province")
        data["network"]["timers"]["registration_refresh"] = value
        findings, _, _ = _run(data, tmp_path, f"r{value}.yaml")
        assert bool([f for f in findings if f.rule_id == "TIMER-002"]) is expected, value


def test_probing_only_counts_probers_that_reach_the_element(tmp_path: Path) -> None:
    data = sample_data("province")
    element(data, "pcscf-a-1")["answers_options"] = False
    findings, _, _ = _run(data, tmp_path, "silent.yaml")
    (f,) = [f for f in findings if f.rule_id == "TIMER-004"]
    # pcscf-a-1 is listed by sbc-capital, sbc-harbour and sbc-river only
    assert set(f.subjects) == {"pcscf-a-1", "sbc-capital", "sbc-harbour", "sbc-river"}


def test_distance_rule_can_be_disabled(tmp_path: Path) -> None:
    data = sample_data("province")
    site(data, "site-b").update(lat=39.95, lon=116.45)
    data["network"]["capacity_model"]["min_site_distance_km"] = 0
    findings, _, _ = _run(data, tmp_path, "nodist.yaml")
    assert not [f for f in findings if f.rule_id in ("GEO-004", "GEO-005")]


def test_haversine_known_distance() -> None:
    from imsdr.rules.common import haversine_km

    # Beijing (39.9042, 116.4074) to Tianjin (39.0842, 117.2009): about 113.7 km
    assert haversine_km(39.9042, 116.4074, 39.0842, 117.2009) == pytest.approx(113.7, abs=1.0)
    assert haversine_km(0, 0, 0, 180) == pytest.approx(20015.1, abs=1.0)


def test_samples_have_no_design_errors(tmp_path: Path) -> None:
    for name in ("province", "lab"):
        findings, _, _ = _run(sample_data(name), tmp_path, f"{name}.yaml")
        assert [f for f in findings if f.severity.value == "error"] == [], name


def test_lab_skips_production_only_rules(tmp_path: Path) -> None:
    data = sample_data("lab")
    findings, _, _ = _run(data, tmp_path, "lab.yaml")
    assert findings == []
    data["network"]["deployment"] = "production"
    findings, _, _ = _run(data, tmp_path, "lab-as-production.yaml")
    ids = {f.rule_id for f in findings}
    assert {"DEP-001", "PAIR-001", "HSS-001", "SBC-002", "GEO-001"} <= ids
    local_network(data, "lab-users")  # the factory finds local networks too


def test_probing_a_silent_cscf_names_as_and_mgcf_probers(tmp_path: Path) -> None:
    data = sample_data("province")
    element(data, "cscf-b-1")["answers_options"] = False
    findings, _, _ = _run(data, tmp_path, "silent-cscf.yaml")
    (f,) = [f for f in findings if f.rule_id == "TIMER-004"]
    # AS→I/S-CSCF and MGCF→I-CSCF probe actively; P-CSCFs and the other CSCFs are passive
    assert set(f.subjects) == {"cscf-b-1", "as-a-1", "as-b-1", "mgcf-a-1", "mgcf-b-1"}


def test_sbc_without_pcscf_list_uses_every_pcscf(tmp_path: Path) -> None:
    data = sample_data("province")
    for ident in ("pcscf-a-1", "pcscf-c-1"):
        element(data, ident)["site"] = "site-b"
    element(data, "sbc-hill")["pcscfs"] = []
    findings, path, source = _run(data, tmp_path, "nolist.yaml")
    hits = [f for f in findings if f.rule_id == "SBC-007" and "sbc-hill" in f.subjects]
    assert len(hits) == 1 and "no list: all" in hits[0].message
    assert hits[0].location.line == source.locate(*path_of(data, "sbc-hill")).line


def test_hss_005_is_quiet_with_an_slf_or_a_dra(tmp_path: Path) -> None:
    """An SLF (redirect) or a DRA (range routing) in the province finds the holder: no HSS-005."""
    from inventory_factory import with_dras

    data = sample_data("province")
    _second_hss_pair_without_slf(data)
    findings, _, _ = _run(data, tmp_path, "bare.yaml")
    assert [f.rule_id for f in findings].count("HSS-005") == 1
    data = with_dras(data)
    del group(data, "hss-pair")["user_ranges"]  # the DRA locates the users (its own SLF function)
    findings, _, _ = _run(data, tmp_path, "dra.yaml")
    assert "HSS-005" not in {f.rule_id for f in findings}
    with_slf = sample_data("province")
    with_slf["elements"] += [{**element(with_slf, "hss-a-1"), "id": "hss-c-1", "addresses": ["192.0.2.34"]},
                             {**element(with_slf, "hss-b-1"), "id": "hss-d-1", "addresses": ["192.0.2.98"]}]
    with_slf["redundancy"]["pairs"].append({"id": "hss-pair-2", "members": ["hss-c-1", "hss-d-1"]})
    findings, _, _ = _run(with_slf, tmp_path, "slf.yaml")
    assert "HSS-005" not in {f.rule_id for f in findings}
