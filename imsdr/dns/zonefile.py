"""Streaming BIND master-file writer, content digests and the SOA serial rule.

Layout of every zone file (reviewable, no timestamps):

* a header comment: the zone, what it is for, the view, the inventory, and a content digest;
* ``$ORIGIN`` and ``$TTL``;
* records in right-to-left label order (a parent before its children, so
  ``_sip._udp.pcscf1.X`` sits beside ``pcscf1.X``), types in the fixed order
  SOA, NS, NAPTR, SRV, CNAME, A, AAAA; owner names relative to the origin.

ENUM number blocks are written by a hot loop of plain string formatting, a chunk of up to
1,000 numbers at a time, so memory stays flat whatever the block size.

SOA serial rule (``choose_serial``): ``--serial N`` wins; otherwise, when the previous output
has the same content digest, its serial is kept; when the content changed, the serial becomes
``max(today's YYYYMMDD00, previous + 1)``; a zone written for the first time gets
``YYYYMMDD00``. "Today" is the UTC date, or the date of ``SOURCE_DATE_EPOCH`` when set.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from imsdr.dns.names import relative, reverse_digits
from imsdr.dns.plan import EnumBlockPlan, RRKey, ZonePlan, merged_zone
from imsdr.dns.records import SOA, Rdata, RRset
from imsdr.errors import RenderError

FORMAT_VERSION = "imsdr-zonefile/2"  # 2: the digest covers zone content only
MAX_SERIAL = 2**32 - 1
MAX_PREVIOUS_ZONE_BYTES = 1 << 62  # no bound: only the first 40 lines of a previous zone are read
_DIGEST_RE = re.compile(r"; content-digest: (sha256:[0-9a-f]{64})")
_CHUNK_DIGITS = 3  # numbers are written 10**3 per chunk


@dataclass(frozen=True)
class Previous:
    digest: str
    serial: int


def header_lines(zone: ZonePlan, view: str | None, inventory: str, network: str) -> list[str]:
    lines = [f"; zone {zone.name}", f"; {zone.purpose}"]
    if view is not None:
        lines.append(f"; view: {view} (this file is served only in that view)")
    lines += [
        f"; inventory: {inventory} ({network})",
        "; written by imsdr render dns: do not edit by hand, change the inventory and render again;",
        "; the SOA serial rule is explained in README.md next to this directory",
    ]
    return lines


def enum_line_parts(block: EnumBlockPlan) -> tuple[str, str]:
    """(text between owner and number, text after number) of one numbers-style NAPTR line.

    The hot loop writes ``owner + parts[0] + number + parts[1]``; lint parses the same line
    with dnspython once per block, so what is checked is exactly what is written.
    """
    sample = block.naptr("{N}")
    pre, post = sample.to_text().split("{N}")
    return f"\tIN\tNAPTR\t{pre}", f"{post}\n"


@dataclass
class PreparedZone:
    """A zone's body rendered once: the content digest and the record lines, serial left open.

    ``body`` holds ready text chunks, and the SOA rrset itself where the serial goes (the serial
    depends on the digest, so it is formatted at write time). ENUM blocks are not in ``body``:
    :func:`write_prepared` streams them.
    """

    zone: ZonePlan
    digest: str
    width: int
    body: list[str | RRset]
    records: int


# (id(rrset), origin, width) -> (rrset, digest text, lines): see prepare_zone's ``cache``
RenderCache = dict[tuple[int, str, int], tuple[RRset, str, str]]
class RdataTexts:
    """One run's memo of record texts, by identity (the plan shares record objects between views,
    and one tuple of records between the names and views that answer the same records): each
    record's text, and the texts of each tuple of records. Each entry holds its object, so its id
    is not reused while the memo lives."""

    __slots__ = ("rdatas", "tuples")

    def __init__(self) -> None:
        self.rdatas: dict[int, tuple[Rdata, str]] = {}  # id(rdata) -> (rdata, its text)
        self.tuples: dict[int, tuple[tuple[Rdata, ...], list[str]]] = {}  # id(tuple) -> (tuple, texts)


def rdata_texts(rdatas: tuple[Rdata, ...] | list[Rdata], texts: RdataTexts | None) -> list[str]:
    """Each record's text, remembered in ``texts`` when one is given (the list returned is shared:
    read it, do not change it)."""
    if texts is None:
        return [rd.to_text() for rd in rdatas]
    if type(rdatas) is tuple:
        hit = texts.tuples.get(id(rdatas))
        if hit is not None and hit[0] is rdatas:
            return hit[1]
    memo = texts.rdatas
    shown = []
    for rd in rdatas:
        known = memo.get(id(rd))
        if known is None or known[0] is not rd:
            known = memo[id(rd)] = (rd, rd.to_text())
        shown.append(known[1])
    if type(rdatas) is tuple:
        texts.tuples[id(rdatas)] = (rdatas, shown)
    return shown


def prepare_zone(
    zone: ZonePlan,
    header: list[str],
    comments: dict[RRKey, str] | None = None,
    cache: RenderCache | None = None,
    layout: tuple[list[RRset], int] | None = None,
    texts: RdataTexts | None = None,
) -> PreparedZone:
    """Render every stored rdata of ``zone`` once, for both the digest and the lines written.

    The digest is sha256 over the zone content the file will hold, except the SOA serial (so it
    can decide the serial): the format version, ``name|type|ttl|rdata|rdata...`` per rrset in file
    order (SOA with serial 0), then each ENUM block's parameters. The header comments (inventory
    file name, view, purpose) are not content: renaming the inventory keeps every serial.

    ``cache`` (one dict for one render run) reuses the text of an rrset already rendered with the
    same origin and owner width: the per-view copies of a zone share most of their rrsets. It
    holds the rrset itself, so the ``id`` in its key cannot be reused while the cache lives.
    ``layout``: the zone's rrsets already in file order and the owner column width, when the
    caller knows them (see :func:`zone_layout`).
    ``texts`` (one dict for one render run) holds the text of each rdata already written: a view's
    own rrsets are new objects, but their records are the plan's shared rdata objects (an SRV set
    of hundreds of I-CSCFs is reordered per site view, not rebuilt).
    """
    rrsets, width = layout if layout is not None else zone_layout(zone)
    digest_parts, body, counts = _render_rrsets(rrsets, zone.name, width, cache, texts)
    if comments:
        notes = [(i, comments.get((r.name, r.rdtype))) for i, r in enumerate(rrsets)]
        for i, note in reversed(notes):  # (from the end: earlier positions stay put)
            if note:
                body.insert(i, f"; {note}\n")
    return PreparedZone(zone, _digest(zone, digest_parts), width, body, sum(counts))


def render_rrset(rrset: RRset, origin: str, width: int, cache: RenderCache | None = None,
                 texts: RdataTexts | None = None) -> tuple[str, str | RRset]:
    """(digest text, file lines) of one rrset; the SOA's lines are the rrset itself (its serial
    is written later). ``cache`` and ``texts``: see :func:`prepare_zone`."""
    digest, body, _counts = _render_rrsets([rrset], origin, width, cache, texts)
    return digest[0], body[0]


def _soa_digest(rrset: RRset) -> str:
    soa: SOA = rrset.rdatas[0]  # type: ignore[assignment]
    unserialled = SOA(soa.mname, soa.rname, 0, soa.refresh, soa.retry, soa.expire, soa.minimum)
    return f"{rrset.name}|{rrset.rdtype}|{rrset.ttl}|{unserialled.to_text()}\n"


def _render_rrsets(rrsets: list[RRset], origin: str, width: int, cache: RenderCache | None,
                   texts: RdataTexts | None) -> tuple[list[str], list[str | RRset], list[int]]:
    """(digest texts, file lines, record counts) of ``rrsets``, one entry per rrset, as
    :func:`render_rrset` gives them one by one.

    One loop with the per-zone pieces worked out once (the owner suffix, and per TTL and type
    the text after the owner column and in the digest): a national ENUM zone holds a hundred
    thousand exception rrsets, each rendered once."""
    digests: list[str] = []
    body: list[str | RRset] = []
    counts: list[int] = []
    suffix = "." + origin
    cut = -len(suffix)
    columns: dict[tuple[int, str], tuple[str, str]] = {}  # (ttl, type) -> (after the owner, digest middle)
    last_ttl, last_type, piece = -1, "", ("", "")
    memo = texts.rdatas if texts is not None else None
    tuples = texts.tuples if texts is not None else None
    for rrset in rrsets:
        rdatas = rrset.rdatas
        counts.append(len(rdatas))
        name, rdtype, ttl = rrset.name, rrset.rdtype, rrset.ttl
        if rdtype == "SOA":
            digests.append(_soa_digest(rrset))
            body.append(rrset)
            continue
        if cache is not None:
            key = (id(rrset), origin, width)
            hit = cache.get(key)
            if hit is not None:
                digests.append(hit[1])
                body.append(hit[2])
                continue
        if ttl != last_ttl or rdtype != last_type:  # (runs of one TTL and type: an ENUM zone's NAPTRs)
            piece = columns.get((ttl, rdtype))
            if piece is None:
                piece = columns[(ttl, rdtype)] = (f" {ttl:<6} IN {rdtype:<5} ", f"|{rdtype}|{ttl}|")
            last_ttl, last_type = ttl, rdtype
        if name == origin:
            owner = "@"
        elif name.endswith(suffix):
            owner = name[:cut]
        else:
            owner = name + "."
        prefix = owner.ljust(width) + piece[0]
        if len(rdatas) == 1 and memo is not None:  # (most rrsets: one record)
            rd = rdatas[0]
            known = memo.get(id(rd))
            if known is None or known[0] is not rd:
                known = memo[id(rd)] = (rd, rd.to_text())
            text = known[1]
            digest = name + piece[1] + text + "\n"
            lines = prefix + text + "\n"
        else:
            if memo is not None and tuples is not None and type(rdatas) is tuple:
                hit_texts = tuples.get(id(rdatas))
                shown = (hit_texts[1] if hit_texts is not None and hit_texts[0] is rdatas
                         else rdata_texts(rdatas, texts))
            else:
                shown = rdata_texts(rdatas, texts)
            digest = name + piece[1] + "|".join(shown) + "\n"
            # one line per record: prefix + text + newline, joined in C
            lines = prefix + ("\n" + prefix).join(shown) + "\n" if shown else ""
        digests.append(digest)
        body.append(lines)
        if cache is not None:
            cache[key] = (rrset, digest, lines)
    return digests, body, counts


def _digest(zone: ZonePlan, digest_parts: list[str]) -> str:
    h = hashlib.sha256()
    h.update(FORMAT_VERSION.encode())
    h.update("".join(digest_parts).encode())
    if zone.kept:  # (absent from zones without kept records: their digest is what it always was)
        h.update(repr(zone.kept).encode())
    for block in zone.blocks:
        h.update(
            repr(
                (
                    block.id,
                    block.prefix,
                    block.style,
                    block.domain,
                    block.zone,
                    block.ttl,
                    block.first,
                    block.last,
                    block.length,
                )
            ).encode()
        )
    return "sha256:" + h.hexdigest()


def zone_layout(zone: ZonePlan) -> tuple[list[RRset], int]:
    """The rrsets of ``zone`` in file order, and the width of the owner column."""
    rrsets = zone.sorted_rrsets()
    origin = zone.name
    suffix = "." + origin
    cut = len(suffix)
    # len(relative(name, origin)), without a call per rrset
    widths = [len(n) - cut if n.endswith(suffix) else 1 if n == origin else len(n) + 1
              for n in [r.name for r in rrsets]]
    return rrsets, max(widths, default=1)


@dataclass
class _RenderedBase:
    """A base zone rendered once for one run: its file order, and per rrset its digest text,
    file lines and record count (a view's copy replaces only the entries it overrides)."""

    base: ZonePlan
    keys: list[RRKey]
    width: int
    index: dict[RRKey, int] | None = None
    digest: list[str] = field(default_factory=list)
    body: list[str | RRset] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)


