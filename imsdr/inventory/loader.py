"""Safe YAML loading that remembers where every value came from.

libyaml's parser turns the text into events; we compose those events into small nodes
ourselves (iteratively, counting as we go) and then construct plain Python values from
them, so that we can refuse what a planner's inventory never needs (Python tags,
duplicate or non-text keys, alias bombs, absurd nesting, huge files) before it costs
time or memory, and keep a location for every path, which later lets every problem
and finding point at file:line:col.

Hard limits (all refused with a located message, never a traceback):

* files larger than ``MAX_FILE_BYTES`` (checked before reading, and while reading pipes);
* more than ``MAX_NODES`` values, counting every alias expansion (a "billion laughs"
  bomb is refused in milliseconds: expanded sizes are computed bottom-up while
  composing, before anything is expanded);
* nesting deeper than ``MAX_DEPTH``; recursive aliases; several documents in one file.

Problems that leave the rest of the document readable (a duplicate key, a forbidden
tag, a key that is not text) are collected rather than raised when ``tolerant=True``,
so that the caller can go on validating and report everything in one run; the paths
they affect are listed in ``LoadedDocument.poisoned``.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from imsdr.diagnostics import Location, Problem
from imsdr.errors import InventoryError
from imsdr.inventory.scalars import NEVER_TYPED, NUMBER_START, number_problem

try:  # libyaml's parser is several times faster; identical semantics for safe loading
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - libyaml is present in the usual wheels
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

# A national inventory (~5,000 elements, ~300 local networks, ENUM blocks as ranges) is a
# few MB and a few hundred thousand values; these limits leave ample headroom while keeping
# the worst case to seconds and a few hundred MB.
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_NODES = 1_000_000  # values incl. keys, every alias expansion counted (national: ~100,000)
MAX_DEPTH = 64
MAX_INT_DIGITS = 30  # the largest bound in the format is 2**31 - 1; refuse before converting
MAX_SHOWN = 60  # characters of a bad value quoted back in a message

YamlPath = tuple[str | int, ...]

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_MERGE = "tag:yaml.org,2002:merge"
_YAML12_BOOLS = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})
_SCALAR_TAGS = {_STR, _INT, _FLOAT, _BOOL, _NULL, _TIMESTAMP}
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_KIND_NAMES = {_INT: "an integer", _FLOAT: "a number", _BOOL: "a boolean", _NULL: "null",
               _TIMESTAMP: "a date"}
_constructor = yaml.constructor.SafeConstructor()

SCALAR, SEQ, MAP = 0, 1, 2


def shorten(value: object, limit: int = MAX_SHOWN) -> str:
    """``repr(value)`` cut to ``limit`` characters: messages quote bad values, never whole files."""
    if isinstance(value, str) and len(value) > limit * 4:
        value = value[: limit * 4]  # repr of a huge string is never built
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Locations(dict):  # type: ignore[type-arg]
    """YamlPath → Location, kept as (line, column) until asked for: a national inventory has
    ~150,000 values and building a Location for each cost more than parsing them."""

    def __init__(self, file: str) -> None:
        super().__init__()
        self.file = file

    def _location(self, value: Any) -> Location:
        return value if isinstance(value, Location) else Location(self.file, value[0], value[1])

    def __getitem__(self, path: YamlPath) -> Location:
        return self._location(dict.__getitem__(self, path))

    def get(self, path: YamlPath, default: Any = None) -> Any:  # type: ignore[override]
        value = dict.get(self, path)
        return default if value is None else self._location(value)

    def values(self) -> Any:  # type: ignore[override]
        return [self._location(v) for v in dict.values(self)]

    def items(self) -> Any:  # type: ignore[override]
        return [(k, self._location(v)) for k, v in dict.items(self)]


@dataclass
class LoadedDocument:
    """Plain data plus the source location of every mapping, sequence and value in it."""

    data: Any
    file: str
    locations: dict[YamlPath, Location] = field(default_factory=dict)
    key_locations: dict[YamlPath, Location] = field(default_factory=dict)
    # problems found while loading that left the rest readable (tolerant loading only)
    problems: list[Problem] = field(default_factory=list)
    # paths whose value was dropped or replaced by None because of those problems
    poisoned: set[YamlPath] = field(default_factory=set)
    # the source text of plain scalars that YAML did not read as text (for "quote it" hints)
    scalar_text: dict[YamlPath, str] = field(default_factory=dict)
    # False only when no value can be an `imsdr import` placeholder ("FILL IN: ..."): see
    # may_hold_placeholders; validation then skips walking every value for one
    placeholders_possible: bool = True

    def locate(self, path: YamlPath) -> Location | None:
        """The location of ``path``, or of its nearest ancestor that has one."""
        while True:
            if path in self.locations:
                return self.locations[path]
            if not path:
                return None
            path = path[:-1]

    def locate_key(self, path: YamlPath) -> Location | None:
        """Where the key of ``path`` is written (for unknown-field errors), else the value."""
        return self.key_locations.get(path) or self.locate(path)

    def is_poisoned(self, path: YamlPath) -> bool:
        """True if ``path`` or one of its ancestors was dropped while loading."""
        if not self.poisoned:
            return False
        return any(path[:i] in self.poisoned for i in range(len(path) + 1))


def _plain_key(part: str) -> bool:
    return bool(part) and all(ch.isalnum() or ch in "_-" for ch in part) and part.isascii()


def format_path(path: YamlPath) -> str:
    """``elements[3].addresses[0]``; keys that are not plain names are quoted and escaped."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _plain_key(part) and len(part) <= MAX_SHOWN:
            out += f".{part}" if out else part
        else:
            out += f"[{shorten(part)}]"
    return out


