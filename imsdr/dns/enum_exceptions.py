"""ENUM exceptions: the per-number records a provisioning file adds to the number blocks.

A number block is published as the wildcard(s) that cover it; the numbers that answer
differently (ported out, routed elsewhere, a URI option the operator asks for) are listed in a
provisioning file, never in the inventory (docs/dns.md, "ENUM exceptions"). The file is CSV:

    # comment lines and blank lines are ignored
    number,kind,target,params
    +8613800138123,ported,ims.other-operator.example,
    +8613800138124,ported-tel,+8613899990000,
    +8613800138125,routed,ims.guangdong.example.net,user=phone
    +8613800138126,uri,,user=phone

* ``ported``: ported out to another network: ``E2U+sip`` to ``sip:+N@target`` (RFC 6116);
* ``ported-tel``: ported out, RFC 4769 form: ``E2U+pstn:tel`` to ``tel:+N;npdi;rn=+target``;
* ``routed``: still ours, served by another domain: ``E2U+sip`` to ``sip:+N@target``;
* ``uri``: the block's own domain with URI parameters (``params`` required).

``params`` may be ``user=phone`` (RFC 3261 §19.1.1) on the SIP kinds. Plain comma-separated
fields, no quoting (no field needs a comma); ASCII only.

The file is read as hostile input: a regular file (no symlink, no device or FIFO), at most
:data:`MAX_BYTES`; every bad row is reported as ``FILE:LINE:COL`` (exit 2) and nothing is written.

Placing the exceptions in the zones (:func:`imsdr.dns.plan.apply_exceptions`): each one is an NAPTR rrset at its
number's name. Under a wildcard an exception creates empty non-terminals (RFC 4592 §2.2.2): the
ancestors of its name now exist, so a sibling number would no longer match the block's wildcard
and get NXDOMAIN. The block's wildcard NAPTR is therefore repeated at ``*.<ancestor>`` for each
ancestor the exception creates below the block's wildcard, so every other number keeps the
block's answer exactly as before.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from imsdr.dns.records import NAPTR

if TYPE_CHECKING:
    from imsdr.diagnostics import Problem
    from imsdr.inventory.schema import EnumBlock

MAX_BYTES = 256 * 1024 * 1024  # ~5 million rows
MAX_REPORTED = 1000  # bad rows listed one by one; the rest are counted
HEADER = "number,kind,target,params"
KINDS = ("ported", "ported-tel", "routed", "uri")
PARAMS = ("", "user=phone")
ENUM_ORDER, ENUM_PREFERENCE = 100, 10  # as the blocks' own NAPTR (imsdr.dns.plan)


@dataclass(frozen=True, slots=True)
class EnumException:
    """One provisioned number: digits without '+', what it does, and its line in the file."""

    number: str
    kind: str
    target: str  # a SIP domain (ported, routed), routing-number digits (ported-tel), '' (uri)
    params: str
    line: int

    def naptr(self, block_domain: str, make: Callable[[int, int, str, str, str, str], NAPTR] = NAPTR) -> NAPTR:
        """The NAPTR this number answers instead of its block's (``make``: its constructor, e.g.
        :meth:`imsdr.dns.records.RecordMaker.naptr`)."""
        if self.kind == "ported-tel":
            return make(ENUM_ORDER, ENUM_PREFERENCE, "u", "E2U+pstn:tel",
                        f"!^.*$!tel:+{self.number};npdi;rn=+{self.target}!", ".")
        params = self.params
        return make(ENUM_ORDER, ENUM_PREFERENCE, "u", "E2U+sip",
                    f"!^.*$!sip:+{self.number}@{self.target or block_domain}{';' if params else ''}{params}!", ".")


@dataclass(frozen=True)
class EnumExceptions:
    """The rows of one provisioning file, checked against the inventory's blocks."""

    file: str
    rows: tuple[EnumException, ...]
    digest: str  # sha256 of the file's bytes

    def __len__(self) -> int:
        return len(self.rows)


def _row_maker() -> Callable[[str, str, str, str, int], EnumException]:
    """``EnumException(number, kind, target, params, line)`` for the rows of a file (hundreds of
    thousands): the same object, its slots set directly, without the frozen class's per-field
    ``object.__setattr__``."""
    new = object.__new__
    slots = EnumException.__dict__
    set_number, set_kind, set_target, set_params, set_line = (
        slots[f].__set__ for f in ("number", "kind", "target", "params", "line"))

    def make(number: str, kind: str, target: str, params: str, line: int) -> EnumException:
        row = new(EnumException)
        set_number(row, number)
        set_kind(row, kind)
        set_target(row, target)
        set_params(row, params)
        set_line(row, line)
        return row

    return make