class LayoutCache:
    """File order, owner width and rendered text of each base zone, for one render run.

    A view's copy of a zone is the base with some rrsets replaced (same names and types) and
    sometimes a few added. With nothing added the order and width are the base's, so ten thousand
    per-view zone files are not each sorted, nor each walked rrset by rrset: the base's rendered
    parts are copied and the view's own rrsets put in their places. With anything added the copy
    is sorted and rendered whole.
    """

    def __init__(self) -> None:
        self._bases: dict[int, _RenderedBase] = {}  # id(base) -> its layout and rendered parts

    def _entry(self, base: ZonePlan) -> _RenderedBase:
        entry = self._bases.get(id(base))
        if entry is None or entry.base is not base:
            rrsets, width = zone_layout(base)
            entry = self._bases[id(base)] = _RenderedBase(base, [(r.name, r.rdtype) for r in rrsets], width)
        return entry

    def layout(self, zone: ZonePlan, base: ZonePlan) -> tuple[list[RRset], int]:
        """``zone`` (``base`` or ``base`` with a view's overrides applied) in file order."""
        entry = self._entry(base)
        if len(zone.rrsets) != len(base.rrsets):  # the view adds names: sort this copy on its own
            return zone_layout(zone)
        merged = zone.rrsets
        return [merged[key] for key in entry.keys], entry.width

    def prepare(self, base: ZonePlan, overrides: dict[RRKey, RRset], header: list[str],
                comments: dict[RRKey, str], cache: RenderCache, texts: RdataTexts) -> PreparedZone:
        """:func:`prepare_zone` of ``base`` with ``overrides`` applied (the same result), without
        building that copy when it only replaces rrsets of the base (ten thousand copies
        nationally, each a dictionary of hundreds of rrsets)."""
        entry = self._entry(base)
        if any(key not in base.rrsets or key[1] == "SOA" for key in overrides):
            zone = merged_zone(base, overrides)
            return prepare_zone(zone, header, comments, cache, self.layout(zone, base), texts)
        zone = base  # (the copy's name, purpose, TTL and ENUM blocks are the base's)
        if entry.index is None:  # render the base once
            entry.index = {key: i for i, key in enumerate(entry.keys)}
            stored = base.rrsets
            entry.digest, entry.body, entry.counts = _render_rrsets(
                [stored[key] for key in entry.keys], base.name, entry.width, cache, texts)
        digest, body, records = entry.digest.copy(), entry.body.copy(), sum(entry.counts)
        for key, rrset in overrides.items():
            i = entry.index[key]
            digest[i], body[i] = render_rrset(rrset, base.name, entry.width, cache, texts)
            records += len(rrset.rdatas) - entry.counts[i]
        notes = [(entry.index[key], note) for key, note in comments.items() if note and key in entry.index]
        for i, note in sorted(notes, reverse=True):  # (from the end: earlier positions stay put)
            body.insert(i, f"; {note}\n")
        return PreparedZone(zone, _digest(zone, digest), entry.width, body, records)