class _Node:
    """A composed YAML node: smaller than PyYAML's (no Mark objects), with its expanded size."""

    __slots__ = ("kind", "tag", "value", "line", "col", "size", "plain", "explicit")

    def __init__(self, kind: int, tag: str, value: Any, line: int, col: int, plain: bool = False,
                 explicit: bool = False) -> None:
        self.explicit = explicit  # the tag was written (!!int ...), not resolved from the text
        self.kind = kind
        self.tag = tag
        self.value = value  # str | list[_Node] | list[tuple[_Node, _Node]]
        self.line = line
        self.col = col
        self.size = 1
        self.plain = plain


def _fatal(file: str, line: int, col: int, path: YamlPath, message: str, what: str) -> InventoryError:
    return InventoryError(what, [Problem(Location(file, line, col), format_path(path), message)])


def _too_many(file: str, mark: Any) -> InventoryError:
    return _fatal(file, mark.line + 1, mark.column + 1, (), f"the document has more than {MAX_NODES:,} "
                  "values; refusing to load it", "too many values")


def _compose(text: str, file: str) -> _Node | None:
    """Events → nodes, iteratively; counts values and depth and refuses bombs as they appear."""
    loader = _Loader(text)
    try:
        return _compose_events(loader, text, file)
    finally:
        loader.dispose()


