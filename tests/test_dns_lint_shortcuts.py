"""The DNS lint's shortcuts report exactly what the plain record-by-record lint reports.

``lint_plan`` judges a tuple of records once per side when it recurs at many names and views,
remembers names and records by identity and checks SRV sets by their distinct targets; the plan
builder shares equal SRV tuples between names. Plans with faults put in at random places (a
dangling target, a CNAME target, a lost address shared by hundreds of SRV sets, a view that
overrides a target, a record twice, a leak to access clients, a bad TTL or address, an SRV set
holding an A record...) must get the same issues, in the same order, as the plain lint below
(the lint as it was written before the shortcuts, which also reports a record of another type in
an SRV set instead of failing on it).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imsdr.dns.lint import _BASE, LintIssue, PlanLint, _check_block, _check_file_names, _origin, lint_plan
from imsdr.dns.names import name_problems
from imsdr.dns.plan import DnsPlan, Origin, ViewPlan, build_dns_plan
from imsdr.dns.records import AAAA, CNAME, NAPTR, NS, SRV, TYPE_ORDER, A, RRset, dnspython_check
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Topology:
    from imsdr.example.national import NationalParams, write_yaml

    path = tmp_path_factory.mktemp("lint") / "national3.yaml"
    params = NationalParams(provinces=3, sites_per_province=3, local_networks_per_province=2, seed=3,
                            enum_numbers=0, enum_block_size=1000, wildcard_blocks=True)
    with open(path, "w", encoding="utf-8") as fh:
        write_yaml(params, fh)
    inv, source = load_inventory(Path(path))
    return Topology(inv, source)


# --- the plain lint ---------------------------------------------------------------------------------


def _plain_rrset_problems(rrset: RRset) -> list[str]:
    out = [f"{rrset.name}: {p}" for p in name_problems(rrset.name)]
    if rrset.ttl not in range(0, 2**31):
        out.append(f"{rrset.name} {rrset.rdtype}: TTL {rrset.ttl} is outside 0..2147483647")
    if not rrset.rdatas:
        out.append(f"{rrset.name} {rrset.rdtype}: empty record set")
    if rrset.rdtype not in TYPE_ORDER:
        out.append(f"{rrset.name}: record type {rrset.rdtype} is not one imsdr writes")
    for rd in rrset.rdatas:
        if rd.rdtype != rrset.rdtype:
            out.append(f"{rrset.name} {rrset.rdtype}: holds a {rd.rdtype} record")
        out.extend(f"{rrset.name} {rrset.rdtype}: {p}" for p in rd.problems())
    if len(set(rrset.rdatas)) != len(rrset.rdatas):
        out.append(f"{rrset.name} {rrset.rdtype}: a record is listed twice")
    if rrset.rdtype in ("SOA", "CNAME") and len(rrset.rdatas) > 1:
        out.append(f"{rrset.name}: only one {rrset.rdtype} record is allowed at a name")
    if rrset.rdtype == "SRV" and any(getattr(r, "target", None) == "." for r in rrset.rdatas) and len(rrset.rdatas) > 1:
        out.append(f"{rrset.name}: SRV target '.' (no service) must be the only record")
    if "*" in rrset.name.split(".")[1:]:
        out.append(f"{rrset.name}: '*' is only allowed as the leftmost label")
    return out


def _plain_faults(plan: DnsPlan, view: ViewPlan, rd: object) -> list[str]:
    def has(name: str, rdtype: str) -> bool:
        return bool(plan.lookup(view, name, rdtype))

    if isinstance(rd, SRV) and rd.target != ".":
        if has(rd.target, "CNAME"):
            return ["srv-cname"]
        return [] if has(rd.target, "A") or has(rd.target, "AAAA") else ["srv-address"]
    if isinstance(rd, NAPTR) and rd.replacement != ".":
        flag, name = rd.flags.lower(), rd.replacement
        return ((["naptr-srv"] if flag == "s" and not has(name, "SRV") else [])
                + (["naptr-address"] if flag == "a" and not (has(name, "A") or has(name, "AAAA")) else []))
    if (isinstance(rd, NS) and rd.target != "." and plan.find_zone(rd.target) is not None
            and not (has(rd.target, "A") or has(rd.target, "AAAA"))):
        return ["ns-address"]
    return []


def plain_lint(plan: DnsPlan) -> list[LintIssue]:
    """``lint_plan(plan)`` the plain way: every rrset of every view, every record of every rrset."""
    out: list[LintIssue] = [LintIssue("error", i.message, i.origin) for i in plan.issues]
    seen: set[tuple[str, str, str]] = set()

    def err(message: str, origin: Origin) -> None:
        if (message, origin.ident, str(origin.field)) not in seen:
            seen.add((message, origin.ident, str(origin.field)))
            out.append(LintIssue("error", message, origin))

    for zone in [*plan.zones.values(), *plan.access_zones.values()]:
        if (zone.name, "SOA") not in zone.rrsets:
            err(f"zone {zone.name} has no SOA", Origin("", (), ""))
        if (zone.name, "NS") not in zone.rrsets:
            err(f"zone {zone.name} has no NS records", Origin("", ("network", "dns", "nameservers"), ""))
    checked_text: set[tuple[object, ...]] = set()
    checked_types: set[str] = set()
    for zone_name, view, rrset in plan.all_rrsets():
        origin = _origin(plan, zone_name, rrset)
        where = f" (view {view.name})" if view else ""
        for problem in _plain_rrset_problems(rrset):
            err(problem + where, origin)
        for rd in rrset.rdatas:
            if rrset.rdtype not in ("NAPTR", "SOA") and rrset.rdtype in checked_types:
                continue
            checked_types.add(rrset.rdtype)
            key: tuple[object, ...]
            if isinstance(rd, NAPTR):
                key = ("NAPTR", rd.order, rd.preference, rd.flags, rd.services, rd.regexp)
            else:
                key = (rrset.rdtype, rd.to_text())
            if key not in checked_text:
                checked_text.add(key)
                why = dnspython_check(rd.to_text(), rrset.rdtype, zone_name)
                if why:
                    err(why, origin)
        for rd in rrset.rdatas:
            for fault in _plain_faults(plan, view or _BASE, rd):
                err({
                    "srv-cname": f"{rrset.name} SRV target {getattr(rd, 'target', '')} is a CNAME; RFC 2782 "
                                 f"requires a name with A/AAAA records{where}",
                    "srv-address": f"{rrset.name} SRV target {getattr(rd, 'target', '')} has no A/AAAA record "
                                   f"in the plan{where}",
                    "naptr-srv": f"{rrset.name} NAPTR ({getattr(rd, 'services', '')}) points at "
                                 f"{getattr(rd, 'replacement', '')}, which has no SRV records in the plan{where}",
                    "naptr-address": f"{rrset.name} NAPTR ({getattr(rd, 'services', '')}) points at "
                                     f"{getattr(rd, 'replacement', '')}, which has no A/AAAA record in the "
                                     f"plan{where}",
                    "ns-address": f"{rrset.name} NS {getattr(rd, 'target', '')} has no A/AAAA record in the "
                                  f"plan{where}",
                }[fault], origin)
            if isinstance(rd, CNAME) and rrset.rdtype == "CNAME" and rd.target == rrset.name:
                err(f"{rrset.name} CNAME points at itself{where}", origin)
        if view is not None and view.side == "access":
            names = [rrset.name] + [t for rd in rrset.rdatas
                                    if (t := getattr(rd, "target", None) or getattr(rd, "replacement", None))]
            for name in names:
                what = plan.internal_names.get(name)
                if what is not None:
                    err(f"internal name {name} ({what}) is visible to access clients in view {view.name} "
                        f"({rrset.name} {rrset.rdtype}); core names are served only in core views", origin)
    for zone in plan.zones.values():
        by_name: dict[str, set[str]] = {}
        for name, rdtype in zone.rrsets:
            by_name.setdefault(name, set()).add(rdtype)
        for name, types in by_name.items():
            if "CNAME" in types and len(types) > 1:
                err(f"{name} has a CNAME and other data ({', '.join(sorted(types - {'CNAME'}))}); "
                    "a CNAME must be alone at its name", _origin(plan, zone.name, zone.rrsets[(name, "CNAME")]))
        for block in zone.blocks:
            for message in _check_block(block, zone.name):
                err(message, Origin(block.id, ("prefix",), f"ENUM block '{block.id}'"))
    _check_file_names(plan, err)
    return out


# --- faults put in at random places ------------------------------------------------------------------

FAULTS = ("dangling", "cname-target", "drop-address", "view-cname", "bad-ttl", "twice", "shared-tuple",
          "leak", "root-srv", "bad-address", "naptr-dangling", "wrong-type", "self-cname")


def _srv_places(plan: DnsPlan) -> list[tuple[dict, tuple[str, str]]]:
    """(rrset dict, key) of every SRV rrset with real targets, base and view overrides."""
    def usable(r: RRset) -> bool:
        return r.rdtype == "SRV" and all(isinstance(rd, SRV) and rd.target != "." for rd in r.rdatas)

    places = [(z.rrsets, k) for z in [*plan.zones.values(), *plan.access_zones.values()]
              for k, r in z.rrsets.items() if usable(r)]
    for view in plan.views:
        places += [(rrsets, k) for rrsets in view.overrides.values() for k, r in rrsets.items() if usable(r)]
    return places


def _put_fault(plan: DnsPlan, fault: str, pick: int) -> None:
    places = _srv_places(plan)
    rrsets, key = places[pick % len(places)]
    rrset = rrsets[key]
    target = rrset.rdatas[pick % len(rrset.rdatas)].target  # type: ignore[union-attr]
    core = plan.find_zone(target)
    sites = [v for v in plan.views if v.side == "core" and v.overrides]
    users = [v for v in plan.views if v.side == "access" and v.overrides]
    if fault == "dangling":
        rdatas = list(rrset.rdatas)
        rdatas[pick % len(rdatas)] = SRV(10, 1, 5060, f"nowhere.{plan.home_domains[0]}")
        rrsets[key] = replace(rrset, rdatas=tuple(rdatas))
    elif fault == "cname-target" and core is not None:
        core.rrsets[(target, "CNAME")] = RRset(target, "CNAME", 300, (CNAME(f"alias.{core.name}"),))
    elif fault == "drop-address" and core is not None:  # hundreds of SRV sets in every view point there
        core.rrsets.pop((target, "A"), None)
        core.rrsets.pop((target, "AAAA"), None)
    elif fault == "view-cname" and sites:  # one view overrides a name its own SRV sets point at
        view = sites[pick % len(sites)]
        srvs = [r for rrsets in view.overrides.values() for r in rrsets.values() if r.rdtype == "SRV"]
        name = srvs[pick % len(srvs)].rdatas[0].target  # type: ignore[union-attr]
        zone = plan.find_zone(name)
        assert zone is not None
        view.overrides.setdefault(zone.name, {})[(name, "CNAME")] = RRset(
            name, "CNAME", 300, (CNAME(f"alias.{zone.name}"),))
    elif fault == "bad-ttl":
        rrsets[key] = replace(rrset, ttl=2**31)
    elif fault == "twice":
        rrsets[key] = replace(rrset, rdatas=(*rrset.rdatas, rrset.rdatas[0]))
    elif fault == "shared-tuple":  # the same tuple at another name: each name in its own messages
        other_rrsets, other_key = places[(pick + 1) % len(places)]
        other = other_rrsets[other_key]
        bad = (SRV(10, 1, 0, f"nowhere.{plan.home_domains[0]}"), *rrset.rdatas)
        rrsets[key] = replace(rrset, rdatas=bad)
        other_rrsets[other_key] = replace(other, rdatas=bad)
    elif fault == "leak" and users:
        view = users[pick % len(users)]
        internal = sorted(plan.internal_names)[pick % len(plan.internal_names)]
        zone_name, overrides = next(iter(view.overrides.items()))
        name = f"_sip._udp.{zone_name}"
        overrides[(name, "SRV")] = RRset(name, "SRV", 60, (SRV(10, 1, 5060, internal),))
    elif fault == "root-srv":
        rrsets[key] = replace(rrset, rdatas=(*rrset.rdatas, SRV(0, 0, 0, ".")))
    elif fault == "bad-address" and core is not None:
        core.rrsets[(target, "A")] = RRset(target, "A", 300, (A(["01.2.3.4", "::1", "1.2.3"][pick % 3]),))
        core.rrsets[(target, "AAAA")] = RRset(target, "AAAA", 300, (AAAA(["1.2.3.4", "2001:db8::g"][pick % 2]),))
    elif fault == "naptr-dangling" and core is not None:
        name = f"naptr{pick}.{core.name}"
        core.rrsets[(name, "NAPTR")] = RRset(name, "NAPTR", 300, (
            NAPTR(10, 10, "s", "SIP+D2U", "", f"_sip._udp.nowhere.{core.name}"),
            NAPTR(10, 20, "a", "SIP+D2T", "", f"nowhere.{core.name}")))
    elif fault == "wrong-type":
        rrsets[key] = replace(rrset, rdatas=(*rrset.rdatas, A("192.0.2.1")))
    elif fault == "self-cname" and core is not None:
        name = f"loop{pick}.{core.name}"
        core.rrsets[(name, "CNAME")] = RRset(name, "CNAME", 300, (CNAME(name),))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(FAULTS), st.integers(0, 10_000)), max_size=4))
def test_lint_reports_what_the_plain_lint_reports(topology: Topology, faults: list[tuple[str, int]]) -> None:
    plan = build_dns_plan(topology)
    for fault, pick in faults:
        _put_fault(plan, fault, pick)
    assert lint_plan(plan) == plain_lint(plan)



@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(FAULTS), st.integers(0, 10_000)), max_size=4))
def test_a_lint_continued_past_its_base_zones_reports_what_a_fresh_lint_reports(
        topology: Topology, faults: list[tuple[str, int]]) -> None:
    """``imsdr plan``: the check lints the base zones, the writer continues with the views on the
    same PlanLint; both steps give what a fresh lint of each gives, in the same order."""
    plan = build_dns_plan(topology)
    for fault, pick in faults:
        _put_fault(plan, fault, pick)
    lint = PlanLint(plan)
    assert lint.issues(views=False) == PlanLint(plan).issues(views=False)
    assert lint.issues() == plain_lint(plan)
    assert lint.issues(views=False) == PlanLint(plan).issues(views=False)  # (unchanged by the views)

def test_a_lost_address_is_reported_in_every_view_that_points_at_it(topology: Topology) -> None:
    """A fault in a tuple the plan shares between views is still named once per view."""
    plan = build_dns_plan(topology)
    _put_fault(plan, "drop-address", 1)
    issues = lint_plan(plan)
    views = {m.group(1) for i in issues if (m := re.search(r"no A/AAAA record in the plan \(view (\S+)\)$", i.message))}
    assert len(views) > 1
    assert issues == plain_lint(plan)


def test_srv_sets_equal_in_records_are_one_tuple(topology: Topology) -> None:
    """The builder gives equal SRV record tuples one object (what the lint and writer share)."""
    plan = build_dns_plan(topology)
    tuples: dict[tuple[SRV, ...], set[int]] = {}
    for _zone, _view, rrset in plan.all_rrsets():
        if rrset.rdtype == "SRV":
            tuples.setdefault(rrset.rdatas, set()).add(id(rrset.rdatas))  # type: ignore[arg-type]
    assert tuples and all(len(ids) == 1 for ids in tuples.values())


def _spellings(address: ipaddress.IPv6Address) -> st.SearchStrategy[str]:
    full = address.exploded
    return st.sampled_from([str(address), full, full.upper(), full.replace(":0000", ":0"), f"{address}%eth0",
                            f"::ffff:{address.packed[-4]}.1.2.3", f"{address}:1", f"{full}:"])


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=45), st.text(alphabet="0123456789abcdefABCDEF:.%", max_size=45),
                 st.ip_addresses().map(str), st.ip_addresses(v=6).flatmap(_spellings),
                 st.ip_addresses(v=4).map(lambda a: ".".join(f"0{o}" if o < 10 else str(o) for o in a.packed))))
def test_address_records_accept_what_ipaddress_accepts(text: str) -> None:
    """A and AAAA read addresses with a regular expression and the C parser first; the verdict
    and the AAAA text are ipaddress's."""
    try:
        parsed: object = ipaddress.ip_address(text)
    except ValueError:
        parsed = None
    assert (A(text).problems() == []) == isinstance(parsed, ipaddress.IPv4Address)
    assert (AAAA(text).problems() == []) == isinstance(parsed, ipaddress.IPv6Address)
    if isinstance(parsed, ipaddress.IPv6Address):
        assert AAAA(text).to_text() == parsed.compressed


_LABELS = st.one_of(st.sampled_from(["*", "_sip", "_udp", "a", "a-b", "-a", "a-", "", "A", "x" * 63, "x" * 64,
                                     "é", "a\n", "a_b", "9"]),
                    st.text(alphabet="abz09-_*.A\n", max_size=12))


@settings(max_examples=500, deadline=None)
@given(st.lists(_LABELS, min_size=1, max_size=6).map(".".join) | st.text(max_size=30)
       | st.integers(60, 130).map(lambda n: ".".join(["abcdefgh"] * (n // 4) + ["x" * (n % 50)])))
def test_name_problems_take_the_label_walk_s_verdict(name: str) -> None:
    """One match for a good name; any other goes through the label walk, which words why."""
    from imsdr.dns.names import _name_problems, name_problems

    assert name_problems(name) == list(_name_problems(name))



@pytest.mark.parametrize("fault", FAULTS)
def test_each_fault_is_found_as_the_plain_lint_finds_it(topology: Topology, fault: str) -> None:
    plan = build_dns_plan(topology)
    _put_fault(plan, fault, 7)
    issues = lint_plan(plan)
    assert issues, fault  # (each fault is one the lint reports)
    assert issues == plain_lint(plan)
