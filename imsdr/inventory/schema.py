"""Inventory format v1: the pydantic models that define, validate and document it.

These models are both the schema (``imsdr schema`` exports their JSON Schema) and the
validated, immutable model every later stage reads. Field-level checks live here;
cross-references (ids that must exist, duplicates) live in ``build.py``.

One module past 600 lines: the schema is one document (``imsdr schema`` exports it whole) whose
classes nest in each other and share the field types defined at the top; read in one file, every
field is found beside the section it belongs to.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import re
import socket
from enum import Enum
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, WithJsonSchema, field_validator

from imsdr.inventory.addresses import ipv6_text

# --- value types ---------------------------------------------------------------------

# Always used with fullmatch: '$' would let a trailing newline through ("sbc-a\n", `id: |`).
_ID_RE = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_LABEL_RE = _ID_RE
_RULE_ID_RE = re.compile(r"[A-Z]{2,6}-[0-9]{3}")
_VENDOR_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,62}")
_DIGITS_RE = re.compile(r"\+?[0-9]{1,15}")


def _check_id(value: str) -> str:
    if not _ID_RE.fullmatch(value):
        raise ValueError(
            f"invalid id {value!r}: ids are used as DNS labels and file names, so they must be "
            "1-63 lowercase letters, digits or '-', not starting or ending with '-'"
        )
    return value


def _check_dns_name(value: str) -> str:
    name = value[:-1] if value.endswith(".") else value
    if len(name) <= 253 and _DNS_NAME_RE.fullmatch(name):
        return name  # one match for the common case; the label-by-label walk says what is wrong
    raise ValueError(_dns_name_problem(value, name) or f"invalid DNS name {value!r}")


_DNS_NAME_RE = re.compile(rf"(?:{_LABEL_RE.pattern}\.)+{_LABEL_RE.pattern}")


def _dns_name_problem(value: str, name: str) -> str | None:
    """Why ``name`` (``value`` without its final dot) is not a fully qualified DNS name; None if it is."""
    if len(name) > 253 or not name:
        return f"invalid DNS name {value!r}: 1-253 characters expected"
    labels = name.split(".")
    for label in labels:
        if not _LABEL_RE.fullmatch(label):
            return (f"invalid DNS name {value!r}: label {label!r} is not a valid host label "
                    "(lowercase letters, digits and '-' only, 1-63 characters, RFC 1035/1123)")
    if len(labels) < 2:
        return f"invalid DNS name {value!r}: a fully qualified name with at least two labels is expected"
    return None


def _check_label(value: str) -> str:
    if not _LABEL_RE.fullmatch(value):
        raise ValueError(
            f"invalid DNS label {value!r}: 1-63 lowercase letters, digits or '-', "
            "not starting or ending with '-'"
        )
    return value


# Plain notation only: ipaddress also reads IPv6 zone indexes ('fe80::1%eth0' - anything may follow
# the '%', quotes and ';' included) and netmask forms ('/255.255.255.0'); none of these belongs in
# a zone or in named.conf. What imsdr writes is always str() of the parsed value, never the input.
_PLAIN_ADDRESS = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*")
_PLAIN_PREFIX = re.compile(rf"(?:{_PLAIN_ADDRESS.pattern})/[0-9]{{1,3}}")
IpAddressValue = ipaddress.IPv4Address | ipaddress.IPv6Address
IpNetworkValue = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_address(value: str) -> IpAddressValue:
    """The address ``value`` in plain IPv4 or IPv6 notation; ValueError with the reason otherwise."""
    if "%" in value:
        raise ValueError(f"invalid IP address {value!r}: it has a zone index ('%...'); a scoped IPv6 "
                         "address cannot be published in DNS (expected a plain IPv4 or IPv6 address)")
    if not _PLAIN_ADDRESS.fullmatch(value):
        raise ValueError(f"invalid IP address {value!r} (expected plain notation, e.g. 192.0.2.10 or 2001:db8::10)")
    try:
        # the C parser first (a national inventory has ~20,000 addresses; ipaddress's text parser
        # costs 10 µs each); what it accepts, ipaddress accepts as the same address - a property
        # test holds the two to that - and whatever it refuses ipaddress decides
        family = socket.AF_INET6 if ":" in value else socket.AF_INET
        packed = socket.inet_pton(family, value)
        return ipaddress.IPv6Address(packed) if family == socket.AF_INET6 else ipaddress.IPv4Address(packed)
    except OSError:
        pass
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"invalid IP address {value!r}") from None


def parse_prefix(value: str) -> IpNetworkValue:
    """The prefix ``value`` as address/length in plain notation; ValueError with the reason otherwise."""
    address, slash, length = value.partition("/")
    if "%" in value:
        raise ValueError(f"invalid IP prefix {value!r}: it has a zone index ('%...'), which a prefix "
                         "never has (expected e.g. 198.51.100.0/24 or 2001:db8::/48)")
    if slash and "." in length and _PLAIN_ADDRESS.fullmatch(length) and _PLAIN_ADDRESS.fullmatch(address):
        try:
            example = ipaddress.ip_network(value, strict=False).with_prefixlen
        except ValueError:
            example = "198.51.100.0/24"
        raise ValueError(f"invalid IP prefix {value!r}: write the prefix length, not a mask "
                         f"(e.g. {example})")
    if not _PLAIN_PREFIX.fullmatch(value):
        raise ValueError(f"invalid IP prefix {value!r} (expected address/length in plain notation, "
                         "e.g. 198.51.100.0/24 or 2001:db8::/48)")
    try:
        return ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        if "host bits set" in str(exc):
            raise ValueError(f"invalid prefix {value!r}: host bits set (did you mean "
                             f"{ipaddress.ip_network(value, strict=False)}?)") from None
        raise ValueError(f"invalid IP prefix {value!r} (expected e.g. 198.51.100.0/24 or 2001:db8::/48)") from None


def _check_ip(value: str) -> str:
    if ":" not in value:
        # IPv4 (half of the addresses): the C parser takes only dotted decimal without leading
        # zeros, whose text is already the canonical one - no address object needed
        try:
            return socket.inet_ntop(socket.AF_INET, socket.inet_pton(socket.AF_INET, value))
        except OSError:
            pass
    return canonical_address(parse_address(value))


def canonical_address(address: IpAddressValue) -> str:
    """``str(address)``, by the C formatter where it writes the same text."""
    return ipv6_text(address.packed) if address.version == 6 else str(address)


def _check_prefix(value: str) -> str:
    return str(parse_prefix(value))


def _check_rule_id(value: str) -> str:
    if not _RULE_ID_RE.fullmatch(value):
        raise ValueError(f"invalid rule id {value!r} (expected e.g. GEO-001)")
    return value


def _check_vendor(value: str) -> str:
    if not _VENDOR_RE.fullmatch(value):
        raise ValueError(f"invalid vendor {value!r}: letters, digits, space, '.', '_' or '-' only")
    return value


def _check_free_text(value: str) -> str:
    """Names and reasons end up in runbooks and zone comments: one line, printable."""
    if any(ch in value for ch in "\n\r\x00;$`<>") or not value.isprintable():
        raise ValueError(f"text {value!r} must be a single printable line without ';', '$', '`', '<' or '>'")
    if len(value) > 200:
        raise ValueError("text longer than 200 characters")
    if not value.strip():
        raise ValueError(f"text {value!r} is blank; write a name or reason a reader can recognise")
    return value


def _check_e164(value: str) -> str:
    if not _DIGITS_RE.fullmatch(value):
        raise ValueError(f"invalid E.164 digits {value!r}: up to 15 digits, optionally starting with '+'")
    return value.lstrip("+")


_PATH_RE = re.compile(r"(/[A-Za-z0-9_][A-Za-z0-9._-]{0,63})+")


def _check_absolute_path(value: str) -> str:
    """A directory path written into named.conf: absolute, plain characters, no '..' or quotes."""
    if not _PATH_RE.fullmatch(value) or len(value) > 200 or "/.." in value:
        raise ValueError(f"invalid directory {value!r}: an absolute path of letters, digits, '.', '_', '-' "
                         "and '/' (each part not starting with '.' or '-'), at most 200 characters")
    return value


def _schema(pattern: str | None = None, **extra: object) -> WithJsonSchema:
    """Publish the validator's rule in the JSON Schema so editors check it too."""
    body: dict[str, object] = {"type": "string", **extra}
    if pattern:
        body["pattern"] = pattern
    return WithJsonSchema(body)


