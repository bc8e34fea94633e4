"""Stream one ENUM numbers block to a zone file and report records/s and peak RSS.

    /usr/bin/time -v python3 benchmarks/dns_enum_block.py 1000000 [/tmp/enum.zone]

Peak RSS should not depend on the block size (the writer streams 1,000 numbers per write).
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time

from imsdr.dns.plan import EnumBlockPlan
from imsdr.dns.zonefile import write_numbers


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tempfile.gettempdir(), "imsdr-enum-bench.zone")
    prefix, length = "861380", 13
    first = int(prefix + "0" * (length - len(prefix)))
    block = EnumBlockPlan(
        "bench",
        prefix,
        "numbers",
        "ims.example.net",
        "0.8.3.1.6.8.e164.arpa",
        3600,
        first,
        first + count - 1,
        length,
    )
    start = time.perf_counter()
    with open(path, "w", encoding="utf-8", buffering=1 << 20) as fh:
        written = write_numbers(fh, block)
    elapsed = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{written:,} NAPTR records in {elapsed:.2f} s = {written / elapsed:,.0f} records/s; "
        f"{os.path.getsize(path) / 1e6:.0f} MB; peak RSS {rss:.1f} MiB"
    )
    if len(sys.argv) <= 2:
        os.unlink(path)


if __name__ == "__main__":
    main()
