"""The one way to get a validated Inventory: load, validate, cross-check, raise once.

One module past 600 lines: the cross-checks read the raw document tolerantly and report
with one location model; they share the id index (``_References``) built in one pass.
"""

from __future__ import annotations

import datetime as dt
import difflib
import gc
import ipaddress
import os
import re
import types
import typing
from collections.abc import Iterator
from enum import Enum
from typing import Any

from pydantic import BaseModel, ValidationError

from imsdr.diagnostics import Location, Problem
from imsdr.errors import InventoryError
from imsdr.inventory.loader import (
    LoadedDocument,
    YamlPath,
    format_path,
    load_yaml_file,
    load_yaml_text,
    shorten,
)
from imsdr.inventory.placeholders import find_placeholders
from imsdr.inventory.scalars import decimal_spelling
from imsdr.inventory.schema import ElementType, Inventory, parse_address, parse_prefix

MAX_ENUM_BLOCK_NUMBERS = 100_000_000
MAX_ENUM_NUMBERS = 100_000_000  # all numbers blocks together (national scale: 10,000,000)
# What the sizing model can compute (imsdr.capacity.erlang.MAX_CIRCUITS is 1,000,000): Erlang B
# runs once per circuit, so larger values would take hours instead of failing with a message.
MAX_CIRCUITS = 1_000_000
MAX_POOL_ERLANGS = 900_000.0  # needs ~902,000 circuits at 1% blocking: within MAX_CIRCUITS


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
    """Load and validate an inventory file; raise InventoryError with every problem found.

    Nothing is cached: every run reads and validates the file it is given. The cyclic garbage
    collector is paused meanwhile: loading builds ~150,000 objects (national scale) and none of
    them is garbage yet, so its passes would only cost time (nor the first one after it: what was
    loaded joins the oldest generation untraversed, as in ``imsdr.analysis.cyclic_gc_paused``, a
    layer above this one)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return validate_document(load_yaml_file(path, tolerant=True))
    finally:
        if enabled:
            if not gc.get_freeze_count():  # (as there: never thaw what someone else froze)
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def load_inventory_text(text: str, file: str = "<string>") -> tuple[Inventory, SourceMap]:
    return validate_document(load_yaml_text(text, file, tolerant=True))


def load_inventory_stream(stream: Any, file: str = "<stdin>") -> tuple[Inventory, SourceMap]:
    """Load and validate an inventory read from a binary stream (standard input)."""
    from imsdr.inventory.loader import load_yaml_stream

    return validate_document(load_yaml_stream(stream, file, tolerant=True))


def validate_document(doc: LoadedDocument) -> tuple[Inventory, SourceMap]:
    """Validate ``doc`` and report every problem in one run.

    Four passes, all run whatever the others find: what the loader found (duplicate keys,
    forbidden tags), scalar types checked strictly (``true`` is not a port, ``"11"`` is not
    a length), the pydantic schema, and cross-references checked tolerantly on the raw data
    (duplicate ids, dangling references, overlaps) so they are reported even when the
    schema fails elsewhere. A path already reported by an earlier pass is not reported
    again by a later one.
    """
    problems = list(doc.problems)
    claimed: set[YamlPath] = set(doc.poisoned)

    def fresh(path: YamlPath) -> bool:
        return not any(path[:i] in claimed for i in range(len(path) + 1))

    # left by `imsdr import`: the one problem there (no walk over every value where none can be)
    for path, what in find_placeholders(doc.data) if doc.placeholders_possible else ():
        claimed.add(path)
        problems.append(Problem(doc.locate(path), format_path(path), f"placeholder to fill in: {what}"))
    for path, message in _strict_types(doc.data, Inventory, ()):
        if fresh(path):
            claimed.add(path)
            problems.append(Problem(doc.locate(path), format_path(path), message))

    inventory: Inventory | None = None
    try:
        inventory = Inventory.model_validate(doc.data)
    except ValidationError as exc:
        for err in _without_misspelt_required(exc.errors(include_url=False)):
            if fresh(tuple(p for p in err["loc"] if p != "[key]")):
                problems.append(_problem_from_pydantic(doc, err))
    for path, message in _cross_check(doc):
        if fresh(path):
            problems.append(Problem(doc.locate(path), format_path(path), message))
    if problems or inventory is None:
        raise InventoryError(f"{doc.file}: invalid inventory", _sorted(problems))
    return inventory, SourceMap(doc, inventory)


def _sorted(problems: list[Problem]) -> list[Problem]:
    def key(p: Problem) -> tuple[int, int, str]:
        return (p.location.line, p.location.column, p.message) if p.location else (0, 0, p.message)

    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=key)


# --- strict scalar types ------------------------------------------------------------------------
# pydantic's lax mode would read `port: true` as 1, `length: "11"` as 11 and `answers_options: 1`
# as true. YAML already gives every value its type, so a mismatch is a mistake worth reporting.

def _describe(value: Any) -> str:
    """'the integer 86', 'the boolean true', 'the date 2024-01-01', 'text '86'' for messages."""
    if value is None:
        return "an empty value (null)"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"the integer {shorten(value)}"
    if isinstance(value, float):
        return f"the number {shorten(value)}"
    if isinstance(value, dt.datetime):
        return f"the timestamp {value.isoformat()}"
    if isinstance(value, dt.date):
        return f"the date {value.isoformat()}"
    if isinstance(value, str):
        return f"the text {shorten(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def _yaml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


MAX_TEXT = 1000  # no text field of the format is longer than 253 characters


def _strict_types(value: Any, annotation: Any, path: YamlPath) -> Iterator[tuple[YamlPath, str]]:
    """Walk raw data beside the model's annotations; yield (path, message) for scalars whose
    YAML type is not the one expected. Everything else is left to pydantic."""
    out: list[tuple[YamlPath, str]] = []
    plans: dict[int, tuple[Any, tuple[Any, ...]]] = {}  # what to check per annotation, for this walk
    if value is not None:
        plan = _plan(annotation, plans)
        if plan[0] in _CONTAINERS:
            _strict_walk(value, plan, path, out)
        else:
            problem = _scalar_problem(value, plan)
            if problem:
                out.append((path, problem))
    return iter(out)


_CONTAINERS = frozenset(("model", "list", "dict"))


def _plan(annotation: Any, plans: dict[int, tuple[Any, tuple[Any, ...]]]) -> tuple[Any, ...]:
    """What to check for ``annotation``, worked out once per walk with the plans of its children
    (the walk visits ~100,000 values of a national inventory; typing introspection per value cost
    seconds)."""
    entry = plans.get(id(annotation))
    if entry is not None and entry[0] is annotation:
        return entry[1]
    tp = _unwrap(annotation)
    plan: tuple[Any, ...]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        fields: list[tuple[str, tuple[Any, ...]]] = []
        plan = ("model", fields)
        plans[id(annotation)] = (annotation, plan)  # before the fields: a model may contain itself
        fields.extend((name, _plan(info.annotation, plans)) for name, info in tp.model_fields.items())
        return plan
    origin = typing.get_origin(tp)
    if origin is list:
        (item,) = typing.get_args(tp)
        plan = ("list", _plan(item, plans))
    elif origin is dict:
        _key, item = typing.get_args(tp)
        plan = ("dict", _plan(item, plans))
    elif origin is typing.Literal:
        plan = ("literal", typing.get_args(tp))
    elif tp is bool:
        plan = ("bool",)
    elif tp is int or tp is float:
        plan = ("number", "a whole number" if tp is int else "a number")
    elif tp is str or (isinstance(tp, type) and issubclass(tp, Enum)):
        plan = ("text",)
    else:
        plan = ("other",)
    plans[id(annotation)] = (annotation, plan)
    return plan


def _strict_walk(value: Any, plan: tuple[Any, ...], path: YamlPath, out: list[tuple[YamlPath, str]]) -> None:
    """Check the children of the container ``value`` described by ``plan``; a path is built only
    for a child container or a problem."""
    kind = plan[0]
    if kind == "model":
        if not isinstance(value, dict):
            return
        children = ((name, value[name], field_plan) for name, field_plan in plan[1] if name in value)
    elif kind == "list":
        if not isinstance(value, list):
            return
        children = ((i, entry, plan[1]) for i, entry in enumerate(value))
    elif kind == "dict":
        if not isinstance(value, dict):
            return
        children = ((name, entry, plan[1]) for name, entry in value.items())
    else:
        return
    for key, child, child_plan in children:
        if child is None:
            continue
        child_kind = child_plan[0]
        if child_kind in _CONTAINERS:
            _strict_walk(child, child_plan, (*path, key), out)
        elif child_kind == "other" or (child_kind == "text" and (not isinstance(child, str) or len(child) <= MAX_TEXT)):
            continue  # most values: nothing to check
        else:
            problem = _scalar_problem(child, child_plan)
            if problem:
                out.append(((*path, key), problem))


def _scalar_problem(value: Any, plan: tuple[Any, ...]) -> str | None:
    kind = plan[0]
    if kind == "literal":
        allowed = plan[1]
        if isinstance(value, bool) and not any(isinstance(a, bool) for a in allowed):
            shown = ", ".join(repr(a) for a in allowed)
            return f"got {_describe(value)}, expected {shown}"
    elif kind == "bool":
        if not isinstance(value, bool):
            return f"got {_describe(value)}, expected true or false"
    elif kind == "number":
        if isinstance(value, bool | str):
            spelling = decimal_spelling(value.strip()) if isinstance(value, str) else None
            hint = f" (write it without quotes: {spelling})" if spelling else ""
            return f"got {_describe(value)}, expected {plan[1]}{hint}"
    elif kind == "text" and isinstance(value, str) and len(value) > MAX_TEXT:
        return f"got text of {len(value):,} characters, expected at most a few hundred"
    return None


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


_EXPECTED = {
    "string_type": "text",
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping (field: value)",
    "model_type": "a mapping (field: value)",
    "model_attributes_type": "a mapping (field: value)",
    "date_type": "a date (YYYY-MM-DD)",
    "date_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "a date without a time (YYYY-MM-DD)",
    "enum": None,
    "literal_error": None,
}
_PATTERNS = {
    "^[0-9]{3}$": "three digits in quotes, e.g. \"460\"",
    "^[0-9]{2,3}$": "two or three digits in quotes, e.g. \"01\"",
    "^[1-9][0-9]{0,2}$": "a country code of 1-3 digits in quotes, e.g. \"86\"",
}
MAX_MESSAGE = 400


def _misspelling_of(err: Any) -> str | None:
    """The known field an unknown field's name is closest to (its did-you-mean), if any."""
    if err["type"] != "extra_forbidden":
        return None
    loc = tuple(p for p in err["loc"] if p != "[key]")
    model = _model_at(loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), sorted(model.model_fields), n=1) if model else []
    return close[0] if close else None