_LABEL_PATTERN = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
Id = Annotated[str, AfterValidator(_check_id), _schema(f"^{_LABEL_PATTERN}$")]
DnsName = Annotated[str, AfterValidator(_check_dns_name),
                    _schema(f"^{_LABEL_PATTERN}(?:\\.{_LABEL_PATTERN})+\\.?$", maxLength=254)]
DnsLabel = Annotated[str, AfterValidator(_check_label), _schema(f"^{_LABEL_PATTERN}$")]
IpAddress = Annotated[str, AfterValidator(_check_ip), _schema(description="IPv4 or IPv6 address")]
IpPrefix = Annotated[
    str, AfterValidator(_check_prefix), _schema(description="IPv4 or IPv6 prefix, e.g. 198.51.100.0/24")
]
RuleId = Annotated[str, AfterValidator(_check_rule_id), _schema("^[A-Z]{2,6}-[0-9]{3}$")]
Vendor = Annotated[str, AfterValidator(_check_vendor), _schema("^[A-Za-z0-9][A-Za-z0-9 ._-]{0,62}$")]
Text = Annotated[str, AfterValidator(_check_free_text), _schema("^[^\\n\\r;$`<>]{1,200}$")]
E164Digits = Annotated[str, AfterValidator(_check_e164), _schema("^\\+?[0-9]{1,15}$")]
AbsolutePath = Annotated[str, AfterValidator(_check_absolute_path), _schema(f"^{_PATH_RE.pattern}$", maxLength=200)]
Seconds = Annotated[int, Field(ge=1, le=86400)]
Ttl = Annotated[int, Field(ge=0, le=2_147_483_647)]
Port = Annotated[int, Field(ge=1, le=65535)]
Positive = Annotated[int, Field(gt=0, le=10**12)]
PositiveFloat = Annotated[float, Field(gt=0, le=1e12)]
Fraction = Annotated[float, Field(ge=0, le=1)]


class _Strict(BaseModel):
    # defer_build: a model's validator is built when it is first used, not at import; loading an
    # inventory uses Inventory's alone (it holds every other model's schema), so the ~60 others'
    # own validators (~80 ms at every start) are built only where a model is made by itself
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False, defer_build=True)


# --- enumerations --------------------------------------------------------------------

class ElementType(str, Enum):
    ENUM_DNS = "enum_dns"
    SBC = "sbc"
    PCSCF = "pcscf"
    CSCF = "cscf"
    HSS = "hss"
    SLF = "slf"
    DRA = "dra"
    MGCF = "mgcf"
    IMGW = "imgw"
    AS = "as"


class CscfRole(str, Enum):
    ICSCF = "icscf"
    SCSCF = "scscf"
    ECSCF = "ecscf"
    BGCF = "bgcf"


class Feature(str, Enum):
    VIRTUAL_SBC = "virtual_sbc"
    RESTORATION_DATA = "restoration_data"
    STICKY_CLIENTS = "sticky_clients"
    PASSTHROUGH = "passthrough"


class Transport(str, Enum):
    UDP = "udp"
    TCP = "tcp"
    TLS = "tls"


class Probing(str, Enum):
    ACTIVE = "active"
    PASSIVE = "passive"
    OFF = "off"


# --- network ---------------------------------------------------------------------------

class Bfd(_Strict):
    """BFD on the Diameter links (RFC 5880 §6.8.4: detection = multiplier × interval)."""

    interval_ms: Annotated[int, Field(ge=10, le=60000)] = Field(300, description=(
            "BFD transmit and receive interval, milliseconds"))
    multiplier: Annotated[int, Field(ge=1, le=255)] = Field(3, description=(
            "missed BFD packets before the link is declared down (detection = multiplier x interval)"))


class SctpHeartbeat(_Strict):
    """SCTP path heartbeats on the Diameter links (RFC 9260 §8.3)."""

    interval: Seconds = Field(1, description="HB.interval, seconds")
    rto_max: Seconds = Field(1, description="RTO.Max, seconds (upper bound of one heartbeat's wait)")
    path_max_retrans: Annotated[int, Field(ge=0, le=20)] = Field(
        2, description="Path.Max.Retrans: unanswered heartbeats before the path is down")


class DiameterTransport(_Strict):
    bfd: Bfd | None = Field(None, description=(
            "BFD on the Diameter links (detection = multiplier x interval); unset: no BFD"))
    sctp_heartbeat: SctpHeartbeat | None = Field(None, description=(
            "SCTP path heartbeats on the Diameter links; unset: none declared"))