def _compose_events(loader: Any, text: str, file: str) -> _Node | None:
    anchors: dict[str, _Node] = {}
    open_anchors: set[str] = set()
    # stack of (node, anchor, pending key for mappings)
    stack: list[list[Any]] = []
    root: _Node | None = None
    documents = 0
    total = 0  # values so far, alias expansions included

    def attach(node: _Node) -> None:
        nonlocal root
        if not stack:
            root = node
            return
        top = stack[-1]
        parent: _Node = top[0]
        if parent.kind == SEQ:
            parent.value.append(node)
        elif top[2] is None:
            top[2] = node
        else:
            parent.value.append((top[2], node))
            top[2] = None
        parent.size += node.size

    while True:
        event = loader.get_event()
        cls = type(event)
        if cls is ScalarEvent:  # the common case first
            total += 1
            mark = event.start_mark
            if total > MAX_NODES:
                raise _too_many(file, mark)
            tag = event.tag
            explicit = tag is not None and tag != "!"
            plain = not event.style
            if tag == "!":  # the non-specific tag: text, whatever it looks like (YAML 1.2 section 6.9.1;
                tag, plain = _STR, False  # PyYAML resolves ! "05060" as the octal 2608)
            elif not explicit:
                tag = loader.resolve(ScalarNode, event.value, event.implicit)
                if tag == _BOOL and event.value not in _YAML12_BOOLS:
                    tag = _STR  # YAML 1.2: yes/no/on/off are text ("off" as a rule setting, "NO" as a code)
            node = _Node(SCALAR, tag, event.value, mark.line + 1, mark.column + 1, plain=plain, explicit=explicit)
            if event.anchor is not None:
                anchors[event.anchor] = node
            attach(node)
        elif cls is SequenceStartEvent or cls is MappingStartEvent:
            total += 1
            mark = event.start_mark
            if total > MAX_NODES:
                raise _too_many(file, mark)
            if len(stack) >= MAX_DEPTH:
                raise _fatal(file, mark.line + 1, mark.column + 1, (), f"nesting deeper than {MAX_DEPTH} "
                             "levels; an inventory never needs that", "too deeply nested")
            is_seq = cls is SequenceStartEvent
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(SequenceNode if is_seq else MappingNode, None, event.implicit)
            node = _Node(SEQ if is_seq else MAP, tag, [], mark.line + 1, mark.column + 1)
            if event.anchor is not None:
                open_anchors.add(event.anchor)
            stack.append([node, event.anchor, None])
        elif cls is SequenceEndEvent or cls is MappingEndEvent:
            node, anchor, _pending = stack.pop()
            if anchor is not None:
                open_anchors.discard(anchor)
                anchors[anchor] = node
            attach(node)
        elif cls is AliasEvent:
            name = event.anchor
            mark = event.start_mark
            line, col = mark.line + 1, mark.column + 1
            if name in open_anchors:
                raise _fatal(file, line, col, (), f"alias *{name} refers to its own anchor "
                             "(a recursive structure); refusing it", "recursive alias")
            if name not in anchors:
                raise _fatal(file, line, col, (), f"alias *{name} refers to no anchor &{name} "
                             "defined before it", "undefined alias")
            node = anchors[name]
            total += node.size  # sizes are computed bottom-up: a bomb is caught before any expansion
            if total > MAX_NODES:
                raise _fatal(file, line, col, (), f"alias *{name} expands the document beyond "
                             f"{MAX_NODES:,} values (an alias bomb?); refusing to load it", "alias bomb")
            attach(node)
        elif cls is DocumentStartEvent:
            documents += 1
            if documents > 1:
                mark = event.start_mark
                raise _fatal(file, mark.line + 1, mark.column + 1, (), "the file holds several YAML "
                             "documents ('---'); an inventory is exactly one document", "several documents")
        elif cls is StreamEndEvent:
            break
    return root


