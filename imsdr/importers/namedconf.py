"""A reader for the parts of a BIND named.conf that say how names are served.

It understands the grammar every statement shares (``keyword args { block };``, strings, the
three comment styles) and follows ``include`` only inside the configuration's own directory
tree. Everything else in the file is kept as parsed statements and ignored by the importer.
Syntax BIND would refuse (an unclosed brace or string, a missing ';') is an ImportError with
file and line; nothing is guessed.
"""

from __future__ import annotations

import bisect
import ipaddress
import os
import re
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import NamedTuple

from imsdr.importers.errors import ImportProblems

MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_INCLUDE_DEPTH = 16


class _Lines:
    """Where each line of one file starts: a token's line and column from its offset."""

    __slots__ = ("file", "starts")

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        # line n (from 1) starts at starts[n - 1]: 0, then one past each newline
        self.starts = [0, *accumulate(map((1).__add__, map(len, text.split("\n")[:-1])))]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def column(self, offset: int) -> int:
        return offset - self.starts[bisect.bisect_right(self.starts, offset) - 1] + 1


class Token(NamedTuple):  # a national configuration has half a million: a tuple is the cheapest
    text: str
    quoted: bool
    lines: _Lines  # its file's
    offset: int  # where it starts (a string: its quote); the line and column are worked out when asked

    @property
    def file(self) -> str:
        return self.lines.file

    @property
    def line(self) -> int:
        return self.lines.line(self.offset)

    @property
    def column(self) -> int:
        return self.lines.column(self.offset)


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


class ZoneStatement(NamedTuple):  # a national configuration has ~10^5 (a tuple is made in C)
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


# Between tokens: whitespace, '#' and '//' comments, closed '/*' comments (a comment ends at the
# first '*/' after its '/*'). Then one token: an unclosed '/*' comment, a string (a backslash
# escapes the next character; a string ends at its line), an unclosed string, punctuation, or a
# word (up to whitespace, punctuation, a quote, '#', '//' or '/*'); \Z: the end of the text.
# The pattern matches at every offset, so successive matches cover the text end to end.
# Possessive quantifiers: an unclosed string or comment must not backtrack through every way to split it.
_TOKEN = re.compile(r'(?:\s++|#[^\n]*+|//[^\n]*+|/\*(?:[^*]++|\*(?!/))*+\*/)*+'
                    r'(?:(/\*)|"((?:[^"\\\n]++|\\[\s\S])*+)"|(")|([{};])|((?:[^\s{};"#/]++|/(?![/*]))++)|\Z)')
_PUNCTUATION = frozenset("{};")


def _tokens(text: str, file: str, problems: ImportProblems) -> list[Token]:
    """The tokens of one file, each with its offset (its line and column are worked out when
    asked), by one pass of a regular expression; the first unclosed comment or string is a
    problem and ends the file."""
    out: list[Token] = []
    append, new = out.append, tuple.__new__
    lines = _Lines(file, text)
    for found in _TOKEN.finditer(text):
        kind = found.lastindex
        if kind is None:
            break
        if kind == 2:
            append(new(Token, (found[2], True, lines, found.start(2) - 1)))  # a string starts at its quote
        elif kind == 1 or kind == 3:
            start = found.start(kind)
            problems.add(file, lines.line(start), lines.column(start),
                         "unclosed /* comment" if kind == 1 else "unclosed string")
            break
        else:
            append(new(Token, (found[kind], False, lines, found.start(kind))))
    return out


def _is(tok: Token, punct: str) -> bool:
    return tok.text == punct and not tok.quoted


class _Stop(Exception):
    """The first syntax error of a file: BIND stops there too, and later errors would be echoes."""


def _parse(tokens: list[Token], file: str, problems: ImportProblems) -> list[Statement]:
    """Statements of one file; braces must balance and every statement ends with ';'."""
    marks = [i for i, tok in enumerate(tokens) if tok.text in _PUNCTUATION and not tok.quoted]
    try:
        statements, pos = _block(tokens, marks, 0, None, file, problems)
    except _Stop:
        return []
    if pos < len(tokens):
        problems.add(file, tokens[pos].line, tokens[pos].column, "'}' without a matching '{'")
    return statements