class Timers(_Strict):
    """Detection and refresh timers, in seconds."""

    options_interval: Seconds = Field(10, description="SIP OPTIONS probe interval, seconds")
    options_failure_threshold: Annotated[int, Field(ge=1, le=100)] = Field(
        3, description="consecutive failed probes before a peer is marked down")
    options_timeout: Seconds = Field(2, description="time to wait for one OPTIONS response, seconds")
    diameter_watchdog: Seconds = Field(8, description="Diameter watchdog Tw, seconds (RFC 3539; 6-10 s wanted)")
    registration_refresh: Seconds = Field(1800, description=(
        "UE registration refresh interval, seconds (recommended 600-3600 s); when registration_expiry is "
        "given and this is not, the interval follows TS 24.229 §5.1.1.4 from the expiry"))
    registration_expiry: Seconds | None = Field(None, description=(
        "registration expiry the registrar grants fixed-access UEs, seconds; the UEs refresh 600 s before it "
        "when it exceeds 1,200 s, else at half of it (TS 24.229 §5.1.1.4); unset: registration_refresh is the "
        "interval"))
    session_timer: Seconds = Field(1800, description="SIP session timer releasing calls lost in a failure, seconds")
    ps_registration_expiry: Annotated[int, Field(ge=1, le=2_000_000)] = Field(
        600000, description="PS access (VoLTE): registration expiry UEs propose (TS 24.229 default 600000 s)")
    diameter_detection_target: Seconds = Field(
        10, description="detect a failed Diameter link within this many seconds (watchdog or transport)")
    diameter_reconnect: Seconds = Field(30, description=(
            "Diameter Tc, seconds (RFC 6733 §2.1): a client retries a closed or refused peer connection "
            "this often, so it reaches a promoted standby HSS within Tc"))
    diameter_transport: DiameterTransport = Field(
        default_factory=lambda: DiameterTransport(),
        description="transport-level failure detection declared on the Diameter links")
    h248_inactivity: Seconds = Field(
        10, description="H.248.14 inactivity timer (MGC<->IM-MGW keepalive) before the link is suspect, seconds")
    h248_transaction_timeout: Seconds = Field(
        6, description="H.248 transaction retransmission time before the peer is declared lost, seconds")


class TimerOverrides(_Strict):
    """Per-element timer overrides; unset fields take the network default."""

    options_interval: Seconds | None = Field(None, description=(
            "this element's SIP OPTIONS probe interval, seconds (unset: network value)"))
    options_failure_threshold: Annotated[int, Field(ge=1, le=100)] | None = Field(None, description=(
            "this element's failed probes before a peer is marked down (unset: network value)"))
    options_timeout: Seconds | None = Field(None, description=(
            "this element's wait for one OPTIONS response, seconds (unset: network value)"))
    diameter_watchdog: Seconds | None = Field(None, description=(
            "this element's Diameter Tw, seconds (unset: network value)"))
    registration_refresh: Seconds | None = Field(None, description=(
            "this element's UE registration refresh, seconds (unset: network value)"))


class DnsTtls(_Strict):
    """TTLs in seconds per record kind; clients see a DNS change only after the TTL."""

    soa: Ttl = Field(3600, description="TTL of the SOA record, seconds")
    ns: Ttl = Field(86400, description="TTL of NS records (and their glue), seconds")
    naptr: Ttl = Field(300, description="TTL of the home domain's NAPTR records, seconds")
    srv: Ttl = Field(60, description=(
            "TTL of SRV records (pools, pairs, SBC discovery), seconds; clients see an SRV change after it"))
    a: Ttl = Field(60, description="TTL of A records, seconds")
    aaaa: Ttl = Field(60, description="TTL of AAAA records, seconds")
    enum: Ttl = Field(3600, description="TTL of ENUM NAPTR records, seconds")
    negative: Ttl = Field(300, description=(
            "negative-caching TTL (SOA minimum: how long 'no such name' is cached), seconds"))


class CapacityModel(_Strict):
    """Parameters of the capacity formulas (defaults from the operator DR study)."""

    hss_restoration_overhead: Fraction = Field(0.08, description="extra HSS load for holding restoration data (+4-8%)")
    failover_cost_per_moved_user: Annotated[float, Field(ge=1, le=10)] = Field(
        1.8, description="HSS cost of one user moved during an S-CSCF failover, relative to a normal user")
    registration_share: Fraction = Field(0.25, description="share of S-CSCF work spent on registration (20-25%)")
    restoration_registration_cost: Annotated[float, Field(ge=1, le=10)] = Field(
        1.4, description="registration cost with restoration data, relative to without (1.2-1.4x)")
    grade_of_service: Annotated[float, Field(gt=0, lt=1)] = Field(
        0.01, description="Erlang B blocking target (ITU-T E.520: 1%)"
    )
    grade_of_service_failure: Annotated[float, Field(gt=0, lt=1)] = Field(
        0.05, description="Erlang B blocking accepted on the surviving trunks after a failure")
    max_utilisation: Annotated[float, Field(gt=0, le=1)] = Field(
        0.85, description="highest acceptable load/capacity, normally and after a failure "
        "(headroom for the busy-hour peak and the re-registration storm; docs/capacity.md)"
    )
    onnet_share: Fraction | None = Field(
        None, description="share of busy-hour traffic to on-net numbers (broken out to the PSTN when ENUM "
                          "fails); unset: the ENUM-outage breakout is not sized")
    as_session_share: Fraction = Field(
        1.0, description="share of busy-hour calls that hold an AS session (sizes AS sessions)")
    busy_hour_call_attempts: Annotated[float, Field(ge=0, le=100)] = Field(
        1.0, description="busy-hour call attempts per subscriber (the query model of ENUM/DNS)")
    dns_queries_per_call_attempt: Annotated[float, Field(ge=0, le=100)] = Field(
        2.0, description="ENUM/DNS queries one call attempt causes at the servers (ENUM + next hop)")
    dns_queries_per_registration: Annotated[float, Field(ge=0, le=100)] = Field(
        1.0, description="ENUM/DNS queries one registration causes at the servers")
    min_site_distance_km: Annotated[float, Field(ge=0, le=20000)] = Field(
        30.0, description="minimum distance between sites of one pair or pool (when coordinates are given)")


# --- DNS service areas (a national level-1 set delegating to per-province level-2 sets) -------

class DnsArea(_Strict):
    """One ENUM/DNS set and what it is authoritative for (a province, level 2), or the national
    set (level 1) that only delegates (NS + glue) to the provinces' sets."""

    id: Id = Field(description="unique id of the area (a DNS label; names the peers view)")
    level: Literal["province", "national"] = Field("province", description=(
            "province: authoritative for its home domains, number blocks, local networks and sites; "
            "national: holds only the delegations to the province sets (level-1 ENUM/DNS)"))
    nameservers: Annotated[list[Id], Field(min_length=1)] = Field(description=(
            "enum_dns element ids of this set (the NS of its zones, or of the national zones)"))
    provinces: list[Id] = Field(default_factory=list, description=(
            "province: the sites.province values it serves (default: its id); its sites, the local "
            "networks homed on them, their views"))
    home_domains: list[DnsName] = Field(default_factory=list, description=(
            "province: the network.home_domains it is authoritative for (delegated by the national set)"))
    enum_blocks: list[Id] = Field(default_factory=list, description=(
            "province: the enum_blocks ids it is authoritative for (default: those whose domain is one of "
            "its home_domains)"))
    zones: list[DnsName] = Field(default_factory=list, description=(
            "national: the parent zones that delegate the provinces' home domains (default: the closest "
            "common parent of them); the ENUM country-code zone is always its own"))


_KEPT_TYPES_REFUSED = frozenset({"SOA", "NS"})  # a zone's apex records are imsdr's own


