"""The draft inventory that imports build: facts from each source, placeholders for the rest.

Every importer returns a :class:`Draft` holding only what its source states. Drafts merge: a fact
fills a field that is missing or still a placeholder; two sources stating different facts about the
same field is a conflict, reported with both sources, never settled by a guess. ``complete`` then
writes a placeholder (see ``imsdr.inventory.placeholders``) for every field the format needs and
no source could tell, so ``imsdr validate`` lists exactly what remains to fill in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from imsdr.inventory.placeholders import is_placeholder, placeholder

# list sections keyed by id, in the order the inventory format writes them
ENTITY_SECTIONS = ("sites", "local_networks", "elements", "pairs", "pools", "enum_blocks")

CAPACITY_UNIT = {
    "enum_dns": "queries_per_second", "sbc": "registered_users", "pcscf": "registered_users",
    "cscf": "registered_users", "hss": "subscribers", "slf": "subscribers", "mgcf": "circuits",
    "imgw": "circuits", "as": "sessions",
}


_ROLE_ORDER = ("icscf", "scscf", "ecscf", "bgcf")


def _roles(old: list[str], new: list[str]) -> list[str]:
    """Each source shows some roles of a CSCF; together they show at least their union."""
    return [r for r in _ROLE_ORDER if r in old or r in new]


def _addresses(old: list[str], new: list[str]) -> list[str]:
    """Sources see different interfaces of an element: keep them all, IPv4 before IPv6."""
    merged = list(dict.fromkeys([*old, *new]))
    return [a for a in merged if ":" not in a] + [a for a in merged if ":" in a]


UNION_FIELDS = {"roles": _roles, "addresses": _addresses}


@dataclass
class Conflict:
    where: str
    first: tuple[str, Any]
    second: tuple[str, Any]

    def __str__(self) -> str:
        return (f"{self.where}: {self.first[0]} says {self.first[1]!r}, "
                f"{self.second[0]} says {self.second[1]!r}; fix the sources or edit the draft by hand")


@dataclass
class Draft:
    """What one or more sources said about the network, as inventory-shaped data."""

    network: dict[str, Any] = field(default_factory=dict)
    sites: dict[str, dict[str, Any]] = field(default_factory=dict)
    local_networks: dict[str, dict[str, Any]] = field(default_factory=dict)
    elements: dict[str, dict[str, Any]] = field(default_factory=dict)
    pairs: dict[str, dict[str, Any]] = field(default_factory=dict)
    pools: dict[str, dict[str, Any]] = field(default_factory=dict)
    sbc_dr: dict[str, Any] = field(default_factory=dict)
    enum_dns: dict[str, Any] = field(default_factory=dict)
    enum_blocks: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)  # "what from where", for the summary
    notes: list[str] = field(default_factory=list)  # what the planner should know about a value taken
    origin: dict[str, str] = field(default_factory=dict)  # field path -> source that stated it
    # element id -> its rank among elements of its type (a dispatcher set number, a row number):
    # the order sources list elements in is the order the inventory keeps (set numbers follow it)
    order: dict[str, int] = field(default_factory=dict)
    # element ids made up from a host name (DNS does not carry ids): a source that names the element
    # itself (a dispatcher list's duid, a spreadsheet's id column) renames them
    derived_ids: set[str] = field(default_factory=set)
    # numbers whose ENUM records differ from their block's: rows of an ``--enum-exceptions`` file
    # (number with '+', kind, target, params; imsdr.dns.enum_exceptions), written beside the draft
    enum_exceptions: list[tuple[str, str, str, str]] = field(default_factory=list)
    # records imsdr cannot express, by zone: master-file lines kept as they are (see docs/import.md)
    kept_records: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # one per kind of thing read but not modelled

    def entity(self, section: str, ident: str) -> dict[str, Any]:
        return getattr(self, section).setdefault(ident, {})

    def state(self, source: str, where: str, target: dict[str, Any], key: str, value: Any,
              conflicts: list[Conflict]) -> None:
        """Record that ``source`` states ``target[key] = value`` (``where`` names the field)."""
        old = target.get(key)
        if key not in target or is_placeholder(old) or (isinstance(old, dict) and not old):
            target[key] = value
            self.origin[where] = source
        elif key in UNION_FIELDS and isinstance(old, list) and isinstance(value, list):
            target[key] = UNION_FIELDS[key](old, value)
        elif isinstance(old, dict) and isinstance(value, dict):
            for sub, v in value.items():
                self.state(source, f"{where}.{sub}", old, sub, v, conflicts)
        elif old != value and not is_placeholder(value):
            conflicts.append(Conflict(where, (self.origin.get(where, "an earlier source"), old), (source, value)))


def rename_element(draft: Draft, old: str, new: str) -> None:
    """Give a derived element id the name another source states, everywhere it is used."""
    draft.elements[new] = draft.elements.pop(old)
    for key in [k for k in draft.origin if k.startswith(f"elements[{old}].")]:
        draft.origin[f"elements[{new}]" + key[len(f"elements[{old}]"):]] = draft.origin.pop(key)
    if old in draft.order:
        draft.order[new] = draft.order.pop(old)
    draft.derived_ids.discard(old)
    for group in [*draft.pairs.values(), *draft.pools.values()]:
        group["members"] = [new if m == old else m for m in group.get("members", [])]
    servers = draft.network.get("dns", {}).get("nameservers", [])
    draft.network.get("dns", {}).update({"nameservers": [new if m == old else m for m in servers]} if servers else {})
    for el in draft.elements.values():
        if old in el.get("pcscfs", []):
            el["pcscfs"] = [new if m == old else m for m in el["pcscfs"]]


def _adopt_names(base: Draft, other: Draft) -> None:
    """Elements ``other`` names that ``base`` only knows by a derived id with the same address."""
    by_address = {a: ident for ident in base.derived_ids for a in base.elements[ident].get("addresses", [])}
    for ident, fields in other.elements.items():
        if ident in base.elements or ident in other.derived_ids:
            continue
        matches = {by_address[a] for a in fields.get("addresses", []) if a in by_address}
        if len(matches) == 1:
            rename_element(base, matches.pop(), ident)


def merge(base: Draft, other: Draft) -> list[Conflict]:
    """Fold ``other`` into ``base``; returns the conflicts (``base`` keeps its value there)."""
    conflicts: list[Conflict] = []
    _adopt_names(base, other)
    _adopt_names(other, base)
    for key, value in other.network.items():
        base.state(other.origin.get(f"network.{key}", "?"), f"network.{key}", base.network, key, value, conflicts)
    for section in ENTITY_SECTIONS:
        for ident, fields in getattr(other, section).items():
            target = base.entity(section, ident)
            for key, value in fields.items():
                where = f"{section}[{ident}].{key}"
                base.state(other.origin.get(where, "?"), where, target, key, value, conflicts)
    for attr in ("sbc_dr", "enum_dns"):
        for key, value in getattr(other, attr).items():
            where = f"redundancy.{attr}.{key}"
            base.state(other.origin.get(where, "?"), where, getattr(base, attr), key, value, conflicts)
    base.sources.extend(other.sources)
    base.notes.extend(other.notes)
    base.warnings.extend(other.warnings)
    base.enum_exceptions.extend(other.enum_exceptions)
    for zone, lines in other.kept_records.items():
        base.kept_records.setdefault(zone, []).extend(lines)
    base.order.update(other.order)
    base.derived_ids |= {i for i in other.derived_ids if i in base.elements}
    return conflicts


def _fill(target: dict[str, Any], key: str, what: str) -> None:
    if key not in target:
        target[key] = placeholder(what)


def complete(draft: Draft) -> None:
    """Write a placeholder for every field the format needs that no source stated."""
    net = draft.network
    _fill(net, "name", "the network's name (one line, shown in every output)")
    _fill(net, "operator_domain", "the operator's DNS domain (SOA contact domain)")
    if "home_domains" not in net:
        net["home_domains"] = [placeholder("the IMS home domain(s), primary first")]
    _fill(net, "country_code", "the E.164 country code of the numbers (e.g. 86)")
    net.setdefault("deployment", placeholder("production or lab"))
    for ident, site in draft.sites.items():
        _fill(site, "name", f"the name of site {ident}")
        _fill(site, "region", f"the service region of site {ident}")
        site.setdefault("power", [placeholder(f"the power feeds site {ident} depends on")])
        site.setdefault("transmission", [placeholder(f"the transmission routes site {ident} depends on")])
    for ident, local in draft.local_networks.items():
        _fill(local, "name", f"the name of local network {ident}")
        local.setdefault("prefixes", [placeholder(f"the user source prefixes of local network {ident}")])
        local.setdefault("home_sites", [placeholder(f"the home site(s) of local network {ident}")])
        _fill(local, "subscribers", f"registered users of local network {ident} in the busy hour")
        _fill(local, "busy_hour_erlangs", f"busy-hour voice traffic of local network {ident} (Erlang)")
    for ident, el in draft.elements.items():
        _fill(el, "type", f"the element type of {ident} (its name and DNS records do not tell)")
        _fill(el, "site", f"the site {ident} is located at")
        _fill(el, "vendor", f"the vendor of {ident}")
        unit = CAPACITY_UNIT.get(el["type"]) if not is_placeholder(el["type"]) else None
        capacity = el.setdefault("capacity", {})
        if unit and unit not in capacity:
            capacity[unit] = placeholder(f"{unit.replace('_', ' ')} capacity of {ident}")
        if el.get("type") == "cscf" and "roles" not in el:
            el["roles"] = [placeholder(f"the roles of {ident} (icscf, scscf, ecscf, bgcf)")]
    for ident, pair in draft.pairs.items():
        _fill(pair, "mode", f"active-active or active-standby for pair {ident}")
        _fill(pair, "sync", f"data synchronisation of pair {ident} (realtime, periodic or none)")
    for ident, pool in draft.pools.items():
        _fill(pool, "spare", f"K of N+K for pool {ident}: how many members may fail at once")
        _fill(pool, "selection", f"how clients select a member of pool {ident} (static, dns, weighted, "
                                 "capabilities or fixed)")


def _ordered(fields: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    out = {key: fields[key] for key in order if key in fields}
    out.update((key, value) for key, value in fields.items() if key not in out)
    return out


_NETWORK_ORDER = ("name", "operator_domain", "home_domains", "mcc", "mnc", "country_code", "enum_suffix",
                  "deployment", "timers", "ttl", "capacity_model", "dns")
_ORDER = {
    "sites": ("id", "name", "region", "province", "power", "transmission", "lat", "lon", "core_subnets"),
    "local_networks": ("id", "name", "prefixes", "resolvers", "home_sites", "subscribers", "busy_hour_erlangs"),
    "elements": ("id", "type", "roles", "site", "vendor", "addresses", "access_addresses", "core_addresses",
                 "port", "tls_port", "transports", "fqdn",
                 "serves", "pcscfs", "capacity", "features", "answers_options", "options_probing"),
    "pairs": ("id", "members", "mode", "sync", "dns_name"),
    "pools": ("id", "members", "spare", "selection", "role", "dns_name"),
    "enum_blocks": ("id", "prefix", "length", "style", "domain", "first", "last"),
}


def as_inventory(draft: Draft) -> dict[str, Any]:
    """The draft as an inventory document (format version 1), keys in the documented order."""
    doc: dict[str, Any] = {"version": 1, "network": _ordered(draft.network, _NETWORK_ORDER)}
    for section in ("sites", "local_networks"):
        doc[section] = [_ordered({"id": i, **f}, _ORDER[section]) for i, f in getattr(draft, section).items()]
    doc["elements"] = [_ordered({"id": i, **draft.elements[i]}, _ORDER["elements"]) for i in _element_order(draft)]
    redundancy: dict[str, Any] = {
        kind: [_ordered({"id": i, **getattr(draft, kind)[i]}, _ORDER[kind]) for i in _group_order(draft, kind)]
        for kind in ("pairs", "pools")
    }
    if draft.sbc_dr:
        redundancy["sbc_dr"] = dict(draft.sbc_dr)
    if draft.enum_dns:
        redundancy["enum_dns"] = dict(draft.enum_dns)
    doc["redundancy"] = redundancy
    doc["enum_blocks"] = [_ordered({"id": i, **f}, _ORDER["enum_blocks"]) for i, f in draft.enum_blocks.items()]
    return doc


_TYPE_ORDER = tuple(CAPACITY_UNIT)  # the order the inventory format lists element types in


def _element_order(draft: Draft) -> list[str]:
    """By type, then the rank the sources gave (dispatcher set, spreadsheet row), then id."""
    def key(ident: str) -> tuple[int, int, str]:
        kind = draft.elements[ident].get("type")
        rank = _TYPE_ORDER.index(kind) if kind in _TYPE_ORDER else len(_TYPE_ORDER)
        return rank, draft.order.get(ident, 1 << 30), ident

    return sorted(draft.elements, key=key)


def _group_order(draft: Draft, kind: str) -> list[str]:
    """Groups in the order of their members' types, then by name."""
    groups = getattr(draft, kind)

    def key(ident: str) -> tuple[int, str]:
        members = groups[ident].get("members") or []
        kind_of = draft.elements.get(members[0], {}).get("type") if members else None
        return (_TYPE_ORDER.index(kind_of) if kind_of in _TYPE_ORDER else len(_TYPE_ORDER)), ident

    return sorted(groups, key=key)


def count_placeholders(data: Any) -> int:
    if is_placeholder(data):
        return 1
    if isinstance(data, dict):
        return sum(count_placeholders(v) for v in data.values())
    if isinstance(data, list):
        return sum(count_placeholders(v) for v in data)
    return 0
