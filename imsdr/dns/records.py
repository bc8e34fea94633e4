"""The DNS record model: small frozen values that check themselves and say why.

Like octoDNS records, every rdata and rrset has ``problems()`` returning a list of reasons
(never raising), so a whole plan can be linted and refused at once. ``to_text()`` writes the
rdata in BIND master-file syntax; names are written absolute (with the trailing dot).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import ClassVar

from imsdr.dns.names import name_problems

# Fixed order of record types inside one owner name in every zone file.
TYPE_ORDER: tuple[str, ...] = ("SOA", "NS", "NAPTR", "SRV", "CNAME", "A", "AAAA")

# NAPTR services imsdr publishes (RFC 3263 §4.1, RFC 6116 / RFC 3764).
KNOWN_SERVICES = frozenset({"SIP+D2U", "SIP+D2T", "SIPS+D2T", "SIP+D2S", "SIPS+D2S", "E2U+sip"})
_SERVICE_RE = re.compile(r"[A-Za-z][A-Za-z0-9]{0,31}(?:\+[A-Za-z0-9][A-Za-z0-9:._-]{0,31})*")
_U16 = range(0, 65536)
_U32 = range(0, 2**32)


def _absolute(name: str) -> str:
    return "." if name in ("", ".") else name + "."


def quote(text: str) -> str:
    """A master-file <character-string>: backslash and double quote escaped (RFC 1035 §5.1)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _target_problems(what: str, target: str, allow_root: bool = False) -> list[str]:
    if target == ".":
        return [] if allow_root else [f"{what} '.' is not allowed here"]
    return [f"{what}: {p}" for p in name_problems(target)]


@dataclass(frozen=True, slots=True)
class A:
    address: str
    rdtype: ClassVar[str] = "A"

    def problems(self) -> list[str]:
        try:
            ok = isinstance(ipaddress.ip_address(self.address), ipaddress.IPv4Address)
        except ValueError:
            ok = False
        return [] if ok else [f"A record needs an IPv4 address, got {self.address!r}"]

    def to_text(self) -> str:
        return self.address


@dataclass(frozen=True, slots=True)
class AAAA:
    address: str
    rdtype: ClassVar[str] = "AAAA"

    def problems(self) -> list[str]:
        try:
            ok = isinstance(ipaddress.ip_address(self.address), ipaddress.IPv6Address)
        except ValueError:
            ok = False
        return [] if ok else [f"AAAA record needs an IPv6 address, got {self.address!r}"]

    def to_text(self) -> str:
        text = _AAAA_TEXT.get(self.address)
        if text is None:  # parse and compress once per distinct address, not once per record written
            text = _AAAA_TEXT[self.address] = ipaddress.IPv6Address(self.address).compressed
        return text


# address as given -> compressed text; bounded by the distinct addresses of one run (the inventory's)
_AAAA_TEXT: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class NS:
    target: str
    rdtype: ClassVar[str] = "NS"

    def problems(self) -> list[str]:
        return _target_problems("NS target", self.target)

    def to_text(self) -> str:
        return _absolute(self.target)


@dataclass(frozen=True, slots=True)
class CNAME:
    target: str
    rdtype: ClassVar[str] = "CNAME"

    def problems(self) -> list[str]:
        return _target_problems("CNAME target", self.target)

    def to_text(self) -> str:
        return _absolute(self.target)


@dataclass(frozen=True, slots=True)
class SOA:
    mname: str
    rname: str
    serial: int
    refresh: int = 3600
    retry: int = 600
    expire: int = 1209600
    minimum: int = 300
    rdtype: ClassVar[str] = "SOA"

    def problems(self) -> list[str]:
        out = _target_problems("SOA MNAME", self.mname) + _target_problems("SOA RNAME", self.rname)
        for field in ("serial", "refresh", "retry", "expire", "minimum"):
            if getattr(self, field) not in _U32:
                out.append(f"SOA {field} {getattr(self, field)} is outside 0..4294967295")
        if self.retry >= self.refresh:
            out.append(f"SOA retry {self.retry} should be shorter than refresh {self.refresh}")
        if self.expire <= self.refresh:
            out.append(f"SOA expire {self.expire} must be longer than refresh {self.refresh}")
        return out

    def to_text(self) -> str:
        return (
            f"{_absolute(self.mname)} {_absolute(self.rname)} {self.serial} "
            f"{self.refresh} {self.retry} {self.expire} {self.minimum}"
        )