def zone_digest(zone: ZonePlan, header: list[str]) -> str:
    """sha256 over what the file will hold, except the SOA serial (so it can decide the serial)."""
    return prepare_zone(zone, header).digest


def read_previous(path: Path) -> Previous | None:
    """Digest and serial of a zone file imsdr wrote before (None if absent or not ours)."""
    from imsdr.untrusted import UntrustedFile, open_untrusted_file

    try:
        with open_untrusted_file(path, MAX_PREVIOUS_ZONE_BYTES, encoding="utf-8") as fh:
            digest = None
            for _ in range(40):
                line = fh.readline()
                if not line:
                    break
                line = line.rstrip("\n")
                m = _DIGEST_RE.fullmatch(line)
                if m:
                    digest = m.group(1)
                fields = line.split()
                if "SOA" in fields and digest is not None:
                    i = fields.index("SOA")
                    if len(fields) > i + 3 and fields[i + 3].isascii() and fields[i + 3].isdigit():
                        return Previous(digest, int(fields[i + 3]))
    except (OSError, UnicodeDecodeError, UntrustedFile):
        return None
    return None


def today() -> dt.date:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isascii() and epoch.isdigit():
        return dt.datetime.fromtimestamp(int(epoch), dt.UTC).date()
    return dt.datetime.now(dt.UTC).date()


