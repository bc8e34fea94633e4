"""Apply ENUM exceptions to a running primary as RFC 2136 dynamic updates, signed with TSIG.

``imsdr enum-update`` makes the live ENUM block zones hold what the plan (inventory + the
provisioning file) says, and nothing else: it transfers each block zone with the view's key
(AXFR), compares every NAPTR name with the plan's answer there (a provisioned exception, the
wildcard that keeps an exception's siblings answered, or the block's own record), and sends the
differences as update messages (delete the name's NAPTR rrset, add the planned records), a
bounded number of names per message. Run it again and nothing is sent: the diff is empty.

Only NAPTR records below the apex are touched (the primaries' ``update-policy`` grants exactly
that, ``network.dns.enum_updates``); named keeps the changes in its journal and moves the SOA
serial itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from imsdr.errors import ImsdrError

if TYPE_CHECKING:
    from imsdr.dns.plan import DnsPlan, ZonePlan

NAMES_PER_MESSAGE = 500  # one update message stays far below 64 KiB
MAX_KEYS_BYTES = 1024 * 1024
_KEY_RE = re.compile(r'key\s+"([A-Za-z0-9.-]+)"\s*\{\s*algorithm\s+([a-z0-9-]+)\s*;'
                     r'\s*secret\s+"([A-Za-z0-9+/=]+)"\s*;\s*\}\s*;')


@dataclass
class ZoneChange:
    zone: str
    replaced: list[str] = field(default_factory=list)  # names whose NAPTR rrset is set to the plan's
    deleted: list[str] = field(default_factory=list)  # names whose NAPTR rrset is removed
    messages: int = 0

    def to_dict(self) -> dict[str, object]:
        return {"zone": self.zone, "replaced": len(self.replaced), "deleted": len(self.deleted),
                "messages": self.messages}


def read_tsig_secret(path: Path, key_name: str) -> tuple[str, str]:
    """(algorithm, base64 secret) of ``key_name`` in a BIND keys file (no symlink, size-bounded)."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        raise ImsdrError(f"{path}: cannot read the TSIG keys file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ImsdrError(f"{path}: not a regular file")
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read(MAX_KEYS_BYTES + 1)
    if len(raw) > MAX_KEYS_BYTES:
        raise ImsdrError(f"{path}: larger than {MAX_KEYS_BYTES:,} bytes; not a keys file")
    for name, algorithm, secret in _KEY_RE.findall(raw.decode("utf-8", "replace")):
        if name == key_name:
            return algorithm, secret
    raise ImsdrError(f"{path}: no key {key_name!r} (render dns --keys FILE generates one per view)")


def enum_zone_view(plan: DnsPlan, view: str | None) -> str:
    """The view whose key signs the updates: ``view``, or the first view serving the core zones."""
    if view is not None:
        v = plan.view(view)
        if v.side != "core":
            raise ImsdrError(f"view {view!r} does not serve the ENUM zones (a core view does)")
        return v.name
    for v in plan.views:
        if v.side == "core":
            return v.name
    raise ImsdrError("the plan has no core view: no view serves the ENUM zones")


def planned_naptrs(plan: DnsPlan, zone: ZonePlan, name: str) -> list[str]:
    """The NAPTR records (text) the rendered zone plus its exceptions holds at ``name`` itself
    (not what a wildcard would synthesise there)."""
    stored = zone.rrsets.get((name, "NAPTR"))
    if stored is not None:
        return [rd.to_text() for rd in stored.rdatas]
    suffix = "." + zone.name
    rel = name[: -len(suffix)] if name.endswith(suffix) else None
    if not rel:
        return []
    labels = rel.split(".")
    if not all(len(x) == 1 and x in "0123456789" for x in labels):
        if labels[0] == "*":  # a block's wildcard
            rest = "".join(reversed(labels[1:]))
            for block in zone.blocks:
                if block.style == "wildcard" and rest in block.stems and (block.free is None or len(rest) < block.free):
                    return [block.naptr().to_text()]
        return []
    rest = "".join(reversed(labels))
    for block in zone.blocks:
        number = block.prefix + rest
        if block.style == "numbers" and block.covers(number) and int(number) not in block.skip:
            return [block.naptr(number).to_text()]
        if block.style == "wildcard" and rest in block.stems and block.free == len(rest):
            return [block.naptr().to_text()]
    return []


