"""Record model, names, ENUM reversal, serial rule, weight and priority conversions."""

from __future__ import annotations

import datetime as dt

import dns.rdata
import dns.rdataclass
import dns.rdatatype
import pytest

from imsdr.dns.dispatcher import ds_priorities, percent_weights
from imsdr.dns.names import enum_digits, enum_name, name_problems, relative, reverse_digits, sort_key
from imsdr.dns.records import AAAA, NAPTR, SRV, A, RRset, quote, regexp_problems
from imsdr.dns.zonefile import Previous, choose_serial
from imsdr.errors import RenderError


def test_enum_reversal_follows_rfc6116() -> None:
    assert enum_name("+8613800138005") == "5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa"
    assert enum_name("4415550123", "e164.example.net") == "3.2.1.0.5.5.5.1.4.4.e164.example.net"
    assert reverse_digits("8610") == "0.1.6.8"
    assert enum_digits("5.0.0.8.3.1.0.0.8.3.1.6.8.e164.arpa") == "8613800138005"
    assert enum_digits("_sip.8.e164.arpa") is None
    with pytest.raises(ValueError):
        reverse_digits("86a")


def test_name_checks_say_why() -> None:
    assert name_problems("_sip._udp.ims.example.net") == []
    assert name_problems("*.0.1.e164.arpa") == []
    assert "lower-case" in name_problems("IMS.example.net")[0]
    assert "not a host label" in name_problems("bad_label.example.net")[0]
    assert "leftmost" in name_problems("a.*.example.net")[0]
    assert relative("pcscf1.ims.example.net", "ims.example.net") == "pcscf1"
    assert relative("ims.example.net", "ims.example.net") == "@"
    assert relative("ns.other.net", "ims.example.net") == "ns.other.net."


def test_sort_key_keeps_service_names_beside_their_parent() -> None:
    names = ["pcscf1.x.net", "_sip._udp.pcscf1.x.net", "pcscf2.x.net", "x.net", "as.x.net"]
    ordered = sorted(names, key=sort_key)
    assert ordered == ["x.net", "as.x.net", "pcscf1.x.net", "_sip._udp.pcscf1.x.net", "pcscf2.x.net"]


def test_naptr_backreference_is_escaped_for_master_file_and_reads_back() -> None:
    naptr = NAPTR(100, 10, "u", "E2U+sip", "!^(.*)$!sip:\\1@ims.example.net!", ".")
    text = naptr.to_text()
    assert '"!^(.*)$!sip:\\\\1@ims.example.net!"' in text  # \1 written as \\1
    parsed = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.NAPTR, text)
    assert parsed.regexp == b"!^(.*)$!sip:\\1@ims.example.net!"
    assert naptr.problems() == []
    assert quote('a"b\\c') == '"a\\"b\\\\c"'


@pytest.mark.parametrize(
    ("naptr", "expected"),
    [
        (NAPTR(100, 10, "x", "E2U+sip", "!^.*$!sip:+1@d.net!", "."), "flags 'x'"),
        (NAPTR(100, 10, "u", "E2U+fax", "!^.*$!sip:+1@d.net!", "."), "not one imsdr publishes"),
        (NAPTR(100, 10, "u", "E2U sip", "!^.*$!sip:+1@d.net!", "."), "syntax"),
        (NAPTR(100, 10, "u", "E2U+sip", "", "."), "needs a regexp"),
        (NAPTR(100, 10, "u", "E2U+sip", "!^.*$!mailto:a@d.net!", "."), "does not produce a sip: URI"),
        (NAPTR(100, 10, "u", "E2U+sip", "!^.*$!sip:\\1@d.net!", "."), "back-reference \\1"),
        (NAPTR(100, 10, "u", "E2U+sip", "!^.*$sip:x", "."), "three"),
        (NAPTR(100, 10, "u", "E2U+sip", "!^(.*$!sip:x!", "."), "does not compile"),
        (NAPTR(10, 10, "s", "SIP+D2U", "", "."), "needs a replacement"),
        (NAPTR(10, 10, "s", "SIP+D2U", "!a!b!", "_sip._udp.x.net"), "both a regexp and a replacement"),
        (NAPTR(10, 10, "s", "SIP+D2U", "", "sip.x.net"), "should be an SRV name"),
        (NAPTR(70000, 10, "s", "SIP+D2U", "", "_sip._udp.x.net"), "order 70000"),
    ],
)
def test_naptr_validation_refuses_with_a_reason(naptr: NAPTR, expected: str) -> None:
    problems = naptr.problems()
    assert any(expected in p for p in problems), problems


def test_regexp_delimiter_rules() -> None:
    assert regexp_problems("") == []
    assert "reserved" in regexp_problems("1^.*$1x1")[0]
    assert regexp_problems("#^(.*)$#sip:\\1@x.net#") == []


def test_srv_and_address_validation() -> None:
    assert SRV(10, 100, 5060, "a.x.net").problems() == []
    assert any("port 0" in p for p in SRV(10, 100, 0, "a.x.net").problems())
    assert any("0..65535" in p for p in SRV(10, 70000, 5060, "a.x.net").problems())
    assert A("192.0.2.1").problems() == [] and A("2001:db8::1").problems()
    assert AAAA("2001:db8::1").problems() == [] and AAAA("192.0.2.1").problems()
    rrset = RRset("s.x.net", "SRV", 60, (SRV(0, 0, 0, "."), SRV(10, 1, 5060, "a.x.net")))
    assert any("must be the only record" in p for p in rrset.problems())
    dup = RRset("a.x.net", "A", 60, (A("192.0.2.1"), A("192.0.2.1")))
    assert any("listed twice" in p for p in dup.problems())


def test_serial_rule() -> None:
    day = dt.date(2026, 11, 29)
    assert choose_serial("sha256:a", None, day=day) == 2026112900
    assert (
        choose_serial("sha256:a", Previous("sha256:a", 2026010105), day=day) == 2026010105
    )  # unchanged: kept
    assert (
        choose_serial("sha256:b", Previous("sha256:a", 2026010105), day=day) == 2026112900
    )  # changed: today
    assert choose_serial("sha256:b", Previous("sha256:a", 2026112907), day=day) == 2026112908  # changed: +1
    assert choose_serial("sha256:b", Previous("sha256:a", 5), forced=42, day=day) == 42
    with pytest.raises(RenderError):
        choose_serial("sha256:b", Previous("sha256:a", 2**32 - 1), day=day)


def test_dispatcher_priority_is_inverted_from_srv() -> None:
    # SRV: lowest number first; dispatcher (algorithm 8): highest value first
    assert ds_priorities([10, 20, 30]) == [30, 20, 10]
    assert ds_priorities([20, 10, 10]) == [10, 20, 20]
    assert ds_priorities([0, 1]) == [20, 10]


def test_dispatcher_weights_are_percent_of_set() -> None:
    class Cap:
        def __init__(self, users: int | None) -> None:
            self.registered_users = users
            self.sessions = None

    class El:
        def __init__(self, users: int | None) -> None:
            self.capacity = Cap(users)
            self.type = type("T", (), {"value": "pcscf"})()

    weights = percent_weights([El(3000), El(1000)])  # type: ignore[list-item]
    assert sum(weights) == 100 and weights[0] > weights[1] and all(1 <= w <= 100 for w in weights)
    assert percent_weights([El(1), El(1), El(1)]) in ([34, 33, 33],)  # type: ignore[list-item]
    assert sum(percent_weights([El(None), El(5)])) == 100  # type: ignore[list-item]
