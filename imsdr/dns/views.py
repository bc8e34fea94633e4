"""The split-horizon ``named.conf`` fragment: ACLs, one view per local network, one per site, default.

Zone files that are the same in several views (the ENUM zones, and the home zone wherever a
view does not override it) are defined once, in the first view that serves them, and shared
by later views with ``in-view`` — so a 10-million-number ENUM zone is loaded into memory once,
not once per view.
"""

from __future__ import annotations

from dataclasses import dataclass

from imsdr.dns.plan import DnsPlan, ViewPlan

RRSET_ORDER_NOTE = (
    "// Answer order: BIND returns the records of an rrset in cyclic (round-robin) order by default,\n"
    "// so the order of the A/AAAA records of the SBC discovery name (local SBC first, DR SBC second)\n"
    "// is NOT kept. Keeping it needs 'rrset-order { name \"<name>\" order fixed; };', which BIND\n"
    "// supports only when built with --enable-fixed-rrset (Debian's BIND 9.18 is not). The SRV\n"
    "// priorities carry the local-first/DR-second order reliably; UEs should use NAPTR/SRV.\n"
)


@dataclass(frozen=True)
class ZoneFileRef:
    view: str | None  # None: shared by every view that does not override the zone
    zone: str
    path: str  # relative to the output directory (= named's 'directory')


def zone_file_path(view: ViewPlan, zone: str, plan: DnsPlan) -> ZoneFileRef:
    """Where the zone as served in ``view`` is written."""
    if view.overrides.get(zone):
        return ZoneFileRef(view.name, zone, f"zones/{view.name}/{zone}.zone")
    return ZoneFileRef(None, zone, f"zones/{zone}.zone")


def zone_files(plan: DnsPlan) -> list[ZoneFileRef]:
    """Every distinct zone file of the plan, in the order they are first used."""
    seen: dict[str, ZoneFileRef] = {}
    for view in plan.views:
        for zone in plan.zones:
            ref = zone_file_path(view, zone, plan)
            seen.setdefault(ref.path, ref)
    return sorted(seen.values(), key=lambda r: r.path)


def _acl_body(prefixes: tuple[str, ...]) -> str:
    return " ".join(f"{p};" for p in prefixes)


def render_named_conf(plan: DnsPlan, inventory: str) -> str:
    out = [
        f"// named.conf fragment for {plan.network}: split-horizon views rendered by imsdr",
        f"// from inventory {inventory}; do not edit by hand.",
        "//",
        "// Include it from named.conf (outside any view and after 'options'):",
        '//     include "/etc/bind/imsdr/named.conf.imsdr";',
        "// Zone file names are relative to 'options { directory }': point it at this output directory,",
        "// or copy the zones/ directory there. Once views exist, every zone of the server must be",
        "// inside a view: drop (or move into a view) any zone statement outside views, such as",
        "// Debian's 'include \"/etc/bind/named.conf.default-zones\";'.",
        "// The first view whose match-clients matches a client answers it; order matters.",
        "//",
    ]
    out += RRSET_ORDER_NOTE.rstrip("\n").split("\n")
    out.append("")
    for view in plan.views:
        if view.kind != "default":
            out.append(f'acl "{view.name}" {{ {_acl_body(view.match_clients)} }};')
    out.append("")
    defined: dict[str, str] = {}  # file path -> view that defined it
    for view in plan.views:
        out.append(f"// {view.description}")
        out.append(f'view "{view.name}" {{')
        match = "any;" if view.kind == "default" else f'"{view.name}";'
        out.append(f"    match-clients {{ {match} }};")
        for zone in plan.zones:
            ref = zone_file_path(view, zone, plan)
            if ref.path in defined:
                out.append(f'    zone "{zone}" {{ in-view "{defined[ref.path]}"; }};')
            else:
                defined[ref.path] = view.name
                out.append(f'    zone "{zone}" {{ type primary; file "{ref.path}"; }};')
        out.append("};")
        out.append("")
    return "\n".join(out)