def zone_changes(plan: DnsPlan, zone: ZonePlan, live: dict[str, list[str]]) -> ZoneChange:
    """What to send so the live zone's NAPTR names (``live``: name -> record texts) are the plan's."""
    import dns.rdata

    def canon(texts: list[str]) -> set[object]:
        return {dns.rdata.from_text("IN", "NAPTR", t) for t in texts}

    change = ZoneChange(zone.name)
    wanted = {name for name, rdtype in zone.rrsets if rdtype == "NAPTR" and name != zone.name}
    for name in sorted(wanted | set(live)):
        plan_texts = planned_naptrs(plan, zone, name)
        live_texts = live.get(name, [])
        if canon(plan_texts) == canon(live_texts):
            continue
        (change.replaced if plan_texts else change.deleted).append(name)
    return change


def _batches(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def sync_enum_zones(plan: DnsPlan, address: str, port: int, key_name: str, algorithm: str, secret: str,
                    dry_run: bool = False, timeout: float = 10.0) -> list[ZoneChange]:
    """Bring every ENUM block zone on the primary at ``address``:``port`` to the plan."""
    import dns.exception
    import dns.name
    import dns.query
    import dns.rcode
    import dns.rdata
    import dns.rdataclass
    import dns.rdatatype
    import dns.tsigkeyring
    import dns.update
    import dns.zone

    keyring = dns.tsigkeyring.from_text({key_name: (algorithm, secret)})
    out = []
    for zone in sorted((z for z in plan.zones.values() if z.kind == "enum"), key=lambda z: z.name):
        origin = dns.name.from_text(zone.name + ".")
        try:
            live_zone = dns.zone.from_xfr(dns.query.xfr(address, origin, port=port, keyring=keyring,
                                                        keyname=key_name, keyalgorithm=algorithm,
                                                        timeout=timeout, lifetime=timeout * 6))
        except (dns.exception.DNSException, OSError, EOFError) as exc:
            raise ImsdrError(f"{address}:{port}: zone transfer of {zone.name} with key {key_name} failed: "
                             f"{exc}") from None
        live: dict[str, list[str]] = {}
        for name, node in live_zone.nodes.items():
            rds = node.get_rdataset(dns.rdataclass.IN, dns.rdatatype.NAPTR)
            if rds is None:
                continue
            absolute = name.derelativize(origin).to_text().rstrip(".").lower()
            if absolute != zone.name:
                live[absolute] = [rd.to_text() for rd in rds]
        change = zone_changes(plan, zone, live)
        ttl = zone.blocks[0].ttl if zone.blocks else zone.default_ttl
        names = change.replaced + change.deleted
        if not dry_run:
            for batch in _batches(names, NAMES_PER_MESSAGE):
                update = dns.update.UpdateMessage(origin, keyring=keyring, keyname=key_name,
                                                  keyalgorithm=algorithm)
                for name in batch:
                    owner = dns.name.from_text(name + ".")
                    update.delete(owner, dns.rdatatype.NAPTR)
                    for text in planned_naptrs(plan, zone, name):
                        update.add(owner, ttl, dns.rdata.from_text("IN", "NAPTR", text))
                try:
                    response = dns.query.tcp(update, address, port=port, timeout=timeout)
                except (dns.exception.DNSException, OSError, EOFError) as exc:
                    raise ImsdrError(f"{address}:{port}: update of {zone.name} failed: {exc}") from None
                if response.rcode() != dns.rcode.NOERROR:
                    raise ImsdrError(f"{address}:{port}: update of {zone.name} refused: "
                                     f"{dns.rcode.to_text(response.rcode())} (does network.dns.enum_updates "
                                     f"grant key {key_name}?)")
                change.messages += 1
        out.append(change)
    return out