def _without_misspelt_required(errors: list[Any]) -> list[Any]:
    """pydantic reports a misspelt required field twice: the field missing and the misspelling
    unknown. Keep one problem, at the misspelt key (where the fix is), saying both."""
    misspelt = {}
    for err in errors:
        close = _misspelling_of(err)
        if close is not None:
            misspelt[(*tuple(p for p in err["loc"] if p != "[key]")[:-1], close)] = err
    kept = []
    for err in errors:
        if err["type"] == "missing" and tuple(err["loc"]) in misspelt:
            misspelt[tuple(err["loc"])]["required_missing"] = True
        else:
            kept.append(err)
    return kept


def _problem_from_pydantic(doc: LoadedDocument, err: Any) -> Problem:
    raw_loc = tuple(err["loc"])
    loc: YamlPath = tuple(p for p in raw_loc if p != "[key]")
    kind = err["type"]
    location = doc.locate_key(loc) if "[key]" in raw_loc else doc.locate(loc)
    if kind == "missing":
        location = doc.locate(loc[:-1])
    elif kind == "extra_forbidden":
        location = doc.locate_key(loc)
    return Problem(location, format_path(loc), pydantic_message(err, loc, doc.scalar_text.get(loc)))


def pydantic_message(err: Any, loc: YamlPath, raw: str | None = None) -> str:
    """The loader's wording of one pydantic error at ``loc`` (``raw``: the value's text as written):
    what was got, what is expected, and a "did you mean" where a known name is close. The
    importers word their cell and field errors the same way."""
    kind = err["type"]
    message = str(err["msg"])
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    if kind == "missing":
        message = f"required field {shorten(loc[-1])} is missing"
    elif kind == "extra_forbidden":
        field = str(loc[-1])
        model = _model_at(loc[:-1])
        known = sorted(model.model_fields) if model else []
        close = difflib.get_close_matches(field, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        if err.get("required_missing"):
            hint += f" ('{close[0]}' is required)"
        expected = f" (expected one of: {', '.join(known)})" if known else ""
        message = f"unknown field {shorten(field)}{hint}{expected}"
    elif kind in _EXPECTED:
        got = _describe(value)
        expected = _EXPECTED[kind]
        if expected is None:  # enum / literal: pydantic lists the choices
            expected = message.removeprefix("Input should be ")
            choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
            close = difflib.get_close_matches(str(value), choices, n=1) if isinstance(value, str) else []
            hint = f"; did you mean '{close[0]}'?" if close else ""
            message = f"got {got}, expected {expected}{hint}"
        else:
            message = f"got {got}, expected {expected}"
            if kind == "string_type" and raw is not None:
                message += f" (write it in quotes if it is meant as text: \"{raw}\")"
    elif kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        expected = _PATTERNS.get(pattern, f"text matching {pattern}")
        message = f"got {_describe(value)}, expected {expected}"
    elif kind in ("too_short", "too_long"):
        size = len(value) if isinstance(value, list | str | dict) else "?"
        bound = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
        which = "at least" if kind == "too_short" else "at most"
        message = f"got {size} item{'s' if size != 1 else ''}, expected {which} {bound}"
    elif message.startswith("Input should be "):  # numeric bounds and the like
        message = f"got {_describe(value)}, expected a value {message.removeprefix('Input should be ')}"
    elif kind not in ("value_error", "assertion_error"):
        message = f"{message} (got {_describe(value)})"
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 1] + "…"
    return message