def _check_kept_record(value: str) -> str:
    """One master-file record line, absolute owner, kept as it is: parsed here (by dnspython) so
    ``render dns`` never writes a line named would refuse."""
    import dns.exception
    import dns.rdata
    import dns.rdataclass
    import dns.rdatatype

    words = value.split(None, 4)
    if not value.isascii() or not value.isprintable() or len(value) > 2048:
        raise ValueError("a kept record is one line of printable ASCII (at most 2,048 characters)")
    if len(words) != 5 or not words[0].endswith(".") or not words[1].isdigit() or words[2].upper() != "IN":
        raise ValueError(f"{value[:60]!r}: expected 'OWNER. TTL IN TYPE DATA' (an absolute owner name)")
    if words[3].upper() in _KEPT_TYPES_REFUSED:
        raise ValueError(f"{words[3].upper()} records are imsdr's own (the zone's apex): not kept")
    try:
        dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.from_text(words[3]), words[4])
    except (dns.exception.DNSException, ValueError) as exc:
        raise ValueError(f"{value[:60]!r}: {exc}") from None
    return value


KeptRecord = Annotated[str, AfterValidator(_check_kept_record)]


class KeptRecords(_Strict):
    zone: DnsName = Field(description="the zone the records belong to (a home domain or an ENUM block zone)")
    records: Annotated[list[KeptRecord], Field(min_length=1)] = Field(description=(
            "master-file lines 'OWNER. TTL IN TYPE DATA' (owner absolute, inside the zone), written back "
            "unchanged at the end of the zone's core-side file"))

    @field_validator("records")
    @classmethod
    def _owners_inside_the_zone(cls, records: list[str], info: ValidationInfo) -> list[str]:
        # (a field validator: the problem points at records, the field that is wrong)
        if "zone" not in info.data:  # (the zone is invalid: its own problem says so)
            return records
        zone = info.data["zone"].rstrip(".").lower()
        for record in records:
            owner = record.split(None, 1)[0].rstrip(".").lower()
            if owner != zone and not owner.endswith("." + zone):
                raise ValueError(f"{record[:60]!r}: the owner is outside zone {info.data['zone']}")
        return records


class DnsSettings(_Strict):
    """Names under the home domain that imsdr renders."""

    sbc_name: DnsLabel = Field("sbc", description="SBC discovery name (label under the home domain)")
    transports: list[Transport] = Field(default_factory=lambda: [Transport.UDP, Transport.TCP],
                                        description="SIP transports published with NAPTR/SRV for the home domain")
    nameservers: list[Id] = Field(
        default_factory=list, description="enum_dns element ids serving the zones (default: all)"
    )
    hostmaster: DnsLabel = Field("hostmaster", description="SOA RNAME label under the operator domain")
    sbc_dr_name: DnsLabel = Field(
        "sbc-dr", description="second SBC name (the DR SBC, for a UE's second proxy) under the home domain")
    publish: Annotated[list[Literal["home_domains", "3gpp"]], Field(min_length=1)] = Field(
        default_factory=lambda: ["home_domains", "3gpp"],
        description="home domains published: the network.home_domains and/or the 3GPP home domain "
                    "ims.mncXXX.mccYYY.3gppnetwork.org derived from mcc/mnc (TS 23.003 13.2)")
    default_view: Literal["refuse", "access"] = Field(
        "refuse", description="clients outside every view's match list: refused, or served the access "
                              "data only (SBC discovery, never the core)")
    access_rate_limit: Annotated[int, Field(ge=0, le=100000)] = Field(20, description=(
            "access views: identical responses per second to one client block before BIND response-rate-"
            "limiting answers truncated (the client retries over TCP); 0: off"))
    areas: list[DnsArea] = Field(default_factory=list, description=(
            "service areas: which ENUM/DNS set serves which home domains and number blocks, and the "
            "national set that delegates to them (default: none, one set serves everything)"))
    kept_records: list[KeptRecords] = Field(default_factory=list, description=(
            "records imsdr does not model (TXT, CNAME, other ENUM services...) kept from an imported "
            "configuration: render dns writes them back unchanged (docs/import.md)"))
    secondary_directory: AbsolutePath = Field(
        "/var/cache/bind/imsdr", description="where secondary name servers keep transferred zones "
                                             "(an existing directory writable by named)")
    host_zone: DnsLabel | None = Field(None, description=(
            "label of a zone of host records under each home domain: an element without an explicit fqdn is "
            "named <id>.<label>.<primary home domain>, and every element name under <label>.<home domain> is "
            "published in that zone, one file per side shared by every view (in-view); the home-domain zones "
            "then carry only the names that differ per view (default: none, host records in the home-domain "
            "zone; docs/dns.md)"))
    enum_updates: bool = Field(False, description=(
            "the primaries accept RFC 2136 dynamic updates of the ENUM block zones' NAPTR records signed "
            "with a core view's TSIG key (imsdr enum-update applies a provisioning file); the rendered "
            "directory must then be writable by named (journals)"))


class Restoration(_Strict):
    """IMS restoration procedures (TS 23.380) the network supports."""

    pcscf_restoration: Literal["hss", "pcrf", "none"] = Field(
        "none", description="P-CSCF restoration for PS access: HSS-based (§5.4), PCRF/PCF-based (§5.5) or none")
    scscf_restoration_response: Literal["504-3gpp", "502"] = Field(
        "504-3gpp", description="answer to a UE whose S-CSCF is unreachable: 504 with the 3GPP IMS XML "
                                "body (TS 24.229 §5.2.6.3.2A) or the seed study's 502")
    signalling_time: Seconds = Field(
        5, description="P-CSCF restoration signalling (SAR, IDR/Gx, PDN release and re-activation), seconds")
    registration_time: Seconds = Field(
        2, description="one UE registration (REGISTER, 401 challenge, REGISTER, 200), seconds")


# --- availability: failure and repair inputs, shared-risk events, targets (docs/availability.md) -----

ServiceName = Literal["registration", "originating", "terminating", "pstn_breakout", "pstn_ingress", "emergency"]
RiskKind = Literal["site", "power", "route", "region"]


class Reliability(_Strict):
    """How often an element fails and how long it takes to restore it."""

    mtbf_hours: Annotated[float, Field(gt=0, le=1e9)] = Field(description=(
            "mean time between failures that take the element out of service, hours"))
    mttr_hours: Annotated[float, Field(gt=0, le=1e6)] = Field(description=(
            "mean time to restore it, hours: detection, diagnosis, repair or replacement, return to service"))


class RiskEvents(_Strict):
    """How often a shared risk of one kind fails and for how long."""

    rate_per_year: Annotated[float, Field(ge=0, le=1000)] = Field(description=(
            "events per year that take down everything depending on one risk of this kind"))
    duration_hours: Annotated[float, Field(gt=0, le=1e5)] = Field(description="mean duration of one event, hours")


