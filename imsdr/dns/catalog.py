"""Catalog zones (RFC 9432): how the secondaries learn a view's member zones without a config change.

With ``redundancy.enum_dns.sync`` ``master-slave`` or ``backend-db`` the primary serves, in every
view, one catalog zone ``<view>.catalog.invalid`` (``.invalid``, RFC 6761: never delegated, never
asked by a client) whose ``zones`` PTR records name the zones the view serves. A secondary's
named.conf holds, per view, only the catalog (``catalog-zones { zone "<catalog>"
default-primaries { <primary> key "<view key>"; } ... }`` and the catalog as a secondary zone):
BIND transfers the catalog with the view's key and creates, transfers and deletes the member zones
itself, so adding or removing a zone or a number block changes no secondary's configuration.

Views are configuration in BIND (a catalog lives inside one view and cannot make one): a new view
(a new local network or site) is one new ``view`` statement on each secondary, with its match list
and its catalog and no zone; docs/dns.md says so.

The member label is the first 16 hex digits of the SHA-256 of the zone name: stable across renders
(RFC 9432 §4.1: a member keeps its label, else the secondary resets the zone).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from imsdr.dns.zonefile import FORMAT_VERSION, choose_serial, read_previous, today

CATALOG_SUFFIX = "catalog.invalid"
CATALOG_VERSION = "2"  # RFC 9432 §4.2.1: the schema version
CATALOG_TTL = 0  # RFC 9432 §4: records of a catalog are never asked by resolvers
CATALOG_MIN_UPDATE = 2  # seconds between two updates of a catalog the secondary acts on (BIND default 5)
CATALOG_DIRECTORY = "catalogs"


def catalog_label(view: str) -> str:
    """The label naming ``view``'s catalog: the view name (a DNS label), hashed when too long."""
    return view if len(view) <= 63 else hashlib.sha256(view.encode()).hexdigest()[:32]


def catalog_zone(view: str) -> str:
    return f"{catalog_label(view)}.{CATALOG_SUFFIX}"


def catalog_path(view: str) -> str:
    """The catalog's file on the primary, relative to the output directory (like every zone file:
    the zone name plus ``.zone``)."""
    return f"{CATALOG_DIRECTORY}/{catalog_zone(view)}.zone"


def member_label(zone: str) -> str:
    return hashlib.sha256(zone.encode()).hexdigest()[:16]


def catalog_records(view: str, zones: Iterable[str]) -> list[str]:
    """The catalog's records after the SOA, in order (the member zones sorted by name)."""
    lines = [f"@\t{CATALOG_TTL}\tIN\tNS\tinvalid.",
             f'version\t{CATALOG_TTL}\tIN\tTXT\t"{CATALOG_VERSION}"']
    lines += [f"{member_label(z)}.zones\t{CATALOG_TTL}\tIN\tPTR\t{z}." for z in sorted(set(zones))]
    return lines


def render_catalog(view: str, zones: Iterable[str], network: str, previous: Path | None,
                   forced: int | None) -> str:
    """The catalog zone file of ``view``: its serial follows the zone files' rule (a digest of
    the records; unchanged content keeps the serial)."""
    records = catalog_records(view, zones)
    digest = "sha256:" + hashlib.sha256(
        "\n".join([FORMAT_VERSION, catalog_zone(view), *records]).encode()).hexdigest()
    old = read_previous(previous) if previous is not None else None
    serial = choose_serial(digest, old, forced, today())
    origin = catalog_zone(view)
    return "\n".join([
        f"; zone {origin}",
        f"; catalog zone (RFC 9432) of view {view} of {network}: the zones its secondaries serve",
        "; written by imsdr render dns: do not edit by hand, change the inventory and render again;",
        f"; content-digest: {digest}",
        f"$ORIGIN {origin}.",
        f"$TTL {CATALOG_TTL}",
        f"@\t{CATALOG_TTL}\tIN\tSOA\tinvalid. invalid. {serial} 3600 600 2147483646 0",
        *records,
        "",
    ])