@dataclass(frozen=True, slots=True)
class SRV:
    priority: int
    weight: int
    port: int
    target: str
    rdtype: ClassVar[str] = "SRV"

    def problems(self) -> list[str]:
        out = []
        for field in ("priority", "weight", "port"):
            if getattr(self, field) not in _U16:
                out.append(f"SRV {field} {getattr(self, field)} is outside 0..65535")
        if self.target != "." and self.port == 0:
            out.append("SRV port 0 with a real target")
        return out + _target_problems("SRV target", self.target, allow_root=True)

    def to_text(self) -> str:
        return f"{self.priority} {self.weight} {self.port} {_absolute(self.target)}"


def regexp_replacement(regexp: str) -> str | None:
    """The replacement part of a well-formed substitution expression (None when malformed)."""
    if regexp_problems(regexp) or not regexp:
        return None
    delim = regexp[0]
    body = regexp[1:-1] if regexp.endswith(delim) else regexp[1:-2]
    depth, i = 0, 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        if body[i] == delim:
            depth = i
            break
        i += 1
    return body[depth + 1 :]


def regexp_problems(regexp: str) -> list[str]:
    """RFC 3402 §3.2 substitution expression: delim ERE delim replacement delim [i]."""
    if not regexp:
        return []
    if any(not ch.isprintable() for ch in regexp):
        return ["NAPTR regexp contains a non-printable character"]
    delim = regexp[0]
    if delim.isdigit() or delim in "\\i":
        return [f"NAPTR regexp delimiter {delim!r} is not allowed (digits, '\\' and 'i' are reserved)"]
    parts: list[str] = []
    current = []
    i = 1
    while i < len(regexp):
        ch = regexp[i]
        if ch == "\\" and i + 1 < len(regexp):
            current.append(regexp[i : i + 2])
            i += 2
            continue
        if ch == delim:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    tail = "".join(current)
    if len(parts) != 2 or tail not in ("", "i"):
        return [
            f"NAPTR regexp {regexp!r} must be <delim>ERE<delim>replacement<delim> with exactly three "
            f"unescaped {delim!r} delimiters"
        ]
    ere, repl = parts
    try:
        groups = re.compile(ere).groups
    except re.error as exc:
        return [f"NAPTR regexp {regexp!r}: the pattern does not compile ({exc})"]
    out = []
    for ref in re.findall(r"\\([0-9])", repl):
        if int(ref) > groups:
            out.append(
                f"NAPTR regexp {regexp!r}: back-reference \\{ref} but the pattern has {groups} group(s)"
            )
    return out