class Availability(_Strict):
    """Inputs of ``imsdr availability``; unset values take the planning defaults (docs/domain.md)."""

    types: dict[ElementType, Reliability] = Field(default_factory=dict, description=(
            "MTBF/MTTR per element type (replaces the planning default of that type)"))
    platforms: dict[Id, Reliability] = Field(default_factory=dict, description=(
            "MTBF/MTTR per platform (the elements' 'platform' key): overrides the type"))
    groups: dict[Id, Reliability] = Field(default_factory=dict, description=(
            "MTBF/MTTR per pair or pool id, for its members: overrides the platform"))
    elements: dict[Id, Reliability] = Field(default_factory=dict, description=(
            "MTBF/MTTR per element id: overrides everything else"))
    shared_risks: dict[RiskKind, RiskEvents] = Field(default_factory=dict, description=(
            "event rate and duration per shared-risk kind: site, power (feed), route (transmission), region"))
    max_cut_order: Annotated[int, Field(ge=1, le=4)] = Field(3, description=(
            "largest minimal cut set enumerated (1-4 basic events)"))
    probability_cutoff: Annotated[float, Field(ge=0, le=1e-3)] = Field(1e-10, description=(
            "cut sets less probable than this are not enumerated (each would add under 0.00006 minutes a year "
            "at the default)"))


class Network(_Strict):
    name: Text = Field(description="network name shown in tables and runbooks")
    operator_domain: DnsName = Field(description="operator DNS domain (the SOA contact hostmaster.<operator_domain>)")
    home_domains: Annotated[list[DnsName], Field(min_length=1)] = Field(
        description="IMS home domain(s); the first is primary"
    )
    mcc: Annotated[str, Field(pattern=r"^[0-9]{3}$")] | None = Field(None, description=(
            "mobile country code, three digits in quotes; with mnc gives the 3GPP home domain "
            "ims.mncXXX.mccYYY.3gppnetwork.org (unset: none)"))
    mnc: Annotated[str, Field(pattern=r"^[0-9]{2,3}$")] | None = Field(None, description=(
            "mobile network code, two or three digits in quotes (padded to three in the 3GPP home domain)"))
    country_code: Annotated[str, Field(pattern=r"^[1-9][0-9]{0,2}$")] = Field(description=(
            "E.164 country code of the numbers, 1-3 digits in quotes (e.g. \"86\")"))
    enum_suffix: DnsName = Field("e164.arpa", description="ENUM tree the number blocks are published under")
    deployment: Literal["production", "lab"] = Field("production", description=(
            "production (two active-active regions; every rule applies) or lab (one site; production-only rules "
            "skipped)"))
    timers: Timers = Field(default_factory=Timers, description=(
            "detection and refresh timers, seconds; elements may override some"))
    ttl: DnsTtls = Field(default_factory=DnsTtls, description="DNS TTLs per record kind, seconds")
    capacity_model: CapacityModel = Field(default_factory=CapacityModel, description=(
            "parameters of the capacity formulas"))
    dns: DnsSettings = Field(default_factory=DnsSettings, description="names and options of the rendered DNS")
    restoration: Restoration = Field(default_factory=lambda: Restoration(),
                                     description="IMS restoration procedures (TS 23.380)")
    retry_responses: list[Annotated[int, Field(ge=400, le=699)]] = Field(
        default_factory=lambda: [408, 503, 504],
        description="SIP responses (plus no response) after which a request is retried on another peer")
    availability_targets: dict[ServiceName, Annotated[float, Field(gt=0, lt=100)]] = Field(
        default_factory=dict, description=(
            "availability target per service, percent (e.g. 99.999): AVAIL-001 reports a service below it"))

    @property
    def primary_domain(self) -> str:
        return self.home_domains[0]

    @property
    def threegpp_domain(self) -> str | None:
        """TS 23.003 §13.2: ims.mnc<MNC>.mcc<MCC>.3gppnetwork.org, MNC padded to three digits."""
        if self.mcc is None or self.mnc is None:
            return None
        return f"ims.mnc{self.mnc.zfill(3)}.mcc{self.mcc}.3gppnetwork.org"


# --- sites and local networks --------------------------------------------------------------

class Site(_Strict):
    id: Id = Field(description="unique id of the site (a DNS label; names its core DNS view)")
    name: Text = Field(description="site name shown in tables and runbooks")
    region: Id = Field(description="service region (active-active regions must each carry 100%)")
    province: Id | None = Field(None, description=(
            "the provincial IMS core the site belongs to: signalling, Diameter and DNS adjacencies are drawn only "
            "inside one (unset: one core)"))
    power: Annotated[list[Id], Field(min_length=1)] = Field(description="power feeds the site depends on")
    transmission: Annotated[list[Id], Field(min_length=1)] = Field(
        description="transmission routes the site depends on"
    )
    lat: Annotated[float, Field(ge=-90, le=90)] | None = Field(None, description=(
            "latitude, decimal degrees (with lon: checks the distance between sites of one pair or pool)"))
    lon: Annotated[float, Field(ge=-180, le=180)] | None = Field(None, description="longitude, decimal degrees")
    core_subnets: list[IpPrefix] = Field(
        default_factory=list, description="core signalling subnets (per-site DNS views)"
    )


_PANI_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,31}(?:; ?[a-z0-9-]{1,32}=[A-Za-z0-9.:-]{1,64}){0,4}")
_PHONE_CONTEXT_RE = re.compile(r"\+[0-9][0-9-]{0,19}")


def _check_pani(value: str) -> str:
    if not _PANI_RE.fullmatch(value):
        raise ValueError(
            f"invalid P-Access-Network-Info {value!r}: an access type and up to four 'name=value' "
            "parameters, e.g. '3GPP-E-UTRAN-FDD; utran-cell-id-3gpp=46001A1B2C3D4E' (TS 24.229 §7.2A.4)")
    return value


def _check_phone_context(value: str) -> str:
    if _PHONE_CONTEXT_RE.fullmatch(value):
        return value
    try:
        return _check_dns_name(value)
    except ValueError:
        raise ValueError(f"invalid phone-context {value!r}: a global number prefix such as '+86-10' or "
                         "a domain name (RFC 3966 §5.1.5)") from None


Pani = Annotated[str, AfterValidator(_check_pani), _schema(f"^{_PANI_RE.pattern}$")]
PhoneContext = Annotated[str, AfterValidator(_check_phone_context),
                         _schema(description="'+' global number prefix or a domain name (RFC 3966)")]


class PacketGateway(_Strict):
    """The P-GW (EPC) or SMF (5GC) of a PS local network."""

    id: Id = Field(description="id of the P-GW or SMF (a DNS label)")
    kind: Literal["pgw", "smf"] = Field("pgw", description="pgw (EPC) or smf (5GC)")
    apn: DnsLabel = Field("ims", description="APN/DNN of the IMS PDN connection")


class Emergency(_Strict):
    """Per local network emergency data (TS 23.167, TS 24.229 §5.2.10)."""

    pani: Pani = Field(description="P-Access-Network-Info the (virtual) SBC inserts for this local network")
    phone_context: PhoneContext = Field(description="phone-context of local numbers dialled in this network")
    psap_route: E164Digits = Field(description="routing number (ESRN) of the PSAP serving this local network")


