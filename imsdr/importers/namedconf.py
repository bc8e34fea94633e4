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

MAX_CONFIG_BYTES = 16 * 1024 * 1024  # one file
MAX_INCLUDE_DEPTH = 16  # files on one include stack below the configuration's own
MAX_INCLUDED_FILES = 4096  # include statements followed in one configuration, every path counted
MAX_EXPANDED_BYTES = 64 * 1024 * 1024  # read in all, the configuration and every include
MAX_NESTING = 64  # blocks inside blocks; a real configuration has four or five


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
    for word in tokens:
        # BIND keeps a token as a C string, and what it makes of the bytes after a NUL depends on
        # the kind of token (a keyword, a name, an address): a NUL byte in a token is refused
        if "\x00" in word.text:
            problems.add(file, word.line, word.column + word.quoted + word.text.index("\x00"),
                         "a NUL byte: not read (BIND ends the word there, and refuses most of them)")
            return []
    try:
        statements, pos = _block(tokens, marks, 0, None, file, problems, 0)
    except _Stop:
        return []
    if pos < len(tokens):
        problems.add(file, tokens[pos].line, tokens[pos].column, "'}' without a matching '{'")
    return statements


def _block(tokens: list[Token], marks: list[int], pos: int, opener: Statement | None, file: str,
           problems: ImportProblems, depth: int) -> tuple[list[Statement], int]:
    """Statements up to the '}' closing ``opener`` (the file's end for the top level); ``marks``:
    the positions of the punctuation tokens, so the words of a statement are one slice;
    ``depth``: how many blocks are open around this one (bounded: the reader recurses)."""
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
            if depth >= MAX_NESTING:
                brace = tokens[pos]
                problems.add(file, brace.line, brace.column,
                             f"blocks nested deeper than {MAX_NESTING} levels; a configuration never needs that")
                raise _Stop
            stmt = Statement(words, [], file, words[0].line if words else tokens[pos].line)
            stmt.block, pos = _block(tokens, marks, pos + 1, stmt, file, problems, depth + 1)
            mark = _next_mark(marks, pos, n)
            stmt.words.extend(tokens[pos:mark])
            pos = mark
            statements.append(stmt)
        elif words:
            statements.append(Statement(words, None, file, words[0].line))
        elif pos < n and _is(tokens[pos], ";"):
            problems.add(file, tokens[pos].line, tokens[pos].column, "syntax error near ';' (an empty statement)")
            raise _Stop
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


class _Expansion:
    """What one configuration's includes have cost so far: every include path shares these bounds."""

    __slots__ = ("root", "problems", "files", "bytes")

    def __init__(self, root: Path, problems: ImportProblems) -> None:
        self.root = root
        self.problems = problems
        self.files = 0
        self.bytes = 0


def _read(path: Path, expansion: _Expansion, where: tuple[str, int, int] | None) -> tuple[Path, str] | None:
    """The real path and text of ``path``, read the one way an untrusted file is read; None (the
    reason in ``problems``, at the including statement when there is one) when it cannot be."""
    from imsdr.untrusted import UntrustedFile, read_untrusted_text

    problems = expansion.problems
    at = where or (str(path), 1, 1)
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        problems.add(*at, f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}")
        return None
    if not _within(real, expansion.root):
        problems.add(*at, f"{path} is outside the configuration's directory tree {expansion.root}: not followed")
        return None
    budget = MAX_EXPANDED_BYTES - expansion.bytes
    try:
        # the resolved path (inside the tree: a link within it is followed, as BIND follows it)
        text = read_untrusted_text(real, min(MAX_CONFIG_BYTES, max(budget, 0)), display=str(path),
                                   named_at=f"{at[0]}:{at[1]}" if where else None)
    except UntrustedFile as exc:
        if budget < MAX_CONFIG_BYTES and "at most" in exc.reason:
            problems.add(*at, f"including {path} takes the configuration past {MAX_EXPANDED_BYTES:,} bytes "
                              "read in all")
        else:
            line, column = (exc.file[len(str(path)) + 1:].split(":") + ["1", "1"])[:2] \
                if exc.file.startswith(f"{path}:") else ("", "")
            if line.isdigit():  # the file's own fault, at its own line (text that is not UTF-8)
                problems.add(str(path), int(line), int(column) if column.isdigit() else 1, exc.reason)
            else:
                problems.add(*at, f"{path}: {exc.reason}" if where else exc.reason)
        return None
    expansion.bytes += len(text.encode("utf-8"))
    return real, text


def _load(path: Path, expansion: _Expansion, stack: tuple[Path, ...],
          where: tuple[str, int, int] | None = None) -> list[Statement]:
    """The statements of ``path`` with every ``include`` replaced by the statements of its file,
    at any depth of blocks; ``stack``: the files being included, outermost first."""
    read = _read(path, expansion, where)
    if read is None:
        return []
    real, text = read
    problems = expansion.problems
    file = str(path)
    before = len(problems.problems)
    try:
        tokens = _tokens(text, file, problems)
        if len(problems.problems) > before:
            return []
        statements = _parse(tokens, file, problems)
    except (MemoryError, RecursionError) as exc:  # a resource limit keeps the file it was reading
        del text
        problems.add(*(where or (file, 1, 1)), f"{file}: {_exhausted(exc)} reading it")
        return []
    return _expand(statements, path, expansion, (*stack, real))


