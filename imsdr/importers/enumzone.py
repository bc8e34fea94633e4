"""Stream an ENUM zone (RFC 6116 ``E2U+sip`` NAPTR records) into blocks of numbers.

A zone of ten million numbers is read line by line, never held in memory: each record's number
is compared with the run being built, consecutive numbers with the same SIP domain extend the
run, anything else starts a new one. A ``*`` record is a wildcard block for the zone's prefix.
Lines in the plain one-record-per-line form are read by a regular expression; a zone that uses
other master-file syntax (parentheses, ``$INCLUDE``, ``$GENERATE``...) is read by dnspython
instead, which is exact but keeps the zone in memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from imsdr.importers.errors import ImportProblems

_RECORD = re.compile(
    r'(?P<owner>\*|[0-9](?:\.[0-9])*)(?:\s+(?P<ttl>[0-9]+))?(?:\s+IN)?\s+NAPTR\s+[0-9]+\s+[0-9]+\s+'
    r'"[uU]"\s+"E2U\+sip"\s+"!\^(?:\(\.\*\)|\.\*)\$!sip:(?P<user>\\\\1|\+[0-9]{1,15})@(?P<domain>[a-z0-9.-]+)!"'
    r"\s+\.\s*(?:;.*)?")
_SKIP = re.compile(r"\s*(?:;.*)?|\$(?:ORIGIN|TTL)\s+\S+\s*(?:;.*)?|@\s.*\s(?:SOA|NS)\s.*", re.IGNORECASE)


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
    owner: str  # '*' or the digits below the zone, most significant first
    ttl: int
    user: str  # '\\1' (the wildcard's back-reference) or '+<number>'
    domain: str


def _regex_records(path: Path, problems: ImportProblems) -> Iterator[_Record | None]:
    """Records of a zone in the one-per-line form; None when a line needs the full parser."""
    default_ttl = 3600
    for lineno, line in _lines(path, problems):
        text = line.rstrip("\n")
        match = _RECORD.fullmatch(text)
        if match is None:
            words = text.split()
            if len(words) >= 2 and words[0] == "$TTL" and words[1].isdigit():
                default_ttl = int(words[1])
            if not _SKIP.fullmatch(text):
                yield None
                return
            continue
        owner = match["owner"] if match["owner"] == "*" else match["owner"][::2][::-1]
        user = match["user"].replace("\\\\", "\\")  # the master-file escape of '\\1'
        yield _Record(lineno, owner, int(match["ttl"]) if match["ttl"] else default_ttl, user, match["domain"])


def _dnspython_records(path: Path, zone: str, problems: ImportProblems) -> Iterator[_Record]:
    import dns.exception
    import dns.rdatatype
    import dns.zone

    try:
        loaded = dns.zone.from_file(str(path), origin=zone, relativize=True, check_origin=False,
                                    allow_include=False)  # never read files the import was not given
    except (OSError, dns.exception.DNSException, ValueError) as exc:
        problems.add(str(path), 1, 1, f"ENUM zone {zone} does not parse: {exc}")
        return
    records = []
    for name, rdataset in loaded.iterate_rdatasets():
        if rdataset.rdtype != dns.rdatatype.NAPTR:
            continue
        owner = name.to_text()
        digits = "*" if owner == "*" else "".join(reversed(owner.split(".")))
        for rdata in rdataset:
            match = re.fullmatch(r"!\^(?:\(\.\*\)|\.\*)\$!sip:(\\1|\+[0-9]{1,15})@([a-z0-9.-]+)!",
                                 rdata.regexp.decode("ascii", "replace"))
            if rdata.service.decode("ascii", "replace").upper() != "E2U+SIP" or match is None:
                problems.add(str(path), 1, 1, f"{owner}: NAPTR {rdata.to_text()} is not an E2U+sip record "
                                              "imsdr can publish")
                continue
            records.append(_Record(1, digits, rdataset.ttl, match[1], match[2]))
    yield from sorted(records, key=lambda r: (r.owner != "*", r.owner))


_FAST_RECORD = re.compile(r'^([0-9](?:\.[0-9])*)[ \t]+IN[ \t]+NAPTR[ \t]+100 10 "u" "E2U\+sip" '
                          r'"!\^\.\*\$!sip:\+([0-9]{1,15})@([a-z0-9.-]+)!" \.$', re.MULTILINE)
_FIRST_RECORD = re.compile(r"^[0-9](?:\.[0-9])*[ \t]", re.MULTILINE)
CHUNK_BYTES = 8 * 1024 * 1024


def _fast_scan(path: Path, prefix: str) -> list[EnumRun] | None:
    """Runs of a zone written one canonical record per line (as imsdr writes them), at C speed.

    Each chunk of lines is matched by one regular expression; whether every line is such a record,
    the numbers are consecutive and each owner name is its number's digits reversed is decided on
    whole lists and joined strings, not per record. None: the zone needs the line-by-line reader.
    """
    runs: list[EnumRun] = []
    ttl = 3600
    carry = ""
    header_done = False
    try:
        with open(path, encoding="utf-8", newline="\n") as fh:
            while True:
                block = fh.read(CHUNK_BYTES)
                text = carry + block
                cut = text.rfind("\n") + 1 if block else len(text)
                body, carry = text[:cut], text[cut:]
                if not header_done:
                    first = _FIRST_RECORD.search(body)
                    head = body[: first.start()] if first else body
                    for line in head.splitlines():
                        words = line.split()
                        if words[:1] == ["$TTL"] and len(words) > 1 and words[1].isdigit():
                            ttl = int(words[1])
                        elif not _SKIP.fullmatch(line):
                            return None
                    if first is None and block:
                        carry = body + carry
                        continue
                    body = body[first.start():] if first else ""
                    header_done = True
                if body and not _fast_chunk(body, prefix, ttl, runs):
                    return None
                if not block:
                    return runs
    except (OSError, UnicodeDecodeError):
        return None


def _digit_column(start: int, count: int, power: int) -> str:
    """The digit at 10**power of start, start+1, ... (count numbers), as one string."""
    step = 10 ** power
    if step * 10 <= 10 * count:  # a repeating pattern no longer than ten times the column
        period = "".join(digit * step for digit in "0123456789")
        offset = start % (step * 10)
        return (period * (count // len(period) + 2))[offset: offset + count]
    out = []
    value = start
    while value < start + count:  # at most a few runs of one digit
        run = min(step - value % step, start + count - value)
        out.append(str(value // step % 10) * run)
        value += run
    return "".join(out)


def _fast_chunk(body: str, prefix: str, ttl: int, runs: list[EnumRun]) -> bool:
    """One chunk of whole lines: true (and its run recorded) when it is exactly the canonical
    records of consecutive numbers.

    Such lines all have the same length, so the text is a grid: each column (every L-th
    character, a C-level slice) must be one repeated character, or the digit its number has at
    that place. Only the first and last lines are parsed; nothing runs in Python per record.
    """
    head = _FAST_RECORD.match(body)
    if head is None or not body.endswith("\n"):
        return False
    width = len(head[0]) + 1
    count = len(body) // width
    first, domain = head[2], head[3]
    digits = len(first)
    start = int(first)
    tail = _FAST_RECORD.match(body, len(body) - width)
    if len(body) != count * width or tail is None or int(tail[2]) != start + count - 1 \
            or len(tail[2]) != digits or not tail[2].startswith(prefix) or len(head[1]) != tail.end(1) - tail.start(1):
        return False
    power_at: dict[int, int] = {}  # column -> the power of ten of the digit it holds
    suffix_len = digits - len(prefix)
    if len(head[1]) != 2 * suffix_len - 1:
        return False
    for k in range(suffix_len):  # owner label k is the k-th digit from the right of the number
        power_at[2 * k] = k
    at = head.start(2)
    for m in range(digits):
        power_at[at + m] = digits - 1 - m
    line = head[0] + "\n"
    for column in range(width):
        power = power_at.get(column)
        expected = line[column] * count if power is None else _digit_column(start, count, power)
        if body[column::width] != expected:
            return False
    last = tail[2]
    if runs and runs[-1].domain == domain and int(runs[-1].last) + 1 == start and len(runs[-1].last) == digits:
        runs[-1].last = last
        runs[-1].count += count
    else:
        runs.append(EnumRun(prefix, "numbers", domain, first, last, count, ttl))
    return True


def scan_enum_zone(path: Path, zone: str, suffix: str, problems: ImportProblems) -> list[EnumRun]:
    """The blocks an ENUM zone publishes: its wildcard, and runs of consecutive numbers."""
    prefix = zone_digits(zone, suffix)
    fast = _fast_scan(path, prefix)
    if fast:
        return _finish(prefix, fast)
    runs = _build(prefix, _regex_records(path, problems), path, problems)
    if runs is None:  # syntax the line reader does not know: read it again with the full parser
        runs = _build(prefix, _dnspython_records(path, zone, problems), path, problems)
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


def _add(prefix: str, record: _Record, runs: list[EnumRun], current: EnumRun | None, previous: int,
         path: Path, problems: ImportProblems) -> tuple[EnumRun | None, int]:
    if record.owner == "*":
        if record.user != "\\1":
            problems.add(str(path), record.line, 1, "a wildcard record must map to sip:\\1@domain")
        else:
            runs.append(EnumRun(prefix, "wildcard", record.domain, ttl=record.ttl, count=1))
        return None, -2
    number = prefix + record.owner
    if record.user != "+" + number:
        problems.add(str(path), record.line, 1, f"the record for +{number} maps to {record.user}: "
                                                "imsdr only publishes a number's own URI")
        return current, previous
    value = int(number)
    if current is not None and value == previous + 1 and current.domain == record.domain \
            and len(number) == len(current.first):
        current.last = number
        current.count += 1
    else:
        current = EnumRun(prefix, "numbers", record.domain, number, number, 1, record.ttl)
        runs.append(current)
    return current, value


def _finish(prefix: str, runs: list[EnumRun]) -> list[EnumRun]:
    for run in runs:
        if run.style == "numbers":
            span = len(run.first) - len(prefix)
            run.whole_prefix = run.first == prefix + "0" * span and run.last == prefix + "9" * span
    return runs