class RegistrationArrival(_Strict):
    """How the users of a local network re-register when their SBC or P-CSCF fails."""

    immediate_share: Fraction = Field(description=(
        "share of the users that notice the failure at once (TCP/TLS connection loss, RFC 5626 keep-alives, SBC "
        "NAT pings) and register again within `within` seconds; the rest at their next refresh"))
    within: Seconds = Field(description="seconds in which the immediate share registers again")


class RegistrationLimit(_Strict):
    """Overload control of an SBC or P-CSCF: registrations above the rate are refused with 503 and Retry-After."""

    rate: Positive = Field(description="initial registrations per second admitted; the excess is answered 503")
    retry_after: Seconds = Field(30, description="Retry-After of the 503, seconds (RFC 3261 §20.33)")


class LocalNetwork(_Strict):
    id: Id = Field(description="unique id of the local network (a DNS label; names its DNS view)")
    name: Text = Field(description="name shown in tables and runbooks")
    prefixes: Annotated[list[IpPrefix], Field(min_length=1)] = Field(description="user source prefixes (IPv4 and IPv6)")
    resolvers: list[IpAddress] = Field(
        default_factory=list, description="access resolvers the users of this network query (matched by "
                                          "their user view, as UEs reach DNS through them)")
    home_sites: Annotated[list[Id], Field(min_length=1)] = Field(description=(
            "ids of the sites whose SBCs normally serve these users"))
    subscribers: Annotated[int, Field(ge=0, le=10**10)] = Field(0, description="registered users in the busy hour")
    busy_hour_erlangs: Annotated[float, Field(ge=0, le=1e9)] = Field(
        0.0, description="busy-hour voice traffic, Erlangs")
    access: Literal["fixed", "ps", "both"] = Field(
        "fixed", description="fixed access, PS (VoLTE over EPC/5GC) or both")
    ps_subscribers: Annotated[int, Field(ge=0, le=10**10)] | None = Field(None, description=(
        "access both: how many of the subscribers use PS access (availability is reported per access "
        "type); unset: half"))
    packet_gateway: PacketGateway | None = Field(
        None, description="PS access: the P-GW/SMF serving the local network (hands out the P-CSCF list)")
    registration_arrival: RegistrationArrival | None = Field(None, description=(
        "how its users re-register when their SBC/P-CSCF fails; unset: the access type's default "
        "(domain.md §8.2)"))
    emergency: Emergency | None = Field(
        None, description="emergency-call data a DR (virtual) SBC must emit for this local network")


# --- elements ---------------------------------------------------------------------------------

class Capacity(_Strict):
    """Capacity in the unit each element type needs."""

    registered_users: Positive | None = Field(None, description="SBC, P-CSCF, CSCF: registered users it can hold")
    subscribers: Positive | None = Field(None, description="HSS/SLF: subscriber records")
    sessions: Positive | None = Field(None, description="CSCF, AS: simultaneous sessions it can hold")
    busy_hour_erlangs: PositiveFloat | None = Field(None, description=(
            "MGCF/IM-MGW: busy-hour voice traffic it can carry, Erlangs"))
    circuits: Positive | None = Field(None, description="MGCF/IM-MGW trunk circuits")
    queries_per_second: Positive | None = Field(None, description="ENUM/DNS: queries per second it can answer")
    registrations_per_second: Positive | None = Field(
        None, description="SBC, P-CSCF, CSCF: initial registrations per second it can process (each is two REGISTER "
                          "transactions with IMS AKA)")
    register_transactions_per_second: Positive | None = Field(
        None, description="SBC, P-CSCF, CSCF: REGISTER transactions per second it can process (unset: "
                          "2 x registrations_per_second)")
    transactions_per_second: Positive | None = Field(
        None, description="HSS/SLF/DRA: Diameter (Cx/Sh/Dx) transactions per second (a DRA: those it relays)")


_USER_PREFIX_RE = re.compile(r"[A-Za-z0-9+._@-]{1,64}")


def _check_user_prefix(value: str) -> str:
    if not _USER_PREFIX_RE.fullmatch(value):
        raise ValueError(f"invalid user prefix {value!r}: 1-64 letters, digits or + . _ @ - (the start of the "
                         "User-Name, i.e. the IMPI, of the subscribers held)")
    return value


UserPrefix = Annotated[str, AfterValidator(_check_user_prefix), _schema("^[A-Za-z0-9+._@-]{1,64}$")]


class DiameterService(_Strict):
    """How Diameter clients reach an HSS, SLF or DRA (RFC 6733 §2.1, §13; TS 29.228 §6)."""

    transport: Literal["tcp", "sctp"] = Field("tcp", description=(
            "tcp or sctp: the transport its clients connect over (port 3868 unless 'port' says otherwise)"))
    security: Literal["none", "ipsec", "tls"] = Field("none", description=(
            "none (plain on 'port'), ipsec (plain Diameter inside NDS/IP IPsec, TS 33.210) or tls "
            "(TLS from the first byte on 'tls_port', RFC 6733 §13)"))
    port: Port = Field(3868, description="Diameter port over plain TCP/SCTP (RFC 6733: 3868)")
    tls_port: Port = Field(5868, description="Diameter port over TLS/DTLS (RFC 6733: 5868)")