class _Builder:
    def __init__(self, file: str, breaks: bool = False) -> None:
        self.file = file
        self.breaks = breaks  # the text had YAML 1.1 line breaks (U+0085, U+2028, U+2029), stood in for
        self.doc = LoadedDocument(None, file, _Locations(file), _Locations(file))

    def loc(self, node: _Node) -> Location:
        return Location(self.file, node.line, node.col)

    def problem(self, node: _Node, path: YamlPath, message: str) -> None:
        self.doc.problems.append(Problem(self.loc(node), format_path(path), message))

    def build(self, node: _Node, path: YamlPath) -> Any:
        dict.setdefault(self.doc.locations, path, (node.line, node.col))
        if node.kind == MAP:
            if node.tag != _MAP:
                return self.poison(node, path, f"tag {shorten(node.tag)} is not allowed "
                                   "(plain YAML mappings only)")
            return self._mapping(node, path)
        if node.kind == SEQ:
            if node.tag != _SEQ:
                return self.poison(node, path, f"tag {shorten(node.tag)} is not allowed "
                                   "(plain YAML lists only)")
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.scalar(node, path)

    def poison(self, node: _Node, path: YamlPath, message: str) -> None:
        self.problem(node, path, message)
        self.doc.poisoned.add(path)
        return None

    def scalar(self, node: _Node, path: YamlPath) -> Any:
        tag = node.tag
        text = node.value
        if self.breaks and any(ch in text for ch in _BREAK_STANDINS):
            char = next(_BREAKS[ch] for ch in text if ch in _BREAK_STANDINS)
            return self.poison(node, path, f"character U+{ord(char):04X} in a value: YAML 1.1 reads it as a line "
                               "break, YAML 1.2 as a character; remove it")
        if node.explicit and tag != _STR and tag in _SCALAR_TAGS:
            problem = self.tagged_problem(tag, text)
            if problem:
                return self.poison(node, path, problem)
        if tag == _INT and text.isdigit() and text.isascii() and (text[0] != "0" or text == "0") \
                and len(text) <= MAX_INT_DIGITS:  # the common case, without PyYAML's general constructor
            if node.plain:
                self.doc.scalar_text[path] = text
            return int(text)
        if node.plain and text[:1] in NUMBER_START and len(text) <= MAX_INT_DIGITS:
            problem = number_problem(text)  # 05060, 1e3, 1:30 ...: YAML 1.1 and 1.2 disagree
            if problem:
                return self.poison(node, path, problem)
        if tag == _STR:
            return text
        if tag not in _SCALAR_TAGS:
            return self.poison(node, path, f"tag {shorten(tag)} is not allowed (plain YAML values only)")
        if tag == _INT and len(node.value) > MAX_INT_DIGITS:
            digits = sum(ch.isdigit() for ch in node.value)
            return self.poison(node, path, f"got an integer of {digits:,} digits, expected at most "
                               f"{MAX_INT_DIGITS} digits (no value of an inventory is that large)")
        try:
            value = _constructor.yaml_constructors[tag](_constructor, ScalarNode(tag, node.value))
        except (yaml.YAMLError, ValueError, OverflowError) as exc:
            reason = str(exc).split(";")[0]
            return self.poison(node, path, f"cannot read value {shorten(node.value)}: {reason}")
        if isinstance(value, float) and not math.isfinite(value):
            return self.poison(node, path, f"{node.value} is not a finite number (expected a number "
                               "such as 0.5; NaN and infinity are not allowed)")
        if node.plain:
            self.doc.scalar_text[path] = node.value
        return value

    @staticmethod
    def tagged_problem(tag: str, text: str) -> str | None:
        """Why a scalar with an explicit type tag (``!!int "05060"``) is refused: the tag must say
        what the text says without it, and the text must pass the same YAML 1.1/1.2 guard as a
        plain scalar; otherwise the tag changes the value, differently for each YAML version."""
        shown = f"!!{tag.rsplit(':', 1)[-1]}"
        if text[:1] in NUMBER_START and len(text) <= MAX_INT_DIGITS:
            problem = number_problem(text)
            if problem:
                return f"tag {shown} on {shorten(text)!r}: {problem}"
        reading = plain_reading(text) if len(text) <= MAX_INT_DIGITS else "str"
        if reading != tag:
            read_as = _KIND_NAMES.get(reading, "text")
            return (f"tag {shown} on {shorten(text)!r}: without the tag YAML reads it as {read_as}; an explicit "
                    "tag changes a value (and YAML 1.1 and 1.2 change it differently): write the value "
                    "without the tag")
        return None

    def _mapping(self, node: _Node, path: YamlPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key_node, value_node in self._flatten_merge_keys(node, path, 0):
            key = self._key(key_node, path)
            if key is None:
                continue
            key_path = (*path, key)
            if key in result:
                first = self.doc.key_locations.get(key_path)
                where = f" (first at line {first.line})" if first else ""
                self.problem(key_node, key_path, f"duplicate key {shorten(key)}{where}")
                continue
            dict.__setitem__(self.doc.key_locations, key_path, (key_node.line, key_node.col))
            result[key] = self.build(value_node, key_path)
        return result

    def _key(self, key_node: _Node, path: YamlPath) -> str | None:
        """Keys are field names, ids or rule ids: always text. Anything else is refused."""
        if key_node.kind != SCALAR:
            self.problem(key_node, path, "a mapping key must be plain text, not a list or mapping")
            return None
        if self.breaks and any(ch in key_node.value for ch in _BREAK_STANDINS):
            self.problem(key_node, path, "a YAML 1.1 line break (U+0085, U+2028 or U+2029) in a key: YAML 1.1 "
                         "reads it as a line break, YAML 1.2 as a character; remove it")
            return None
        if key_node.tag == _STR:
            return str(key_node.value)
        raw = key_node.value
        kind = _KIND_NAMES.get(key_node.tag)
        if kind is None:
            self.problem(key_node, path, f"tag {shorten(key_node.tag)} is not allowed on a key")
        else:
            self.problem(key_node, (*path, raw), f"key {shorten(raw)} is read by YAML as {kind}, "
                         f"not text (expected a name; write it in quotes: \"{raw}\")")
        self.doc.poisoned.add((*path, raw))
        return None

    def _flatten_merge_keys(self, node: _Node, path: YamlPath, depth: int) -> list[tuple[_Node, _Node]]:
        """Support ``<<: *defaults`` the way YAML 1.1 does: explicit keys win."""
        if depth > MAX_DEPTH:
            raise _fatal(self.file, node.line, node.col, path,
                         f"'<<' merges nested deeper than {MAX_DEPTH} levels", "too deep")
        merged: list[tuple[_Node, _Node]] = []
        own: list[tuple[_Node, _Node]] = []
        for key_node, value_node in node.value:
            if key_node.kind == SCALAR and key_node.tag == _MERGE:
                sources = value_node.value if value_node.kind == SEQ else [value_node]
                for source in sources:
                    if source.kind != MAP:
                        self.problem(key_node, path, "'<<' merges only mappings")
                        continue
                    merged.extend(self._flatten_merge_keys(source, path, depth + 1))
            else:
                own.append((key_node, value_node))
        if not merged:
            return own
        own_keys = {k.value for k, _ in own if k.kind == SCALAR}
        seen: set[str] = set()
        kept = []
        for k, v in merged:
            if k.kind == SCALAR and (k.value in own_keys or k.value in seen):
                continue
            if k.kind == SCALAR:
                seen.add(k.value)
            kept.append((k, v))
        return kept + own


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _unclosed_quote(lines: list[str]) -> int | None:
    """The first line with an odd number of double quotes: a likely unclosed string."""
    for number, line in enumerate(lines, start=1):
        code = line.split(" #", 1)[0]
        if code.lstrip().startswith("#"):
            continue
        if (code.count('"') - code.count('\\"')) % 2:
            return number
    return None


def _syntax_error(exc: yaml.MarkedYAMLError, text: str, file: str) -> InventoryError:
    mark = exc.problem_mark or exc.context_mark
    loc = Location(file, mark.line + 1, mark.column + 1) if mark else Location(file, 1, 1)
    what = (exc.problem or str(exc)).strip()
    context = f"{exc.context.strip()}: " if exc.context else ""
    message = f"YAML syntax error: {context}{what}"
    if mark is not None:
        lines = text.splitlines()
        line = lines[mark.line] if mark.line < len(lines) else ""
        if "\t" in line[: mark.column + 1] or "\t" in what or "tab" in what.lower():
            message += " (YAML does not allow tabs for indentation; use spaces)"
        elif exc.context and "block" in exc.context:
            quote = _unclosed_quote(lines[: mark.line + 1])
            if quote is not None:
                message += f" (an unclosed quote on line {quote}?)"
    return InventoryError("YAML syntax error", [Problem(loc, "", message)])


def load_yaml_text(text: str, file: str, *, tolerant: bool = False) -> LoadedDocument:
    """Parse ``text`` safely.

    Raises InventoryError for anything that makes the document unreadable. With
    ``tolerant=False`` (the default) every other problem is raised too; with
    ``tolerant=True`` those are returned in ``LoadedDocument.problems`` instead.

    A common inventory is read by the fast path (:mod:`imsdr.inventory.fastyaml`) when its
    reading is certain to be this one's; its locations are then read by this path, from the
    same text, the first time one is asked for.
    """
    if len(text) > MAX_FILE_BYTES:
        raise _fatal(file, 1, 1, (), f"the inventory is {len(text):,} characters; inventories larger "
                     f"than {MAX_FILE_BYTES:,} bytes are refused", "too large")
    if "\x00" in text:
        line, col = _line_col(text, text.index("\x00"))
        raise _fatal(file, line, col, (), "the file contains a NUL byte (is it a binary file?)", "NUL byte")
    data = read_fast(text)
    if data is not None:
        later = _LaterLocations(text, file)
        return LoadedDocument(data, file, later.view("locations"), later.view("key_locations"),  # type: ignore[arg-type]
                              scalar_text=later.view("scalar_text"),  # type: ignore[arg-type]
                              placeholders_possible=may_hold_placeholders(text))
    return _load_with_locations(text, file, tolerant=tolerant)


def may_hold_placeholders(text: str) -> bool:
    """Whether a value read from YAML ``text`` can start with "FILL IN: ". It cannot when the text
    holds no "FILL" and no backslash: YAML folds line breaks only at whitespace, so "FILL" is never
    made from pieces, and only a double-quoted escape (``\\x46ILL``) writes it otherwise."""
    return "FILL" in text or "\\" in text


def read_fast(text: str) -> Any:
    """The data of ``text`` by the fast path (:func:`imsdr.inventory.fastyaml.fast_data`) with
    this loader's limits and readings, or None when its reading is not certain to be this one's."""
    from imsdr.inventory.fastyaml import fast_data

    resolvers = _RESOLVER.yaml_implicit_resolvers
    return fast_data(text, max_nodes=MAX_NODES, max_depth=MAX_DEPTH, max_int_digits=MAX_INT_DIGITS,
                     plain_reading=plain_reading, number_problem=number_problem,
                     typed_starts=None if None in resolvers else frozenset(resolvers))


_RESOLVER = yaml.resolver.Resolver()  # PyYAML's implicit types, as the libyaml path resolves them


def plain_reading(text: str) -> str:
    """The tag the loader gives the plain (unquoted) scalar ``text``; ``"str"`` for text."""
    resolvers = _RESOLVER.yaml_implicit_resolvers
    if text and text[0] not in resolvers and None not in resolvers:
        return "str"  # no implicit type starts with this character (most names and ids)
    if NEVER_TYPED.search(text):
        return "str"  # an address
    tag = _RESOLVER.resolve(ScalarNode, text, (True, False))
    if tag == _BOOL and text not in _YAML12_BOOLS:
        tag = _STR
    return "str" if tag == _STR else tag


class _LaterLocations:
    """Where the values of a fast-read document were written: read by the libyaml path the first
    time something asks (a finding, a problem), once."""

    def __init__(self, text: str, file: str) -> None:
        self._text: str | None = text
        self._file = file
        self._doc: LoadedDocument | None = None

    def document(self) -> LoadedDocument:
        if self._doc is None:
            assert self._text is not None
            self._doc = _load_with_locations(self._text, self._file, tolerant=True)
            self._text = None
        return self._doc

    def view(self, name: str) -> _LaterMap:
        return _LaterMap(self, name)


class _LaterMap(Mapping):  # type: ignore[type-arg]
    def __init__(self, later: _LaterLocations, name: str) -> None:
        self._later = later
        self._name = name

    def _map(self) -> Any:
        return getattr(self._later.document(), self._name)

    def __getitem__(self, key: Any) -> Any:
        return self._map()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._map())

    def __len__(self) -> int:
        return len(self._map())

    def __contains__(self, key: object) -> bool:
        return key in self._map()

    def get(self, key: Any, default: Any = None) -> Any:
        return self._map().get(key, default)


