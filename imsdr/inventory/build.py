"""The one way to get a validated Inventory: load, validate, cross-check, raise once."""

from __future__ import annotations

import difflib
import ipaddress
import os
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ValidationError

from imsdr.diagnostics import Location, Problem
from imsdr.errors import InventoryError
from imsdr.inventory.loader import LoadedDocument, YamlPath, format_path, load_yaml_file, load_yaml_text
from imsdr.inventory.schema import ElementType, Inventory

MAX_ENUM_BLOCK_NUMBERS = 100_000_000


class SourceMap:
    """Where each part of a validated inventory was written, for problems and findings."""

    def __init__(self, doc: LoadedDocument, inventory: Inventory) -> None:
        self.file = doc.file
        self._doc = doc
        self._index: dict[tuple[str, str], YamlPath] = {}
        for i, site in enumerate(inventory.sites):
            self._index[("site", site.id)] = ("sites", i)
        for i, ln in enumerate(inventory.local_networks):
            self._index[("local_network", ln.id)] = ("local_networks", i)
        for i, el in enumerate(inventory.elements):
            self._index[("element", el.id)] = ("elements", i)
        for i, pair in enumerate(inventory.redundancy.pairs):
            self._index[("group", pair.id)] = ("redundancy", "pairs", i)
        for i, pool in enumerate(inventory.redundancy.pools):
            self._index[("group", pool.id)] = ("redundancy", "pools", i)
        for i, block in enumerate(inventory.enum_blocks):
            self._index[("enum_block", block.id)] = ("enum_blocks", i)

    def locate(self, *path: str | int) -> Location | None:
        return self._doc.locate(tuple(path))

    def path_of(self, kind: str, ident: str) -> YamlPath | None:
        return self._index.get((kind, ident))

    def locate_id(self, ident: str, *fields: str | int) -> Location | None:
        """Location of the object with id ``ident`` (any kind), or of one of its fields."""
        for kind in ("element", "group", "site", "local_network", "enum_block"):
            base = self._index.get((kind, ident))
            if base is not None:
                return self._doc.locate((*base, *fields))
        return None


def load_inventory(path: str | os.PathLike[str]) -> tuple[Inventory, SourceMap]:
    """Load and validate an inventory file; raise InventoryError with every problem found."""
    return validate_document(load_yaml_file(path))


def load_inventory_text(text: str, file: str = "<string>") -> tuple[Inventory, SourceMap]:
    return validate_document(load_yaml_text(text, file))


def validate_document(doc: LoadedDocument) -> tuple[Inventory, SourceMap]:
    try:
        inventory = Inventory.model_validate(doc.data)
    except ValidationError as exc:
        problems = [_problem_from_pydantic(doc, err) for err in exc.errors(include_url=False)]
        raise InventoryError(f"{doc.file}: invalid inventory", _sorted(problems)) from None
    problems = list(_cross_check(inventory, doc))
    if problems:
        raise InventoryError(f"{doc.file}: invalid inventory", _sorted(problems))
    return inventory, SourceMap(doc, inventory)


def _sorted(problems: list[Problem]) -> list[Problem]:
    def key(p: Problem) -> tuple[int, int, str]:
        return (p.location.line, p.location.column, p.message) if p.location else (0, 0, p.message)

    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=key)


# --- pydantic errors → problems ---------------------------------------------------------------

def _model_at(path: YamlPath) -> type[BaseModel] | None:
    """The pydantic model class describing the mapping at ``path`` (for listing valid fields)."""
    current: Any = Inventory
    for part in path:
        if isinstance(current, type) and issubclass(current, BaseModel):
            if not isinstance(part, str) or part not in current.model_fields:
                return None
            current = current.model_fields[part].annotation
        elif isinstance(part, int):
            current = _item_type(current)
        else:
            return None
        current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(tp: Any) -> Any:
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = args[0] if len(args) == 1 else tp
            if len(args) != 1:
                return tp
        else:
            return tp


def _item_type(tp: Any) -> Any:
    tp = _unwrap(tp)
    if typing.get_origin(tp) is list:
        return typing.get_args(tp)[0]
    return None