class Element(_Strict):
    id: Id = Field(description=(
            "unique id: a DNS label, used in host names, file names and every reference to the element"))
    type: ElementType = Field(description="element type: enum_dns, sbc, pcscf, cscf, hss, slf, dra, mgcf, imgw or as")
    site: Id = Field(description="id of the site the element is in")
    vendor: Vendor = Field(description=(
            "vendor or product, shown in runbooks (master-slave ENUM/DNS across vendors is reported)"))
    roles: list[CscfRole] = Field(default_factory=list, description="cscf only: icscf, scscf, ecscf, bgcf")
    addresses: Annotated[list[IpAddress], Field(min_length=1)] = Field(
        description="signalling addresses: where SIP and Diameter peers reach it (its A/AAAA records)")
    access_addresses: list[IpAddress] = Field(
        default_factory=list, description=(
            "sbc and enum_dns only: access-side addresses (default: addresses): an SBC's UE-facing side; an "
            "ENUM/DNS server's address in the user views' NS glue and the access resolvers' forwarders"))
    core_addresses: list[IpAddress] = Field(
        default_factory=list, description="sbc only: core-side addresses, matched by its site's SBC view "
                                          "(sbc-<site>: the P-CSCF names only; default: addresses)")
    port: Port = Field(5060, description="SIP port for UDP and TCP")
    tls_port: Port = Field(5061, description="SIP port for TLS")
    transports: list[Transport] = Field(default_factory=lambda: [Transport.UDP, Transport.TCP], description=(
            "SIP transports the element accepts (published in its SRV records)"))
    fqdn: DnsName | None = Field(
        None, description="host name of the element, its A/AAAA records (default: <id>.<primary home domain>)")
    capacity: Capacity = Field(default_factory=Capacity, description=(
            "what the element can carry, each in its own unit: users, subscribers, sessions, circuits, Erlangs, "
            "queries, registrations or transactions per second (the ones its type is sized by)"))
    features: list[Feature] = Field(default_factory=list, description=(
            "DR features the element has: virtual_sbc (hosts a DR SBC per local network), restoration_data (CSCF "
            "keeps registration data for failover), sticky_clients (clients that must keep one server), passthrough "
            "(HSS: calls continue on cached data)"))
    answers_options: bool = Field(True, description="false for elements that do not answer SIP OPTIONS")
    options_probing: Probing | None = Field(
        None, description="how this element watches its next hops (default: active from an SBC, MGCF or AS, "
                          "whose next hops are fixed and known)")
    serves: list[Id] = Field(default_factory=list, description="sbc only: local networks served")
    pcscfs: list[Id] = Field(default_factory=list, description="sbc only: P-CSCF list in order of preference")
    controlled_by: list[Id] = Field(
        default_factory=list, description="imgw only: controlling MGCFs over H.248, primary first, then backups")
    timers: TimerOverrides = Field(default_factory=TimerOverrides, description=(
            "timer overrides for this element; unset fields take network.timers"))
    registration_limit: RegistrationLimit | None = Field(None, description=(
            "sbc, pcscf: registration rate limit (503 with Retry-After above it); unset: none"))
    platform: Id | None = Field(None, description="platforms key (or bind, kamailio, vendor) giving the "
                                                  "commands of the runbooks; default by type")
    diameter: DiameterService = Field(default_factory=DiameterService, description=(
            "hss, slf and dra: transport and security its Diameter clients connect with (default: plain TCP "
            "on 3868)"))

    def has(self, feature: Feature) -> bool:
        return feature in self.features

    @property
    def probing(self) -> Probing | None:
        """``options_probing``, or when it is not set the recommended mode: active SIP OPTIONS from
        an SBC, MGCF or AS (fixed, known next hops: domain.md §2); otherwise not set."""
        if self.options_probing is not None:
            return self.options_probing
        return Probing.ACTIVE if self.type.value in ("sbc", "mgcf", "as") else None

    def has_role(self, role: CscfRole) -> bool:
        return role in self.roles


# --- redundancy --------------------------------------------------------------------------------

class Pair(_Strict):
    id: Id = Field(description="unique id of the pair (a DNS label)")
    members: Annotated[list[Id], Field(min_length=1)] = Field(description="the ids of the two elements of the pair")
    mode: Literal["active-active", "active-standby"] = Field("active-active", description=(
            "active-active (both serve) or active-standby (the backup serves only after a failure)"))
    sync: Literal["realtime", "periodic", "none"] = Field("realtime", description=(
            "how the backup gets the primary's data: realtime, periodic (states backup_interval) or none"))
    backup_interval: Seconds | None = Field(
        None, description="periodic sync: seconds between copies (data-loss window)"
    )
    restore_time: Seconds | None = Field(
        None, description="periodic sync: seconds to load the latest copy on the backup before it serves")
    dns_name: DnsLabel | None = Field(None, description="pair name under the home domain (SRV published)")
    promotion: Literal["automatic", "manual"] = Field("automatic", description=(
            "active-standby: automatic (the standby promotes itself) or manual (an operator promotes it)"))
    promotion_time: Seconds | None = Field(None, description=(
            "active-standby: seconds from the active's loss being seen to the standby serving (default: "
            "30 automatic, 900 manual)"))
    user_ranges: list[UserPrefix] = Field(default_factory=list, description=(
            "hss pairs: User-Name (IMPI) prefixes of the subscribers this pair holds; Diameter requests "
            "for them are routed to it (empty: the pair holds everyone no other pair of its province holds)"))

    @property
    def promotion_seconds(self) -> int:
        """``promotion_time``, or the default of its ``promotion`` mode."""
        if self.promotion_time is not None:
            return self.promotion_time
        return 30 if self.promotion == "automatic" else 900


class Pool(_Strict):
    id: Id = Field(description="unique id of the pool (a DNS label)")
    members: Annotated[list[Id], Field(min_length=1)] = Field(description="element ids of the pool (N + K members)")
    spare: Annotated[int, Field(ge=0, le=100)] = Field(1, description="K of N+K: simultaneous losses to survive")
    selection: Literal["static", "dns", "weighted", "capabilities", "fixed"] = Field("dns", description=(
            "how a failed member's load is taken over: static (the next member in list order), dns (SRV load sharing: "
            "the others share it), weighted (configured weights), capabilities (the S-CSCF the HSS capabilities "
            "select) or fixed (no takeover: each client keeps its member)"))
    role: CscfRole | None = Field(None, description="cscf pools: which role the pool serves")
    dns_name: DnsLabel | None = Field(None, description="pool name under the home domain (SRV published)")
    sync: Literal["realtime", "periodic", "none"] = Field("realtime", description=(
            "how members share data: realtime, periodic (states backup_interval) or none"))
    backup_interval: Seconds | None = Field(None, description=(
            "periodic sync: seconds between copies (data-loss window)"))
    restore_time: Seconds | None = Field(
        None, description="periodic sync: seconds to load the latest copy on the backup before it serves")
    busy_hour_erlangs: PositiveFloat | None = Field(
        None, description="mgcf/imgw pools: busy-hour trunk traffic, Erlangs")
    grade_of_service: Annotated[float, Field(gt=0, lt=1)] | None = Field(None, description=(
            "mgcf/imgw pools: Erlang B blocking target (default: network.capacity_model.grade_of_service)"))


class SbcDr(_Strict):
    layout: Literal["ring", "hub", "none"] = Field(description=(
            "SBC DR between local networks: ring (the SBC of each backs up the next one in order), hub (one SBC "
            "backs up every other local network) or none"))
    order: list[Id] = Field(default_factory=list, description=(
        "ring: local networks in ring order; the SBC of each backs up the next one (the last backs up the first)"))
    hub: Id | None = Field(None, description="hub: the SBC that backs up every other local network")


class EnumDnsDesign(_Strict):
    sync: Literal["master-slave", "provisioning", "backend-db"] | None = Field(None, description=(
            "how the ENUM/DNS sets keep the same data: master-slave (zone transfers from the primaries), provisioning "
            "(the provisioning system writes every set) or backend-db (front-ends transfer from a back-end); unset: "
            "reported when there are two or more sets, rendered as provisioning"))
    load_sharing: Literal["regional", "rtt", "anycast"] | None = Field(None, description=(
            "how queries are shared between the ENUM/DNS sets: regional (each region its own), rtt (resolvers prefer "
            "the closer set) or anycast; unset: reported when there are two or more sets"))
    primaries: list[Id] = Field(
        default_factory=list, description="master-slave: the master set; backend-db: the back-end server(s) "
                                          "the front-ends transfer from (default: the first name server)")
    provisioning_window: Seconds = Field(3600, description=(
            "master-slave/backend-db: how long provisioning may wait for a lost primary; a drain or site failure "
            "that contains every primary promotes a surviving secondary when the primary is not back within it"))


