"""The in-memory DNS plan: views, SBC answers, same-site-first SRV, weights, ENUM lookups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from imsdr.dns.plan import DnsPlan, build_dns_plan
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
    assert names[6:] == ["core-site-a", "core-site-b", "core-site-c", "default"]
    assert plan.view("users-capital").match_clients == ("198.51.100.0/27", "2001:db8:100::/48")
    assert plan.view_for_client("198.51.100.40").name == "users-harbour"
    assert plan.view_for_client("2001:db8:b::99").name == "core-site-b"
    assert plan.view_for_client("10.1.2.3").name == "default"


def test_sbc_discovery_local_first_dr_second_per_view(plan: DnsPlan) -> None:
    # ring order capital, harbour, hill, river, lake, coast: each backed by the previous one
    expected = {
        "capital": "coast",
        "harbour": "capital",
        "hill": "harbour",
        "river": "hill",
        "lake": "river",
        "coast": "lake",
    }
    for ln, dr in expected.items():
        srv = plan.lookup(f"users-{ln}", "_sip._udp.sbc.ims.example.net", "SRV")
        assert targets(srv) == [(10, f"sbc-{ln}"), (20, f"sbc-{dr}")]
        a = [r.address for r in plan.lookup(f"users-{ln}", "sbc.ims.example.net", "A")]
        assert len(a) == 2 and a[0] == plan.lookup("default", f"sbc-{ln}.ims.example.net", "A")[0].address
    # default view: every SBC, one priority
    default = plan.lookup("default", "_sip._udp.sbc.ims.example.net", "SRV")
    assert {p for p, _ in targets(default)} == {10} and len(default) == 6


def test_sbc_weights_proportional_to_capacity(plan: DnsPlan) -> None:
    default = {
        t.split(".")[0]: w
        for t, w in ((r.target, r.weight) for r in plan.lookup("default", "_sip._udp.sbc.ims.example.net", "SRV"))
    }
    # capacities: capital 2.0M (largest -> 100), coast 1.5M -> 75, hill 0.8M -> 40
    assert default["sbc-capital"] == 100 and default["sbc-coast"] == 75 and default["sbc-hill"] == 40


def test_site_views_answer_same_site_first(plan: DnsPlan) -> None:
    # site-a, site-c in region north; site-b in south
    assert targets(plan.lookup("core-site-a", "_sip._udp.ims.example.net", "SRV")) == [
        (10, "cscf-a-1"),
        (20, "cscf-c-1"),
        (30, "cscf-b-1"),
    ]
    assert targets(plan.lookup("core-site-b", "_sip._tcp.scscf.ims.example.net", "SRV")) == [
        (10, "cscf-b-1"),
        (30, "cscf-a-1"),
        (30, "cscf-c-1"),
    ]
    assert targets(plan.lookup("core-site-b", "_sip._udp.pcscf1.ims.example.net", "SRV")) == [
        (10, "pcscf-b-1"),
        (30, "pcscf-a-1"),
    ]
    flat = plan.lookup("default", "_sip._udp.ims.example.net", "SRV")
    assert {r.priority for r in flat} == {10}  # type: ignore[union-attr]
    # user views do not reorder core names
    assert plan.lookup("users-capital", "_sip._udp.ims.example.net", "SRV") == flat


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
    base = plan.zones["ims.example.net"]
    local = plan.zone_for_view("users-harbour", "ims.example.net")
    assert plan.zone_for_view("default", "ims.example.net") is base
    changed = {k for k in local.rrsets if local.rrsets[k] != base.rrsets.get(k)}
    assert changed == {
        ("sbc.ims.example.net", "A"),
        ("sbc.ims.example.net", "AAAA"),
        ("_sip._udp.sbc.ims.example.net", "SRV"),
        ("_sip._tcp.sbc.ims.example.net", "SRV"),
        ("_sips._tcp.sbc.ims.example.net", "SRV"),
    }


def test_enum_lookups_computed_from_blocks(plan: DnsPlan) -> None:
    numbers = plan.enum_lookup("+8613800138005")
    assert [n.regexp for n in numbers] == ["!^.*$!sip:+8613800138005@ims.example.net!"]
    assert plan.enum_lookup("+86138001380051") == []  # wrong length for a numbers block
    wildcard = plan.enum_lookup("+8610555001234")
    assert [n.regexp for n in wildcard] == ["!^(.*)$!sip:\\1@ims.example.net!"]
    assert plan.enum_lookup("+8699") == []
    by_name = plan.lookup("users-capital", "5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa", "NAPTR")
    assert by_name == numbers
    assert plan.lookup("default", "0.0.5.5.5.0.1.6.8.e164.arpa", "NAPTR") == []  # wildcard not at apex
    assert plan.lookup("default", "0.0.5.5.5.0.1.6.8.e164.arpa", "SOA")


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
    assert "produced twice" in messages and "dns_name sbc" in messages


def test_non_sip_group_names_are_noted_not_published(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["redundancy"]["pairs"][3]["dns_name"] = "hss"

    p = plan_of(make_inventory(mutate))
    assert any("hss" in n and "not SIP" in n for n in p.notes)
    assert p.lookup("default", "_sip._udp.hss.ims.example.net", "SRV") == []


def test_every_element_fqdn_has_its_addresses(plan: DnsPlan) -> None:
    inv, source = load_inventory(PROVINCE)
    topo = Topology(inv, source)
    for el in topo.elements.values():
        got = [r.address for t in ("A", "AAAA") for r in plan.lookup("default", topo.fqdn(el), t)]
        assert got == list(el.addresses), el.id


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
    assert targets(p.lookup("default", "_sip._udp.ims.other.example.org", "SRV")) == [(10, "cscf-c-1")]
    assert {t for _, t in targets(p.lookup("default", "_sip._udp.ims.example.net", "SRV"))} == {"cscf-a-1", "cscf-b-1"}
    # pcscf-pair-2's members are both under the second domain: its name goes there
    assert p.lookup("default", "_sip._udp.pcscf2.ims.other.example.org", "SRV")
    assert p.lookup("default", "_sip._udp.pcscf2.ims.example.net", "SRV") == []
    assert p.lookup("default", "pcscf-c-1.ims.other.example.org", "A")


def test_core_subnet_overlapping_user_prefix_is_noted(make_inventory: Any) -> None:
    def mutate(d: dict[str, Any]) -> None:
        d["sites"][1]["core_subnets"].append("198.51.100.0/28")  # inside capital's users

    p = plan_of(make_inventory(mutate))
    assert any("site-b" in n and "capital" in n and "overlaps" in n for n in p.notes)
    assert p.view_for_client("198.51.100.1").name == "users-capital"
