"""The DNS record model: small frozen values that check themselves and say why.

Like octoDNS records, every rdata and rrset has ``problems()`` returning a list of reasons
(never raising), so a whole plan can be linted and refused at once. ``to_text()`` writes the
rdata in BIND master-file syntax; names are written absolute (with the trailing dot).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from imsdr.dns.names import name_problems
from imsdr.inventory.addresses import ipv6_text

# Fixed order of record types inside one owner name in every zone file.
TYPE_ORDER: tuple[str, ...] = ("SOA", "NS", "NAPTR", "SRV", "CNAME", "A", "AAAA")

# NAPTR services imsdr publishes (RFC 3263 §4.1, RFC 6116 / RFC 3764; RFC 4769 for ported numbers).
KNOWN_SERVICES = frozenset({"SIP+D2U", "SIP+D2T", "SIPS+D2T", "SIP+D2S", "SIPS+D2S", "E2U+sip", "E2U+pstn:tel"})
_SERVICE_RE = re.compile(r"[A-Za-z][A-Za-z0-9]{0,31}(?:\+[A-Za-z0-9][A-Za-z0-9:._-]{0,31})*")
_U16 = range(0, 65536)
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_DOTTED_QUAD = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}", re.ASCII)  # an IPv4 address as ipaddress writes it
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
        ok = bool(_DOTTED_QUAD.fullmatch(self.address))  # (the usual spelling, without parsing it)
        if not ok:
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
        ok = _ipv6_packed(self.address) is not None
        return [] if ok else [f"AAAA record needs an IPv6 address, got {self.address!r}"]

    def to_text(self) -> str:
        """The address as ipaddress compresses it (``IPv6Address(address).compressed``)."""
        packed = _ipv6_packed(self.address) if "%" not in self.address else None
        return ipv6_text(packed) if packed is not None else ipaddress.IPv6Address(self.address).compressed


def _ipv6_packed(text: str) -> bytes | None:
    """``text`` as the 16 bytes of an IPv6 address, None when ipaddress would refuse it. The C
    parser first (ipaddress's costs ~10 µs an address, a national plan has thousands): what it
    accepts, ipaddress accepts as the same address (a property test holds the two together);
    what it refuses (a zone index '%...', anything malformed), ipaddress decides."""
    try:
        return socket.inet_pton(socket.AF_INET6, text)
    except (OSError, ValueError):  # (ValueError: a NUL or a lone surrogate in the text)
        pass
    try:
        return ipaddress.IPv6Address(text).packed
    except ValueError:
        return None


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
            if self.services == "E2U+pstn:tel" and repl is not None and not repl.startswith("tel:"):
                out.append(f"E2U+pstn:tel regexp {self.regexp!r} does not produce a tel: URI (RFC 4769)")
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
        flags, services, regexp, replacement = self.flags, self.services, self.regexp, self.replacement
        # (most records, every provisioned number's: nothing to escape, quoted without a call each)
        if "\\" in regexp or '"' in regexp or "\\" in services or '"' in services or "\\" in flags or '"' in flags:
            flags, services, regexp = quote(flags)[1:-1], quote(services)[1:-1], quote(regexp)[1:-1]
        return (f'{self.order} {self.preference} "{flags}" "{services}" "{regexp}" '
                f'{"." if replacement in ("", ".") else replacement + "."}')


Rdata = A | AAAA | NS | CNAME | SOA | SRV | NAPTR


@dataclass(frozen=True, slots=True)
class RRset:
    """All records of one type at one name, with one TTL, in answer order."""

    name: str
    rdtype: str
    ttl: int
    rdatas: tuple[Rdata, ...]

    def problems(self, memo: RecordChecks | None = None) -> list[str]:
        """Reasons this rrset cannot be written; ``memo`` (one lint run's) remembers what was
        already worked out: each name's problems, each rdata's, and those of each tuple of rdatas."""
        name, rdtype = self.name, self.rdtype
        if memo is None:
            leading, trailing = _name_checks(name)
            content = self._content_problems(None)
        else:
            found = memo.names.get(name)
            if found is None:
                found = memo.names[name] = _name_checks(name)
            leading, trailing = found
            if len(self.rdatas) == 1:  # (most rrsets: one address; its record is remembered)
                content = memo.content_problems(self)
            else:
                key = (rdtype, id(self.rdatas))
                hit = memo.contents.get(key)
                if hit is None or hit[0] is not self.rdatas:  # (the tuple is held: its id is not reused)
                    hit = memo.contents[key] = (self.rdatas, memo.content_problems(self))
                content = hit[1]
        if not (leading or trailing or content) and self.ttl in _TTL_RANGE:
            return []
        out = [f"{name}: {p}" for p in leading]
        if self.ttl not in _TTL_RANGE:
            out.append(f"{name} {rdtype}: TTL {self.ttl} is outside 0..2147483647")
        out.extend(f"{name} {rdtype}: {text}" if typed else f"{name}: {text}" for typed, text in content)
        out.extend(f"{name}: {p}" for p in trailing)
        return out

    def _content_problems(self, memo: RecordChecks | None) -> list[tuple[bool, str]]:
        """The problems of the type and records, whatever the owner name: (after "NAME TYPE: "
        when True, after "NAME: " when False, message)."""
        rdtype = self.rdtype
        rdatas = self.rdatas
        out: list[tuple[bool, str]] = []
        if not rdatas:
            out.append((True, "empty record set"))
        if rdtype not in TYPE_ORDER:
            out.append((False, f"record type {rdtype} is not one imsdr writes"))
        for rd in rdatas:
            if rd.rdtype != rdtype:
                out.append((True, f"holds a {rd.rdtype} record"))
            found = rd.problems() if memo is None else memo.rdata_problems(rd)
            if found:  # (most rdatas have none: no generator for them)
                out.extend((True, p) for p in found)
        if len(set(rdatas)) != len(rdatas):
            out.append((True, "a record is listed twice"))
        if rdtype in ("SOA", "CNAME") and len(rdatas) > 1:
            out.append((False, f"only one {rdtype} record is allowed at a name"))
        if rdtype == "SRV" and any(isinstance(r, SRV) and r.target == "." for r in rdatas) and len(rdatas) > 1:
            out.append((False, "SRV target '.' (no service) must be the only record"))
        return out


_TTL_RANGE = range(0, 2**31)


class RecordMaker:
    """NAPTR and RRset values for bulk input (an ENUM exceptions file: hundreds of thousands of
    each): the objects the classes' own constructors make (equal, hashing alike; neither class
    has defaults or ``__post_init__``), their slots set directly instead of through the frozen
    classes' per-field ``object.__setattr__``. One per bulk job; it keeps no records."""

    __slots__ = ("_naptr", "_rrset")

    def __init__(self) -> None:
        def setters(cls: type, fields: tuple[str, ...]) -> tuple[Callable[[object, object], None], ...]:
            return tuple(cls.__dict__[f].__set__ for f in fields)

        self._naptr = setters(NAPTR, ("order", "preference", "flags", "services", "regexp", "replacement"))
        self._rrset = setters(RRset, ("name", "rdtype", "ttl", "rdatas"))

    def naptr(self, order: int, preference: int, flags: str, services: str, regexp: str,
              replacement: str) -> NAPTR:
        rd = object.__new__(NAPTR)
        s_order, s_preference, s_flags, s_services, s_regexp, s_replacement = self._naptr
        s_order(rd, order)
        s_preference(rd, preference)
        s_flags(rd, flags)
        s_services(rd, services)
        s_regexp(rd, regexp)
        s_replacement(rd, replacement)
        return rd

    def rrset(self, name: str, rdtype: str, ttl: int, rdatas: tuple[Rdata, ...]) -> RRset:
        out = object.__new__(RRset)
        s_name, s_rdtype, s_ttl, s_rdatas = self._rrset
        s_name(out, name)
        s_rdtype(out, rdtype)
        s_ttl(out, ttl)
        s_rdatas(out, rdatas)
        return out


def _name_checks(name: str) -> tuple[list[str], list[str]]:
    """The problems of an owner name: (reported first, reported last) in ``RRset.problems``."""
    trailing = ["'*' is only allowed as the leftmost label"] if "*" in name.split(".")[1:] else []
    return name_problems(name), trailing


class RecordChecks:
    """One lint run's memo for :meth:`RRset.problems`: each owner name's problems, each rdata's
    and the problems of each tuple of rdatas. Records and tuples are known by identity (the plan
    shares one record object between the rrsets and views that hold it, and one tuple between
    the names that answer the same records, e.g. an SRV set of hundreds of I-CSCFs under both
    ``_sip._udp`` and ``_sip._tcp``); the memo holds each object, so its id is not reused."""

    __slots__ = ("contents", "faulty", "hashes", "names", "rdatas", "roots")

    def __init__(self) -> None:
        self.rdatas: dict[int, Rdata] = {}  # id -> the rdata (every one seen)
        self.hashes: dict[int, int] = {}  # id -> hash of the rdata (equal rdatas hash alike)
        self.faulty: dict[int, list[str]] = {}  # id -> problems, for the rdatas that have some
        self.roots: dict[int, Rdata] = {}  # id -> SRV record with the target '.' (no service)
        self.names: dict[str, tuple[list[str], list[str]]] = {}
        # (type, id(rdatas)) -> (that tuple, its problems)
        self.contents: dict[tuple[str, int], tuple[tuple[Rdata, ...], list[tuple[bool, str]]]] = {}

    def rdata_problems(self, rd: Rdata) -> list[str]:
        self._learn(rd)
        return self.faulty.get(id(rd), [])

    def _learn(self, rd: Rdata) -> None:
        if id(rd) not in self.rdatas:
            self.rdatas[id(rd)] = rd
            self.hashes[id(rd)] = hash(rd)
            found = rd.problems()
            if found:
                self.faulty[id(rd)] = found
            if isinstance(rd, SRV) and rd.target == ".":
                self.roots[id(rd)] = rd

    def content_problems(self, rrset: RRset) -> list[tuple[bool, str]]:
        """``rrset._content_problems``, with set operations over record ids instead of a step per
        record when every record is of the rrset's type and has no problem, and none is twice
        (the usual case, for SRV sets of hundreds of records)."""
        rdatas = rrset.rdatas
        if len(rdatas) == 1:  # (most rrsets: one address)
            rd = rdatas[0]
            self._learn(rd)
            if rd.rdtype == rrset.rdtype and id(rd) not in self.faulty and rrset.rdtype in TYPE_ORDER:
                return []
            return rrset._content_problems(self)
        ids = list(map(id, rdatas))
        unique = set(ids)
        if not self.rdatas.keys() >= unique:
            for rd in rdatas:
                self._learn(rd)
        if (not rdatas or rrset.rdtype not in TYPE_ORDER or not self.faulty.keys().isdisjoint(unique)
                or any(kind.rdtype != rrset.rdtype for kind in set(map(type, rdatas)))
                or len(set(map(self.hashes.__getitem__, ids))) != len(ids)  # (equal records hash alike)
                or (rrset.rdtype in ("SOA", "CNAME") and len(rdatas) > 1)):
            return rrset._content_problems(self)
        if not self.roots.keys().isdisjoint(unique):  # an SRV '.' among others
            return rrset._content_problems(self)
        return []


def dnspython_check(rrset_line_rdata: str, rdtype: str, origin: str) -> str | None:
    """Parse one rdata written by ``to_text`` with dnspython; the reason it fails, or None."""
    return dnspython_parse(rrset_line_rdata, rdtype, origin)[1]


def dnspython_parse(rrset_line_rdata: str, rdtype: str, origin: str) -> tuple[object, str | None]:
    """(dnspython's rdata, None), or (None, the reason it cannot parse the text ``to_text`` wrote)."""
    import dns.exception
    import dns.name
    import dns.rdata
    import dns.rdataclass
    import dns.rdatatype

    try:
        parsed = dns.rdata.from_text(
            dns.rdataclass.IN,
            dns.rdatatype.from_text(rdtype),
            rrset_line_rdata,
            origin=dns.name.from_text(origin),
        )
    except (dns.exception.DNSException, ValueError) as exc:
        return None, f"dnspython cannot parse {rdtype} {rrset_line_rdata!r}: {exc}"
    return parsed, None
