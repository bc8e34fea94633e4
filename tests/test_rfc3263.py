"""Offline RFC 3263 resolution over hand-made zones: NAPTR → SRV → A/AAAA, ENUM, views."""

from __future__ import annotations

from fractions import Fraction as F

import dns.name
import dns.rdatatype
import pytest

from imsdr.resolve.enum import EnumError, apply_regexp, enum_domain, split_regexp
from imsdr.resolve.rfc3263 import ResolveError, Rfc3263Resolver, parse_uri
from imsdr.resolve.source import ZoneSource
from imsdr.resolve.views import ViewSpec, select_view

HOME = """\
$TTL 60
@            3600 SOA ns1 hostmaster 1 3600 600 86400 300
@           86400 NS  ns1
ns1               A   192.0.2.53
@             300 NAPTR 10 10 "s" "SIP+D2U" "" _sip._udp
@             300 NAPTR 10 20 "s" "SIP+D2T" "" _sip._tcp
@             300 NAPTR 10 30 "s" "SIPS+D2T" "" _sips._tcp
@             300 NAPTR 20 10 "s" "SIP+D2T" "" _sip._tcp.backup
_sip._udp         SRV 10 60 5060 icscf-a
_sip._udp         SRV 10 0 5060 icscf-c
_sip._udp         SRV 20 50 5060 icscf-b
_sip._tcp         SRV 10 100 5060 icscf-b
_sips._tcp        SRV 10 10 5061 icscf-a
_sip._tcp.backup  SRV 10 10 5060 icscf-c
icscf-a           A   192.0.2.20
icscf-a           AAAA 2001:db8:a::20
icscf-b           A   192.0.2.84
icscf-c           A   192.0.2.148
alias             CNAME icscf-a
plain             A   192.0.2.99
plain             A   192.0.2.98
srvonly           A   192.0.2.77
_sip._tcp.srvonly SRV 5 1 5070 icscf-b
_sip._udp.off     SRV 0 0 0 .
skipfirst         NAPTR 10 10 "s" "SIP+D2U" "" _sip._udp.missing
skipfirst         NAPTR 10 20 "s" "SIP+D2T" "" _sip._tcp.srvonly
dangling          NAPTR 10 10 "s" "SIP+D2U" "" _sip._udp.dangling
_sip._udp.dangling SRV 10 10 5060 nowhere
"""

HOME_CAPITAL = HOME.replace("_sip._udp         SRV 10 60 5060 icscf-a",
                            "_sip._udp         SRV 5 60 5060 icscf-a")

ENUM = """\
$TTL 3600
@ SOA ns1.example.net. hostmaster.example.net. 1 3600 600 86400 300
@ NS ns1.example.net.
*.0.0.5.5.5.0.1.6.8 NAPTR 100 10 "u" "E2U+sip" "!^(.*)$!sip:\\\\1@ims.example.net!" .
0.0.0.8.3.1.0.0.8.3.1.6.8 NAPTR 10 100 "u" "E2U+sip" "!^.*$!sip:+8613800138000@ims.example.net!" .
0.0.0.8.3.1.0.0.8.3.1.6.8 NAPTR 10 50 "u" "E2U+email" "!^.*$!mailto:x@example.net!" .
1.1.1.8.3.1.0.0.8.3.1.6.8 NAPTR 10 100 "u" "E2U+sip" "!^.*$!sip:+8613800138111@elsewhere.example.org!" .
"""

VIEWS = [
    ViewSpec("capital", ("198.51.100.0/27", "2001:db8:100::/48")),
    ViewSpec("default", ("any",)),
]


@pytest.fixture()
def source() -> ZoneSource:
    return ZoneSource.from_text(VIEWS, {
        "capital": {"ims.example.net.": HOME_CAPITAL, "e164.arpa.": ENUM},
        "default": {"ims.example.net.": HOME, "e164.arpa.": ENUM},
    })


def resolver(source: ZoneSource, view: str = "default") -> Rfc3263Resolver:
    return Rfc3263Resolver(lambda q, t: source.rrset(view, q, t))


