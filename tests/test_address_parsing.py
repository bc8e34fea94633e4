"""`parse_address` reads with the C parser first: it must agree with `ipaddress` on every text."""

from __future__ import annotations

import ipaddress

from hypothesis import example, given, settings
from hypothesis import strategies as st

from imsdr.inventory.schema import _PLAIN_ADDRESS, _check_ip, canonical_address, parse_address


def _ipaddress_reading(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _our_reading(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return parse_address(text)
    except ValueError:
        return None


# near-addresses: the characters of both notations, in any order and count
_NEAR = st.text(alphabet="0123456789abcdefABCDEF:.", max_size=46)
# real addresses written in the spellings people use: compressed, exploded, upper case, an
# embedded IPv4 tail, leading zeros in a group
_OCTET = st.sampled_from(["0", "00", "01", "1", "255", "256", "010"])
_V6 = st.builds(lambda n: ipaddress.IPv6Address(n), st.integers(0, 2**128 - 1))
_SPELLED = st.one_of(
    st.builds(lambda a: str(a), _V6),
    st.builds(lambda a: a.exploded, _V6),
    st.builds(lambda a: str(a).upper(), _V6),
    st.builds(lambda a, v4: f"{str(a).rsplit(':', 2)[0]}:{v4}" if str(a).count(":") >= 2 else str(a), _V6,
              st.builds(lambda n: str(ipaddress.IPv4Address(n)), st.integers(0, 2**32 - 1))),
    st.builds(lambda n: str(ipaddress.IPv4Address(n)), st.integers(0, 2**32 - 1)),
    st.builds(lambda a, b, c, d: f"{a}.{b}.{c}.{d}", *[_OCTET] * 4),
)


@settings(max_examples=600)
@given(st.one_of(_NEAR, _SPELLED))
@example("::ffff:01.2.3.4")
@example("1:2:3:4:5:6:7::")
@example("0001::")
@example("1.2.3.04")
def test_parse_address_agrees_with_ipaddress(text: str) -> None:
    ours, theirs = _our_reading(text), _ipaddress_reading(text)
    if _PLAIN_ADDRESS.fullmatch(text):
        assert ours == theirs and type(ours) is type(theirs)
    else:  # the schema's own rule: plain notation only
        assert ours is None


@settings(max_examples=600)
@given(st.one_of(_V6, st.builds(lambda n: ipaddress.IPv6Address(n), st.integers(0, 2**48)),
                 st.builds(lambda n: ipaddress.IPv6Address((0xFFFF << 32) | n), st.integers(0, 2**32 - 1)),
                 st.builds(lambda hi, lo: ipaddress.IPv6Address((hi << 64) | lo), st.sampled_from([0, 1, 2**63]),
                           st.sampled_from([0, 1, 2**32, 2**48 - 1])),
                 st.builds(lambda n: ipaddress.IPv4Address(n), st.integers(0, 2**32 - 1))))
@example(ipaddress.IPv6Address("1:0:0:1:0:0:0:1"))
@example(ipaddress.IPv6Address("1:0:1:0:1:0:1:0"))
@example(ipaddress.IPv6Address("::ffff:0:0"))
def test_canonical_address_is_ipaddress_text(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> None:
    assert canonical_address(address) == str(address)


@settings(max_examples=600)
@given(st.one_of(_NEAR, _SPELLED, st.text(alphabet="0123456789. %x-", max_size=20)))
@example("1.2.3.04")
@example(" 1.2.3.4")
def test_an_address_field_holds_ipaddress_text(text: str) -> None:
    """What an address field keeps: ipaddress's text of a plain address; anything else refused."""
    try:
        kept = _check_ip(text)
    except ValueError:
        kept = None
    theirs = _ipaddress_reading(text)
    assert kept == (str(theirs) if theirs is not None and _PLAIN_ADDRESS.fullmatch(text) else None)


@settings(max_examples=800)
@given(st.text(alphabet="ab0-.A_", max_size=70) | st.builds(lambda n: "a." * n + "b", st.integers(100, 130)))
def test_a_dns_name_is_accepted_by_one_match_exactly_when_every_label_is_valid(text: str) -> None:
    from imsdr.inventory.schema import _check_dns_name, _dns_name_problem

    name = text[:-1] if text.endswith(".") else text
    try:
        accepted = _check_dns_name(text) == name
    except ValueError as exc:
        assert str(exc) == _dns_name_problem(text, name)
        accepted = False
    assert accepted == (_dns_name_problem(text, name) is None)