def _problem_from_pydantic(doc: LoadedDocument, err: Any) -> Problem:
    loc: YamlPath = tuple(p for p in err["loc"] if p != "[key]")
    kind = err["type"]
    message = str(err["msg"])
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    if kind == "missing":
        field = loc[-1]
        location = doc.locate(loc[:-1])
        message = f"required field '{field}' is missing"
    elif kind == "extra_forbidden":
        location = doc.locate_key(loc)
        field = str(loc[-1])
        model = _model_at(loc[:-1])
        known = sorted(model.model_fields) if model else []
        close = difflib.get_close_matches(field, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        expected = f" (expected one of: {', '.join(known)})" if known else ""
        message = f"unknown field '{field}'{hint}{expected}"
    else:
        location = doc.locate(loc)
        value = err.get("input")
        if kind not in ("value_error", "assertion_error") and not isinstance(value, (dict, list)):
            message = f"{message} (got {value!r})"
        elif kind in ("list_type", "dict_type", "model_type") or isinstance(value, (dict, list)):
            message = f"{message} (got a {type(value).__name__})"
    return Problem(location, format_path(loc), message)


# --- cross-references -------------------------------------------------------------------------------

def _cross_check(inv: Inventory, doc: LoadedDocument) -> Iterator[Problem]:
    def at(path: YamlPath, message: str) -> Problem:
        return Problem(doc.locate(path), format_path(path), message)

    owners: dict[str, tuple[str, YamlPath]] = {}

    def claim(ident: str, kind: str, path: YamlPath) -> Iterator[Problem]:
        if ident in owners:
            other_kind, other_path = owners[ident]
            other = doc.locate(other_path)
            line = f" at line {other.line}" if other else ""
            yield at((*path, "id"), f"duplicate id '{ident}' (already used by {other_kind}{line}); ids must be unique")
        else:
            owners[ident] = (kind, (*path, "id"))

    for i, site in enumerate(inv.sites):
        yield from claim(site.id, "site", ("sites", i))
    for i, ln in enumerate(inv.local_networks):
        yield from claim(ln.id, "local network", ("local_networks", i))
    for i, el in enumerate(inv.elements):
        yield from claim(el.id, "element", ("elements", i))
    for i, pair in enumerate(inv.redundancy.pairs):
        yield from claim(pair.id, "pair", ("redundancy", "pairs", i))
    for i, pool in enumerate(inv.redundancy.pools):
        yield from claim(pool.id, "pool", ("redundancy", "pools", i))
    block_ids: set[str] = set()
    for i, block in enumerate(inv.enum_blocks):
        if block.id in block_ids:
            yield at(("enum_blocks", i, "id"), f"duplicate ENUM block id '{block.id}'")
        block_ids.add(block.id)

    sites = {s.id for s in inv.sites}
    lns = {ln.id for ln in inv.local_networks}
    elements = {e.id: e for e in inv.elements}
    groups = {g.id for g in (*inv.redundancy.pairs, *inv.redundancy.pools)}

    def ref(path: YamlPath, ident: str, known: set[str] | dict[str, Any], what: str) -> Iterator[Problem]:
        if ident not in known:
            close = difflib.get_close_matches(ident, list(known), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            yield at(path, f"unknown {what} '{ident}'{hint}")

    for i, ln in enumerate(inv.local_networks):
        for j, site_id in enumerate(ln.home_sites):
            yield from ref(("local_networks", i, "home_sites", j), site_id, sites, "site")

    seen_addresses: dict[str, str] = {}
    seen_fqdns: dict[str, str] = {}
    for i, el in enumerate(inv.elements):
        base: YamlPath = ("elements", i)
        yield from ref((*base, "site"), el.site, sites, "site")
        if el.type is ElementType.CSCF and not el.roles:
            yield at((*base, "roles"), "a cscf needs at least one role (icscf, scscf, ecscf, bgcf)")
        if el.roles and el.type is not ElementType.CSCF:
            yield at((*base, "roles"), f"roles apply to cscf elements only, not {el.type.value}")
        if el.serves and el.type is not ElementType.SBC:
            yield at((*base, "serves"), f"'serves' applies to sbc elements only, not {el.type.value}")
        if el.pcscfs and el.type is not ElementType.SBC:
            yield at((*base, "pcscfs"), f"'pcscfs' applies to sbc elements only, not {el.type.value}")
        for j, ln_id in enumerate(el.serves):
            yield from ref((*base, "serves", j), ln_id, lns, "local network")
        for j, pcscf in enumerate(el.pcscfs):
            if pcscf not in elements:
                yield from ref((*base, "pcscfs", j), pcscf, elements, "element")
            elif elements[pcscf].type is not ElementType.PCSCF:
                yield at((*base, "pcscfs", j), f"'{pcscf}' is a {elements[pcscf].type.value}, not a pcscf")
        for j, addr in enumerate(el.addresses):
            if addr in seen_addresses:
                yield at((*base, "addresses", j), f"address {addr} is already used by element '{seen_addresses[addr]}'")
            seen_addresses.setdefault(addr, el.id)
        if len(set(el.addresses)) != len(el.addresses):
            yield at((*base, "addresses"), "an address is listed twice")
        if el.fqdn:
            if el.fqdn in seen_fqdns:
                yield at((*base, "fqdn"), f"fqdn {el.fqdn} is already used by element '{seen_fqdns[el.fqdn]}'")
            seen_fqdns.setdefault(el.fqdn, el.id)

    group_of: dict[str, str] = {}
    for kind, items in (("pairs", inv.redundancy.pairs), ("pools", inv.redundancy.pools)):
        for i, group in enumerate(items):
            base = ("redundancy", kind, i)
            for j, member in enumerate(group.members):
                yield from ref((*base, "members", j), member, elements, "element")
            if len(set(group.members)) != len(group.members):
                yield at((*base, "members"), "a member is listed twice")
            if kind == "pairs" and len(group.members) != 2:
                yield at((*base, "members"), f"a 1+1 pair has exactly 2 members, got {len(group.members)} (use a pool for more)")
            if group.sync == "periodic" and group.backup_interval is None:
                yield at((*base, "backup_interval"), "periodic sync needs 'backup_interval' (seconds between copies)")
            for member in group.members:
                group_of.setdefault(member, group.id)

    dr = inv.redundancy.sbc_dr
    if dr is not None:
        if dr.layout == "ring":
            if len(dr.order) < 2:
                yield at(("redundancy", "sbc_dr", "order"), "a ring needs 'order' with at least 2 local networks")
            for j, ln_id in enumerate(dr.order):
                yield from ref(("redundancy", "sbc_dr", "order", j), ln_id, lns, "local network")
        if dr.layout == "hub":
            if dr.hub is None:
                yield at(("redundancy", "sbc_dr"), "a hub layout needs 'hub' (the SBC that backs up the others)")
            elif dr.hub not in elements:
                yield from ref(("redundancy", "sbc_dr", "hub"), dr.hub, elements, "element")
            elif elements[dr.hub].type is not ElementType.SBC:
                yield at(("redundancy", "sbc_dr", "hub"), f"hub '{dr.hub}' is a {elements[dr.hub].type.value}, not an sbc")

    for j, ns in enumerate(inv.network.dns.nameservers):
        if ns not in elements:
            yield from ref(("network", "dns", "nameservers", j), ns, elements, "element")
        elif elements[ns].type is not ElementType.ENUM_DNS:
            yield at(("network", "dns", "nameservers", j), f"nameserver '{ns}' is a {elements[ns].type.value}, not an enum_dns")

    all_ids = set(owners)
    for i, waiver in enumerate(inv.waivers):
        for j, ident in enumerate(waiver.scope):
            yield from ref(("waivers", i, "scope", j), ident, all_ids, "id")

    yield from _check_prefix_overlaps(inv, doc)
    yield from _check_enum_blocks(inv, doc)


def _check_prefix_overlaps(inv: Inventory, doc: LoadedDocument) -> Iterator[Problem]:
    """Two local networks claiming the same source addresses would make DNS views ambiguous."""
    entries = []
    for i, ln in enumerate(inv.local_networks):
        for j, prefix in enumerate(ln.prefixes):
            net = ipaddress.ip_network(prefix)
            entries.append((net.version, int(net.network_address), int(net.broadcast_address), ln.id, (i, j)))
    entries.sort()
    active: list[tuple[int, int, int, str, tuple[int, int]]] = []
    for entry in entries:
        version, start, _end, ln_id, (i, j) = entry
        active = [a for a in active if a[0] == version and a[2] >= start]
        for other in active:
            if other[3] != ln_id:
                path = ("local_networks", i, "prefixes", j)
                yield Problem(doc.locate(path), format_path(path),
                              f"prefix {inv.local_networks[i].prefixes[j]} overlaps a prefix of local network '{other[3]}'")
        active.append(entry)


def _check_enum_blocks(inv: Inventory, doc: LoadedDocument) -> Iterator[Problem]:
    cc = inv.network.country_code
    for i, block in enumerate(inv.enum_blocks):
        base: YamlPath = ("enum_blocks", i)

        def at(field: str, message: str, base: YamlPath = base) -> Problem:
            return Problem(doc.locate((*base, field)), format_path((*base, field)), message)

        if not block.prefix.startswith(cc):
            yield at("prefix", f"prefix +{block.prefix} does not start with the country code {cc}")
        if block.style == "wildcard":
            if block.first or block.last or block.length:
                yield at("style", "a wildcard block covers its whole prefix; 'first', 'last' and 'length' apply to style: numbers")
            continue
        if block.length is None:
            yield at("length", "style: numbers needs 'length' (total digits of a number, country code included)")
            continue
        if block.length <= len(block.prefix):
            yield at("length", f"length {block.length} leaves no digits after prefix +{block.prefix}")
            continue
        free = block.length - len(block.prefix)
        first = block.first or block.prefix + "0" * free
        last = block.last or block.prefix + "9" * free
        bad = False
        for field, number in (("first", first), ("last", last)):
            if len(number) != block.length or not number.startswith(block.prefix):
                yield at(field, f"+{number} is not a {block.length}-digit number under +{block.prefix}")
                bad = True
        if bad:
            continue
        count = int(last) - int(first) + 1
        if count <= 0:
            yield at("last", f"last +{last} is before first +{first}")
        elif count > MAX_ENUM_BLOCK_NUMBERS:
            yield at("length", f"block holds {count:,} numbers, more than {MAX_ENUM_BLOCK_NUMBERS:,} NAPTR records; "
                               "use style: wildcard for blocks this large")


def block_range(block: Any) -> tuple[int, int, int]:
    """(first, last, digits) of a numbers-style ENUM block, as validated above."""
    free = block.length - len(block.prefix)
    first = block.first or block.prefix + "0" * free
    last = block.last or block.prefix + "9" * free
    return int(first), int(last), block.length