# --- cross-references, checked on the raw data ------------------------------------------------------
# These run whatever the schema found, so one run reports duplicate ids and dangling references
# next to type errors. Entries whose fields are unreadable are skipped (the schema reports them);
# when an entry of a kind has no readable id, references to that kind are not reported as
# dangling (they may well point at it).

def _entries(data: Any, *path: str) -> list[tuple[YamlPath, dict[str, Any]]]:
    """(path, mapping) of each mapping in the list at ``path``; non-mappings are skipped."""
    node: Any = data
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, list):
        return []
    return [((*path, i), item) for i, item in enumerate(node) if isinstance(item, dict)]


def _strs(entry: dict[str, Any], key: str) -> list[tuple[int, str]]:
    items = entry.get(key)
    if not isinstance(items, list):
        return []
    return [(j, item) for j, item in enumerate(items) if isinstance(item, str)]


def _get(data: Any, *path: str) -> Any:
    for part in path:
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _ip(text: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address, or None when the schema refuses it (and reports why)."""
    if not isinstance(text, str):
        return None
    try:
        return parse_address(text)
    except ValueError:
        return None


def _net(text: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    if not isinstance(text, str):
        return None
    try:
        return parse_prefix(text)
    except ValueError:
        return None


_TYPES = {t.value for t in ElementType}
_BROADCAST = ipaddress.IPv4Address("255.255.255.255")
Issue = tuple[YamlPath, str]


def _cross_check(doc: LoadedDocument) -> Iterator[Issue]:
    """Cross-references, read tolerantly from the raw data: each step reports what it can even
    where the schema fails elsewhere."""
    data = doc.data
    if not isinstance(data, dict):
        return
    refs = _References()
    yield from _unique_ids(doc, data, refs)
    yield from _local_network_refs(data, refs)
    yield from _element_refs(data, refs)
    yield from _element_addresses(data)
    yield from _group_refs(data, refs)
    yield from _sbc_dr_refs(data, refs)
    yield from _dns_refs(data, refs)
    yield from _waiver_refs(data, refs)
    yield from _check_operations(data)
    yield from _availability_refs(data, refs)
    yield from _check_sizing_bounds(data)
    yield from _check_prefixes(data)
    yield from _check_enum_blocks(data)


class _References:
    """What ids exist, by kind, for the reference checks (filled by _unique_ids)."""

    KINDS = (("site", ("sites",)), ("local network", ("local_networks",)), ("element", ("elements",)),
             ("pair", ("redundancy", "pairs")), ("pool", ("redundancy", "pools")))

    def __init__(self) -> None:
        self.owners: dict[str, tuple[str, YamlPath]] = {}  # id → (kind, path of its id)
        # kind → every entry has a text id (else an unknown reference may be a broken entry's)
        self.complete: dict[str, bool] = {}
        self.sites: set[str] = set()
        self.lns: set[str] = set()
        self.elements: dict[str, str | None] = {}  # id → type (None: not a known type)

    def ids(self, kind: str) -> set[str]:
        return {i for i, (k, _p) in self.owners.items() if k == kind}

    def ref(self, path: YamlPath, ident: str, known: Any, what: str, kind: str) -> Iterator[Issue]:
        if ident not in known and self.complete.get(kind, True):
            close = difflib.get_close_matches(ident, list(known), n=1)
            hint = f"; did you mean {shorten(close[0])}?" if close else ""
            yield path, f"unknown {what} {shorten(ident)}{hint}"

    def typed_ref(self, path: YamlPath, ident: str, want: str, what: str) -> Iterator[Issue]:
        if ident not in self.elements:
            yield from self.ref(path, ident, self.elements, "element", "element")
        elif self.elements[ident] is not None and self.elements[ident] != want:
            article = "an" if want[0] in "aeiou" or want == "sbc" else "a"
            yield path, f"{what}{shorten(ident)} is a {self.elements[ident]}, not {article} {want}"


def _unique_ids(doc: LoadedDocument, data: dict[str, Any], refs: _References) -> Iterator[Issue]:
    """Ids are unique across sites, local networks, elements, pairs and pools; ENUM block ids
    among themselves. Fills ``refs``."""
    for kind, where in refs.KINDS:
        collection = _get(data, *where)
        if collection is None:  # absent: complete unless it may be hiding under a misspelt key
            parent = _get(data, *where[:-1])
            model = _model_at(where[:-1])
            refs.complete[kind] = not (isinstance(parent, dict) and model is not None
                                       and any(k not in model.model_fields for k in parent))
        else:
            refs.complete[kind] = isinstance(collection, list) and all(
                isinstance(item, dict) and isinstance(item.get("id"), str) for item in collection)
        for path, entry in _entries(data, *where):
            ident = entry.get("id")
            if not isinstance(ident, str):
                continue
            if ident in refs.owners:
                other_kind, other_path = refs.owners[ident]
                other = doc.locate(other_path)
                line = f" at line {other.line}" if other else ""
                yield (*path, "id"), f"duplicate id {shorten(ident)} (already used by {other_kind}{line}); " \
                                     "ids must be unique"
            else:
                refs.owners[ident] = (kind, (*path, "id"))
    block_ids: set[str] = set()
    for path, block in _entries(data, "enum_blocks"):
        ident = block.get("id")
        if isinstance(ident, str):
            if ident in block_ids:
                yield (*path, "id"), f"duplicate ENUM block id {shorten(ident)}"
            block_ids.add(ident)
    refs.sites, refs.lns = refs.ids("site"), refs.ids("local network")
    for _path, el in _entries(data, "elements"):
        if isinstance(el.get("id"), str) and el["id"] not in refs.elements:
            refs.elements[el["id"]] = el.get("type") if el.get("type") in _TYPES else None


def _local_network_refs(data: dict[str, Any], refs: _References) -> Iterator[Issue]:
    for path, ln in _entries(data, "local_networks"):
        for j, site_id in _strs(ln, "home_sites"):
            yield from refs.ref((*path, "home_sites", j), site_id, refs.sites, "site", "site")
        if ln.get("packet_gateway") is not None and ln.get("access", "fixed") == "fixed":
            yield (*path, "packet_gateway"), "'packet_gateway' applies to PS access only " \
                                             "(set access: ps or both)"
        ps = ln.get("ps_subscribers")
        if isinstance(ps, int) and not isinstance(ps, bool):
            if ln.get("access", "fixed") != "both":
                yield (*path, "ps_subscribers"), "'ps_subscribers' splits the users of access: both only " \
                                                 "(with access fixed or ps every user has that access)"
            elif isinstance(ln.get("subscribers"), int) and ps > ln["subscribers"]:
                yield (*path, "ps_subscribers"), f"ps_subscribers {ps:,} exceeds the local network's " \
                                                 f"subscribers ({ln['subscribers']:,})"


def _element_refs(data: dict[str, Any], refs: _References) -> Iterator[Issue]:
    """Each element's site, roles, SBC-only fields, served local networks and P-CSCFs; fqdns unique."""
    seen_fqdns: dict[str, str] = {}
    for base, el in _entries(data, "elements"):
        ident = el.get("id") if isinstance(el.get("id"), str) else "?"
        etype = el.get("type") if el.get("type") in _TYPES else None
        if isinstance(el.get("site"), str):
            yield from refs.ref((*base, "site"), el["site"], refs.sites, "site", "site")
        roles = el.get("roles")
        if etype == ElementType.CSCF.value and not roles and (roles is None or isinstance(roles, list)):
            yield (*base, "roles"), "a cscf needs at least one role (icscf, scscf, ecscf, bgcf)"
        if etype is not None and etype != ElementType.CSCF.value and roles:
            yield (*base, "roles"), f"roles apply to cscf elements only, not {etype}"
        if etype is not None and etype != ElementType.SBC.value:
            for key in ("serves", "pcscfs", "core_addresses"):
                if el.get(key):
                    yield (*base, key), f"'{key}' applies to sbc elements only, not {etype}"
            if el.get("access_addresses") and etype != ElementType.ENUM_DNS.value:
                yield (*base, "access_addresses"), f"'access_addresses' applies to sbc and enum_dns elements only, " \
                                                   f"not {etype}"
        for j, ln_id in _strs(el, "serves"):
            yield from refs.ref((*base, "serves", j), ln_id, refs.lns, "local network", "local network")
        for j, pcscf in _strs(el, "pcscfs"):
            yield from refs.typed_ref((*base, "pcscfs", j), pcscf, ElementType.PCSCF.value, "")
        if etype is not None and etype != ElementType.IMGW.value and el.get("controlled_by"):
            yield (*base, "controlled_by"), f"'controlled_by' applies to imgw elements only, not {etype}"
        for j, mgcf in _strs(el, "controlled_by"):
            yield from refs.typed_ref((*base, "controlled_by", j), mgcf, ElementType.MGCF.value, "")
        fqdn = el.get("fqdn")
        if isinstance(fqdn, str) and fqdn:
            fqdn = fqdn[:-1] if fqdn.endswith(".") else fqdn
            if fqdn in seen_fqdns:
                yield (*base, "fqdn"), f"fqdn {shorten(fqdn)} is already used by element " \
                                       f"{shorten(seen_fqdns[fqdn])}"
            seen_fqdns.setdefault(fqdn, ident)


def _element_addresses(data: dict[str, Any]) -> Iterator[Issue]:
    """Addresses that can be published, each used by one element only and listed once."""
    seen: dict[ipaddress.IPv4Address | ipaddress.IPv6Address, str] = {}  # by value: no text per address
    for base, el in _entries(data, "elements"):
        ident = el.get("id") if isinstance(el.get("id"), str) else "?"
        for key in ("access_addresses", "core_addresses"):
            for j, text in _strs(el, key):
                addr = _ip(text)
                if addr is not None:
                    yield from _address_issues((*base, key, j), addr)
        listed = []
        for j, text in _strs(el, "addresses"):
            addr = _ip(text)
            if addr is None:
                continue
            where = (*base, "addresses", j)
            yield from _address_issues(where, addr)
            listed.append(addr)
            if addr in seen and seen[addr] != ident:
                yield where, f"address {addr} is already used by element {shorten(seen[addr])}"
            seen.setdefault(addr, ident)
        if len(set(listed)) != len(listed):
            yield (*base, "addresses"), "an address is listed twice"


def _group_refs(data: dict[str, Any], refs: _References) -> Iterator[Issue]:
    for kind in ("pairs", "pools"):
        for base, group in _entries(data, "redundancy", kind):
            members = _strs(group, "members")
            for j, member in members:
                yield from refs.ref((*base, "members", j), member, refs.elements, "element", "element")
            names = [m for _j, m in members]
            if len(set(names)) != len(names):
                yield (*base, "members"), "a member is listed twice"
            raw_members = group.get("members")
            if kind == "pairs" and isinstance(raw_members, list) and raw_members and len(raw_members) != 2:
                yield (*base, "members"), f"a 1+1 pair has exactly 2 members, got {len(raw_members)} " \
                                          "(use a pool for more)"
            if group.get("sync") == "periodic" and group.get("backup_interval") is None:
                yield (*base, "backup_interval"), "periodic sync needs 'backup_interval' " \
                                                  "(seconds between copies)"


def _sbc_dr_refs(data: dict[str, Any], refs: _References) -> Iterator[Issue]:
    dr = _get(data, "redundancy", "sbc_dr")
    if not isinstance(dr, dict):
        return
    base = ("redundancy", "sbc_dr")
    order = dr.get("order")
    if dr.get("layout") == "ring":
        if not isinstance(order, list) or len(order) < 2:
            yield (*base, "order"), "a ring needs 'order' with at least 2 local networks"
        for j, ln_id in _strs(dr, "order"):
            yield from refs.ref((*base, "order", j), ln_id, refs.lns, "local network", "local network")
    if dr.get("layout") == "hub":
        hub = dr.get("hub")
        if hub is None:
            yield base, "a hub layout needs 'hub' (the SBC that backs up the others)"
        elif isinstance(hub, str):
            yield from refs.typed_ref((*base, "hub"), hub, ElementType.SBC.value, "hub ")


def _dns_refs(data: dict[str, Any], refs: _References) -> Iterator[Issue]:
    dns = _get(data, "network", "dns")
    if isinstance(dns, dict):
        for j, ns in _strs(dns, "nameservers"):
            yield from refs.typed_ref(("network", "dns", "nameservers", j), ns, ElementType.ENUM_DNS.value,
                                      "nameserver ")
        yield from _area_refs(data, dns, refs)
    design = _get(data, "redundancy", "enum_dns")
    for j, server in _strs(design if isinstance(design, dict) else {}, "primaries"):
        yield from refs.typed_ref(("redundancy", "enum_dns", "primaries", j), server,
                                  ElementType.ENUM_DNS.value, "primary ")


def _area_refs(data: dict[str, Any], dns: dict[str, Any], refs: _References) -> Iterator[Issue]:
    """network.dns.areas: known enum_dns servers, home domains and blocks, each in one area at most;
    one national area at most, holding delegations only."""
    homes = set(_get(data, "network", "home_domains") or []) if isinstance(
        _get(data, "network", "home_domains"), list) else set()
    blocks = {b.get("id") for _p, b in _entries(data, "enum_blocks")}
    provinces = {s.get("province") for _p, s in _entries(data, "sites")}
    owner: dict[tuple[str, str], str] = {}  # (what, id) -> area
    national = []
    for base, area in _entries(dns, "areas"):
        base = ("network", "dns", *base)
        ident = area.get("id") if isinstance(area.get("id"), str) else "?"
        if area.get("level") == "national":
            national.append(ident)
            for key in ("provinces", "home_domains", "enum_blocks"):
                if area.get(key):
                    yield (*base, key), f"the national area only delegates: '{key}' belongs to a province area"
        else:
            if area.get("zones"):
                yield (*base, "zones"), "'zones' applies to the national area only"
            for j, prov in _strs(area, "provinces") or [(None, ident)]:
                if prov not in provinces:
                    where = (*base, "provinces", j) if j is not None else (*base, "id")
                    yield where, f"no site has province {shorten(prov)}: the area would serve no site"
        for j, ns in _strs(area, "nameservers"):
            yield from refs.typed_ref((*base, "nameservers", j), ns, ElementType.ENUM_DNS.value, "nameserver ")
        for key, known, what in (("nameservers", None, "name server"), ("home_domains", homes, "home domain"),
                                 ("enum_blocks", blocks, "ENUM block")):
            for j, value in _strs(area, key):
                if known is not None and value not in known:
                    yield (*base, key, j), f"{shorten(value)} is not a {what} of the inventory"
                first = owner.setdefault((key, value), ident)
                if first != ident:
                    yield (*base, key, j), f"{what} {shorten(value)} is already in area {shorten(first)}"
    if len(national) > 1:
        yield ("network", "dns", "areas"), f"one national area at most, got {len(national)}"


def _waiver_refs(data: dict[str, Any], refs: _References) -> Iterator[Issue]:
    """A waiver's scope names ids its findings name: sites, local networks, elements, pairs and
    pools, and the shared risks (regions, provinces, power feeds, transmission routes) and ENUM
    blocks that region, feed, route and ENUM findings name."""
    all_complete = all(refs.complete.values())
    known: dict[str, Any] = dict(refs.owners)
    for _path, site in _entries(data, "sites"):
        for key in ("region", "province"):
            if isinstance(site.get(key), str):
                known.setdefault(site[key], key)
        for key in ("power", "transmission"):
            for _j, ident in _strs(site, key):
                known.setdefault(ident, key)
    for _path, block in _entries(data, "enum_blocks"):
        if isinstance(block.get("id"), str):
            known.setdefault(block["id"], "enum block")
    for base, waiver in _entries(data, "waivers"):
        for j, ident in _strs(waiver, "scope"):
            if ident not in known and all_complete:
                yield from refs.ref((*base, "scope", j), ident, known, "id", "")



def _address_issues(path: YamlPath, addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> Iterator[Issue]:
    """Addresses that parse but cannot be a signalling address published in DNS."""
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        yield path, f"address {addr} is an IPv4-mapped IPv6 address; write the IPv4 address " \
                    f"{addr.ipv4_mapped} instead (expected a plain IPv4 or IPv6 address)"
    if addr.is_unspecified or addr.is_multicast or addr == _BROADCAST:
        what = "unspecified" if addr.is_unspecified else "multicast" if addr.is_multicast else "broadcast"
        article = "an" if what[0] in "aeiou" else "a"
        yield path, f"address {addr} is {article} {what} address (expected the element's own unicast address)"


BUILTIN_PLATFORMS = ("bind", "kamailio", "vendor")


def _check_operations(data: Any) -> Iterator[Issue]:
    """Platforms named by elements exist; contacts' roles are unique and escalations point at one."""
    platforms = _get(data, "platforms")
    known = set(BUILTIN_PLATFORMS) | (set(platforms) if isinstance(platforms, dict) else set())
    for base, el in _entries(data, "elements"):
        name = el.get("platform")
        if isinstance(name, str) and name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            yield (*base, "platform"), f"unknown platform {shorten(name)} (define it under 'platforms' " \
                                       f"or use bind, kamailio, vendor){hint}"
    roles: dict[str, YamlPath] = {}
    contacts = _entries(data, "contacts")
    for base, contact in contacts:
        role = contact.get("role")
        if isinstance(role, str):
            if role in roles:
                yield (*base, "role"), f"duplicate contact role {shorten(role)}"
            roles.setdefault(role, base)
    for base, contact in contacts:
        target = contact.get("escalate_to")
        if isinstance(target, str) and target not in roles:
            yield (*base, "escalate_to"), f"escalate_to {shorten(target)} is not the role of any contact"
        if isinstance(target, str) and target == contact.get("role"):
            yield (*base, "escalate_to"), "a contact cannot escalate to itself"
        if (target is None) != (contact.get("escalate_after") is None):
            yield base, "'escalate_to' and 'escalate_after' go together"


def _availability_refs(data: dict[str, Any], refs: _References) -> Iterator[Issue]:
    """The availability overrides name platforms, pairs/pools and elements that exist."""
    section = _get(data, "availability")
    if not isinstance(section, dict):
        return
    platforms = _get(data, "platforms")
    known_platforms = set(BUILTIN_PLATFORMS) | (set(platforms) if isinstance(platforms, dict) else set())
    groups = refs.ids("pair") | refs.ids("pool")
    for key, known, what, kind in (("platforms", known_platforms, "platform", "platform"),
                                   ("groups", groups, "pair or pool", "pair"),
                                   ("elements", refs.elements, "element", "element")):
        entries = section.get(key)
        if isinstance(entries, dict):
            for ident in entries:
                if isinstance(ident, str):
                    yield from refs.ref(("availability", key, ident), ident, known, what, kind)


def _check_prefixes(data: Any) -> Iterator[Issue]:
    """Two local networks claiming the same source addresses would make DNS views ambiguous."""
    entries = []
    for base, ln in _entries(data, "local_networks"):
        ln_id = ln.get("id") if isinstance(ln.get("id"), str) else format_path(base)
        for j, text in _strs(ln, "prefixes"):
            net = _net(text)
            if net is None:
                continue
            path = (*base, "prefixes", j)
            if isinstance(net, ipaddress.IPv6Network) and net.network_address.ipv4_mapped is not None \
                    and net.prefixlen >= 96:
                yield path, f"prefix {net} is an IPv4-mapped IPv6 prefix; write the IPv4 prefix instead " \
                            "(expected a plain IPv4 or IPv6 prefix)"
            entries.append((net.version, int(net.network_address), int(net.broadcast_address),
                            ln_id, text, path))
    entries.sort(key=lambda e: e[:3])
    active: list[tuple[int, int, int, str, str, YamlPath]] = []
    for entry in entries:
        version, start = entry[0], entry[1]
        active = [a for a in active if a[0] == version and a[2] >= start]
        for other in active:
            if other[3] != entry[3]:
                yield entry[5], f"prefix {entry[4]} overlaps a prefix of local network {shorten(other[3])}"
        active.append(entry)


_DIGITS = re.compile(r"\+?[0-9]{1,15}")


def _digits(value: Any) -> str | None:
    return value.lstrip("+") if isinstance(value, str) and _DIGITS.fullmatch(value) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _check_sizing_bounds(data: Any) -> Iterator[Issue]:
    """Values the schema allows but the sizing model cannot compute in reasonable time."""
    for base, el in _entries(data, "elements"):
        capacity = el.get("capacity")
        circuits = _number(capacity.get("circuits")) if isinstance(capacity, dict) else None
        if circuits is not None and circuits > MAX_CIRCUITS:
            yield (*base, "capacity", "circuits"), f"got {circuits:,.0f} circuits, expected at most " \
                                                   f"{MAX_CIRCUITS:,} (the Erlang B dimensioning limit)"
    for base, pool in _entries(data, "redundancy", "pools"):
        erlangs = _number(pool.get("busy_hour_erlangs"))
        if erlangs is not None and erlangs > MAX_POOL_ERLANGS:
            yield (*base, "busy_hour_erlangs"), f"got {erlangs:,.0f} Erlangs, expected at most " \
                                                f"{MAX_POOL_ERLANGS:,.0f} (what {MAX_CIRCUITS:,} circuits carry; " \
                                                "the Erlang B dimensioning limit)"


def _check_enum_blocks(data: Any) -> Iterator[Issue]:
    cc = _get(data, "network", "country_code")
    cc = cc if isinstance(cc, str) and re.fullmatch(r"[1-9][0-9]{0,2}", cc) else None
    total, reported_total = 0, False
    for base, block in _entries(data, "enum_blocks"):
        prefix = _digits(block.get("prefix"))
        if prefix is None:
            continue
        if cc is not None and not prefix.startswith(cc):
            yield (*base, "prefix"), f"prefix +{prefix} does not start with the country code {cc}"
        style = block.get("style", "wildcard")
        first_raw, last_raw, length = block.get("first"), block.get("last"), block.get("length")
        ranged = style == "numbers" or first_raw is not None or last_raw is not None
        if style == "wildcard" and not ranged:
            if length:
                yield (*base, "style"), "a wildcard block covers its whole prefix unless 'first'/'last' " \
                                        "narrow it; 'length' alone applies to style: numbers"
            continue
        if style not in ("numbers", "wildcard"):
            continue
        if length is None:
            yield (*base, "length"), f"{'style: numbers' if style == 'numbers' else 'first/last'} needs " \
                                     "'length' (total digits of a number, country code included)"
            continue
        if isinstance(length, bool) or not isinstance(length, int) or not 2 <= length <= 15:
            continue  # the schema reports it
        if length <= len(prefix):
            yield (*base, "length"), f"length {length} leaves no digits after prefix +{prefix}"
            continue
        free = length - len(prefix)
        first = _digits(first_raw) if first_raw is not None else prefix + "0" * free
        last = _digits(last_raw) if last_raw is not None else prefix + "9" * free
        bad = False
        for name, number in (("first", first), ("last", last)):
            if number is None:
                bad = True  # the schema reports it
            elif len(number) != length or not number.startswith(prefix):
                yield (*base, name), f"+{number} is not a {length}-digit number under +{prefix}"
                bad = True
        if bad or first is None or last is None:
            continue
        count = int(last) - int(first) + 1
        if count <= 0:
            yield (*base, "last"), f"last +{last} is before first +{first}"
        elif style == "wildcard":
            continue  # a few wildcards whatever the range: no record budget to count
        elif count > MAX_ENUM_BLOCK_NUMBERS:
            yield (*base, "length"), f"block holds {count:,} numbers, more than {MAX_ENUM_BLOCK_NUMBERS:,} " \
                                     "NAPTR records; use style: wildcard for blocks this large"
        else:
            total += count
            if total > MAX_ENUM_NUMBERS and not reported_total:
                reported_total = True
                yield (*base, "last"), f"the numbers blocks so far hold {total:,} numbers, more than " \
                                       f"{MAX_ENUM_NUMBERS:,} NAPTR records in all; use style: wildcard " \
                                       "for large ranges"


def block_range(block: Any) -> tuple[int, int, int]:
    """(first, last, digits) of a numbers-style or ranged wildcard ENUM block, as validated above."""
    free = block.length - len(block.prefix)
    first = block.first or block.prefix + "0" * free
    last = block.last or block.prefix + "9" * free
    return int(first), int(last), block.length
