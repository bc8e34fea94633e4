"""Stream an ENUM zone (RFC 6116 ``E2U+sip`` NAPTR records) into blocks of numbers.

A zone of ten million numbers is read line by line, never held in memory: each record's number
is compared with the run being built, consecutive numbers with the same SIP domain extend the
run, anything else starts a new one. A ``*`` record is a wildcard block for the zone's prefix.
Three readers give the same runs, the first that is certain decides:

* a zone exactly as ``imsdr render dns`` writes it (one run of consecutive numbers, one canonical
  record per line) is compared, as bytes read into one reused buffer, with the text such a run
  has (``_Canonical``): no Python work per record, no decoding;
* lines in the plain one-record-per-line form are read by a regular expression, line by line;
* a zone that uses other master-file syntax (parentheses, ``$INCLUDE``, ``$GENERATE``, an
  ``$ORIGIN`` elsewhere...) is read by dnspython, which is exact but keeps the zone in memory,
  and never follows ``$INCLUDE``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from imsdr.importers.errors import ImportProblems
from imsdr.importers.zoneinclude import IncludeScope, syntax_error_at, zone_text

_RECORD = re.compile(
    r'(?P<owner>\*(?:\.[0-9])*|[0-9](?:\.[0-9])*)(?:\s+(?P<ttl>[0-9]+))?(?:\s+IN)?\s+NAPTR\s+(?P<rdata>[0-9]+\s+[0-9]+\s+'
    r'"[uU]"\s+"(?P<service>[^"]*)"\s+"(?P<regexp>[^"]*)"\s+\.)\s*(?:;.*)?')
# the regexp of an E2U+sip record imsdr understands: the number's own URI at a domain, with URI
# parameters (RFC 3261 §19.1.1) after it. '\1' is the whole AUS (the number itself, RFC 6116 §3.2)
# only where the pattern captures it: '^(.*)$'
_SIP_REGEXP = re.compile(r"!\^(?:(?P<group>\(\.\*\))|\.\*)\$!sip:(?P<user>\\1|\+[0-9]{1,15})@(?P<domain>[a-z0-9.-]+)"
                         r"(?P<params>(?:;[a-z0-9=-]+)*)!")
_TEL_REGEXP = re.compile(r"!\^\.\*\$!tel:\+(?P<number>[0-9]{1,15});npdi;rn=\+(?P<rn>[0-9]{1,15})!")
_SKIP = re.compile(r"\s*(?:;.*)?|\$(?:ORIGIN|TTL)\s+\S+\s*(?:;.*)?|@\s.*\s(?:SOA|NS)\s.*", re.IGNORECASE)


@dataclass(frozen=True)
class EnumEntry:
    """A number whose record the block's own NAPTR does not say: a candidate ENUM exception
    (``kind`` 'sip': sip:+N@domain;params; 'tel': ported, RFC 4769) or, with ``kind`` 'kept', a
    record imsdr cannot express (``text``), kept as it is."""

    number: str  # digits; for a kept record its owner's digits ('' for the zone's apex)
    kind: str  # sip | tel | kept
    domain: str = ""  # sip: the domain; tel: the routing number
    params: str = ""
    text: str = ""


@dataclass
class EnumRun:
    prefix: str  # the zone's digits
    style: str  # wildcard | numbers
    domain: str
    first: str = ""
    last: str = ""
    count: int = 0
    ttl: int = 3600
    whole_prefix: bool = False
    entries: list[EnumEntry] = field(default_factory=list)  # numbers that answer otherwise


MAX_ENUM_ZONE_BYTES = 4 << 30  # ENUM zones are streamed; a national one is ~100 MB


def zone_digits(zone: str, suffix: str) -> str:
    return "".join(reversed(zone[: -len(suffix) - 1].split(".")))


def _lines(path: Path, problems: ImportProblems) -> Iterator[tuple[int, str]]:
    try:
        with open(path, encoding="utf-8") as fh:
            yield from enumerate(fh, 1)
    except OSError as exc:
        problems.add(str(path), 1, 1, f"cannot read zone file: {exc.strerror}")
    except UnicodeDecodeError as exc:
        problems.add(str(path), 1, 1, f"not UTF-8 text (byte {exc.start})")


@dataclass(frozen=True)
class _Record:
    line: int
    owner: str  # '*', '*<digits>' (a wildcard below the apex) or the digits below the zone, most significant first
    ttl: int
    service: str
    regexp: str  # as the NAPTR holds it (master-file escapes removed)
    kept: str = ""  # a record imsdr cannot express, as master-file text (kept as it is)
    as_written: str = ""  # the record's master-file text, owner relative (the line reader's)


def _no_record(text: str, zone: str, ttl: int) -> int | None:
    """The default TTL after a line that holds no number (blank, a comment, ``$TTL``, the zone's
    own ``$ORIGIN``, the apex SOA or NS); None when the line needs the full parser (a record, a
    ``$TTL`` in units, an ``$ORIGIN`` that moves the names elsewhere, any other directive)."""
    if not _SKIP.fullmatch(text):
        return None
    words = text.split()
    directive = words[0].upper() if words else ""
    if directive == "$TTL":
        return int(words[1]) if words[1].isdigit() else None
    if directive == "$ORIGIN" and words[1].lower() != zone + ".":
        return None
    return ttl


def _regex_records(path: Path, zone: str, problems: ImportProblems) -> Iterator[_Record | None]:
    """Records of a zone in the one-per-line form; None when a line needs the full parser."""
    default_ttl: int | None = 3600
    for lineno, line in _lines(path, problems):
        text = line.rstrip("\n")
        match = _RECORD.fullmatch(text)
        if match is None:
            default_ttl = _no_record(text, zone, default_ttl)
            if default_ttl is None:
                yield None
                return
            continue
        ttl = int(match["ttl"]) if match["ttl"] else default_ttl
        yield _Record(lineno, _owner_digits(match["owner"]), ttl, match["service"],
                      match["regexp"].replace("\\\\", "\\"),  # the master-file escape of a backslash
                      as_written=f"{match['owner']} {ttl} IN NAPTR {match['rdata']}")


def _owner_digits(owner: str) -> str:
    """'*' -> '*'; '*.9' -> '*9'; '3.2.1' -> '123' (labels below the zone, most significant first)."""
    labels = owner.split(".")
    digits = "".join(reversed([label for label in labels if label != "*"]))
    return "*" + digits if labels[0] == "*" else digits


def _dnspython_records(path: Path, zone: str, problems: ImportProblems,
                       scope: IncludeScope | None = None) -> Iterator[_Record]:
    import dns.exception
    import dns.rdatatype
    import dns.zone

    from imsdr.importers.zonedata import generate_problem
    from imsdr.untrusted import UntrustedFile, read_untrusted

    try:
        raw = read_untrusted(path, MAX_PARSED_BYTES)
    except UntrustedFile as exc:
        problems.add(str(path), 1, 1, f"ENUM zone {zone}: {exc.reason}")
        return
    generate = generate_problem(raw)
    if generate is not None:
        problems.add(str(path), generate[0], 1, generate[1])
        return
    read = zone_text(raw, path, zone, scope, problems)
    if read is None:
        return
    text, expanded = read
    try:
        loaded = dns.zone.from_text(text, origin=zone, relativize=True, check_origin=False, filename=str(path),
                                    allow_include=False)  # includes are expanded above, inside the tree
    except dns.exception.SyntaxError as exc:
        file, line, reason = syntax_error_at(str(exc), text, zone, path, expanded)
        problems.add(file, line, 1, f"ENUM zone {zone} does not parse: {reason}")
        return
    except (dns.exception.DNSException, ValueError) as exc:
        problems.add(str(path), 1, 1, f"ENUM zone {zone} does not parse: {exc}")
        return
    records = []
    for name, rdataset in loaded.iterate_rdatasets():
        owner = name.to_text()
        if rdataset.rdtype != dns.rdatatype.NAPTR:
            # the apex's SOA and NS, delegations to the block zones and their glue: the zone's structure,
            # which imsdr renders itself; anything else is kept
            if rdataset.rdtype not in (dns.rdatatype.SOA, dns.rdatatype.NS, dns.rdatatype.A, dns.rdatatype.AAAA):
                records.extend(_Record(1, _owner_digits(owner), rdataset.ttl, "", "", kept=f"{owner} {rdataset.ttl} "
                                       f"IN {dns.rdatatype.to_text(rdataset.rdtype)} {rdata.to_text()}")
                               for rdata in rdataset)
            continue
        for rdata in rdataset:
            service = rdata.service.decode("ascii", "replace")
            regexp = rdata.regexp.decode("ascii", "replace")
            plain = (rdata.flags.lower(), rdata.replacement.to_text()) == (b"u", ".")  # as the line reader reads
            records.append(_Record(1, _owner_digits(owner) if owner != "@" else "", rdataset.ttl, service, regexp,
                                   kept="" if plain else f"{owner} {rdataset.ttl} IN NAPTR {rdata.to_text()}",
                                   as_written=f"{owner} {rdataset.ttl} IN NAPTR {rdata.to_text()}"))
    yield from sorted(records, key=lambda r: (r.owner != "*", r.owner))


_FAST_RECORD = re.compile(rb'([0-9](?:\.[0-9])*)[ \t]+IN[ \t]+NAPTR[ \t]+100 10 "u" "E2U\+sip" '
                          rb'"!\^\.\*\$!sip:\+([0-9]{1,15})@([a-z0-9.-]+)!" \.')
_FIRST_RECORD = re.compile(rb"^[0-9](?:\.[0-9])*[ \t]", re.MULTILINE)
CHUNK_BYTES = 8 * 1024 * 1024
# a zone only the full parser reads is held in memory whole (several times its size): bounded
MAX_PARSED_BYTES = 256 * 1024 * 1024
_BLOCK_DIGITS = 3  # records are compared in blocks of up to 10**3 numbers that share all higher digits


@dataclass
class _Canonical:
    """The text imsdr writes for consecutive numbers, built from the first record line.

    A number's line is LOW_OWNER + MIDDLE + LOW_DIGITS + TAIL, where LOW_OWNER/LOW_DIGITS are its
    last ``k`` digits (reversed and dotted / as they are) and MIDDLE (the higher owner labels, the
    fixed fields and the higher digits of the number) is the same for every number of a block of
    10**k. So a block's text is ``MIDDLE.join([LOW_OWNER, *pieces])``: one C-level join, compared with the file's
    bytes by memcmp; nothing runs in Python per record.
    """

    prefix: bytes
    digits: int  # of every number
    k: int
    fields: bytes  # between the owner name and the number: ``\tIN\tNAPTR\t100 10 ... sip:+``
    tail: bytes  # after the number: ``@domain!" .\n``
    pieces: list[bytes]  # pieces[L]: LOW_DIGITS(L) + TAIL + LOW_OWNER(L + 1); the last: LOW_DIGITS + TAIL

    @classmethod
    def of(cls, line: re.Match[bytes], prefix: str) -> _Canonical | None:
        number = line[2]
        suffix = len(number) - len(prefix)
        if suffix < 1 or not number.startswith(prefix.encode()) or len(line[1]) != 2 * suffix - 1:
            return None
        k = min(_BLOCK_DIGITS, suffix)
        text, at = line[0], line.start(0)
        fields, tail = text[line.end(1) - at: line.start(2) - at], text[line.end(2) - at:] + b"\n"
        low = [f"{n:0{k}d}" for n in range(10**k)]
        owners = [".".join(reversed(digits)).encode() for digits in low]
        pieces = [low[n].encode() + tail + owners[n + 1] for n in range(10**k - 1)] + [low[-1].encode() + tail]
        return cls(prefix.encode(), len(number), k, fields, tail, pieces)

    def block(self, first: int, last: int) -> bytes:
        """The lines of the numbers first..last (all digits but the last k the same)."""
        text = f"{first:0{self.digits}d}"
        high, low = text[: self.digits - self.k], text[self.digits - self.k:]
        higher_owner = "".join("." + digit for digit in reversed(high[len(self.prefix):]))
        middle = higher_owner.encode() + self.fields + high.encode()
        start, end = int(low), last % 10**self.k
        owner = ".".join(reversed(low)).encode()
        return middle.join([owner, *self.pieces[start:end], self.pieces[end][: self.k] + self.tail])


def _fast_scan(path: Path, zone: str, prefix: str) -> list[EnumRun] | None:
    """The run of a zone written as imsdr writes it (a header, then one canonical record per line
    for consecutive numbers of one domain), read as bytes into one buffer and compared with the
    exact text such a run has; None when the zone is anything else (the line-by-line reader
    decides then)."""
    ttl: int | None = 3600
    buf = bytearray(CHUNK_BYTES)
    try:
        with open(path, "rb") as fh, memoryview(buf) as view:
            valid = fh.readinto(buf)
            first = _FIRST_RECORD.search(buf, 0, valid)
            if first is None:
                return None
            try:
                head = buf[: first.start()].decode("utf-8")
            except UnicodeDecodeError:
                return None
            for line in head.split("\n")[:-1]:
                ttl = _no_record(line, zone, ttl)
                if ttl is None:
                    return None
            record = _FAST_RECORD.match(buf, first.start(), valid)
            canonical = _Canonical.of(record, prefix) if record else None
            if record is None or canonical is None or buf[record.end(): record.end() + 1] != b"\n":
                return None
            width = record.end() + 1 - record.start()
            if width > CHUNK_BYTES // 2:
                return None
            start = number = int(record[2])
            pos = first.start()
            while True:
                lines = (valid - pos) // width
                end = number + lines - 1
                if not f"{end:0{canonical.digits}d}".startswith(prefix):
                    return None  # past the zone's numbers: the owner names would not say the number
                while number <= end:
                    last = min(end, number - number % 10**canonical.k + 10**canonical.k - 1)
                    if not buf.startswith(canonical.block(number, last), pos):
                        return None
                    pos += (last - number + 1) * width
                    number = last + 1
                rest = valid - pos  # less than a line: moved to the front, the file read on after it
                buf[:rest] = buf[pos:valid]
                read = fh.readinto(view[rest:])
                if not read:
                    if rest:
                        return None  # a last line that is not a whole record
                    break
                pos, valid = 0, rest + read
    except OSError:
        return None
    if number == start:
        return None
    domain = canonical.tail[1: canonical.tail.index(b"!")].decode()
    first_number, last_number = (f"{n:0{canonical.digits}d}" for n in (start, number - 1))
    return [EnumRun(prefix, "numbers", domain, first_number, last_number, number - start, ttl)]


def scan_enum_zone(path: Path, zone: str, suffix: str, problems: ImportProblems,
                   scope: IncludeScope | None = None) -> list[EnumRun]:
    """The blocks an ENUM zone publishes: its wildcard, and runs of consecutive numbers."""
    from imsdr.untrusted import UntrustedFile, open_untrusted_file

    try:  # a link, FIFO, device or oversize file is refused before any reader opens it
        open_untrusted_file(path, MAX_ENUM_ZONE_BYTES).close()
    except UntrustedFile as exc:
        problems.add(str(path), 1, 1, exc.reason)
        return []
    prefix = zone_digits(zone, suffix)
    fast = _fast_scan(path, zone, prefix)
    if fast:
        return _finish(prefix, fast)
    runs = _build(prefix, _regex_records(path, zone, problems), path, problems)
    if runs is None:  # syntax the line reader does not know: read it again with the full parser
        runs = _build(prefix, _dnspython_records(path, zone, problems, scope), path, problems)
    return _finish(prefix, runs or [])


def _build(prefix: str, records: Iterator[_Record | None], path: Path,
           problems: ImportProblems) -> list[EnumRun] | None:
    runs: list[EnumRun] = []
    current: EnumRun | None = None
    previous = -2
    for record in records:
        if record is None:
            return None
        current, previous = _add(prefix, record, runs, current, previous, path, problems)
    return runs


def _meaning(record: _Record) -> EnumEntry | None:
    """What a record says, when imsdr can say it: a SIP URI (the number's own, at a domain, with
    parameters) or a ported number (RFC 4769 tel: with npdi and a routing number)."""
    if record.kept:
        return None
    service = record.service.upper()
    if service == "E2U+SIP":
        sip = _SIP_REGEXP.fullmatch(record.regexp)
        if sip is None or (sip["user"] == "\\1" and sip["group"] is None):
            return None
        return EnumEntry(sip["user"].lstrip("+"), "sip", sip["domain"], sip["params"].lstrip(";"))
    tel = _TEL_REGEXP.fullmatch(record.regexp) if service == "E2U+PSTN:TEL" else None
    return None if tel is None else EnumEntry(tel["number"], "tel", tel["rn"])


def _kept(record: _Record, prefix: str) -> EnumEntry:
    return EnumEntry(prefix + record.owner.lstrip("*"), "kept", text=record.kept or record.as_written)


def _add(prefix: str, record: _Record, runs: list[EnumRun], current: EnumRun | None, previous: int,
         path: Path, problems: ImportProblems) -> tuple[EnumRun | None, int]:
    meaning = _meaning(record)
    if record.owner.startswith("*") or not record.owner:
        if meaning is not None and meaning.kind == "sip" and meaning.number == "\\1" and not meaning.params:
            runs.append(EnumRun(prefix + record.owner[1:], "wildcard", meaning.domain, ttl=record.ttl, count=1))
        else:  # a wildcard to one fixed URI, another service, a record at the apex: kept as written
            runs.append(EnumRun(prefix, "kept", "", ttl=record.ttl, entries=[_kept(record, prefix)]))
        return None, -2
    number = prefix + record.owner
    own = meaning is not None and meaning.number in ("\\1", number) and meaning.kind == "sip"
    if meaning is None or (meaning.kind == "sip" and not own) or (meaning.kind == "tel" and meaning.number != number):
        runs.append(EnumRun(prefix, "kept", "", ttl=record.ttl, entries=[_kept(record, prefix)]))
        return current, previous
    value = int(number)
    plain = own and not meaning.params
    if current is not None and value == previous + 1 and len(number) == len(current.first) \
            and (current.domain == meaning.domain or not plain):
        current.last = number
        current.count += 1
    else:
        current = EnumRun(prefix, "numbers", meaning.domain if meaning.kind == "sip" else "", number, number, 1,
                          record.ttl)
        runs.append(current)
    if not plain or meaning.domain != current.domain:
        current.entries.append(EnumEntry(number, meaning.kind, meaning.domain, meaning.params))
    return current, value


def _absorb_strays(runs: list[EnumRun]) -> list[EnumRun]:
    """A few numbers to another domain inside a run (a ported-out number among its neighbours)
    are exceptions of that run, not blocks of their own: a shorter run of another domain right
    after a run, ending the zone or followed by the first run's domain again, joins it."""
    out: list[EnumRun] = []
    for run in runs:
        last = out[-1] if out else None
        if last is not None and last.style == "numbers" and run.style == "numbers" and run.domain != last.domain \
                and run.count < last.count and len(run.first) == len(last.first) \
                and int(run.first) == int(last.last) + 1:
            said = {entry.number for entry in run.entries}  # numbers that already answer otherwise
            last.entries.extend(EnumEntry(number, "sip", run.domain)
                                for number in map(str, range(int(run.first), int(run.last) + 1)) if number not in said)
            last.entries.extend(run.entries)
            last.last, last.count = run.last, last.count + run.count
            continue
        if last is not None and last.style == "numbers" and run.style == "numbers" and run.domain == last.domain \
                and len(run.first) == len(last.first) and int(run.first) == int(last.last) + 1 and last.entries:
            last.entries.extend(run.entries)
            last.last, last.count = run.last, last.count + run.count
            continue
        out.append(run)
    return out


def _finish(prefix: str, runs: list[EnumRun]) -> list[EnumRun]:
    # the wildcards first, whichever reader read them (dnspython gives a zone's names sorted)
    runs = sorted(_absorb_strays(runs), key=lambda run: run.style != "wildcard")
    for run in runs:
        if run.style == "numbers":
            span = len(run.first) - len(prefix)
            run.whole_prefix = run.first == prefix + "0" * span and run.last == prefix + "9" * span
    return runs
