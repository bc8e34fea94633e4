"""Offline RFC 3263 resolution (NAPTR → SRV → A/AAAA) with ENUM in front, over a lookup function.

The resolver is pure: it reads records through ``lookup(qname, rdtype) -> RRset | None`` (one
view's authoritative data, see :mod:`imsdr.resolve.source`) and returns a :class:`Resolution`
holding every lookup it made (the trail) and the ordered candidate targets.

What it implements, for a SIP URI ``sip:``/``sips:`` (a bare domain is read as ``sip:<domain>``):

1. numeric host → that address, port from the URI or the transport's default;
2. port in the URI → A/AAAA of the host (no NAPTR, no SRV);
3. ``transport=`` parameter → SRV of that transport, else A/AAAA;
4. otherwise NAPTR of the host: keep records whose service the client supports (``SIP+D2U``,
   ``SIP+D2T``, ``SIPS+D2T``, ``SIP+D2S``; only ``SIPS+`` ones for a ``sips:`` URI) and flag ``s``;
   take the lowest *order* (never another order value), then the lowest *preference* whose SRV
   lookup returns records; the others of that order are kept as alternatives;
5. no usable NAPTR → SRV for each supported transport in the client's preference order
   (``_sip._udp``, ``_sip._tcp``, ``_sips._tcp``; ``_sips._tcp`` only for ``sips:``);
6. no SRV → A/AAAA of the host, default port and transport (UDP for ``sip:``, TLS for ``sips:``).

An E.164 number (``+86…``) is first looked up in ENUM (NAPTR ``E2U+sip``, flag ``u``, RFC 6116),
and resolution continues with the SIP URI its regexp yields. CNAMEs are followed (at most 8).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import dns.exception
import dns.name
import dns.rdatatype
import dns.rrset

from imsdr.model.rfc2782 import Arrangement, SrvRecord, is_no_service, rank
from imsdr.resolve.enum import EnumError, apply_regexp, enum_domain, is_e164, normalise_e164

Lookup = Callable[[dns.name.Name, dns.rdatatype.RdataType], dns.rrset.RRset | None]

MAX_CNAME = 8
MAX_ENUM_HOPS = 5
RDTYPES = ("auto", "NAPTR", "SRV", "A", "AAAA")


@dataclass(frozen=True, slots=True)
class TransportInfo:
    name: str
    naptr_service: str
    srv_prefix: str
    default_port: int
    secure: bool


TRANSPORTS: dict[str, TransportInfo] = {
    "udp": TransportInfo("udp", "SIP+D2U", "_sip._udp", 5060, False),
    "tcp": TransportInfo("tcp", "SIP+D2T", "_sip._tcp", 5060, False),
    "tls": TransportInfo("tls", "SIPS+D2T", "_sips._tcp", 5061, True),
    "sctp": TransportInfo("sctp", "SIP+D2S", "_sip._sctp", 5060, False),
}
_BY_SERVICE = {t.naptr_service: t for t in TRANSPORTS.values()}
_BY_PREFIX = {t.srv_prefix: t for t in TRANSPORTS.values()}
DEFAULT_CLIENT = ("udp", "tcp", "tls")


class ResolveError(ValueError):
    """The query itself is unusable (bad URI, transport not allowed for the scheme)."""


@dataclass(frozen=True, slots=True)
class SipUri:
    scheme: str
    user: str | None
    host: str
    port: int | None
    transport: str | None

    @property
    def host_is_ip(self) -> bool:
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return False
        return True


_URI = re.compile(
    r"(?P<scheme>sips?):(?:(?P<user>[^@;?]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^:;?]+)(?::(?P<port>[0-9]{1,5}))?"
    r"(?P<params>;[^?]*)?(?:\?.*)?",
    re.IGNORECASE,
)


def parse_uri(text: str) -> SipUri:
    match = _URI.fullmatch(text.strip())
    if not match:
        raise ResolveError(f"not a SIP URI: {text!r}")
    host = match["host"].strip("[]").rstrip(".").lower()
    port = int(match["port"]) if match["port"] else None
    if port is not None and not 1 <= port <= 65535:
        raise ResolveError(f"port {port} out of range in {text!r}")
    transport = None
    for param in (match["params"] or "").split(";"):
        key, _, value = param.partition("=")
        if key.lower() == "transport" and value:
            transport = value.lower()
    if transport is not None and transport not in TRANSPORTS:
        raise ResolveError(f"unsupported transport={transport} in {text!r}")
    return SipUri(match["scheme"].lower(), match["user"], host, port, transport)


@dataclass
class Step:
    """One lookup of the trail: what was asked and what came back."""

    qname: str
    rdtype: str
    records: list[str]
    ttl: int | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"qname": self.qname, "type": self.rdtype, "records": self.records, "ttl": self.ttl,
                "note": self.note}


@dataclass
class Candidate:
    """One target a client may contact, in trial order."""

    target: str
    port: int | None
    transport: str | None
    priority: int | None = None
    weight: int | None = None
    p_first: Fraction = Fraction(1)
    p_first_in_priority: Fraction = Fraction(1)
    addresses: list[str] = field(default_factory=list)
    element: str | None = None
    site: str | None = None

    def to_dict(self, rank_: int) -> dict[str, Any]:
        return {
            "rank": rank_, "target": self.target, "port": self.port, "transport": self.transport,
            "priority": self.priority, "weight": self.weight,
            "p_first": round(float(self.p_first), 6), "p_first_exact": str(self.p_first),
            "p_first_in_priority": round(float(self.p_first_in_priority), 6),
            "p_first_in_priority_exact": str(self.p_first_in_priority),
            "addresses": self.addresses, "element": self.element, "site": self.site,
        }


@dataclass
class Resolution:
    query: str
    rdtype: str
    transport: str | None
    view: str | None = None
    source: str | None = None
    enum_domain: str | None = None
    enum_naptr: str | None = None
    uri: str | None = None
    naptr: str | None = None
    alternatives: list[str] = field(default_factory=list)
    srv_name: str | None = None
    steps: list[Step] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    reason: str | None = None

    @property
    def resolved(self) -> bool:
        return any(c.addresses for c in self.candidates)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query, "type": self.rdtype, "transport": self.transport, "view": self.view,
            "source": self.source, "enum_domain": self.enum_domain,
            "enum_naptr": self.enum_naptr, "uri": self.uri,
            "naptr": self.naptr, "naptr_alternatives": self.alternatives, "srv_name": self.srv_name,
            "steps": [s.to_dict() for s in self.steps],
            "candidates": [c.to_dict(i + 1) for i, c in enumerate(self.candidates)],
            "resolved": self.resolved, "reason": self.reason,
        }


def _absolute(name: str) -> dns.name.Name:
    try:
        return dns.name.from_text(name.rstrip(".") + ".")
    except dns.exception.DNSException as exc:
        raise ResolveError(f"invalid DNS name {name!r}: {exc}") from None


def _text(name: dns.name.Name) -> str:
    return name.to_text(omit_final_dot=True)


class Rfc3263Resolver:
    """Resolves one query against one view's records; see the module docstring."""

    def __init__(self, lookup: Lookup, *, enum_suffix: str = "e164.arpa",
                 arrangement: Arrangement = "random") -> None:
        self._lookup = lookup
        self.enum_suffix = enum_suffix
        self.arrangement = arrangement

    # --- lookups with a trail ---------------------------------------------------------------

    def _query(self, res: Resolution, qname: dns.name.Name, rdtype: dns.rdatatype.RdataType
               ) -> tuple[dns.name.Name, dns.rrset.RRset | None]:
        """Look up ``qname``/``rdtype`` following CNAMEs; returns (final owner, rrset)."""
        name = qname
        for _ in range(MAX_CNAME + 1):
            rrset = self._lookup(name, rdtype)
            if rrset is not None and len(rrset):
                res.steps.append(Step(_text(name), dns.rdatatype.to_text(rdtype),
                                      sorted(rd.to_text() for rd in rrset), rrset.ttl))
                return name, rrset
            cname = None if rdtype == dns.rdatatype.CNAME else self._lookup(name, dns.rdatatype.CNAME)
            if cname is None or not len(cname):
                res.steps.append(Step(_text(name), dns.rdatatype.to_text(rdtype), [], None, "no records"))
                return name, None
            target = next(iter(cname)).target  # type: ignore[attr-defined]
            res.steps.append(Step(_text(name), "CNAME", [target.to_text()], cname.ttl, "alias followed"))
            name = target
        res.steps.append(Step(_text(qname), dns.rdatatype.to_text(rdtype), [], None, "CNAME chain too long"))
        return name, None

    def _addresses(self, res: Resolution, host: dns.name.Name,
                   types: tuple[str, ...] = ("A", "AAAA")) -> list[str]:
        out: list[str] = []
        for rdtype in types:
            _owner, rrset = self._query(res, host, dns.rdatatype.from_text(rdtype))
            if rrset is not None:
                out.extend(sorted((rd.address for rd in rrset), key=_ip_sort_key))  # type: ignore[attr-defined]
        return out

    # --- entry points ---------------------------------------------------------------------------

    def resolve(self, query: str, rdtype: str = "auto", transport: str | None = None) -> Resolution:
        rdtype = rdtype if rdtype == "auto" else rdtype.upper()
        if rdtype not in RDTYPES:
            raise ResolveError(f"unsupported type {rdtype!r} (expected one of {', '.join(RDTYPES)})")
        if transport is not None and transport not in TRANSPORTS:
            raise ResolveError(f"unsupported transport {transport!r}")
        res = Resolution(query=query, rdtype=rdtype, transport=transport)
        text = query.strip()
        if is_e164(text):
            uri = self._enum(res, normalise_e164(text))
            if uri is None:
                return res
            res.uri = uri
            text = uri
        if rdtype in ("A", "AAAA"):
            host = parse_uri(text).host if text.lower().startswith(("sip:", "sips:")) else text
            self._plain(res, host, rdtype)
        elif not text.lower().startswith(("sip:", "sips:")) and (
                rdtype == "SRV" or (rdtype == "auto" and is_srv_name(text))):
            self._srv_query(res, text, transport)
        else:
            uri_obj = parse_uri(text if text.lower().startswith(("sip:", "sips:")) else f"sip:{text}")
            self._sip(res, uri_obj, transport, naptr_only=rdtype == "NAPTR")
        if not res.resolved and res.reason is None:
            res.reason = "no target has an address"
        return res

    # --- ENUM -------------------------------------------------------------------------------------

    def _enum(self, res: Resolution, number: str) -> str | None:
        domain = enum_domain(number, self.enum_suffix)
        res.enum_domain = domain.rstrip(".")
        name = _absolute(domain)
        for _hop in range(MAX_ENUM_HOPS):
            _owner, rrset = self._query(res, name, dns.rdatatype.NAPTR)
            if rrset is None:
                res.reason = f"no ENUM NAPTR records for {number} at {_text(name)}"
                return None
            usable = sorted(
                (rd for rd in rrset if _enum_sip_service(rd.service)),  # type: ignore[attr-defined]
                key=lambda rd: (rd.order, rd.preference),  # type: ignore[attr-defined]
            )
            if not usable:
                res.reason = f"no E2U+sip NAPTR record for {number}"
                return None
            next_name = None
            for rd in usable:
                flags = rd.flags.decode().lower()  # type: ignore[attr-defined]
                if flags == "u":
                    try:
                        uri = apply_regexp(rd.regexp.decode(), number)  # type: ignore[attr-defined]
                    except EnumError as exc:
                        res.steps[-1].note = str(exc)
                        continue
                    if uri is not None:
                        res.enum_naptr = rd.to_text()
                        return uri
                elif flags == "" and rd.replacement != dns.name.root:  # type: ignore[attr-defined]
                    next_name = rd.replacement  # type: ignore[attr-defined]
                    break
            if next_name is None:
                res.reason = f"no E2U+sip NAPTR regexp of {number} matches"
                return None
            name = next_name
        res.reason = "ENUM NAPTR chain too long"
        return None

    # --- plain lookups ------------------------------------------------------------------------------

    def _plain(self, res: Resolution, host: str, rdtype: str) -> None:
        try:
            ipaddress.ip_address(host)
        except ValueError:
            pass
        else:
            res.candidates.append(Candidate(host, None, None, addresses=[host]))
            return
        addresses = self._addresses(res, _absolute(host), (rdtype,))
        res.candidates.append(Candidate(host.rstrip("."), None, None, addresses=addresses))
        if not addresses:
            res.reason = f"no {rdtype} records for {host}"

    def _srv_query(self, res: Resolution, text: str, transport: str | None) -> None:
        name = text.rstrip(".")
        labels = name.split(".")
        if labels[0].startswith("_"):
            prefix = ".".join(labels[:2])
            info = _BY_PREFIX.get(prefix.lower())
            if transport is not None and info is not None and info.name != transport:
                raise ResolveError(f"{name} is an SRV name for {info.name}, not {transport}")
            self._srv(res, _absolute(name), info)
            if not res.candidates and res.reason is None:
                res.reason = f"no SRV records at {name}"
            return
        for t in (transport,) if transport else DEFAULT_CLIENT:
            info = TRANSPORTS[t]
            if self._srv(res, _absolute(f"{info.srv_prefix}.{name}"), info):
                return
        if res.reason is None:
            res.reason = f"no SRV records for {name}"

    # --- SIP (RFC 3263) ---------------------------------------------------------------------------------

    def _supported(self, uri: SipUri, transport: str | None) -> list[TransportInfo]:
        names = [transport] if transport else list(DEFAULT_CLIENT)
        infos = [TRANSPORTS[n] for n in names]
        if uri.scheme == "sips":
            infos = [i for i in infos if i.secure]
            if not infos:
                raise ResolveError(f"a sips: URI needs a TLS transport, not {transport}")
        return infos

    def _sip(self, res: Resolution, uri: SipUri, transport: str | None, naptr_only: bool = False) -> None:
        supported = self._supported(uri, transport)
        default = TRANSPORTS["tls"] if uri.scheme == "sips" else supported[0]
        if uri.transport is not None:
            chosen = TRANSPORTS[uri.transport]
            if transport is not None and chosen.name != transport:
                raise ResolveError(f"the URI asks for transport={uri.transport}, not {transport}")
            if uri.scheme == "sips" and not chosen.secure and chosen.name != "tcp":
                raise ResolveError("a sips: URI cannot use transport=udp")
            default = TRANSPORTS["tls"] if uri.scheme == "sips" and chosen.name == "tcp" else chosen
        else:
            chosen = None
        if uri.host_is_ip:
            port = uri.port or default.default_port
            res.candidates.append(Candidate(uri.host, port, default.name, addresses=[uri.host]))
            return
        host = _absolute(uri.host)
        if uri.port is not None:
            self._a_fallback(res, host, uri.port, default)
            return
        if chosen is not None:
            if not self._srv(res, _absolute(f"{default.srv_prefix}.{uri.host}"), default):
                self._a_fallback(res, host, None, default)
            return
        if self._naptr(res, host, supported):
            return
        if naptr_only:
            if res.reason is None:
                res.reason = f"no usable NAPTR records at {uri.host}"
            return
        for info in supported:
            if self._srv(res, _absolute(f"{info.srv_prefix}.{uri.host}"), info):
                return
        self._a_fallback(res, host, None, default)

    def _naptr(self, res: Resolution, host: dns.name.Name, supported: list[TransportInfo]) -> bool:
        _owner, rrset = self._query(res, host, dns.rdatatype.NAPTR)
        if rrset is None:
            return False
        allowed = {i.naptr_service: i for i in supported}
        usable = [rd for rd in rrset
                  if rd.flags.decode().lower() == "s"  # type: ignore[attr-defined]
                  and rd.service.decode().upper() in allowed]  # type: ignore[attr-defined]
        if not usable:
            res.steps[-1].note = "no NAPTR record for a supported transport; trying SRV"
            return False
        lowest = min(rd.order for rd in usable)  # type: ignore[attr-defined]
        same_order = sorted((rd for rd in usable if rd.order == lowest),  # type: ignore[attr-defined]
                            key=lambda rd: (rd.preference, rd.to_text()))  # type: ignore[attr-defined]
        for i, rd in enumerate(same_order):
            info = allowed[rd.service.decode().upper()]  # type: ignore[attr-defined]
            if self._srv(res, rd.replacement, info):  # type: ignore[attr-defined]
                res.naptr = rd.to_text()
                res.alternatives = [other.to_text() for other in same_order[i + 1 :]]
                return True
            if res.reason is not None:  # "no service" SRV: the domain says no
                return True
        return False

    def _srv(self, res: Resolution, name: dns.name.Name, info: TransportInfo | None) -> bool:
        """SRV lookup and candidates; True when the SRV name exists (even as "no service")."""
        _owner, rrset = self._query(res, name, dns.rdatatype.SRV)
        if rrset is None:
            return False
        records = [SrvRecord(rd.priority, rd.weight, rd.port, _text(rd.target))  # type: ignore[attr-defined]
                   for rd in rrset]
        res.srv_name = _text(name)
        if is_no_service(records):
            res.reason = f"{_text(name)} says the service is not available (target '.')"
            return True
        for ranked in rank(records, self.arrangement):
            rec = ranked.record
            addresses = self._addresses(res, _absolute(rec.target))
            res.candidates.append(Candidate(
                rec.target, rec.port, info.name if info else None, rec.priority, rec.weight,
                ranked.p_first, ranked.p_first_in_priority, addresses))
        return True

    def _a_fallback(self, res: Resolution, host: dns.name.Name, port: int | None,
                    info: TransportInfo) -> None:
        addresses = self._addresses(res, host)
        if not addresses:
            res.reason = f"no A/AAAA records for {_text(host)}"
            return
        res.candidates.append(
            Candidate(_text(host), port or info.default_port, info.name, addresses=addresses))


def is_srv_name(text: str) -> bool:
    """``_service._proto.domain`` (RFC 2782): looked up as SRV, not read as a SIP host name."""
    labels = text.strip().rstrip(".").split(".")
    return (len(labels) >= 3 and len(labels[0]) > 1 and labels[0].startswith("_")
            and labels[1].lower() in ("_udp", "_tcp", "_sctp", "_tls"))


def _enum_sip_service(service: bytes) -> bool:
    """RFC 6116/3764: ``E2U+sip`` (enumservice type ``sip``; case-insensitive)."""
    parts = service.decode().lower().split("+")
    return parts[0] == "e2u" and "sip" in (p.split(":")[0] for p in parts[1:])


def _ip_sort_key(address: str) -> tuple[int, int]:
    ip = ipaddress.ip_address(address)
    return ip.version, int(ip)