def choose_serial(
    digest: str, previous: Previous | None, forced: int | None = None, day: dt.date | None = None
) -> int:
    """The SOA serial for a zone whose content digest is ``digest`` (rule in the module doc)."""
    if forced is not None:
        if not 1 <= forced <= MAX_SERIAL:
            raise RenderError(f"--serial {forced} is outside 1..{MAX_SERIAL}")
        return forced
    day = day or today()
    dated = (day.year * 10000 + day.month * 100 + day.day) * 100  # YYYYMMDD00
    if previous is None:
        return dated
    if previous.digest == digest:
        return previous.serial
    serial = max(dated, previous.serial + 1)
    if serial > MAX_SERIAL:
        raise RenderError(
            f"SOA serial would pass {MAX_SERIAL}; pass --serial explicitly (RFC 1982 wrap-around)"
        )
    return serial


def _rrset_lines(rrset: RRset, origin: str, width: int, serial: int) -> Iterable[str]:
    owner = relative(rrset.name, origin)
    for rd in rrset.rdatas:
        if isinstance(rd, SOA):
            rd = SOA(rd.mname, rd.rname, serial, rd.refresh, rd.retry, rd.expire, rd.minimum)
        yield f"{owner:<{width}} {rrset.ttl:<6} IN {rrset.rdtype:<5} {rd.to_text()}\n"


def write_zone(
    fh: TextIO,
    zone: ZonePlan,
    serial: int,
    header: list[str],
    digest: str,
    comments: dict[RRKey, str] | None = None,
) -> int:
    """Write ``zone`` to ``fh``; return the number of records written."""
    return write_prepared(fh, prepare_zone(zone, header, comments), serial, header, digest)