def _read_bounded(path: Path) -> bytes:
    """The file's bytes: a regular file reached without following a final symlink, size-bounded."""
    from imsdr.errors import ImsdrError

    file = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ImsdrError(f"{file}: no such file") from None
    except OSError as exc:
        if os.path.islink(path):
            raise ImsdrError(f"{file}: is a symbolic link; give the ENUM exceptions file itself") from None
        raise ImsdrError(f"{file}: cannot read: {exc.strerror or exc}") from None
    except ValueError:
        raise ImsdrError("the ENUM exceptions file name is not usable") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ImsdrError(f"{file}: not a regular file; expected an ENUM exceptions CSV file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_BYTES:
            raise ImsdrError(f"{file}: {info.st_size:,} bytes; ENUM exceptions files larger than "
                             f"{MAX_BYTES:,} bytes are refused")
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise ImsdrError(f"{file}: larger than {MAX_BYTES:,} bytes; refused")
    return raw


def load_enum_exceptions(path: Path, blocks: Iterable[EnumBlock]) -> EnumExceptions:
    """Read and check ``path`` against the inventory's ENUM ``blocks``; ImsdrError (exit 2) with
    every bad row located when anything is wrong."""
    from imsdr.errors import ImsdrError

    raw = _read_bounded(Path(path))
    rows, problems = parse_enum_exceptions(raw, str(path), blocks)
    if problems:
        raise ImsdrError(f"{path}: {len(problems)} bad ENUM exception row(s)", problems)
    return EnumExceptions(str(path), tuple(rows), "sha256:" + hashlib.sha256(raw).hexdigest())


_E164 = re.compile(r"\+[0-9]{2,15}")  # + and 2-15 ASCII digits (the file is ASCII: isdigit is 0-9)
# a row as a provisioning system writes it (parse_enum_exceptions' fast path): number, a kind, a
# target of the characters a SIP domain or routing number has, no params or user=phone, at most
# one '\r'; what the precise checks of the row would still refuse is checked after the match
_PLAIN_ROW = re.compile(r"\+([0-9]{2,15}),(ported|routed|ported-tel|uri),([a-z0-9.+-]*),(|user=phone)\r?")


def _column(fields: list[str], index: int) -> int:
    """The 1-based column where field ``index`` of a comma-separated row starts."""
    return 1 + sum(len(f) + 1 for f in fields[:index])


def _domain_problem(target: str, name_problems: Callable[[str], list[str]]) -> str:
    """'' when ``target`` can be a ported or routed number's SIP domain; else '!' and what the
    message adds (': ' and the first name problem, or nothing)."""
    why = name_problems(target) if target else ["empty"]
    if why or target != target.lower() or "." not in target:
        return "!" + (": " + why[0] if why else "")
    return ""


def parse_enum_exceptions(raw: bytes, file: str, blocks: Iterable[EnumBlock],
                          ) -> tuple[list[EnumException], list[Problem]]:
    """(rows, problems) of the file's bytes; every bad row gives one problem at its line:column."""
    from imsdr.diagnostics import Location, Problem
    from imsdr.dns.names import name_problems

    by_prefix = {b.prefix: b for b in blocks}
    problems: list[Problem] = []
    skipped = 0

    def bad(line: int, col: int, message: str) -> None:
        nonlocal skipped
        if len(problems) < MAX_REPORTED:
            problems.append(Problem(Location(file, line, col), "", message))
        else:
            skipped += 1

    rows: list[EnumException] = []
    seen: dict[str, int] = {}
    domains: dict[str, str] = {}  # target -> _domain_problem (a few domains, many rows)
    lengths = sorted({len(p) for p in by_prefix}, reverse=True)  # (longest prefix first)
    header_seen = False
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return [], [Problem(Location(file, line, col), "", f"byte 0x{raw[exc.start]:02x} is not ASCII; "
                            "ENUM exceptions files are plain ASCII")]
    e164 = _E164.fullmatch
    plain = _PLAIN_ROW.fullmatch
    append = rows.append
    new_row = _row_maker()
    # one pass, a row at a time; the columns of a bad row are worked out only for its message
    for lineno, line in enumerate(text.split("\n"), 1):
        # fast path: a plain row after the header that every check below passes, taken whole; any
        # other line (comment, header, a row with a problem) goes through the checks one by one
        match = plain(line) if header_seen else None
        if match is not None:
            digits, kind, target, params = match.groups()
            for i in lengths:
                if i <= len(digits):
                    block = by_prefix.get(digits[:i])
                    if block is not None:
                        break
            else:
                block = None
            if (block is not None and (block.length is None or len(digits) == block.length)
                    and len(digits) != len(block.prefix) and digits not in seen):
                if kind == "ported" or kind == "routed":
                    why = domains.get(target)
                    if why is None:
                        why = domains[target] = _domain_problem(target, name_problems)
                    ok = not why
                elif kind == "ported-tel":
                    ok = not params and e164(target) is not None
                    target = target[1:]
                else:
                    ok = not target and params != ""
                if ok:
                    seen[digits] = lineno
                    append(new_row(digits, kind, target, params, lineno))
                    continue
        if line.endswith("\r"):
            line = line[:-1]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not line.isprintable():
            col = next(i for i, ch in enumerate(line) if not ch.isprintable()) + 1
            bad(lineno, col, "a control character; rows are printable ASCII")
            continue
        if not header_seen:
            header_seen = True
            if line != HEADER:
                bad(lineno, 1, f"the first row must be the header {HEADER!r}")
            continue
        fields = line.split(",")
        if len(fields) != 4:
            bad(lineno, 1, f"{len(fields)} field(s); a row is number,kind,target,params (4 fields, "
                           "an empty field stays between its commas)")
            continue
        number, kind, target, params = fields
        if not e164(number):
            bad(lineno, 1, f"number {number[:40]!r} is not an E.164 number (+ and 2-15 digits)")
            continue
        digits = number[1:]
        block = None
        for i in lengths:
            if i <= len(digits):
                block = by_prefix.get(digits[:i])
                if block is not None:
                    break
        if block is None:
            bad(lineno, 1, f"{number} is under no ENUM block of the inventory (its zone is not ours)")
            continue
        if block.length is not None and len(digits) != block.length:
            bad(lineno, 1, f"{number} has {len(digits)} digits; block '{block.id}' numbers have "
                           f"{block.length}")
            continue
        if len(digits) == len(block.prefix):
            bad(lineno, 1, f"{number} is the prefix of block '{block.id}' itself, not a number in it")
            continue
        if kind not in KINDS:
            bad(lineno, _column(fields, 1), f"kind {kind[:40]!r} is not one of {', '.join(KINDS)}")
            continue
        if kind in ("ported", "routed"):
            why = domains.get(target)
            if why is None:
                why = domains[target] = _domain_problem(target, name_problems)
            if why:
                bad(lineno, _column(fields, 2), f"{kind}: target {target[:60]!r} must be the SIP domain "
                                                f"the number goes to (lower-case DNS name){why[1:]}")
                continue
        elif kind == "ported-tel":
            if not e164(target):
                bad(lineno, _column(fields, 2), f"ported-tel: target {target[:40]!r} must be the routing "
                                                "number (+ and 2-15 digits), written as rn= (RFC 4769)")
                continue
            target = target[1:]
        elif target:
            bad(lineno, _column(fields, 2), "uri: target must be empty (the number keeps its block's domain)")
            continue
        if params not in PARAMS or (kind == "ported-tel" and params):
            allowed = "none" if kind == "ported-tel" else "empty or user=phone"
            bad(lineno, _column(fields, 3), f"params {params[:40]!r}: {allowed} for kind {kind}")
            continue
        if kind == "uri" and not params:
            bad(lineno, _column(fields, 3), "uri: params must say what the exception changes (user=phone)")
            continue
        if digits in seen:
            bad(lineno, 1, f"{number} is listed twice (first on line {seen[digits]})")
            continue
        seen[digits] = lineno
        append(new_row(digits, kind, target, params, lineno))
    if not header_seen and not problems:
        bad(1, 1, f"the file has no header row {HEADER!r}")
    if skipped:
        problems.append(Problem(Location(file, 1, 1), "", f"... and {skipped:,} more bad row(s)"))
    return rows, problems