def _exhausted(exc: BaseException) -> str:
    return "out of memory" if isinstance(exc, MemoryError) else "nesting or recursion too deep"


def _expand(block: list[Statement], path: Path, expansion: _Expansion, stack: tuple[Path, ...]) -> list[Statement]:
    """``block`` with its includes (and those of its blocks) expanded. One bound for every include
    path, wherever the include stands: a file already on ``stack`` is a loop, ``stack`` at most
    MAX_INCLUDE_DEPTH deep, at most MAX_INCLUDED_FILES reads and MAX_EXPANDED_BYTES in all."""
    problems = expansion.problems
    out: list[Statement] = []
    for stmt in block:
        if stmt.keyword != "include":
            if stmt.block:
                stmt.block = _expand(stmt.block, path, expansion, stack)
            out.append(stmt)
            continue
        target = stmt.arg(1)
        at = (stmt.file, stmt.line, stmt.column)
        if target is None or stmt.block is not None or len(stmt.words) != 2:
            problems.add(*at, "include needs one file name")
            continue
        included = Path(target) if os.path.isabs(target) else path.parent / target
        try:
            real = included.resolve(strict=True)
        except (OSError, RuntimeError):
            real = None
        if real is not None and real in stack:
            chain = " -> ".join(p.name for p in stack[stack.index(real):])
            problems.add(*at, f"include {target!r} is a loop ({chain} -> {real.name}): not followed")
            continue
        if len(stack) > MAX_INCLUDE_DEPTH:
            problems.add(*at, f"includes nested deeper than {MAX_INCLUDE_DEPTH}")
            continue
        expansion.files += 1
        if expansion.files > MAX_INCLUDED_FILES:
            problems.add(*at, f"more than {MAX_INCLUDED_FILES:,} includes in one configuration: not followed")
            continue
        out.extend(_load(included, expansion, stack, at))
    return out


_BUILTIN_ACLS = frozenset({"any", "none", "localhost", "localnets"})
# The statements BIND 9.18 takes at the top of named.conf (``include`` is expanded before): any
# other keyword is a configuration named-checkconf refuses ("unknown option").
TOP_LEVEL = frozenset({
    "acl", "controls", "dlz", "dnssec-policy", "dyndb", "http", "key", "key-store", "logging",
    "managed-keys", "masters", "options", "parental-agents", "plugin", "primaries", "remote-servers",
    "server", "statistics-channels", "template", "tls", "trust-anchors", "trusted-keys", "view", "zone",
})
_NAME_LIKE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")  # a word BIND reads as an acl name, not an address
_SHORT_V4 = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,3}){0,3})/([0-9]{1,2})")


def _prefix(text: str) -> str | None:
    """An address or prefix as BIND reads it (strictly: no host bits under the mask; an IPv4
    prefix may leave out trailing zero octets, ``10/8``), or None."""
    short = _SHORT_V4.fullmatch(text)
    if short and text.count(".") < 3:
        text = ".".join((short[1].split(".") + ["0", "0", "0"])[:4]) + "/" + short[2]
    try:
        return str(ipaddress.ip_network(text, strict=True))
    except ValueError:
        return None


class _AclUse:
    """What an acl's definition leaves to its use: BIND resolves the names in an acl when the acl
    is used, so an unused acl may name an acl nobody defines; a used one may not."""

    def __init__(self) -> None:
        self.unresolved: dict[str, list[tuple[str, int, int, str]]] = {}  # acl -> its undefined names
        self.names: dict[str, list[str]] = {}  # acl -> the acls it names

    def use(self, name: str, problems: ImportProblems, seen: set[str] | None = None) -> None:
        seen = set() if seen is None else seen
        if name in seen:
            return
        seen.add(name)
        for problem in self.unresolved.pop(name, []):
            problems.add(*problem)
        for inner in self.names.get(name, []):
            self.use(inner, problems, seen)