def _block(tokens: list[Token], marks: list[int], pos: int, opener: Statement | None, file: str,
           problems: ImportProblems) -> tuple[list[Statement], int]:
    """Statements up to the '}' closing ``opener`` (the file's end for the top level); ``marks``:
    the positions of the punctuation tokens, so the words of a statement are one slice."""
    statements: list[Statement] = []
    n = len(tokens)
    while pos < n:
        token = tokens[pos]
        if token.text == "}" and not token.quoted:
            if opener is None:
                return statements, pos
            return statements, pos + 1
        mark = _next_mark(marks, pos, n)
        words = tokens[pos:mark]
        pos = mark
        if pos < n and tokens[pos].text == "{" and not tokens[pos].quoted:
            stmt = Statement(words, [], file, words[0].line if words else tokens[pos].line)
            stmt.block, pos = _block(tokens, marks, pos + 1, stmt, file, problems)
            mark = _next_mark(marks, pos, n)
            stmt.words.extend(tokens[pos:mark])
            pos = mark
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


def _next_mark(marks: list[int], pos: int, n: int) -> int:
    """The position of the first punctuation token at or after ``pos`` (``n`` if none)."""
    at = bisect.bisect_left(marks, pos)
    return marks[at] if at < len(marks) else n


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
    from imsdr.untrusted import UntrustedFile, read_untrusted

    try:
        data = read_untrusted(real, MAX_CONFIG_BYTES)
    except UntrustedFile as exc:
        problems.add(*(where or (str(path), 0)), None, f"cannot read {path}: {exc.reason}")
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
    first: dict[str, Statement] = {}  # the first child of each keyword, in one walk of the block
    lists: dict[str, list[str]] = {"primaries": [], "masters": []}
    for child in stmt.block:
        keyword = child.words[0].text if child.words else ""
        first.setdefault(keyword, child)
        if keyword in lists:
            lists[keyword].extend(w.text for s in child.block or [] for w in s.words[:1])
    kind = first["type"].arg(1) if "type" in first else None
    file = first["file"].arg(1) if "file" in first else None
    in_view = first["in-view"].arg(1) if "in-view" in first else None
    primaries = (*lists["primaries"], *lists["masters"])
    return ZoneStatement(name.rstrip(".").lower(), kind, file, in_view, primaries, where)


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


# A '//' comment line that cannot end a '/*' comment: blanking it changes no token of a file
# without backslashes (no string continues onto the next line, so no line starts inside one).
_LINE_COMMENT = re.compile(r"^//(?:[^*\n]|\*(?!/))*$", re.MULTILINE)


def read_named_confs(paths: list[Path], problems: ImportProblems) -> list[NamedConf]:
    """Each server's configuration. The servers of one network are often configured alike, their
    files differing only in a header comment (imsdr writes them so): a file whose statements are
    token for token those of an earlier one in the same directory is not parsed again; its
    configuration is the earlier one's, with its own file name in every location."""
    import hashlib

    from imsdr.untrusted import UntrustedFile, read_untrusted

    parsed: dict[tuple[Path, str], NamedConf] = {}
    out: list[NamedConf] = []
    for path in paths:
        key = None
        try:
            data = read_untrusted(path, MAX_CONFIG_BYTES)
            text = data.decode("utf-8")
            if text and "\\" not in text:
                stripped = _LINE_COMMENT.sub("", text)
                key = (path.parent.resolve(), hashlib.sha256(stripped.encode()).hexdigest())
        except (UntrustedFile, UnicodeDecodeError):
            key = None  # read_named_conf reports it
        earlier = parsed.get(key) if key else None
        if earlier is not None:
            out.append(_relabelled(earlier, path))
            continue
        before = len(problems.problems)
        conf = read_named_conf(path, problems)
        if key and len(problems.problems) == before:
            parsed[key] = conf
        out.append(conf)
    return out


def _relabelled(conf: NamedConf, path: Path) -> NamedConf:
    """``conf`` as read from ``path`` (a file with the same statements on the same lines)."""
    old, new = str(conf.path), str(path)

    prefix, after = old + ":", len(old) + 1

    def where(text: str) -> str:  # 'old' or 'old:LINE' (no ':' in LINE), else as it is
        if text.startswith(prefix) and text.find(":", after) < 0:
            return new + text[len(old):]
        return new if text == old else text

    # a national configuration has ~10^5 zone statements: built directly, not by _replace
    views = [View(v.name, v.match_clients, [ZoneStatement(z.name, z.type, z.file, z.in_view, z.primaries,
                                                          where(z.where)) for z in v.zones],
                  where(v.where)) for v in conf.views]
    directory = conf.directory if conf.directory != conf.path.parent else path.parent
    return NamedConf(path, directory, conf.acls, views)
