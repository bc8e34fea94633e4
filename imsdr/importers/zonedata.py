"""Home zone files read into what the BIND importer derives its facts from.

A national network's rendered DNS holds thousands of per-view copies of each home zone
(``zones/users-<local network>/``, ``zones/core-<site>/``): hundreds of thousands of lines, mostly
the same lines again. Two readers give the same rrsets:

* a strict line reader for the form ``imsdr render dns`` writes (``$ORIGIN`` of the zone, every
  record on one line with its owner relative to the origin, an explicit TTL, class ``IN``, type
  SOA/NS/NAPTR/SRV/A/AAAA and absolute lower-case target names; each rrset on consecutive lines).
  A distinct line is parsed once per import (``LineMemo``): the per-view copies repeat them;
* dnspython, for every file the line reader does not recognise with certainty: hand-written zones
  (relative names, ``$TTL`` defaults, CNAMEs, parentheses, ``$INCLUDE``...), anything that may not
  parse, or that dnspython would merge or reorder. Its messages (with FILE:LINE) are the ones
  reported.

The line reader gives up on a whole file at the first line it is not sure of, so a file is read
by exactly one of them; tests/test_import_zonedata.py checks that both give the same rrsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from imsdr.importers.errors import ImportProblems
from imsdr.importers.zoneinclude import IncludeScope, syntax_error_at, zone_text

MAX_ZONE_BYTES = 64 * 1024 * 1024  # home zones are read whole; ENUM zones are streamed
MAX_GENERATED = 65_536  # records all $GENERATE lines of one zone file may make, in all
_MAX_TTL = 2**31 - 1  # dnspython takes up to 2**32 - 1; larger values are left to it
_LABEL = r"[a-z0-9_-]{1,63}"
_NAME = rf"((?:{_LABEL}\.)+)"  # absolute, lower case, no escapes
_ORIGIN = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_RECORD = re.compile(rf"(@|{_LABEL}(?:\.{_LABEL})*)[ \t]+([0-9]{{1,10}})[ \t]+IN[ \t]+(A|AAAA|NS|SRV|NAPTR|SOA)"
                     r"[ \t]+(.*?)[ \t]*")
_STRING = r'"([ !#-\[\]-~]{0,255})"'  # printable ASCII without quote or backslash
_RDATA = {
    "A": re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,3}){3})"),
    "AAAA": re.compile(r"([0-9a-fA-F:.]{2,45})"),
    "NS": re.compile(_NAME),
    "SRV": re.compile(rf"([0-9]{{1,5}})[ \t]+([0-9]{{1,5}})[ \t]+([0-9]{{1,5}})[ \t]+{_NAME}"),
    "NAPTR": re.compile(rf"([0-9]{{1,5}})[ \t]+([0-9]{{1,5}})[ \t]+{_STRING}[ \t]+{_STRING}[ \t]+{_STRING}[ \t]+"
                        rf"{_NAME}"),
    "SOA": re.compile(rf"{_NAME}[ \t]+{_NAME}[ \t]+([0-9]{{1,10}})[ \t]+([0-9]{{1,10}})[ \t]+([0-9]{{1,10}})"
                      r"[ \t]+([0-9]{1,10})[ \t]+([0-9]{1,10})"),
}
_BLANK = re.compile(r"[ \t]*(?:;.*)?")
_NOT_IN_FORM = object()  # a memo entry: the line reader cannot read this line
_NOTHING = object()  # a memo entry: a comment or blank line


_MODELLED = frozenset({"A", "AAAA", "NAPTR", "SRV", "NS", "SOA"})


class Srv(NamedTuple):  # a tuple: hashed and compared in C (a national network has 10^5 of them)
    priority: int
    weight: int
    port: int
    target: str


# per record kind: A/AAAA address text; NAPTR (order, preference, service, replacement);
# SRV Srv; NS target; SOA (rname, minimum); other kinds (dnspython only): None
Rdata = Any


class RRset(NamedTuple):  # a tuple: ~10^5 per national import, made in C
    owner: str  # absolute, lower case, no final dot
    kind: str  # A, AAAA, NS, ...
    ttl: int
    rdatas: tuple[Rdata, ...]


@dataclass
class ZoneData:
    """One home zone as seen in one view: rrsets by (relative-free) owner name.

    The record tuples are the reader's own: the per-view copies of a zone share them (the same
    object for the same rrset), so what is derived from one can be looked up by identity."""

    name: str
    a: dict[str, tuple[str, ...]] = field(default_factory=dict)  # owner -> its A and AAAA addresses
    # owner -> (order, preference, service, replacement)
    naptr: dict[str, tuple[tuple[int, int, str, str], ...]] = field(default_factory=dict)
    srv: dict[str, tuple[Srv, ...]] = field(default_factory=dict)
    ns: tuple[str, ...] = ()
    soa_rname: str | None = None
    ttls: dict[str, list[int]] = field(default_factory=dict)  # record kind -> TTL of each rrset
    # records of kinds imsdr does not model (TXT, CNAME, MX...): 'OWNER. TTL IN TYPE DATA' lines
    other: list[str] = field(default_factory=list)


# one import run's parsed lines: line text -> (relative owner, kind, ttl, rdata) or a marker;
# ("rdata", kind, its text) -> a record's data; (origin, an owner's lines) -> its rrsets;
# ("rdatas", kind, records) -> the one tuple of those
# records; ("joined", id, id) -> two address tuples and their join
LineMemo = dict[Any, Any]


def _joined(first: tuple[str, ...], second: tuple[str, ...], memo: LineMemo | None) -> tuple[str, ...]:
    if memo is None:
        return first + second
    key = ("joined", id(first), id(second))
    entry = memo.get(key)
    if entry is None or entry[0] is not first or entry[1] is not second:
        entry = memo[key] = (first, second, first + second)  # the entry keeps both alive: ids stay theirs
    return entry[2]


def zone_data(origin: str, rrsets: list[RRset], memo: LineMemo | None = None) -> ZoneData:
    """The zone's facts; with ``memo``, a host's A and AAAA addresses joined once per import, so the
    per-view copies of a zone share that tuple too."""
    data = ZoneData(origin)
    for rrset in rrsets:
        owner, kind = rrset.owner, rrset.kind
        data.ttls.setdefault(kind.lower(), []).append(rrset.ttl)
        if kind in ("A", "AAAA"):
            data.a[owner] = _joined(data.a[owner], rrset.rdatas, memo) if owner in data.a else rrset.rdatas
        elif kind == "NAPTR":
            data.naptr[owner] = rrset.rdatas
        elif kind == "SRV":
            data.srv[owner] = rrset.rdatas
        elif kind == "NS" and owner == origin:
            data.ns = rrset.rdatas
        elif kind == "SOA" and owner == origin:
            rname, minimum = rrset.rdatas[0]
            data.soa_rname = rname
            data.ttls["negative"] = [minimum]
        elif kind not in _MODELLED:
            data.other.extend(f"{owner}. {rrset.ttl} IN {kind} {text}" for text in rrset.rdatas)
    return data


def load_home_zone(path: Path, origin: str, problems: ImportProblems, where: str,
                   memo: LineMemo, scope: IncludeScope | None = None) -> ZoneData | None:
    """The zone file at ``path`` for zone ``origin`` (``where``: the zone statement, for a missing
    file); None, with the reason in ``problems``, when it cannot be read."""
    from imsdr.untrusted import UntrustedFile, read_untrusted

    file, line = where.rsplit(":", 1)
    try:
        raw = read_untrusted(path, MAX_ZONE_BYTES)
    except UntrustedFile as exc:
        if exc.reason != "no such file":
            problems.add(str(path), 1, 1, exc.reason)
        else:
            problems.add(file, int(line), 1, f"cannot read zone file {path}: No such file or directory (zone file "
                                              "names are relative to options { directory }: give --zones-dir)")
        return None
    rrsets = imsdr_form_rrsets(raw, origin, memo)
    if rrsets is None:
        rrsets = _dnspython_rrsets(raw, path, origin, problems, scope)
    return None if rrsets is None else zone_data(origin, rrsets, memo)


# A $GENERATE directive (at the start of a line, in any case) and its range: start-stop[/step]
_GENERATE = re.compile(rb"^\$GENERATE(?:[ \t]+([^ \t\r\n;]*))?", re.IGNORECASE | re.MULTILINE)
_RANGE = re.compile(rb"([0-9]{1,10})-([0-9]{1,10})(?:/([0-9]{1,10}))?")


def generate_problem(raw: bytes, limit: int = MAX_GENERATED) -> tuple[int, str] | None:
    """(line, why) of the first ``$GENERATE`` that takes the zone's generated records past
    ``limit`` (one ``$GENERATE 1-50000000`` would keep dnspython busy for minutes and hold every
    record in memory), or whose range cannot be read; None when every one is bounded."""
    total = 0
    for found in _GENERATE.finditer(raw):
        line = raw.count(b"\n", 0, found.start()) + 1
        bounds = _RANGE.fullmatch(found[1] or b"")
        if bounds is None:
            return line, f"$GENERATE range {(found[1] or b'').decode('ascii', 'replace')!r} is not start-stop[/step]"
        start, stop, step = int(bounds[1]), int(bounds[2]), int(bounds[3] or 1)
        if step < 1 or start > stop:
            return line, f"$GENERATE range {found[1].decode('ascii')} is empty or has step 0"
        total += (stop - start) // step + 1
        if total > limit:
            return line, (f"$GENERATE makes {total:,} records in this file; at most {limit:,} are read "
                          "(write the records out, or split the zone)")
    return None


def imsdr_form_rrsets(raw: bytes, origin: str, memo: LineMemo) -> list[RRset] | None:
    """The rrsets of a zone file in the form imsdr writes, in dnspython's iteration order (owners
    in order of first appearance, an owner's rrsets in file order); None when any line is not in
    that form or the file holds something dnspython would merge, reorder or refuse (a repeated
    record, an rrset split by another, TTLs differing inside an rrset, no SOA and NS at the apex).

    Two readers, the same answer: an owner's lines in a row are read as one group, parsed once per
    import (the per-view copies of a zone repeat most of them); where that reader is not certain
    (an owner's records split by a comment or by another owner) each line is read on its own."""
    if not raw.isascii() or b"\r" in raw or not _ORIGIN.fullmatch(origin) or len(origin) > 253:
        return None
    text = raw.decode("ascii")
    grouped = _grouped_rrsets(text, origin, memo)
    return grouped if grouped is not None else _line_rrsets(text, origin, memo)


# One owner's lines in a row (its first word, then a blank, repeated at the start of each line),
# or any other single line; each with its end of line, so the matches cover the text end to end.
_GROUP = re.compile(r"([^\s;$][^ \t\n]*)[ \t][^\n]*\n(?:\1[ \t][^\n]*\n)*|[^\n]*\n|[^\n]+")


def _grouped_rrsets(text: str, origin: str, memo: LineMemo) -> list[RRset] | None:
    """``imsdr_form_rrsets`` by groups of an owner's lines; None where not certain."""
    apex = origin + "."
    out: list[RRset] = []
    seen: set[str] = set()  # owners so far
    previous, kinds = "", frozenset()  # the last group's owner and its kinds: comments may split an owner's records
    apex_kinds: frozenset[str] = frozenset()
    get = memo.get
    for match in _GROUP.finditer(text):
        if match[1] is None:  # a single line that starts no record
            line = match[0].removesuffix("\n")
            parsed = get(line)
            if parsed is None:
                parsed = memo[line] = _parse_line(line, memo)
            if parsed is _NOTHING:
                continue
            if type(parsed) is str and parsed == apex:
                continue
            return None
        key = (origin, match[0])
        group = get(key)  # type: ignore[call-overload]
        if group is None:
            group = memo[key] = _group(match[0], origin, memo)  # type: ignore[index]
        if group is _NOT_IN_FORM:
            return None
        owner, rrsets, group_kinds = group
        if owner == previous:  # the same owner after a comment: only kinds it has not had yet
            if not kinds.isdisjoint(group_kinds):
                return None  # an rrset split by a comment, or a repeated kind: the line reader decides
            kinds = kinds | group_kinds
        elif owner in seen:
            return None  # an owner in two places: the line reader decides
        else:
            previous, kinds = owner, group_kinds
        if owner == origin:
            apex_kinds = kinds
        elif "SOA" in group_kinds:
            return None
        seen.add(owner)
        out.extend(rrsets)
    # the apex's SOA (one record) first, NS at the apex
    if not out or out[0].owner != origin or out[0].kind != "SOA" or len(out[0].rdatas) != 1 \
            or "NS" not in apex_kinds:
        return None
    return out


def _group(text: str, origin: str, memo: LineMemo) -> Any:
    """One owner's lines in a row: (owner, its rrsets in file order, their kinds) or _NOT_IN_FORM."""
    rrsets: dict[str, tuple[int, dict[Rdata, None]]] = {}
    last = None
    relative = None
    for line in text[:-1].split("\n"):
        parsed = memo.get(line)
        if parsed is None:
            parsed = memo[line] = _parse_line(line, memo)
        if type(parsed) is not tuple:
            return _NOT_IN_FORM
        relative, kind, ttl, rdata = parsed
        if kind != last:
            if kind in rrsets:
                return _NOT_IN_FORM
            rrsets[kind] = (ttl, {})
            last = kind
        set_ttl, rdatas = rrsets[kind]
        if ttl != set_ttl or rdata in rdatas:
            return _NOT_IN_FORM
        rdatas[rdata] = None
    owner = origin if relative == "@" else f"{relative}.{origin}"
    if len(owner) > 253:
        return _NOT_IN_FORM
    # equal record sets share one tuple (the copies of a zone pad their columns differently)
    return owner, tuple(RRset(owner, kind, ttl, _shared(kind, tuple(rdatas), memo))
                        for kind, (ttl, rdatas) in rrsets.items()), frozenset(rrsets)


def _shared(kind: str, rdatas: tuple[Rdata, ...], memo: LineMemo) -> tuple[Rdata, ...]:
    return memo.setdefault(("rdatas", kind, rdatas), rdatas)  # type: ignore[no-any-return]


def _line_rrsets(text: str, origin: str, memo: LineMemo) -> list[RRset] | None:
    """``imsdr_form_rrsets`` line by line."""
    apex = origin + "."
    rrsets: dict[tuple[str, str], tuple[int, dict[Rdata, None]]] = {}  # an ordered set of rdatas per rrset
    owners: dict[str, list[str]] = {}  # owner -> its kinds, in file order
    last: tuple[str, str] | None = None
    for line in text.split("\n"):
        parsed = memo.get(line)
        if parsed is None:
            parsed = memo[line] = _parse_line(line, memo)
        if parsed is _NOTHING:
            continue
        if parsed is _NOT_IN_FORM:
            return None
        if type(parsed) is str:  # a directive: $ORIGIN must be the zone's own
            if parsed != apex:
                return None
            continue
        relative, kind, ttl, rdata = parsed
        owner = origin if relative == "@" else f"{relative}.{origin}"
        key = (owner, kind)
        if key != last:
            if key in rrsets or len(owner) > 253:
                return None  # an rrset split by another: dnspython would reorder its node
            rrsets[key] = (ttl, {})
            owners.setdefault(owner, []).append(kind)
            last = key
        set_ttl, rdatas = rrsets[key]
        if ttl != set_ttl or rdata in rdatas:
            return None  # dnspython keeps the smallest TTL and drops duplicates
        rdatas[rdata] = None
    soa = rrsets.get((origin, "SOA"))
    if soa is None or len(soa[1]) != 1 or (origin, "NS") not in rrsets \
            or any(kind == "SOA" and owner != origin for owner, kind in rrsets):
        return None
    return [RRset(owner, kind, *_frozen(rrsets[owner, kind])) for owner, kinds in owners.items() for kind in kinds]


def _frozen(entry: tuple[int, dict[Rdata, None]]) -> tuple[int, tuple[Rdata, ...]]:
    return entry[0], tuple(entry[1])


def _parse_line(line: str, memo: LineMemo) -> Any:
    """One line: (relative owner, kind, ttl, rdata), a directive's value, or a marker. The same
    record data in lines padded differently is parsed once (``memo``)."""
    if _BLANK.fullmatch(line):
        return _NOTHING
    if line.startswith("$"):
        words = line.split()
        if len(words) == 2 and words[0] == "$TTL" and words[1].isdigit() and int(words[1]) <= _MAX_TTL:
            return _NOTHING  # every record in the form carries its own TTL
        if len(words) == 2 and words[0] == "$ORIGIN":
            return words[1]
        return _NOT_IN_FORM
    record = _RECORD.fullmatch(line)
    if record is None:
        return _NOT_IN_FORM
    relative, ttl_text, kind, text = record.groups()
    ttl = int(ttl_text)
    if ttl > _MAX_TTL:
        return _NOT_IN_FORM
    key = ("rdata", kind, text)
    rdata = memo.get(key)
    if rdata is None:
        rdata_match = _RDATA[kind].fullmatch(text)
        rdata = None if rdata_match is None else _rdata(kind, rdata_match.groups())
        rdata = memo[key] = _NOT_IN_FORM if rdata is None else rdata
    return _NOT_IN_FORM if rdata is _NOT_IN_FORM else (relative, kind, ttl, rdata)


def _name(text: str) -> str | None:
    return text[:-1] if len(text) <= 254 else None


def _uint(text: str, bits: int) -> int | None:
    value = int(text)
    return value if value < 2**bits else None


def _rdata(kind: str, fields: tuple[str, ...]) -> Rdata | None:
    """The rdata as the dnspython reader reports it, or None where the line reader is not sure."""
    if kind in ("A", "AAAA"):
        import dns.exception
        import dns.ipv4
        import dns.ipv6

        try:
            return (dns.ipv4 if kind == "A" else dns.ipv6).canonicalize(fields[0])
        except (dns.exception.DNSException, ValueError):
            return None
    if kind == "NS":
        return _name(fields[0])
    if kind == "SRV":
        numbers = [_uint(f, 16) for f in fields[:3]]
        target = _name(fields[3])
        if None in numbers or target is None:
            return None
        return Srv(*numbers, target)  # type: ignore[misc]
    if kind == "NAPTR":
        order, preference = _uint(fields[0], 16), _uint(fields[1], 16)
        replacement = _name(fields[5])
        if order is None or preference is None or replacement is None:
            return None
        return (order, preference, fields[3], replacement)
    mname, rname = _name(fields[0]), _name(fields[1])  # SOA
    serial = _uint(fields[2], 32)
    timers = [int(f) for f in fields[3:]]
    if mname is None or rname is None or serial is None or max(timers) > _MAX_TTL:
        return None
    return (rname, timers[3])


def _dnspython_rrsets(raw: bytes, path: Path, origin: str, problems: ImportProblems,
                      scope: IncludeScope | None = None) -> list[RRset] | None:
    import dns.exception
    import dns.rdatatype
    import dns.zone

    generate = generate_problem(raw)
    if generate is not None:
        problems.add(str(path), generate[0], 1, generate[1])
        return None
    read = zone_text(raw, path, origin, scope, problems)
    if read is None:
        return None
    text, expanded = read
    try:
        zone = dns.zone.from_text(text, origin=origin, relativize=False, check_origin=True, filename=str(path),
                                  allow_include=False)  # includes are expanded above, inside the tree
    except dns.exception.SyntaxError as exc:
        file, line, reason = syntax_error_at(str(exc), text, origin, path, expanded)
        problems.add(file, line, 1, f"zone does not parse: {reason}")
        return None
    except (dns.exception.DNSException, ValueError) as exc:
        problems.add(str(path), 1, 1, f"zone {origin} does not load: {exc}")
        return None
    except MemoryError:  # a resource limit keeps the file it was reading
        problems.add(str(path), 1, 1, f"zone {origin}: out of memory reading it")
        return None
    out: list[RRset] = []
    for name, rdataset in zone.iterate_rdatasets():
        owner = name.to_text(omit_final_dot=True).lower()
        kind = dns.rdatatype.to_text(rdataset.rdtype)
        rdatas: tuple[Rdata, ...] = ()
        if kind in ("A", "AAAA"):
            rdatas = tuple(r.address for r in rdataset)
        elif kind == "NAPTR":
            rdatas = tuple((r.order, r.preference, r.service.decode("ascii", "replace"),
                            r.replacement.to_text(omit_final_dot=True).lower()) for r in rdataset)
        elif kind == "SRV":
            rdatas = tuple(Srv(r.priority, r.weight, r.port, r.target.to_text(omit_final_dot=True).lower())
                           for r in rdataset)
        elif kind == "NS":
            rdatas = tuple(r.target.to_text(omit_final_dot=True).lower() for r in rdataset)
        elif kind == "SOA":
            rdatas = tuple((r.rname.to_text(omit_final_dot=True).lower(), r.minimum) for r in rdataset)
        else:  # kept as master-file text (names absolute: relativize=False)
            rdatas = tuple(r.to_text() for r in rdataset)
        out.append(RRset(owner, kind, rdataset.ttl, rdatas))
    return out