def summary(res) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [(c.target, c.port, c.transport, c.priority, c.weight, c.p_first, c.addresses)
            for c in res.candidates]


def test_domain_follows_naptr_srv_a_with_exact_probabilities(source: ZoneSource) -> None:
    res = resolver(source).resolve("ims.example.net")
    assert res.resolved
    assert res.naptr == '10 10 "s" "SIP+D2U" "" _sip._udp.ims.example.net.'
    # the other order-10 records are alternatives; the order-20 record never is
    assert len(res.alternatives) == 2 and all("backup" not in a for a in res.alternatives)
    assert res.srv_name == "_sip._udp.ims.example.net"
    assert summary(res) == [
        ("icscf-a.ims.example.net", 5060, "udp", 10, 60, F(60, 61), ["192.0.2.20", "2001:db8:a::20"]),
        ("icscf-c.ims.example.net", 5060, "udp", 10, 0, F(1, 61), ["192.0.2.148"]),
        ("icscf-b.ims.example.net", 5060, "udp", 20, 50, F(0), ["192.0.2.84"]),
    ]
    assert res.candidates[2].p_first_in_priority == 1
    assert [s.rdtype for s in res.steps][:2] == ["NAPTR", "SRV"]


def test_transport_picks_the_matching_naptr(source: ZoneSource) -> None:
    tcp = resolver(source).resolve("ims.example.net", transport="tcp")
    assert tcp.naptr is not None and "SIP+D2T" in tcp.naptr and "backup" not in tcp.naptr
    assert summary(tcp) == [("icscf-b.ims.example.net", 5060, "tcp", 10, 100, F(1), ["192.0.2.84"])]
    tls = resolver(source).resolve("sip:ims.example.net", transport="tls")
    assert summary(tls) == [("icscf-a.ims.example.net", 5061, "tls", 10, 10, F(1),
                             ["192.0.2.20", "2001:db8:a::20"])]
    sips = resolver(source).resolve("sips:alice@ims.example.net")
    assert [c.transport for c in sips.candidates] == ["tls"]


def test_sips_refuses_udp(source: ZoneSource) -> None:
    with pytest.raises(ResolveError, match="TLS"):
        resolver(source).resolve("sips:ims.example.net", transport="udp")


def test_next_preference_used_when_first_srv_is_missing(source: ZoneSource) -> None:
    res = resolver(source).resolve("skipfirst.ims.example.net")
    assert res.naptr is not None and "SIP+D2T" in res.naptr
    assert summary(res) == [("icscf-b.ims.example.net", 5070, "tcp", 5, 1, F(1), ["192.0.2.84"])]


def test_no_naptr_falls_back_to_srv_then_a(source: ZoneSource) -> None:
    srv = resolver(source).resolve("srvonly.ims.example.net")
    assert srv.naptr is None
    assert summary(srv) == [("icscf-b.ims.example.net", 5070, "tcp", 5, 1, F(1), ["192.0.2.84"])]
    a = resolver(source).resolve("plain.ims.example.net")
    assert summary(a) == [("plain.ims.example.net", 5060, "udp", None, None, F(1),
                           ["192.0.2.98", "192.0.2.99"])]
    tls_a = resolver(source).resolve("plain.ims.example.net", transport="tls")
    assert summary(tls_a)[0][1:3] == (5061, "tls")


def test_uri_port_and_transport_parameters(source: ZoneSource) -> None:
    with_port = resolver(source).resolve("sip:ims.example.net:5080")
    assert with_port.candidates == [] and with_port.reason == "no A/AAAA records for ims.example.net"
    assert not with_port.resolved and [s.rdtype for s in with_port.steps] == ["A", "AAAA"]
    srvonly_port = resolver(source).resolve("sip:srvonly.ims.example.net:5999")
    assert summary(srvonly_port) == [("srvonly.ims.example.net", 5999, "udp", None, None, F(1),
                                      ["192.0.2.77"])]
    param = resolver(source).resolve("sip:bob@ims.example.net;transport=tcp")
    assert [c.target for c in param.candidates] == ["icscf-b.ims.example.net"]
    numeric = resolver(source).resolve("sip:[2001:db8::5]:5062")
    assert summary(numeric) == [("2001:db8::5", 5062, "udp", None, None, F(1), ["2001:db8::5"])]


