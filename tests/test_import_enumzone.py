"""The fast ENUM reader of `imsdr import bind` gives exactly what the line-by-line reader gives, or gives up.

An ENUM zone in the form `imsdr render dns` writes (a header, then one canonical NAPTR record per
line for consecutive numbers) is compared, as bytes, with the exact text such a run has. These
tests hold it to the answer of the exact reader (a regular expression per line, dnspython for
other syntax): on generated zones in that form, read in small chunks so that blocks straddle
reads, and on those zones after hostile edits, where the fast reader must either agree or give up.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imsdr.importers import enumzone
from imsdr.importers.enumzone import EnumRun, scan_enum_zone
from imsdr.importers.errors import ImportProblems

SUFFIX = "e164.arpa"


def _zone_text(prefix: str, first: int, count: int, digits: int, domain: str, ttl: int = 3600) -> str:
    zone = ".".join(reversed(prefix)) + "." + SUFFIX
    lines = [f"; zone {zone}", f"$ORIGIN {zone}.", f"$TTL {ttl}",
             "@ 3600   IN SOA   dns-01.ims.example.net. hostmaster.example.net. 2026113000 3600 600 1209600 300",
             "@ 86400  IN NS    dns-01.ims.example.net.", f"; block b: +{prefix}"]
    for number in range(first, first + count):
        text = f"{number:0{digits}d}"
        owner = ".".join(reversed(text[len(prefix):]))
        lines.append(f'{owner}\tIN\tNAPTR\t100 10 "u" "E2U+sip" "!^.*$!sip:+{text}@{domain}!" .')
    return "\n".join(lines) + "\n"


def _scan(text: bytes, prefix: str, fast: bool, chunk: int) -> tuple[list[EnumRun], list[str]]:
    zone = ".".join(reversed(prefix)) + "." + SUFFIX
    problems = ImportProblems()
    with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
        path = Path(scratch) / f"{zone}.zone"
        path.write_bytes(text)
        patch.setattr(enumzone, "CHUNK_BYTES", chunk)
        if not fast:
            patch.setattr(enumzone, "_fast_scan", lambda *_args: None)
        runs = scan_enum_zone(path, zone, SUFFIX, problems)
        messages = [str(p).replace(str(path), "ZONE") for p in problems.problems]
    return runs, messages


@st.composite
def _zones(draw: st.DrawFn) -> tuple[str, str, int]:
    prefix = draw(st.sampled_from(["8620155", "4930", "1", "86138010", "99"]))
    suffix = draw(st.integers(1, 6))
    digits = len(prefix) + suffix
    count = draw(st.integers(1, min(3000, 10**suffix)))
    offset = draw(st.integers(0, 10**suffix - count))
    first = int(prefix) * 10**suffix + offset
    domain = draw(st.sampled_from(["ims.example.net", "ims.beijing.example.net", "a-1.b2.example"]))
    ttl = draw(st.sampled_from([3600, 300]))
    return prefix, _zone_text(prefix, first, count, digits, domain, ttl), draw(st.sampled_from([512, 1000, 4096]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_zones())
def test_canonical_zones_take_the_fast_reader_and_agree(case: tuple[str, str, int]) -> None:
    prefix, text, chunk = case
    fast, fast_problems = _scan(text.encode(), prefix, True, chunk)
    exact, exact_problems = _scan(text.encode(), prefix, False, chunk)
    assert fast == exact and fast_problems == exact_problems == []
    assert len(fast) == 1 and fast[0].count == text.count("NAPTR")
    zone = ".".join(reversed(prefix)) + "." + SUFFIX
    with tempfile.TemporaryDirectory() as scratch, pytest.MonkeyPatch.context() as patch:
        path = Path(scratch) / "zone"
        path.write_text(text)
        patch.setattr(enumzone, "CHUNK_BYTES", chunk)
        assert enumzone._fast_scan(path, zone, enumzone.zone_digits(zone, SUFFIX)) is not None  # the fast path took it


_EDITS = st.sampled_from(["delete", "duplicate", "swap", "byte", "domain", "user", "owner", "blank", "comment",
                          "crlf", "truncate", "include", "ttl", "wildcard", "non-utf8", "origin"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_zones(), _EDITS, st.data())
def test_edited_zones_are_read_as_the_exact_reader_reads_them(case: tuple[str, str, int], edit: str,
                                                              data: st.DataObject) -> None:
    prefix, text, chunk = case
    lines = text.split("\n")[:-1]
    records = [i for i, line in enumerate(lines) if "NAPTR" in line]
    at = data.draw(st.sampled_from(records))
    line = lines[at]
    if edit == "delete":
        del lines[at]
    elif edit == "duplicate":
        lines.insert(at, line)
    elif edit == "swap":
        other = data.draw(st.sampled_from(records))
        lines[at], lines[other] = lines[other], lines[at]
    elif edit == "byte":
        column = data.draw(st.integers(0, len(line) - 1))
        lines[at] = line[:column] + data.draw(st.sampled_from("0123456789 .\t\"x;")) + line[column + 1:]
    elif edit == "domain":
        lines[at] = line.replace("@", "@other.", 1)
    elif edit == "user":
        lines[at] = line.replace("sip:+", "sip:+1", 1)
    elif edit == "owner":
        lines[at] = "0." + line
    elif edit == "blank":
        lines.insert(at + data.draw(st.integers(0, 1)), "")
    elif edit == "comment":
        lines.insert(at + data.draw(st.integers(0, 1)), "; a comment")
    elif edit == "crlf":
        lines[at] = line + "\r"
    elif edit == "truncate":
        lines[at] = line[: data.draw(st.integers(0, len(line) - 1))]
    elif edit == "include":
        lines.insert(at, "$INCLUDE /etc/passwd")
    elif edit == "ttl":
        lines[at] = line.replace("\tIN", "\t300\tIN", 1)
    elif edit == "wildcard":
        lines.insert(at, '*\tIN\tNAPTR\t100 10 "u" "E2U+sip" "!^(.*)$!sip:\\\\1@ims.example.net!" .')
    elif edit == "origin":
        lines.insert(at, "$ORIGIN 9.9.e164.arpa.")
    raw = ("\n".join(lines) + "\n").encode()
    if edit == "non-utf8":
        raw = raw.replace(b"NAPTR", b"NAPTR\xff", 1)
    fast = _scan(raw, prefix, True, chunk)
    exact = _scan(raw, prefix, False, chunk)
    assert fast == exact


def test_a_national_size_zone_is_one_run_by_the_fast_reader(tmp_path: Path) -> None:
    """100,000 numbers (a national example's zone): one run, the same as the exact reader's."""
    prefix = "86138010"
    text = _zone_text(prefix, 8613801000000, 100_000, 13, "ims.shanxi.example.net")
    path = tmp_path / "0.1.0.8.3.1.6.8.e164.arpa.zone"
    path.write_text(text)
    runs = enumzone._fast_scan(path, path.name.removesuffix(".zone"), prefix)
    assert runs == [EnumRun(prefix, "numbers", "ims.shanxi.example.net", "8613801000000", "8613801099999", 100_000)]
    assert scan_enum_zone(path, "0.1.0.8.3.1.6.8.e164.arpa", SUFFIX, ImportProblems()) == \
        _scan(text.encode(), prefix, False, enumzone.CHUNK_BYTES)[0]


_HAND_WRITTEN = [  # (owner below zone 0.0.9.0.0.7.7.4.4.e164.arpa, service, regexp)
    ("1.0.0", "E2U+sip", "!^(.*)$!sip:\\\\1@ims.example.net!"),
    ("2.0.0", "E2U+sip", "!^(.*)$!sip:\\\\1@ims.example.net!"),
    ("3.0.0", "E2U+sip", "!^(.*)$!sip:\\\\1@ims.example.net;user=phone!"),
    ("4.0.0", "E2U+sip", "!^.*$!sip:+447700900004@ims.other.example!"),
    ("5.0.0", "E2U+sip", "!^.*$!sip:+447700900005@ims.example.net!"),
    ("6.0.0", "E2U+pstn:tel", "!^.*$!tel:+447700900006;npdi;rn=+4477001!"),
    ("7.0.0", "E2U+email:mailto", "!^.*$!mailto:a@example.net!"),
    ("8.0.0", "E2U+sip", "!^.*$!sip:\\\\1@ims.example.net!"),  # '\\1' without a group: not the number
    ("*.9", "E2U+sip", "!^(.*)$!sip:\\\\1@ims.example.net!"),
]


def _runs_of(text: str) -> list[tuple[object, ...]]:
    zone = "0.0.9.0.0.7.7.4.4." + SUFFIX
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db.enum"
        path.write_text(text)
        problems = ImportProblems()
        runs = scan_enum_zone(path, zone, SUFFIX, problems)
    assert not problems.problems
    return [(r.prefix, r.style, r.domain, r.first, r.last, [(e.number, e.kind, e.domain, e.params) for e in r.entries],
             [e.text.split(None, 1)[1] for e in r.entries if e.kind == "kept"]) for r in runs]


def test_hand_written_enum_records_read_alike_by_both_readers() -> None:
    """Per-number records with the common rewrite, user=phone, a ported number, RFC 4769, another
    service, a wildcard one label below the apex: the line reader and dnspython (parentheses in the
    SOA send the zone to it) give the same blocks, exceptions and kept records."""
    head = "$TTL 3600\n@ IN SOA dns1.ims.example.net. hostmaster.example.net. {soa}\n@ IN NS dns1.ims.example.net.\n"
    body = "".join(f'{owner} IN NAPTR 100 10 "u" "{service}" "{regexp}" .\n'
                   for owner, service, regexp in _HAND_WRITTEN)
    plain = _runs_of(head.format(soa="1 3600 600 1209600 300") + body)
    parsed = _runs_of(head.format(soa="( 1 3600 600\n 1209600 300 )") + body)
    assert plain == parsed
    assert plain[0][:2] == ("4477009009", "wildcard")  # the wildcard one label below the apex
    assert plain[1][:5] == ("447700900", "numbers", "ims.example.net", "447700900001", "447700900006")
    assert plain[1][5] == [("447700900003", "sip", "ims.example.net", "user=phone"),
                           ("447700900004", "sip", "ims.other.example", ""), ("447700900006", "tel", "4477001", "")]
    kinds = [(run[1], run[6]) for run in plain[2:]]
    assert kinds == [("kept", ['3600 IN NAPTR 100 10 "u" "E2U+email:mailto" "!^.*$!mailto:a@example.net!" .']),
                     ("kept", ['3600 IN NAPTR 100 10 "u" "E2U+sip" "!^.*$!sip:\\\\1@ims.example.net!" .'])]