def _address_list(stmt: Statement | None, acls: dict[str, list[str]], known: set[str],
                  problems: ImportProblems, uses: _AclUse, defining: str | None = None) -> list[str]:
    """An address match list as plain prefixes and ACL names.

    Every element is checked as BIND checks it: a name (quoted or not) must be a built-in ACL or
    one the configuration defines (``known``), an address or prefix must have no host bits.
    TSIG key elements (``key "name"``) and negated elements (``!"acl"``) say who else may use the
    view, not where its clients are: they are checked, then skipped, as no inventory field holds them.
    """
    if stmt is None or stmt.block is None:
        return []
    out: list[str] = []
    for item in stmt.block:
        words = item.words
        text = " ".join(w.text for w in words)
        if words and words[0].text == "key" and not words[0].quoted and len(words) == 2 and item.block is None:
            continue
        negated = bool(words) and not words[0].quoted and words[0].text.startswith("!")
        if negated and words[0].text == "!" and len(words) == 2:
            words = words[1:]
        elif negated and len(words) == 1:
            words = [words[0]._replace(text=words[0].text[1:], offset=words[0].offset + 1)]
        if len(words) != 1 or item.block is not None or not words[0].text:
            problems.add(item.file, item.line, item.column, f"address match element {text!r} is not understood")
            continue
        word = words[0]
        if word.text in _BUILTIN_ACLS or word.text in known:
            if word.text in known:
                if defining is None:
                    uses.use(word.text, problems)
                else:
                    uses.names.setdefault(defining, []).append(word.text)
            if not negated:
                out.append(word.text)
            continue
        prefix = None if word.quoted else _prefix(word.text)
        if prefix is None and (word.quoted or _NAME_LIKE.fullmatch(word.text)) and defining is not None:
            uses.unresolved.setdefault(defining, []).append(
                (word.file, word.line, word.column, f"{word.text!r} is not an acl this configuration defines"))
        elif prefix is None:
            why = "is not an acl this configuration defines (a quoted element names an acl)" if word.quoted \
                else "is neither an address, a prefix (without host bits) nor a known acl"
            problems.add(word.file, word.line, word.column, f"{word.text!r} {why}")
        elif not negated:
            out.append(prefix)
    return out


def _one_value(stmt: Statement, problems: ImportProblems) -> bool:
    """Whether an option imsdr reads (``type``, ``file``, ``directory``...) has its one value, as
    BIND requires (a lost ';' joins it with the next option: ``file "x" type primary``)."""
    if len(stmt.words) == 2 and stmt.block is None:
        return True
    shown = " ".join(w.text for w in stmt.words)[:60]
    problems.add(stmt.file, stmt.line, stmt.column, f"{stmt.keyword!r} takes one value, not {shown!r} "
                                                    "(a missing ';'?)")
    return False


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
    for keyword in ("type", "file", "in-view"):
        if keyword in first and not _one_value(first[keyword], problems):
            return None
    kind = first["type"].arg(1) if "type" in first else None
    file = first["file"].arg(1) if "file" in first else None
    in_view = first["in-view"].arg(1) if "in-view" in first else None
    primaries = (*lists["primaries"], *lists["masters"])
    return ZoneStatement(name.rstrip(".").lower(), kind, file, in_view, primaries, where)


def read_named_conf(path: Path, problems: ImportProblems, root: Path | None = None) -> NamedConf:
    """Parse ``path`` (and its includes inside ``root``, default: its directory)."""
    base = (root or path.parent).resolve()
    statements = _load(path, _Expansion(base, problems), ())
    acls: dict[str, list[str]] = {}
    directory = path.parent
    views: list[View] = []
    loose_zones: list[ZoneStatement] = []
    defined: dict[tuple[str, str], Statement] = {}  # (kind, name) -> its first definition
    known = {stmt.arg(1) or "" for stmt in statements if stmt.keyword == "acl" and stmt.arg(1)}
    uses = _AclUse()

    def first_definition(kind: str, name: str, stmt: Statement) -> bool:
        earlier = defined.setdefault((kind, name), stmt)
        if earlier is not stmt:
            problems.add(stmt.file, stmt.line, stmt.column, f"{kind} {name!r} is defined twice (first at "
                                                            f"{earlier.file}:{earlier.line}): BIND refuses this")
        return earlier is stmt

    # acls first: a view may use an acl defined after it (BIND resolves names when the whole file is read)
    for stmt in sorted(statements, key=lambda stmt: stmt.keyword != "acl"):
        if stmt.keyword not in TOP_LEVEL or (stmt.words and stmt.words[0].quoted):
            problems.add(stmt.file, stmt.line, stmt.column, f"unknown statement {stmt.keyword!r}: BIND refuses it")
        elif stmt.keyword == "acl" and stmt.arg(1):
            if first_definition("acl", stmt.arg(1) or "", stmt):
                acls[stmt.arg(1) or ""] = _address_list(stmt, acls, known, problems, uses, stmt.arg(1))
        elif stmt.keyword == "options":
            opt = stmt.child("directory")
            if opt and _one_value(opt, problems):
                directory = Path(opt.arg(1) or "")
        elif stmt.keyword == "view" and stmt.arg(1):
            if not first_definition("view", stmt.arg(1) or "", stmt):
                continue
            clients = stmt.child("match-clients")
            if clients is not None and (len(clients.words) != 1 or clients.block is None):
                problems.add(clients.file, clients.line, clients.column, "match-clients takes one list: "
                             f"{' '.join(w.text for w in clients.words)[:60]!r} (a missing ';'?)")
            view = View(stmt.arg(1) or "", _address_list(clients, acls, known, problems, uses),
                        where=f"{stmt.file}:{stmt.line}")
            names: set[str] = set()
            for child in stmt.children("zone"):
                zone = _zone(child, problems)
                if zone and zone.name in names:
                    problems.add(child.file, child.line, child.column, f"zone {zone.name!r} is defined twice in "
                                                                       f"view {view.name!r}: BIND refuses this")
                elif zone:
                    names.add(zone.name)
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
