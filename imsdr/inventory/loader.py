"""Safe YAML loading that remembers where every value came from.

PyYAML composes the document into nodes (with marks); we construct plain Python values
from those nodes ourselves so that we can refuse what a planner's inventory never needs
(Python tags, duplicate keys, alias bombs, absurd nesting) and keep a location for every
path, which later lets every problem and finding point at file:line:col.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from imsdr.diagnostics import Location, Problem
from imsdr.errors import InventoryError

try:  # libyaml's composer is several times faster; identical semantics for safe loading
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - libyaml is present in the usual wheels
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_NODES = 2_000_000  # constructed values, aliases expanded: stops "billion laughs" quickly
MAX_DEPTH = 64
MAX_ALIAS_REUSES = 10_000  # re-expansions of an anchored list/mapping; inventories use a handful

YamlPath = tuple[str | int, ...]

_STR = "tag:yaml.org,2002:str"
_SCALAR_TAGS = {
    _STR,
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
}
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_constructor = yaml.constructor.SafeConstructor()


@dataclass
class LoadedDocument:
    """Plain data plus the source location of every mapping, sequence and value in it."""

    data: Any
    file: str
    locations: dict[YamlPath, Location] = field(default_factory=dict)
    key_locations: dict[YamlPath, Location] = field(default_factory=dict)

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


def format_path(path: YamlPath) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _mark(file: str, mark: yaml.Mark) -> Location:
    return Location(file, mark.line + 1, mark.column + 1)


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.doc = LoadedDocument(None, file)
        self.problems: list[Problem] = []
        self.count = 0
        self.expanded: set[int] = set()
        self.alias_reuses = 0

    def problem(self, node: yaml.Node, path: YamlPath, message: str) -> None:
        self.problems.append(Problem(_mark(self.file, node.start_mark), format_path(path), message))

    def build(self, node: yaml.Node, path: YamlPath, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise InventoryError(
                "too many values",
                [Problem(_mark(self.file, node.start_mark), format_path(path),
                         f"document expands to more than {MAX_NODES:,} values "
                         "(an alias bomb?); refusing to load it")],
            )
        if depth > MAX_DEPTH:
            raise InventoryError(
                "too deeply nested",
                [Problem(_mark(self.file, node.start_mark), format_path(path),
                         f"nesting deeper than {MAX_DEPTH} levels; an inventory never needs that")],
            )
        self.doc.locations.setdefault(path, _mark(self.file, node.start_mark))
        if isinstance(node, yaml.CollectionNode):
            if id(node) in self.expanded:
                self.alias_reuses += 1
                if self.alias_reuses > MAX_ALIAS_REUSES:
                    raise InventoryError(
                        "too many aliases",
                        [Problem(_mark(self.file, node.start_mark), format_path(path),
                                 f"more than {MAX_ALIAS_REUSES:,} alias expansions (an alias bomb?); "
                                 "refusing to load it")],
                    )
            self.expanded.add(id(node))
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAP:
                self.problem(node, path, f"tag {node.tag!r} is not allowed (plain YAML mappings only)")
                return None
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ:
                self.problem(node, path, f"tag {node.tag!r} is not allowed (plain YAML lists only)")
                return None
            return [self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        if node.tag not in _SCALAR_TAGS:
            self.problem(node, path, f"tag {node.tag!r} is not allowed (plain YAML values only)")
            return None
        if node.tag == _STR:
            return node.value
        try:
            return _constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError) as exc:
            self.problem(node, path, f"cannot read value {node.value!r}: {exc}")
            return None

    def _mapping(self, node: yaml.MappingNode, path: YamlPath, depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        self._flatten_merge_keys(node, path)
        for key_node, value_node in node.value:
            key = self.build(key_node, (*path, "<key>"), depth + 1)
            if not isinstance(key, Hashable) or isinstance(key, (list, dict)):
                self.problem(key_node, path, "mapping keys must be plain values")
                continue
            key_path = (*path, key)
            if key in result:
                first = self.doc.key_locations.get(key_path)
                where = f" (first at line {first.line})" if first else ""
                self.problem(key_node, key_path, f"duplicate key {key!r}{where}")
                continue
            self.doc.key_locations[key_path] = _mark(self.file, key_node.start_mark)
            result[key] = self.build(value_node, key_path, depth + 1)
        self.doc.locations.pop((*path, "<key>"), None)
        return result

    def _flatten_merge_keys(self, node: yaml.MappingNode, path: YamlPath) -> None:
        """Support ``<<: *defaults`` the way YAML 1.1 does: explicit keys win."""
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        own: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    if not isinstance(source, yaml.MappingNode):
                        self.problem(source, path, "'<<' merges only mappings")
                        continue
                    self._flatten_merge_keys(source, path)
                    merged.extend(source.value)
            else:
                own.append((key_node, value_node))
        if merged:
            own_keys = {k.value for k, _ in own if isinstance(k, yaml.ScalarNode)}
            seen: set[str] = set()
            kept = []
            for k, v in merged:
                if isinstance(k, yaml.ScalarNode) and (k.value in own_keys or k.value in seen):
                    continue
                seen.add(k.value)
                kept.append((k, v))
            node.value = kept + own


def load_yaml_text(text: str, file: str) -> LoadedDocument:
    """Parse ``text`` safely; raise InventoryError carrying every problem found."""
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise InventoryError("NUL byte", [Problem(Location(file, line, 1), "", "file contains a NUL byte")])
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        loc = _mark(file, mark) if mark else None
        what = exc.problem or str(exc)
        at_tab = mark is not None and 0 <= mark.index < len(text) and text[mark.index] == "\t"
        if at_tab or "\t" in what or "tab" in what.lower():
            what += " (YAML does not allow tabs for indentation; use spaces)"
        context = f" {exc.context}" if exc.context else ""
        raise InventoryError("YAML syntax error", [Problem(loc, "", f"YAML syntax error:{context} {what}".replace(":  ", ": "))]) from None
    except yaml.YAMLError as exc:
        raise InventoryError("YAML error", [Problem(Location(file, 1, 1), "", f"YAML error: {exc}")]) from None
    if node is None:
        raise InventoryError("empty", [Problem(Location(file, 1, 1), "", "the file is empty; an inventory is a YAML mapping starting with 'version: 1'")])
    builder = _Builder(file)
    try:
        data = builder.build(node, (), 0)
    except RecursionError:
        raise InventoryError("too deep", [Problem(Location(file, 1, 1), "", "nesting is too deep")]) from None
    if builder.problems:
        raise InventoryError("invalid YAML", builder.problems)
    if not isinstance(data, dict):
        kind = type(data).__name__ if data is not None else "null"
        raise InventoryError("not a mapping", [Problem(_mark(file, node.start_mark), "", f"the document is a {kind}; an inventory must be a YAML mapping (expected 'version: 1', 'network:', 'sites:' ...)")])
    builder.doc.data = data
    return builder.doc


def load_yaml_file(path: str | os.PathLike[str]) -> LoadedDocument:
    file = str(path)
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InventoryError("too large", [Problem(Location(file, 1, 1), "", f"file is {size:,} bytes; inventories larger than {MAX_FILE_BYTES:,} bytes are refused")])
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InventoryError(f"{file}: no such file") from None
    except IsADirectoryError:
        raise InventoryError(f"{file}: is a directory, expected an inventory YAML file") from None
    except OSError as exc:
        raise InventoryError(f"{file}: cannot read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InventoryError("not UTF-8", [Problem(Location(file, line, col), "", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the inventory as UTF-8")]) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return load_yaml_text(text, file)
