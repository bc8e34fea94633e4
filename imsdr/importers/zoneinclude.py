"""``$INCLUDE`` in hand-written zone files (RFC 1035 §5.1), expanded inside the configuration's tree.

BIND reads an ``$INCLUDE``d file relative to its working directory (``options { directory }``)
and, after it, goes back to the origin the including file had. The import does the same as text:
the included file's lines take the place of the directive, between an ``$ORIGIN`` line for the
included file (the directive's origin, else the current one) and one restoring the includer's
origin, so dnspython reads one text and never opens a file itself. Every included file is read
the one way an untrusted file is read (``imsdr.untrusted``: no links followed out of the tree, no
FIFOs or devices, bounded size), must lie inside the configuration's directory tree (the same
confinement as named.conf's ``include``), and the expansion is bounded in depth, files and bytes.
A line of the expanded text maps back to its file and line (``Expanded.where``), so a parse error
names the line the operator wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.importers.errors import ImportProblems

MAX_INCLUDE_DEPTH = 8
MAX_INCLUDED_FILES = 256  # per zone file
MAX_INCLUDED_BYTES = 64 * 1024 * 1024  # per zone file, the includer's own text counted

_DIRECTIVE = re.compile(r"\$(ORIGIN|INCLUDE)[ \t]+(\S+)(?:[ \t]+([^\s;]+))?[ \t]*(?:;.*)?", re.IGNORECASE)


@dataclass(frozen=True)
class IncludeScope:
    """Where a zone file's ``$INCLUDE`` may read: relative names from ``base``, files inside ``roots``."""

    base: Path
    roots: tuple[Path, ...]


class IncludeRefused(Exception):
    def __init__(self, file: str, line: int, reason: str) -> None:
        super().__init__(reason)
        self.file, self.line, self.reason = file, line, reason


@dataclass
class Expanded:
    text: str
    # (first line in ``text``, file, its line there): each run of lines copied from one file
    segments: list[tuple[int, str, int]] = field(default_factory=list)

    def where(self, line: int) -> tuple[str, int]:
        """The file and line a line of the expanded text came from."""
        found = self.segments[0]
        for segment in self.segments:
            if segment[0] > line:
                break
            found = segment
        return found[1], found[2] + (line - found[0])


def has_include(raw: bytes) -> bool:
    return re.search(rb"^\$INCLUDE", raw, re.IGNORECASE | re.MULTILINE) is not None


def _absolute(name: str, origin: str) -> str:
    if name == "@":
        return origin
    return name if name.endswith(".") else f"{name}.{origin}"


def _open_parens(line: str) -> int:
    """How the line changes the parenthesis depth (quotes and comments skipped)."""
    depth, quoted, escaped = 0, False, False
    for char in line:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif char == ";":
            break
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
    return depth


def expand_includes(text: str, file: str, origin: str, scope: IncludeScope) -> Expanded:
    """``text`` (the zone file ``file`` for zone ``origin``) with every ``$INCLUDE`` replaced by
    the file it names; IncludeRefused (file, line, why) for one that may not or cannot be read."""
    out = Expanded("")
    lines: list[str] = []
    state = {"files": 0, "bytes": len(text.encode("utf-8"))}
    _expand(text, file, origin.rstrip(".") + ".", scope, lines, out, state, ())
    out.text = "\n".join(lines) + "\n"
    return out