def test_cname_is_followed_and_recorded(source: ZoneSource) -> None:
    res = resolver(source).resolve("alias.ims.example.net", rdtype="A")
    assert res.candidates[0].addresses == ["192.0.2.20"]
    assert ("CNAME", "alias followed") in [(s.rdtype, s.note) for s in res.steps]


def test_no_service_and_dangling_targets_do_not_resolve(source: ZoneSource) -> None:
    off = resolver(source).resolve("_sip._udp.off.ims.example.net", rdtype="SRV")
    assert not off.resolved and "not available" in (off.reason or "")
    dangling = resolver(source).resolve("dangling.ims.example.net")
    assert not dangling.resolved
    assert dangling.candidates[0].target == "nowhere.ims.example.net"
    assert dangling.reason == "no target has an address"


def test_plain_and_srv_types(source: ZoneSource) -> None:
    aaaa = resolver(source).resolve("icscf-a.ims.example.net", rdtype="AAAA")
    assert aaaa.candidates[0].addresses == ["2001:db8:a::20"]
    srv = resolver(source).resolve("_sip._tcp.ims.example.net", rdtype="SRV")
    assert [(c.target, c.transport) for c in srv.candidates] == [("icscf-b.ims.example.net", "tcp")]
    srv_from_domain = resolver(source).resolve("ims.example.net", rdtype="SRV", transport="tls")
    assert srv_from_domain.srv_name == "_sips._tcp.ims.example.net"
    naptr_only = resolver(source).resolve("plain.ims.example.net", rdtype="NAPTR")
    assert not naptr_only.resolved and "NAPTR" in (naptr_only.reason or "")
    missing = resolver(source).resolve("nothing.ims.example.net", rdtype="A")
    assert not missing.resolved


def test_enum_wildcard_then_sip(source: ZoneSource) -> None:
    res = resolver(source).resolve("+8610555001234")
    assert res.enum_domain == "4.3.2.1.0.0.5.5.5.0.1.6.8.e164.arpa"
    assert res.uri == "sip:+8610555001234@ims.example.net"
    assert res.enum_naptr is not None and "E2U+sip" in res.enum_naptr
    assert res.naptr is not None and "SIP+D2U" in res.naptr
    assert res.resolved and res.candidates[0].target == "icscf-a.ims.example.net"


def test_enum_number_picks_e2u_sip_and_unknown_numbers_fail(source: ZoneSource) -> None:
    res = resolver(source).resolve("+8613800138000", transport="tcp")
    assert res.uri == "sip:+8613800138000@ims.example.net"
    assert [c.target for c in res.candidates] == ["icscf-b.ims.example.net"]
    unknown = resolver(source).resolve("+8613800138999")
    assert not unknown.resolved and "no ENUM NAPTR" in (unknown.reason or "")
    foreign = resolver(source).resolve("+8613800138111")
    assert foreign.uri == "sip:+8613800138111@elsewhere.example.org" and not foreign.resolved


def test_views_give_different_answers(source: ZoneSource) -> None:
    capital = select_view(VIEWS, "198.51.100.7")
    other = select_view(VIEWS, "203.0.113.9")
    assert capital is not None and capital.name == "capital"
    assert other is not None and other.name == "default"
    res = resolver(source, "capital").resolve("ims.example.net")
    assert res.candidates[0].priority == 5 and res.candidates[0].p_first == 1


def test_view_selection_follows_bind_rules() -> None:
    views = [
        ViewSpec("a", ("!198.51.100.5", "198.51.100.0/24")),
        ViewSpec("b", ("lan",), acls={"lan": ["198.51.100.0/24", "2001:db8::/32"]}),
        ViewSpec("c", ("none",)),
    ]
    assert select_view(views, "198.51.100.4").name == "a"  # type: ignore[union-attr]
    assert select_view(views, "198.51.100.5").name == "b"  # type: ignore[union-attr]
    assert select_view(views, "2001:db8::1").name == "b"  # type: ignore[union-attr]
    assert select_view(views, "192.0.2.1") is None
    assert select_view(views, None) is None
    with pytest.raises(ValueError):
        select_view([ViewSpec("x", ("nosuchacl",))], "192.0.2.1")