@dataclass(frozen=True, slots=True)
class NAPTR:
    """RFC 3403 NAPTR. ``regexp`` is held unescaped; ``to_text`` escapes it for the master file."""

    order: int
    preference: int
    flags: str
    services: str
    regexp: str
    replacement: str
    rdtype: ClassVar[str] = "NAPTR"

    def problems(self) -> list[str]:
        out = []
        for field in ("order", "preference"):
            if getattr(self, field) not in _U16:
                out.append(f"NAPTR {field} {getattr(self, field)} is outside 0..65535")
        flags = self.flags.lower()
        if flags not in ("", "s", "a", "u"):
            out.append(
                f"NAPTR flags {self.flags!r}: imsdr writes only 's' (SRV next), 'a' (address next), "
                "'u' (terminal URI) or '' (non-terminal)"
            )
        if not _SERVICE_RE.fullmatch(self.services):
            out.append(f"NAPTR services {self.services!r} is not 'protocol+resolution service' syntax")
        elif self.services not in KNOWN_SERVICES:
            out.append(
                f"NAPTR services {self.services!r} is not one imsdr publishes "
                f"({', '.join(sorted(KNOWN_SERVICES))})"
            )
        if self.regexp and self.replacement != ".":
            out.append("NAPTR has both a regexp and a replacement; RFC 3403 allows only one")
        if flags == "u":
            if not self.regexp:
                out.append("NAPTR flag 'u' (terminal URI) needs a regexp")
            if self.replacement != ".":
                out.append("NAPTR flag 'u' needs replacement '.'")
            repl = regexp_replacement(self.regexp)
            if self.services == "E2U+sip" and repl is not None and not repl.startswith("sip:"):
                out.append(f"E2U+sip regexp {self.regexp!r} does not produce a sip: URI")
        if flags in ("s", "a", "") and self.replacement == "." and not self.regexp:
            out.append(f"NAPTR flag {self.flags!r} needs a replacement name")
        if flags in ("s", "a") and self.regexp:
            out.append(f"NAPTR flag {self.flags!r} takes a replacement, not a regexp")
        if flags == "s" and self.replacement != "." and not self.replacement.startswith("_"):
            out.append(
                f"NAPTR flag 's' replacement {self.replacement!r} should be an SRV name (_service._proto...)"
            )
        out.extend(regexp_problems(self.regexp))
        out.extend(_target_problems("NAPTR replacement", self.replacement, allow_root=True))
        return out

    def to_text(self) -> str:
        return (
            f"{self.order} {self.preference} {quote(self.flags)} {quote(self.services)} "
            f"{quote(self.regexp)} {_absolute(self.replacement)}"
        )


Rdata = A | AAAA | NS | CNAME | SOA | SRV | NAPTR


@dataclass(frozen=True, slots=True)
class RRset:
    """All records of one type at one name, with one TTL, in answer order."""

    name: str
    rdtype: str
    ttl: int
    rdatas: tuple[Rdata, ...]

    def problems(self, memo: dict[object, list[str]] | None = None) -> list[str]:
        """Reasons this rrset cannot be written; ``memo`` caches each rdata's own problems."""
        out = [f"{self.name}: {p}" for p in name_problems(self.name)]
        if self.ttl not in range(0, 2**31):
            out.append(f"{self.name} {self.rdtype}: TTL {self.ttl} is outside 0..2147483647")
        if not self.rdatas:
            out.append(f"{self.name} {self.rdtype}: empty record set")
        if self.rdtype not in TYPE_ORDER:
            out.append(f"{self.name}: record type {self.rdtype} is not one imsdr writes")
        rdtype = self.rdtype
        for rd in self.rdatas:
            if rd.rdtype != rdtype:
                out.append(f"{self.name} {rdtype}: holds a {rd.rdtype} record")
            if memo is None:
                found = rd.problems()
            else:
                found = memo.get(rd)  # type: ignore[assignment]
                if found is None:
                    found = memo[rd] = rd.problems()
            if found:  # (most rdatas have none: no generator for them)
                out.extend(f"{self.name} {rdtype}: {p}" for p in found)
        if len(set(self.rdatas)) != len(self.rdatas):
            out.append(f"{self.name} {self.rdtype}: a record is listed twice")
        if self.rdtype in ("SOA", "CNAME") and len(self.rdatas) > 1:
            out.append(f"{self.name}: only one {self.rdtype} record is allowed at a name")
        if self.rdtype == "SRV" and any(r.target == "." for r in self.rdatas) and len(self.rdatas) > 1:  # type: ignore[union-attr]
            out.append(f"{self.name}: SRV target '.' (no service) must be the only record")
        if "*" in self.name.split(".")[1:]:
            out.append(f"{self.name}: '*' is only allowed as the leftmost label")
        return out


def dnspython_check(rrset_line_rdata: str, rdtype: str, origin: str) -> str | None:
    """Parse one rdata written by ``to_text`` with dnspython; the reason it fails, or None."""
    import dns.exception
    import dns.name
    import dns.rdata
    import dns.rdataclass
    import dns.rdatatype

    try:
        dns.rdata.from_text(
            dns.rdataclass.IN,
            dns.rdatatype.from_text(rdtype),
            rrset_line_rdata,
            origin=dns.name.from_text(origin),
        )
    except (dns.exception.DNSException, ValueError) as exc:
        return f"dnspython cannot parse {rdtype} {rrset_line_rdata!r}: {exc}"
    return None