def _expand(text: str, file: str, origin: str, scope: IncludeScope, lines: list[str], out: Expanded,
            state: dict[str, int], stack: tuple[Path, ...]) -> None:
    from imsdr.untrusted import UntrustedFile, read_untrusted_text

    segments = out.segments
    segments.append((len(lines) + 1, file, 1))
    depth = 0
    for number, line in enumerate(text.split("\n"), 1):
        directive = _DIRECTIVE.fullmatch(line) if depth == 0 and line[:1] == "$" else None
        depth += _open_parens(line)
        if directive is None or directive[1].upper() != "INCLUDE":
            if directive is not None:  # $ORIGIN: relative to the current origin (RFC 1035 §5.1)
                origin = _absolute(directive[2], origin)
            lines.append(line)
            continue
        name = directive[2].strip('"')
        target = Path(name) if Path(name).is_absolute() else scope.base / name
        try:
            real = target.resolve(strict=True)
        except (OSError, RuntimeError):
            raise IncludeRefused(file, number, f"$INCLUDE {name}: no such file (relative names are read from "
                                               f"{scope.base})") from None
        if not any(real.is_relative_to(root) for root in scope.roots):
            raise IncludeRefused(file, number, f"$INCLUDE {name} is outside the configuration's directory tree "
                                               f"{scope.roots[0]}: not followed")
        if real in stack:
            raise IncludeRefused(file, number, f"$INCLUDE {name} includes itself (a loop): not followed")
        if len(stack) >= MAX_INCLUDE_DEPTH:
            raise IncludeRefused(file, number, f"$INCLUDE nested deeper than {MAX_INCLUDE_DEPTH}")
        state["files"] += 1
        if state["files"] > MAX_INCLUDED_FILES:
            raise IncludeRefused(file, number, f"more than {MAX_INCLUDED_FILES} $INCLUDEs in one zone file")
        budget = MAX_INCLUDED_BYTES - state["bytes"]
        try:
            # the name as written: a link in its last component is refused, never followed
            included = read_untrusted_text(target, max(budget, 0), display=str(target), named_at=f"{file}:{number}")
        except UntrustedFile as exc:
            raise IncludeRefused(file, number, f"$INCLUDE {name}: {exc.reason}") from None
        state["bytes"] += len(included.encode("utf-8"))
        inner = _absolute(directive[3], origin) if directive[3] else origin
        segments.append((len(lines) + 1, file, number))
        lines.append(f"$ORIGIN {inner}")
        _expand(included.removesuffix("\n"), str(target), inner, scope, lines, out, state, (*stack, real))
        segments.append((len(lines) + 1, file, number))
        lines.append(f"$ORIGIN {origin}")
        segments.append((len(lines) + 1, file, number + 1))


def error_line(text: str, origin: str, reported: int) -> int:
    """The line a dnspython syntax error at ``reported`` is about. dnspython reads a record's line
    to its end before parsing its data, so an error in the data is reported at the line after it;
    an error in the owner, type or a directive at its own line. The text up to the line before
    the reported one tells them apart: it fails to load only if that line is the bad one."""
    import dns.exception
    import dns.zone

    if reported <= 1:
        return reported
    head = "\n".join(text.split("\n")[: reported - 1]) + "\n"
    try:
        dns.zone.from_text(head, origin=origin, relativize=True, check_origin=False, allow_include=False)
    except dns.exception.SyntaxError:
        return reported - 1
    except (dns.exception.DNSException, ValueError):
        return reported
    return reported


def zone_text(raw: bytes, path: Path, origin: str, scope: IncludeScope | None,
              problems: ImportProblems) -> tuple[str, Expanded | None] | None:
    """A zone file's text for dnspython, its ``$INCLUDE``s expanded (with ``scope``); None, the
    reason in ``problems``, when it is not UTF-8 or an include may not be read."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.add(str(path), raw.count(b"\n", 0, exc.start) + 1, 1, f"not UTF-8 text (byte 0x{raw[exc.start]:02x})")
        return None
    if scope is None or not has_include(raw):
        return text, None
    try:
        expanded = expand_includes(text, str(path), origin, scope)
    except IncludeRefused as exc:
        problems.add(exc.file, exc.line, 1, exc.reason)
        return None
    return expanded.text, expanded


def syntax_error_at(message: str, text: str, origin: str, path: Path,
                    expanded: Expanded | None) -> tuple[str, int, str]:
    """(file, line, reason) of a dnspython syntax error ``message`` ('FILE:LINE: reason') on ``text``."""
    at = re.search(r":(\d+): ", message)
    if at is None:
        return str(path), 1, message
    line = error_line(text, origin, int(at[1]))
    file, line = expanded.where(line) if expanded is not None else (str(path), line)
    return file, line, message[at.end():]