def test_wildcard_does_not_cover_existing_names(source: ZoneSource) -> None:
    exact = dns.name.from_text("0.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa.")
    rrset = source.rrset("default", exact, dns.rdatatype.NAPTR)
    assert rrset is not None and len(rrset) == 2
    # an empty non-terminal stops wildcard synthesis too (RFC 4592)
    ent = dns.name.from_text("9.8.3.1.0.0.8.3.1.6.8.e164.arpa.")
    assert source.rrset("default", ent, dns.rdatatype.NAPTR) is None
    under = dns.name.from_text("7.6.5.4.0.0.5.5.5.0.1.6.8.e164.arpa.")
    synthesised = source.rrset("default", under, dns.rdatatype.NAPTR)
    assert synthesised is not None and synthesised.name == under


def test_enum_helpers() -> None:
    assert enum_domain("+86 1055-5001", "e164.arpa.") == "1.0.0.5.5.5.0.1.6.8.e164.arpa."
    with pytest.raises(EnumError):
        enum_domain("8610")
    assert apply_regexp("!^(.*)$!sip:\\1@x.example!", "+861") == "sip:+861@x.example"
    assert apply_regexp("/^\\+86(.*)$/sip:0\\1@x/", "+8610") == "sip:010@x"
    assert apply_regexp("!^\\+1!tel:!", "+861") is None
    assert apply_regexp("!^SIP$!ok!i", "sip") == "ok"
    assert apply_regexp("!^SIP$!ok!", "sip") is None
    assert split_regexp("#a\\#b#c#") == ("a#b", "c", "")
    with pytest.raises(EnumError):
        split_regexp("!a!b")
    with pytest.raises(EnumError):
        apply_regexp("!(a!\\2!", "a")


def test_parse_uri() -> None:
    uri = parse_uri("SIPS:alice@Example.NET:5061;transport=tcp?subject=x")
    assert (uri.scheme, uri.user, uri.host, uri.port, uri.transport) == ("sips", "alice", "example.net", 5061,
                                                                         "tcp")
    with pytest.raises(ResolveError):
        parse_uri("http://example.net")
    with pytest.raises(ResolveError):
        parse_uri("sip:example.net;transport=carrier-pigeon")


def test_plan_adapter_builds_the_same_records_bind_reads_from_the_zone_text() -> None:
    """Every plan rrset converted field by field equals dnspython's parse of its master-file text."""
    from pathlib import Path

    import dns.rdata
    import dns.rdataclass

    from imsdr.dns.plan import build_dns_plan
    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology
    from imsdr.resolve.planview import PlanSource, to_dns_rrset

    inv, source_map = load_inventory(Path(__file__).resolve().parent.parent / "inventories" / "province.yaml")
    plan = build_dns_plan(Topology(inv, source_map))
    kinds = set()
    for _zone, _view, plan_rrset in plan.all_rrsets():
        rdtype = dns.rdatatype.from_text(plan_rrset.rdtype)
        parsed = {dns.rdata.from_text(dns.rdataclass.IN, rdtype, rd.to_text(), origin=dns.name.root,
                                      relativize=False) for rd in plan_rrset.rdatas}
        converted = to_dns_rrset(plan_rrset)
        assert set(converted) == parsed and converted.ttl == plan_rrset.ttl
        kinds.add(plan_rrset.rdtype)
    assert {"SOA", "NS", "NAPTR", "SRV", "A", "AAAA"} <= kinds
    # ENUM answers are computed per number and owned by the queried name
    src = PlanSource(plan)
    qname = dns.name.from_text("0.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa.")
    enum = src.rrset("core-site-a", qname, dns.rdatatype.NAPTR)
    assert enum is not None and enum.name == qname
    assert next(iter(enum)).regexp == b"!^.*$!sip:+8613800138000@ims.example.net!"  # type: ignore[attr-defined]