# YAML 1.1 (libyaml) ends a line at U+0085, U+2028 and U+2029 too; YAML 1.2 only at LF and CR,
# and takes them as ordinary characters. They are stood in for by private-use characters before
# libyaml reads the text (one character for one: lines and columns stay YAML 1.2's): in a comment
# they are then ignored as YAML 1.2 ignores them; in a value they are refused (the versions disagree).
_BREAKS = {"\ue085": "\x85", "\ue028": "\u2028", "\ue029": "\u2029"}
_BREAK_STANDINS = frozenset(_BREAKS)
_STAND_IN = str.maketrans({original: standin for standin, original in _BREAKS.items()})


def _load_with_locations(text: str, file: str, *, tolerant: bool) -> LoadedDocument:
    """The libyaml path: every value with its location, every problem with its own."""
    breaks = "\x85" in text or "\u2028" in text or "\u2029" in text
    if breaks:
        text = text.translate(_STAND_IN)
    try:
        root = _compose(text, file)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, text, file) from None
    except yaml.reader.ReaderError as exc:
        line, col = _line_col(text, exc.position) if isinstance(exc.position, int) else (1, 1)
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        raise _fatal(file, line, col, (), f"character {char!r} (U+{ord(char):04X}) is not allowed in YAML; "
                     "remove it or write it as an escape in a double-quoted string",
                     "bad character") from None
    except yaml.YAMLError as exc:
        raise _fatal(file, 1, 1, (), f"YAML error: {shorten(str(exc), 200)}", "YAML error") from None
    except RecursionError:  # pragma: no cover - composing is iterative; belt and braces
        raise _fatal(file, 1, 1, (), "nesting is too deep", "too deep") from None
    if root is None:
        raise _fatal(file, 1, 1, (), "the file is empty; an inventory is a YAML mapping starting with "
                     "'version: 1'", "empty")
    builder = _Builder(file, breaks)
    data = builder.build(root, ())
    doc = builder.doc
    if not isinstance(data, dict) and root.kind != MAP:
        kind = "list" if root.kind == SEQ else type(data).__name__ if data is not None else "null"
        raise _fatal(file, root.line, root.col, (), f"the document is a {kind}; an inventory must be a "
                     "YAML mapping (expected 'version: 1', 'network:', 'sites:' ...)", "not a mapping")
    if doc.problems and (not tolerant or not isinstance(data, dict)):
        raise InventoryError("invalid YAML", doc.problems)
    doc.data = data
    return doc


