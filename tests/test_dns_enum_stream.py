"""ENUM number blocks are streamed: exact records, any first/last alignment, flat memory."""

from __future__ import annotations

import io
import shutil
import subprocess
import tracemalloc
from pathlib import Path

import dns.rdatatype
import dns.zone
import pytest

from imsdr.dns.names import enum_name
from imsdr.dns.plan import EnumBlockPlan, ZonePlan
from imsdr.dns.records import NS, SOA, RRset
from imsdr.dns.zonefile import write_numbers, write_zone, zone_digest

SUFFIX = "e164.arpa"


def block(prefix: str, length: int, first: int, last: int) -> EnumBlockPlan:
    zone = f"{'.'.join(reversed(prefix))}.{SUFFIX}"
    return EnumBlockPlan("b", prefix, "numbers", "ims.example.net", zone, 3600, first, last, length)


class _Sink(io.TextIOBase):
    """A file that counts what it is given and keeps nothing."""

    def __init__(self) -> None:
        self.chars = 0
        self.largest = 0

    def write(self, text: str) -> int:  # type: ignore[override]
        self.chars += len(text)
        self.largest = max(self.largest, len(text))
        return len(text)


@pytest.mark.parametrize(
    ("first", "last"),
    [
        (8613800138017, 8613800139042),  # unaligned, spans two chunks of 1,000
        (8613800138000, 8613800138999),  # exactly one chunk
        (8613800138005, 8613800138005),  # one number
    ],
)
def test_numbers_block_writes_exactly_the_range(first: int, last: int) -> None:
    b = block("86138001", 13, first, last)
    fh = io.StringIO()
    count = write_numbers(fh, b)
    lines = fh.getvalue().splitlines()
    assert count == len(lines) == last - first + 1
    numbers = [first + i for i in range(count)]
    for line, number in zip(lines, numbers, strict=True):
        owner, rest = line.split("\t", 1)
        assert f"{owner}.{b.zone}" == enum_name(str(number), SUFFIX)
        assert rest == f"IN\tNAPTR\t{b.naptr(str(number)).to_text()}"


def test_streamed_zone_parses_and_passes_named_checkzone(tmp_path: Path) -> None:
    b = block("86138001", 13, 8613800138017, 8613800140016)  # 2,000 numbers
    zone = ZonePlan(b.zone, "enum", "test", 3600, blocks=[b])
    zone.rrsets[(b.zone, "SOA")] = RRset(
        b.zone, "SOA", 3600, (SOA("ns.example.net", "hostmaster.example.net", 0),)
    )
    zone.rrsets[(b.zone, "NS")] = RRset(b.zone, "NS", 86400, (NS("ns.example.net"),))
    path = tmp_path / "enum.zone"
    with open(path, "w") as fh:
        written = write_zone(fh, zone, 1, ["; test"], zone_digest(zone, ["; test"]))
    assert written == 2002
    parsed = dns.zone.from_file(str(path), origin=b.zone, relativize=False)
    naptrs = [rd for _, _, rd in parsed.iterate_rdatas(dns.rdatatype.NAPTR)]
    assert len(naptrs) == 2000
    node = parsed.get_rdataset(enum_name("8613800139000", SUFFIX) + ".", "NAPTR")
    assert node[0].regexp == b"!^.*$!sip:+8613800139000@ims.example.net!"
    if shutil.which("named-checkzone"):
        result = subprocess.run(
            ["named-checkzone", "-k", "fail", "-n", "fail", "-r", "fail", "-i", "local", b.zone, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stdout


def test_memory_stays_flat_for_large_blocks() -> None:
    """Peak Python allocations do not grow with the block (200,000 numbers ~ 18 MB of text)."""
    peaks = []
    for n in (20_000, 200_000):
        b = block("861380", 13, 8613800000000, 8613800000000 + n - 1)
        sink = _Sink()
        tracemalloc.start()
        count = write_numbers(sink, b)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert count == n and sink.chars > n * 80
        assert sink.largest < 150_000  # written in chunks of at most 1,000 lines
        peaks.append(peak)
    assert peaks[1] < 2_000_000  # a whole 200k block in memory would be > 18 MB
    assert peaks[1] < peaks[0] * 2 + 200_000  # 10x the numbers, about the same peak
