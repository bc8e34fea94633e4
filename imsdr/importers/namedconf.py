"""A reader for the parts of a BIND named.conf that say how names are served.

It understands the grammar every statement shares (``keyword args { block };``, strings, the
three comment styles) and follows ``include`` only inside the configuration's own directory
tree. Everything else in the file is kept as parsed statements and ignored by the importer.
Syntax BIND would refuse (an unclosed brace or string, a missing ';') is an ImportError with
file and line; nothing is guessed.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from imsdr.importers.errors import ImportProblems

MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_INCLUDE_DEPTH = 16


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    quoted: bool
    file: str
    line: int
    column: int


@dataclass(slots=True)
class Statement:
    words: list[Token]
    block: list[Statement] | None
    file: str
    line: int

    @property
    def column(self) -> int:
        return self.words[0].column if self.words else 1

    @property
    def keyword(self) -> str:
        return self.words[0].text if self.words else ""

    def arg(self, index: int) -> str | None:
        return self.words[index].text if len(self.words) > index else None

    def children(self, keyword: str) -> list[Statement]:
        return [s for s in self.block or [] if s.keyword == keyword]

    def child(self, keyword: str) -> Statement | None:
        found = self.children(keyword)
        return found[0] if found else None


@dataclass(frozen=True, slots=True)
class ZoneStatement:
    name: str
    type: str | None
    file: str | None
    in_view: str | None
    primaries: tuple[str, ...]
    where: str


@dataclass(slots=True)
class View:
    name: str
    match_clients: list[str]
    zones: list[ZoneStatement] = field(default_factory=list)
    where: str = ""


@dataclass(slots=True)
class NamedConf:
    path: Path
    directory: Path
    acls: dict[str, list[str]]
    views: list[View]


def _tokens(text: str, file: str, problems: ImportProblems) -> list[Token]:
    out: list[Token] = []
    i, line, line_start, n = 0, 1, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
            line_start = i
        elif ch.isspace():
            i += 1
        elif ch == "#" or text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                problems.add(file, line, i - line_start + 1, "unclosed /* comment")
                return out
            line += text.count("\n", i, end)
            if "\n" in text[i:end]:
                line_start = text.rfind("\n", i, end) + 1
            i = end + 2
        elif ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                if text[end] == "\n":
                    break
                end += 2 if text[end] == "\\" else 1
            if end >= n or text[end] != '"':
                problems.add(file, line, i - line_start + 1, "unclosed string")
                return out
            out.append(Token(text[i + 1:end], True, file, line, i - line_start + 1))
            i = end + 1
        elif ch in "{};":
            out.append(Token(ch, False, file, line, i - line_start + 1))
            i += 1
        else:
            end = i
            while end < n and not text[end].isspace() and text[end] not in '{};"#':
                if text.startswith("//", end) or text.startswith("/*", end):
                    break
                end += 1
            out.append(Token(text[i:end], False, file, line, i - line_start + 1))
            i = end
    return out


def _is(tok: Token, punct: str) -> bool:
    return tok.text == punct and not tok.quoted


class _Stop(Exception):
    """The first syntax error of a file: BIND stops there too, and later errors would be echoes."""


def _parse(tokens: list[Token], file: str, problems: ImportProblems) -> list[Statement]:
    """Statements of one file; braces must balance and every statement ends with ';'."""
    try:
        statements, pos = _block(tokens, 0, None, file, problems)
    except _Stop:
        return []
    if pos < len(tokens):
        problems.add(file, tokens[pos].line, tokens[pos].column, "'}' without a matching '{'")
    return statements


def _block(tokens: list[Token], pos: int, opener: Statement | None, file: str,
           problems: ImportProblems) -> tuple[list[Statement], int]:
    statements: list[Statement] = []
    n = len(tokens)
    while pos < n:
        if _is(tokens[pos], "}"):
            if opener is None:
                return statements, pos
            return statements, pos + 1
        words: list[Token] = []
        while pos < n and not any(_is(tokens[pos], p) for p in ";{}"):
            words.append(tokens[pos])
            pos += 1
        if pos < n and _is(tokens[pos], "{"):
            stmt = Statement(words, [], file, words[0].line if words else tokens[pos].line)
            stmt.block, pos = _block(tokens, pos + 1, stmt, file, problems)
            while pos < n and not any(_is(tokens[pos], p) for p in ";{}"):
                stmt.words.append(tokens[pos])
                pos += 1
            statements.append(stmt)
        elif words:
            statements.append(Statement(words, None, file, words[0].line))
        if pos < n and _is(tokens[pos], ";"):
            pos += 1
        else:
            last = statements[-1].words[-1] if statements and statements[-1].words else None
            at = last or (tokens[pos] if pos < n else None)
            problems.add(file, at.line if at else 1, (at.column + len(at.text)) if at else 1,
                         f"missing ';' after {last.text!r}" if last else "missing ';'")
            raise _Stop
    if opener is not None:
        problems.add(file, opener.line, opener.column, f"'{{' of {opener.keyword!r} is never closed")
        raise _Stop
    return statements, pos


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _read(path: Path, root: Path, problems: ImportProblems, where: tuple[str, int] | None) -> str | None:
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        problems.add(*(where or (str(path), 0)), None, f"cannot read {path}: {exc.strerror or exc}")
        return None
    if not _within(real, root):
        problems.add(*(where or (str(path), 0)), None,
                     f"{path} is outside the configuration's directory tree {root}: not followed")
        return None
    try:
        with open(real, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        problems.add(*(where or (str(path), 0)), None, f"cannot read {path}: {exc.strerror}")
        return None
    if len(data) > MAX_CONFIG_BYTES:
        problems.add(str(path), 0, None, f"larger than {MAX_CONFIG_BYTES} bytes")
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.add(str(path), 0, None, f"not UTF-8 text (byte {exc.start})")
        return None


def _load(path: Path, root: Path, problems: ImportProblems, depth: int,
          where: tuple[str, int] | None = None) -> list[Statement]:
    text = _read(path, root, problems, where)
    if text is None:
        return []
    file = str(path)
    statements: list[Statement] = []
    before = len(problems.problems)
    tokens = _tokens(text, file, problems)
    if len(problems.problems) > before:
        return []
    for stmt in _parse(tokens, file, problems):
        if stmt.keyword == "include":
            target = stmt.arg(1)
            if target is None or stmt.block is not None:
                problems.add(file, stmt.line, stmt.column, "include needs one file name")
                continue
            if depth >= MAX_INCLUDE_DEPTH:
                problems.add(file, stmt.line, stmt.column, f"includes nested deeper than {MAX_INCLUDE_DEPTH}")
                continue
            included = Path(target) if os.path.isabs(target) else path.parent / target
            statements.extend(_load(included, root, problems, depth + 1, (file, stmt.line)))
        else:
            if stmt.block is not None:
                stmt.block = _expand_includes(stmt.block, path, root, problems, depth)
            statements.append(stmt)
    return statements


def _expand_includes(block: list[Statement], path: Path, root: Path, problems: ImportProblems,
                     depth: int) -> list[Statement]:
    out: list[Statement] = []
    for stmt in block:
        if stmt.keyword == "include" and stmt.arg(1):
            target = stmt.arg(1) or ""
            included = Path(target) if os.path.isabs(target) else path.parent / target
            out.extend(_load(included, root, problems, depth + 1, (stmt.file, stmt.line)))
        else:
            out.append(stmt)
    return out


def _address_list(stmt: Statement | None, acls: dict[str, list[str]], problems: ImportProblems) -> list[str]:
    """An address match list as plain prefixes and ACL names.

    TSIG key elements (``key "name"``) and negated elements (``!"acl"``) say who else may use the
    view, not where its clients are: they are skipped, as no inventory field holds them.
    """
    if stmt is None or stmt.block is None:
        return []
    out: list[str] = []
    for item in stmt.block:
        words = item.words
        text = " ".join(w.text for w in words)
        if words and (words[0].text == "key" and len(words) == 2 or words[0].text.startswith("!")):
            continue
        if len(words) != 1 or item.block is not None:
            problems.add(item.file, item.line, item.column, f"address match element {text!r} is not understood")
            continue
        word = words[0]
        if word.quoted or word.text in acls or word.text in ("any", "none", "localhost", "localnets"):
            out.append(word.text)
            continue
        try:
            out.append(str(ipaddress.ip_network(word.text, strict=False)))
        except ValueError:
            problems.add(item.file, item.line, item.column,
                         f"{word.text!r} is neither an address, a prefix nor a known acl")
    return out


def _zone(stmt: Statement, problems: ImportProblems) -> ZoneStatement | None:
    name = stmt.arg(1)
    where = f"{stmt.file}:{stmt.line}"
    if name is None or stmt.block is None:
        problems.add(stmt.file, stmt.line, stmt.column, "zone statement needs a name and a block")
        return None
    kind = (stmt.child("type").arg(1) if stmt.child("type") else None)
    file = stmt.child("file").arg(1) if stmt.child("file") else None
    in_view = stmt.child("in-view").arg(1) if stmt.child("in-view") else None
    primaries: list[str] = []
    for key in ("primaries", "masters"):
        for child in stmt.children(key):
            primaries.extend(w.text for s in child.block or [] for w in s.words[:1])
    return ZoneStatement(name.rstrip(".").lower(), kind, file, in_view, tuple(primaries), where)


def read_named_conf(path: Path, problems: ImportProblems, root: Path | None = None) -> NamedConf:
    """Parse ``path`` (and its includes inside ``root``, default: its directory)."""
    base = (root or path.parent).resolve()
    statements = _load(path, base, problems, 0)
    acls: dict[str, list[str]] = {}
    directory = path.parent
    views: list[View] = []
    loose_zones: list[ZoneStatement] = []
    for stmt in statements:
        if stmt.keyword == "acl" and stmt.arg(1):
            acls[stmt.arg(1) or ""] = _address_list(stmt, acls, problems)
        elif stmt.keyword == "options":
            opt = stmt.child("directory")
            if opt and opt.arg(1):
                directory = Path(opt.arg(1) or "")
        elif stmt.keyword == "view" and stmt.arg(1):
            view = View(stmt.arg(1) or "", _address_list(stmt.child("match-clients"), acls, problems),
                        where=f"{stmt.file}:{stmt.line}")
            for child in stmt.children("zone"):
                zone = _zone(child, problems)
                if zone:
                    view.zones.append(zone)
            views.append(view)
        elif stmt.keyword == "zone":
            zone = _zone(stmt, problems)
            if zone:
                loose_zones.append(zone)
    if loose_zones and views:
        problems.add(str(path), 0, None, "zones outside views next to views: BIND refuses this configuration")
    if loose_zones and not views:
        views.append(View("default", ["any"], loose_zones, where=str(path)))
    return NamedConf(path, directory, acls, views)