def _read_limited(path: Path, file: str) -> bytes:
    with path.open("rb") as handle:
        info = os.fstat(handle.fileno())
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
            raise _fatal(file, 1, 1, (), f"the file is {info.st_size:,} bytes; inventories larger than "
                         f"{MAX_FILE_BYTES:,} bytes are refused", "too large")
        raw = handle.read(MAX_FILE_BYTES + 1)  # pipes and growing files: never more than the limit
        if len(raw) > MAX_FILE_BYTES:
            raise _fatal(file, 1, 1, (), f"the input is larger than {MAX_FILE_BYTES:,} bytes; "
                         "larger inventories are refused", "too large")
        return raw


def load_yaml_file(path: str | os.PathLike[str], *, tolerant: bool = False) -> LoadedDocument:
    file = str(path)
    try:
        raw = _read_limited(Path(path), file)
    except FileNotFoundError:
        raise InventoryError(f"{file}: no such file") from None
    except IsADirectoryError:
        raise InventoryError(f"{file}: is a directory, expected an inventory YAML file") from None
    except OSError as exc:
        raise InventoryError(f"{file}: cannot read: {exc.strerror or exc}") from None
    except ValueError:  # e.g. an embedded NUL in the path
        raise InventoryError(f"{shorten(file)}: not a usable file name") from None
    return load_yaml_bytes(raw, file, tolerant=tolerant)


def load_yaml_stream(stream: Any, file: str = "<stdin>", *, tolerant: bool = False) -> LoadedDocument:
    """An inventory read from a binary stream (``imsdr validate -``), at most MAX_FILE_BYTES of it."""
    try:
        raw = stream.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise InventoryError(f"{file}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise _fatal(file, 1, 1, (), f"the input is larger than {MAX_FILE_BYTES:,} bytes; "
                     "larger inventories are refused", "too large")
    return load_yaml_bytes(raw, file, tolerant=tolerant)


def load_yaml_bytes(raw: bytes, file: str, *, tolerant: bool = False) -> LoadedDocument:
    """The inventory document of ``raw``, which must be UTF-8 (a BOM is dropped)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        start = raw.rfind(b"\n", 0, exc.start) + 1
        col = len(raw[start:exc.start].decode("utf-8", "replace")) + 1
        raise _fatal(file, line, col, (), f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the "
                     "inventory as UTF-8", "not UTF-8") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return load_yaml_text(text, file, tolerant=tolerant)