def write_prepared(
    fh: TextIO, prepared: PreparedZone, serial: int, header: list[str], digest: str | None = None
) -> int:
    """Write a zone rendered by :func:`prepare_zone` to ``fh``; return the number of records written."""
    zone = prepared.zone
    text = [line + "\n" for line in header]
    text.append(f"; content-digest: {digest or prepared.digest}\n")
    text.append(f"$ORIGIN {zone.name}.\n$TTL {zone.default_ttl}\n")
    for chunk in prepared.body:
        if isinstance(chunk, str):
            text.append(chunk)
        else:
            text.extend(_rrset_lines(chunk, zone.name, prepared.width, serial))
    fh.write("".join(text))  # one write: ten thousand small zone files, each a few kB
    count = prepared.records
    for block in zone.blocks:
        if block.style == "wildcard" and block.first is None:
            span = "wildcard"
        elif block.style == "wildcard":
            span = f"+{block.first} .. +{block.last} as {len(block.stems)} wildcard(s) and number(s)"
        else:
            span = f"+{block.first} .. +{block.last}"
        fh.write(f"; block {block.id}: +{block.prefix} {span} -> sip:...@{block.domain}\n")
        if block.style == "wildcard":
            text = block.naptr().to_text()
            for stem in block.stems:
                owner = block.stem_owner(stem)
                if not owner.startswith("*") and (f"{owner}.{zone.name}", "NAPTR") in zone.rrsets:
                    continue  # that number is a provisioned exception, written above
                fh.write(f"{owner}\t{block.ttl}\tIN\tNAPTR\t{text}\n")
                count += 1
        else:
            count += write_numbers(fh, block)
    if zone.kept:
        fh.write("; kept unchanged from the imported configuration (network.dns.kept_records)\n")
        fh.write("".join(f"{line}\n" for line in zone.kept))
        count += len(zone.kept)
    return count


def write_numbers(fh: TextIO, block: EnumBlockPlan) -> int:
    """Stream every NAPTR of a numbers block in ascending number order (flat memory)."""
    assert block.first is not None and block.last is not None and block.length is not None
    free = block.length - len(block.prefix)
    low = min(free, _CHUNK_DIGITS)
    step = 10**low
    pre, post = enum_line_parts(block)
    # Line of number high*step+i: low_owner[i] + MIDDLE + low_digits[i] + post, where MIDDLE (the
    # high digits reversed, the NAPTR text, the high digits) is the same for the whole chunk. So a
    # chunk is MIDDLE.join(pieces) with pieces = [low_owner[0], low_digits[0]+post+low_owner[1],
    # ..., low_digits[step-1]+post]: one C-level join per 1,000 lines instead of one f-string each.
    owners = [reverse_digits(str(i).zfill(low)) for i in range(step)]
    tails = [f"{str(i).zfill(low)}{post}" for i in range(step)]
    pieces = [owners[0], *[tails[i] + owners[i + 1] for i in range(step - 1)], tails[-1]]
    plen = len(block.prefix)
    count = 0
    write = fh.write
    for seg_first, seg_last in _segments(block):  # the range without the numbers exceptions replace
        first_high, last_high = divmod(seg_first, step)[0], divmod(seg_last, step)[0]
        for high in range(first_high, last_high + 1):
            hs = str(high)
            hfree = hs[plen:]
            middle = ("." + ".".join(reversed(hfree)) if hfree else "") + pre + hs
            start = seg_first - high * step if high == first_high else 0
            stop = seg_last - high * step + 1 if high == last_high else step
            if start == 0 and stop == step:
                write(middle.join(pieces))
            else:
                write(middle.join([owners[start], *pieces[start + 1 : stop], tails[stop - 1]]))
            count += stop - start
    return count


def _segments(block: EnumBlockPlan) -> list[tuple[int, int]]:
    """(first, last) runs of a numbers block's range between the numbers it skips."""
    assert block.first is not None and block.last is not None
    out, low = [], block.first
    for number in sorted(block.skip):
        if low <= number - 1:
            out.append((low, number - 1))
        low = max(low, number + 1)
    if low <= block.last:
        out.append((low, block.last))
    return out


def enum_owner_check(block: EnumBlockPlan, number: int) -> str:
    """The owner name the hot loop writes for ``number`` (relative), computed the slow way."""
    return reverse_digits(str(number)[len(block.prefix) :])