class Redundancy(_Strict):
    pairs: list[Pair] = Field(default_factory=list, description="1+1 pairs: two elements, one backs up the other")
    pools: list[Pool] = Field(default_factory=list, description=(
            "N+K pools: members share load and survive the loss of K of them"))
    sbc_dr: SbcDr | None = Field(None, description="SBC DR between local networks (ring or hub); unset: none")
    enum_dns: EnumDnsDesign = Field(default_factory=EnumDnsDesign, description=(
            "how the ENUM/DNS server sets share data and load"))


# --- ENUM, waivers, rules ---------------------------------------------------------------------

class EnumBlock(_Strict):
    id: Id = Field(description="unique id of the block (a DNS label)")
    prefix: E164Digits = Field(description="E.164 digits including country code ('+8610555')")
    length: Annotated[int, Field(ge=2, le=15)] | None = Field(
        None, description="total digits of a number (needed for style: numbers, and for first/last)"
    )
    style: Literal["wildcard", "numbers"] = Field("wildcard", description=(
            "wildcard: the block is the wildcard NAPTR(s) that cover it (one for the whole prefix, or the "
            "fewest that cover first..last exactly); numbers: one NAPTR per number (needs length). "
            "Per-number exceptions (ported numbers...) come from a provisioning file, not from here"))
    domain: DnsName = Field(description="SIP domain in the NAPTR regexp")
    first: E164Digits | None = Field(None, description=(
            "first number of the block (default: the first under the prefix; needs length)"))
    last: E164Digits | None = Field(None, description=(
            "last number of the block (default: the last number under the prefix; needs length)"))


class Waiver(_Strict):
    rule: RuleId = Field(description="id of the rule whose findings are waived (e.g. HSS-004)")
    scope: list[Id] = Field(
        default_factory=list, description="ids of elements/sites/groups/local networks (empty: all)"
    )
    reason: Text = Field(description="why the finding is accepted (shown with every waived finding)")
    expires: dt.date = Field(description=(
            "last day the waiver applies (YYYY-MM-DD); afterwards it is reported itself (WAIVER-001)"))


# --- operations: who to call, recovery targets, how each element is operated ------------------

_COMMAND_RE = re.compile(r"[A-Za-z0-9_./:=@+,-]+(?: [A-Za-z0-9_./:=@+,-]+)*")  # used with fullmatch


def _check_command(value: str) -> str:
    """Command words reach the runbooks' shell blocks: no quoting, globbing or shell metacharacters."""
    if len(value) > 200 or not _COMMAND_RE.fullmatch(value):  # fullmatch: '$' would let a final newline in
        raise ValueError(f"invalid command {value!r}: words of letters, digits and _ . / : = @ + , - "
                         "separated by single spaces (no shell metacharacters), at most 200 characters")
    return value


Command = Annotated[str, AfterValidator(_check_command),
                    _schema("^[A-Za-z0-9_./:=@+,-]+(?: [A-Za-z0-9_./:=@+,-]+)*$", maxLength=200)]
Phone = Annotated[str, Field(pattern=r"^\+?[0-9][0-9 -]{2,30}[0-9]$")]


class Contact(_Strict):
    role: Id = Field(description="who this is, e.g. noc, dns-on-call, dr-manager")
    name: Text = Field(description="the person or team to call, as the runbooks show it")
    phone: Phone = Field(description="phone number to call: digits, spaces and '-', optionally starting with '+'")
    services: list[ElementType] = Field(default_factory=list,
                                        description="element types this contact is called for (empty: all)")
    escalate_to: Id | None = Field(None, description="role to call when this one does not resolve it in time")
    escalate_after: Seconds | None = Field(None, description="seconds before escalating to 'escalate_to'")


class RecoveryTarget(_Strict):
    rto: Seconds = Field(description="recovery time objective: service restored within this many seconds")
    rpo: Annotated[int, Field(ge=0, le=86400)] = Field(0, description="recovery point objective: seconds of "
                                                                          "data changes that may be lost")


class Platform(_Strict):
    kind: Literal["bind", "kamailio", "vendor"] = Field(description=(
            "bind, kamailio or vendor: which commands the runbooks write for it"))
    control: Command | None = Field(None, description="how to run the control tool: rndc for bind, kamcmd for "
                                                      "kamailio (with socket/key options); vendor: its CLI")
    dig: Command = Field("dig", description="bind: how to query this server (e.g. 'dig -p 5353')")
    directory: Command = Field("/etc/imsdr/dns", description="where this platform's hosts load the "
                                                              "files of 'imsdr render dns' from")
    keys: Command | None = Field(None, description=(
        "bind: the views' TSIG keys file on the host that runs the runbook's checks ('imsdr verify "
        "--drain --keys'): a signed query selects its view from anywhere"))


class RuleSetting(str, Enum):
    OFF = "off"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Inventory(_Strict):
    """A whole inventory (format version 1)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True,
        json_schema_extra={"$schema": "https://json-schema.org/draft/2020-12/schema",
                           "title": "imsdr inventory v1"},
    )

    version: Literal[1] = Field(description="inventory format version: always 1")
    network: Network = Field(description=(
            "network-wide identity, numbering, timers, TTLs, capacity model and DNS settings"))
    sites: Annotated[list[Site], Field(min_length=1)] = Field(description=(
            "the data centres that hold the elements, with what each depends on"))
    local_networks: list[LocalNetwork] = Field(default_factory=list, description=(
            "user access areas: source prefixes, load, home sites"))
    elements: list[Element] = Field(default_factory=list, description=(
            "every network element (SBC, P-CSCF, CSCF, HSS, SLF, ENUM/DNS, MGCF, IM-MGW, AS)"))
    redundancy: Redundancy = Field(default_factory=Redundancy, description=(
            "the DR design: 1+1 pairs, N+K pools, SBC DR between local networks, ENUM/DNS sets"))
    enum_blocks: list[EnumBlock] = Field(default_factory=list, description="E.164 number blocks published in ENUM")
    waivers: list[Waiver] = Field(default_factory=list, description=(
            "accepted findings: rule, scope, reason and expiry date"))
    contacts: list[Contact] = Field(default_factory=list, description="who the runbooks tell you to call")
    recovery_targets: dict[ElementType, RecoveryTarget] = Field(
        default_factory=dict, description="RTO/RPO per service (element type)")
    platforms: dict[Id, Platform] = Field(default_factory=dict, description="how elements are operated")
    rules: dict[RuleId, RuleSetting] = Field(default_factory=dict, description="switch rules off or change their level")
    availability: Availability = Field(default_factory=lambda: Availability(), description=(
            "MTBF/MTTR and shared-risk event inputs of the availability model (unset: planning defaults)"))
