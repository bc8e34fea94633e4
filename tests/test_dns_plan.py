"""The in-memory DNS plan: views, SBC answers, same-site-first SRV, weights, ENUM lookups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from imsdr.dns.lint import lint_plan
from imsdr.dns.plan import ACCESS_BASE, CORE_BASE, DnsPlan, build_dns_plan
from imsdr.dns.records import SRV
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"


def plan_of(path: Path) -> DnsPlan:
    inv, source = load_inventory(path)
    return build_dns_plan(Topology(inv, source))


@pytest.fixture(scope="module")
def plan() -> DnsPlan:
    return plan_of(PROVINCE)


def targets(records: list[Any]) -> list[tuple[int, str]]:
    return [(r.priority, r.target.split(".")[0]) for r in records]


def test_views_in_bind_order(plan: DnsPlan) -> None:
    names = [v.name for v in plan.views]
    assert names[:6] == [
        "users-capital",
        "users-harbour",
        "users-hill",
        "users-river",
        "users-lake",
        "users-coast",
    ]
    # each site's SBC view (its SBCs' core interfaces) before its core view: first match wins
    assert names[6:] == ["sbc-site-a", "core-site-a", "sbc-site-b", "core-site-b", "sbc-site-c", "core-site-c",
                         "default"]
    # the access resolver first (the server sees it, not the UE), then the UE prefixes
    assert plan.view("users-capital").match_clients == ("203.0.113.131/32", "198.51.100.0/27", "2001:db8:100::/48")
    assert plan.view("sbc-site-a").match_clients == ("192.0.2.11/32", "192.0.2.12/32")  # SBC core sides
    assert plan.view("core-site-a").match_clients == ("192.0.2.0/26", "2001:db8:a::/48")
    assert plan.view_for_client("192.0.2.11").name == "sbc-site-a"  # inside 192.0.2.0/26 too
    # the SBC view holds the P-CSCF names only, same site first; no other core name answers there
    assert [(r.priority, r.target) for r in plan.lookup("sbc-site-a", "_sip._udp.pcscf1.ims.example.net", "SRV")] == [
        (10, "pcscf-a-1.ims.example.net"), (30, "pcscf-b-1.ims.example.net")]
    assert plan.lookup("sbc-site-a", "pcscf-b-1.ims.example.net", "A")
    for name in ("hss-a-1", "slf-a-1", "cscf-a-1", "mgcf-a-1", "as-a-1", "sbc-capital"):
        assert not plan.lookup("sbc-site-a", f"{name}.ims.example.net", "A"), name
    assert not plan.lookup("sbc-site-a", "_sip._udp.ims.example.net", "SRV")
    assert not plan.lookup("sbc-site-a", "5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR")
    assert plan.view_for_client("198.51.100.40").name == "users-harbour"
    assert plan.view_for_client("2001:db8:b::99").name == "core-site-b"
    assert plan.view_for_client("10.1.2.3").name == "default"


def test_sbc_discovery_local_first_dr_second_per_view(plan: DnsPlan) -> None:
    # ring order capital, harbour, hill, lake, river, coast: each backed by the previous one
    expected = {
        "capital": "coast",
        "harbour": "capital",
        "hill": "harbour",
        "lake": "hill",
        "river": "lake",
        "coast": "river",
    }
    for ln, dr in expected.items():
        srv = plan.lookup(f"users-{ln}", "_sip._udp.sbc.ims.example.net", "SRV")
        assert targets(srv) == [(10, f"sbc-{ln}"), (20, f"sbc-{dr}")]
        # A-only clients: the discovery name holds the local SBC only, the DR SBC has its own name
        a = [r.address for r in plan.lookup(f"users-{ln}", "sbc.ims.example.net", "A")]
        assert a == [plan.lookup(ACCESS_BASE, f"sbc-{ln}.ims.example.net", "A")[0].address]
        dr_a = [r.address for r in plan.lookup(f"users-{ln}", "sbc-dr.ims.example.net", "A")]
        assert dr_a == [plan.lookup(ACCESS_BASE, f"sbc-{dr}.ims.example.net", "A")[0].address]
        # the home domain's entry for access clients leads to the same SBCs
        assert targets(plan.lookup(f"users-{ln}", "_sip._udp.ims.example.net", "SRV")) == targets(srv)
    # access base (default view with default_view: access): every SBC, one priority
    default = plan.lookup(ACCESS_BASE, "_sip._udp.sbc.ims.example.net", "SRV")
    assert {p for p, _ in targets(default)} == {10} and len(default) == 6
    assert plan.lookup("default", "_sip._udp.sbc.ims.example.net", "SRV") == []  # the default view refuses


def test_sbc_weights_proportional_to_capacity(plan: DnsPlan) -> None:
    default = {
        t.split(".")[0]: w
        for t, w in ((r.target, r.weight) for r in plan.lookup(ACCESS_BASE, "_sip._udp.sbc.ims.example.net", "SRV"))
    }
    # capacities: capital 2.2M (largest -> 100), coast 1.8M -> 82, hill 0.8M -> 36
    assert default["sbc-capital"] == 100 and default["sbc-coast"] == 82 and default["sbc-hill"] == 36


def test_site_views_answer_same_site_first(plan: DnsPlan) -> None:
    # site-a, site-c in region north; site-b in south
    assert targets(plan.lookup("core-site-a", "_sip._udp.ims.example.net", "SRV")) == [
        (10, "cscf-a-1"),
        (20, "cscf-c-1"),
        (30, "cscf-b-1"),
        (30, "cscf-b-2"),
    ]
    assert targets(plan.lookup("core-site-b", "_sip._tcp.scscf.ims.example.net", "SRV")) == [
        (10, "cscf-b-1"),
        (10, "cscf-b-2"),
        (30, "cscf-a-1"),
        (30, "cscf-c-1"),
    ]
    assert targets(plan.lookup("core-site-b", "_sip._udp.pcscf1.ims.example.net", "SRV")) == [
        (10, "pcscf-b-1"),
        (30, "pcscf-a-1"),
    ]
    flat = plan.lookup(CORE_BASE, "_sip._udp.ims.example.net", "SRV")
    assert {r.priority for r in flat} == {10}  # type: ignore[union-attr]
    # user views never see the core: the home entry leads to SBCs, pool names do not exist
    assert {t.split("-")[0] for _, t in targets(plan.lookup("users-capital", "_sip._udp.ims.example.net", "SRV"))} == {
        "sbc"}
    assert plan.lookup("users-capital", "_sip._udp.scscf.ims.example.net", "SRV") == []


def test_home_domain_naptr_srv_a_chain(plan: DnsPlan) -> None:
    naptrs = plan.lookup("core-site-a", "ims.example.net", "NAPTR")
    assert [(n.services, n.flags, n.replacement) for n in naptrs] == [  # type: ignore[union-attr]
        ("SIP+D2U", "s", "_sip._udp.ims.example.net"),
        ("SIP+D2T", "s", "_sip._tcp.ims.example.net"),
    ]
    srv = plan.lookup("core-site-a", naptrs[0].replacement, "SRV")  # type: ignore[union-attr]
    first = srv[0]
    assert isinstance(first, SRV)
    assert [a.address for a in plan.lookup("core-site-a", first.target, "A")] == ["192.0.2.20"]
    assert "tls not published" in " ".join(plan.notes)  # CSCFs accept udp/tcp only


def test_zone_for_view_applies_overrides(plan: DnsPlan) -> None:
    base = plan.access_zones["ims.example.net"]
    local = plan.zone_for_view("users-harbour", "ims.example.net")
    assert plan.zone_for_view(ACCESS_BASE, "ims.example.net") is base
    changed = {k for k in local.rrsets if local.rrsets[k] != base.rrsets.get(k)}
    assert changed == {
        ("sbc.ims.example.net", "A"),
        ("sbc.ims.example.net", "AAAA"),
        ("sbc-dr.ims.example.net", "A"),
        ("sbc-dr.ims.example.net", "AAAA"),
        ("_sip._udp.sbc.ims.example.net", "SRV"),
        ("_sip._tcp.sbc.ims.example.net", "SRV"),
        ("_sips._tcp.sbc.ims.example.net", "SRV"),
        ("_sip._udp.ims.example.net", "SRV"),
        ("_sip._tcp.ims.example.net", "SRV"),
        ("_sips._tcp.ims.example.net", "SRV"),
    }
    core = plan.zone_for_view("core-site-a", "ims.example.net")
    assert core.rrsets.keys() >= plan.zones["ims.example.net"].rrsets.keys()


def test_enum_lookups_computed_from_blocks(plan: DnsPlan) -> None:
    numbers = plan.enum_lookup("+8613800138005")
    assert [n.regexp for n in numbers] == ["!^.*$!sip:+8613800138005@ims.example.net!"]
    assert plan.enum_lookup("+86138001380051") == []  # wrong length for a numbers block
    wildcard = plan.enum_lookup("+8610555001234")
    assert [n.regexp for n in wildcard] == ["!^(.*)$!sip:\\1@ims.example.net!"]
    assert plan.enum_lookup("+8699") == []
    by_name = plan.lookup("core-site-b", "5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR")
    assert by_name == numbers
    assert plan.lookup("users-capital", "5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR") == []  # core only
    assert plan.lookup(CORE_BASE, "0.0.5.5.5.0.1.6.8.e164.arpa", "NAPTR") == []  # wildcard not at apex
    assert plan.lookup(CORE_BASE, "0.0.5.5.5.0.1.6.8.e164.arpa", "SOA")
    # the country code's parent zone delegates every block: numbers outside them get NXDOMAIN
    parent = plan.zones["6.8.e164.arpa"]
    assert parent.kind == "enum_parent"
    assert {name for name, t in parent.rrsets if t == "NS"} == {
        "6.8.e164.arpa", "0.0.5.5.5.0.1.6.8.e164.arpa", "0.0.6.6.6.2.2.6.8.e164.arpa", "8.3.1.0.0.8.3.1.6.8.e164.arpa"}
    assert plan.find_zone("9.9.9.9.6.8.e164.arpa") is parent


def test_enum_numbers_block_with_first_last(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["enum_blocks"] = [
            {
                "id": "b",
                "prefix": "+86105550",
                "length": 11,
                "style": "numbers",
                "domain": "ims.example.net",
                "first": "+86105550017",
                "last": "+86105550042",
            }
        ]

    p = plan_of(make_inventory(mutate))
    assert p.enum_lookup("+86105550017") and p.enum_lookup("+86105550042")
    assert p.enum_lookup("+86105550016") == [] and p.enum_lookup("+86105550043") == []
    assert p.zones["0.5.5.5.0.1.6.8.e164.arpa"].blocks[0].count == 26


def test_hub_layout(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["redundancy"]["sbc_dr"] = {"layout": "hub", "hub": "sbc-capital"}

    p = plan_of(make_inventory(mutate))
    assert targets(p.lookup("users-lake", "_sip._udp.sbc.ims.example.net", "SRV")) == [
        (10, "sbc-lake"),
        (20, "sbc-capital"),
    ]
    assert targets(p.lookup("users-capital", "_sip._udp.sbc.ims.example.net", "SRV")) == [(10, "sbc-capital")]


def test_plan_issues_for_names_it_cannot_place(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["elements"][2]["fqdn"] = "sbc-capital.elsewhere.org"
        d["redundancy"]["pools"][3]["dns_name"] = "sbc"  # collides with the SBC discovery name

    p = plan_of(make_inventory(mutate))
    messages = " | ".join(i.message for i in p.issues)
    assert "sbc-capital.elsewhere.org is not under any home domain" in messages
    # the pool name lives in the core zone, the SBC discovery name in the access zone: the lint
    # refuses the plan, as access clients would see a core pool's name
    errors = " | ".join(i.message for i in lint_plan(p) if i.severity == "error")
    assert "internal name sbc.ims.example.net (pool 'as-pool' (dns_name sbc))" in errors


def test_non_sip_group_names_are_noted_not_published(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["redundancy"]["pairs"][3]["dns_name"] = "hss"

    p = plan_of(make_inventory(mutate))
    assert any("hss" in n and "not SIP" in n for n in p.notes)
    assert p.lookup(CORE_BASE, "_sip._udp.hss.ims.example.net", "SRV") == []


def test_every_element_fqdn_has_its_addresses(plan: DnsPlan) -> None:
    inv, source = load_inventory(PROVINCE)
    topo = Topology(inv, source)
    for el in topo.elements.values():
        got = [r.address for t in ("A", "AAAA") for r in plan.lookup(CORE_BASE, topo.fqdn(el), t)]
        assert got == list(el.core_addresses or el.addresses), el.id
        access = [r.address for t in ("A", "AAAA") for r in plan.lookup(ACCESS_BASE, topo.fqdn(el), t)]
        expected = list(el.access_addresses or el.addresses) if el.type.value in ("sbc", "enum_dns") else []
        assert access == expected, el.id


def test_several_home_domains(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["network"]["home_domains"].append("ims.other.example.org")
        els = {e["id"]: e for e in d["elements"]}
        els["cscf-c-1"]["fqdn"] = "cscf-c-1.ims.other.example.org"
        els["pcscf-c-1"]["fqdn"] = "pcscf-c-1.ims.other.example.org"
        els["pcscf-b-2"]["fqdn"] = "pcscf-b-2.ims.other.example.org"

    p = plan_of(make_inventory(mutate))
    assert p.issues == []
    assert list(p.zones)[:2] == ["ims.example.net", "ims.other.example.org"]
    # each home domain's I-CSCF entry lists the I-CSCFs named under it
    assert targets(p.lookup(CORE_BASE, "_sip._udp.ims.other.example.org", "SRV")) == [(10, "cscf-c-1")]
    assert {t for _, t in targets(p.lookup(CORE_BASE, "_sip._udp.ims.example.net", "SRV"))} == {
        "cscf-a-1", "cscf-b-1", "cscf-b-2"}
    # pcscf-pair-2's members are both under the second domain: its name goes there
    assert p.lookup(CORE_BASE, "_sip._udp.pcscf2.ims.other.example.org", "SRV")
    assert p.lookup(CORE_BASE, "_sip._udp.pcscf2.ims.example.net", "SRV") == []
    assert p.lookup(CORE_BASE, "pcscf-c-1.ims.other.example.org", "A")
    # access clients of the second domain are led to the SBCs too
    assert {t.split("-")[0] for _, t in targets(p.lookup("users-lake", "_sip._udp.ims.other.example.org", "SRV"))} == {
        "sbc"}


def test_core_subnet_overlapping_user_prefix_is_noted(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["sites"][1]["core_subnets"].append("198.51.100.0/28")  # inside capital's users

    p = plan_of(make_inventory(mutate))
    assert any("site-b" in n and "capital" in n and "overlaps" in n for n in p.notes)
    assert p.view_for_client("198.51.100.1").name == "users-capital"


def test_3gpp_home_domain_zone_per_side(plan: DnsPlan, make_inventory: Any) -> None:
    gpp = "ims.mnc001.mcc460.3gppnetwork.org"  # mcc 460, mnc 01 padded to three digits (TS 23.003)
    assert gpp in plan.zones and gpp in plan.access_zones
    assert targets(plan.lookup("users-hill", f"_sip._udp.{gpp}", "SRV")) == [(10, "sbc-hill"), (20, "sbc-harbour")]
    assert targets(plan.lookup("core-site-c", f"_sip._udp.{gpp}", "SRV"))[0] == (10, "cscf-c-1")

    def only_home(d: dict[str, Any]) -> None:
        d["network"]["dns"]["publish"] = ["home_domains"]

    p = plan_of(make_inventory(only_home))
    assert gpp not in p.zones and gpp not in p.access_zones

    def only_3gpp(d: dict[str, Any]) -> None:
        d["network"]["dns"]["publish"] = ["3gpp"]

    p = plan_of(make_inventory(only_3gpp))
    assert p.lookup("users-hill", f"{gpp}", "NAPTR") and not p.lookup("users-hill", "ims.example.net", "NAPTR")
    assert p.lookup("users-hill", "sbc.ims.example.net", "A")  # the SBC names still live under the primary


def test_resolvers_and_sbc_core_sides_select_views(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["local_networks"][0]["resolvers"] = ["203.0.113.200", "2001:db8:53::1"]
        next(e for e in d["elements"] if e["id"] == "sbc-harbour")["core_addresses"] = ["192.0.2.200"]

    p = plan_of(make_inventory(mutate))
    assert p.view("users-capital").match_clients[:2] == ("203.0.113.200/32", "2001:db8:53::1/128")
    assert p.view_for_client("203.0.113.200").name == "users-capital"
    assert p.view_for_client("192.0.2.200").name == "sbc-site-b"  # sbc-harbour is at site-b
    assert [r.address for r in p.lookup("core-site-a", "sbc-harbour.ims.example.net", "A")] == ["192.0.2.200"]
    assert [r.address for r in p.lookup("users-lake", "sbc-harbour.ims.example.net", "A")] == ["203.0.113.20"]


def test_default_view_can_serve_the_access_data(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["network"]["dns"]["default_view"] = "access"

    p = plan_of(make_inventory(mutate))
    default = p.view("default")
    assert default.side == "access"
    assert len(p.lookup(default, "_sip._udp.sbc.ims.example.net", "SRV")) == 6
    assert p.lookup(default, "hss-a-1.ims.example.net", "A") == []
    assert [i for i in lint_plan(p) if i.severity == "error"] == []


def test_lint_refuses_an_internal_name_visible_to_access_clients(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:  # a CSCF named like the DR SBC name: it would leak
        next(e for e in d["elements"] if e["id"] == "cscf-a-1")["fqdn"] = "sbc-dr.ims.example.net"

    p = plan_of(make_inventory(mutate))
    errors = [i.message for i in lint_plan(p) if i.severity == "error"]
    assert any("internal name sbc-dr.ims.example.net (cscf 'cscf-a-1') is visible to access clients" in m
               for m in errors), errors
    assert [i for i in lint_plan(plan_of(PROVINCE)) if i.severity == "error"] == []


def test_excluded_elements_leave_every_answer(make_inventory: Any) -> None:
    inv, source = load_inventory(PROVINCE)
    p = build_dns_plan(Topology(inv, source), excluded={"sbc-capital", "cscf-a-1"})
    # capital's users: the DR SBC is the answer, for SRV and for A-only clients
    assert targets(p.lookup("users-capital", "_sip._udp.sbc.ims.example.net", "SRV")) == [(20, "sbc-coast")]
    assert [r.address for r in p.lookup("users-capital", "sbc.ims.example.net", "A")] == ["203.0.113.60"]
    assert targets(p.lookup("core-site-a", "_sip._udp.ims.example.net", "SRV")) == [
        (20, "cscf-c-1"), (30, "cscf-b-1"), (30, "cscf-b-2")]
    assert p.lookup("core-site-a", "cscf-a-1.ims.example.net", "A")  # its own name still resolves
    assert [i for i in lint_plan(p) if i.severity == "error"] == []


def test_first_try_probabilities_per_view(plan: DnsPlan) -> None:
    assert plan.first_try("core-site-a", "_sip._udp.ims.example.net") == {"cscf-a-1.ims.example.net": 1.0}
    flat = plan.first_try(CORE_BASE, "_sip._udp.ims.example.net")
    assert set(flat) == {"cscf-a-1.ims.example.net", "cscf-b-1.ims.example.net", "cscf-b-2.ims.example.net",
                         "cscf-c-1.ims.example.net"}
    assert abs(sum(flat.values()) - 1) < 1e-9 and max(flat.values()) - min(flat.values()) < 1e-9
    assert plan.first_try("users-capital", "_sip._udp.sbc.ims.example.net") == {"sbc-capital.ims.example.net": 1.0}
    assert plan.first_try("default", "_sip._udp.sbc.ims.example.net") == {}
