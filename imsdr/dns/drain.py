"""The drained (failed-over) state: which records and dispatcher lines change, and how to load it.

``imsdr render dns --drain ID`` renders the DNS plan and dispatcher lists with the drained elements
left out (:func:`imsdr.dns.plan.build_dns_plan` with ``exclude``). This module compares that state
with the normal one, record by record, and derives the exact reload commands for every server that
loads the changed files. The runbook pages print the same comparison, so the page and the files an
operator loads cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from imsdr.dns.dispatcher import (
    DispatcherSet,
    dispatcher_list_path,
    dispatcher_sets,
)
from imsdr.dns.plan import DnsPlan, build_dns_plan
from imsdr.dns.views import zone_file_path, zone_files
from imsdr.errors import ImsdrError

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

DRAIN_NOTE = "DRAIN.md"
DRAINED_MARKER = "<!-- imsdr-drained:"

# The control tools of the platforms imsdr knows; 'vendor' commands are placeholders to fill in.
DEFAULT_CONTROL = {"bind": "rndc", "kamailio": "kamcmd", "vendor": "VENDOR-CLI"}
DEFAULT_PLATFORM_OF_TYPE = {"enum_dns": "bind", "sbc": "kamailio", "pcscf": "kamailio"}
RNDC_RELOAD_OK = "zone reload queued"
RNDC_RELOAD_CURRENT = "zone reload up-to-date"  # the zone was already loaded: a re-run is fine
RNDC_RECONFIG_OK = ""  # rndc reconfig prints nothing on success
KAMCMD_RELOAD_OK = "Ok. Dispatcher successfully reloaded."  # kamcmd dispatcher.reload, Kamailio 5.6
RNDC_NOT_FOUND = "not found"  # rndc retransfer of a zone the server does not (yet) hold
CATALOG_MEMBER_WAIT_S = 30  # a catalog member's creation: the catalog's transfer, then its update interval


@dataclass(frozen=True)
class PlatformInfo:
    """How to operate one element: the platform kind and the control tool invocation."""

    name: str
    kind: str  # bind | kamailio | vendor
    control: str
    dig: str = "dig"
    directory: str = "/etc/imsdr/dns"
    keys: str | None = None

    @property
    def placeholder(self) -> bool:
        return self.kind == "vendor"


def dig_port(dig: str) -> int:
    """The port of a platform's ``dig`` command (``dig -p 5353``), 53 without one."""
    import re

    found = re.search(r"(?:^|\s)-p\s*(\d{1,5})(?:\s|$)", dig)
    return int(found.group(1)) if found else 53


def platform_of(topo: Topology, el: Element) -> PlatformInfo:
    """The element's platform: its ``platform`` field, else the default of its type."""
    name = el.platform or DEFAULT_PLATFORM_OF_TYPE.get(el.type.value, "vendor")
    spec = topo.inventory.platforms.get(name)
    if spec is not None:
        control = spec.control or DEFAULT_CONTROL[spec.kind]
        if spec.kind == "vendor" and spec.control is None:
            control = f"{el.vendor.replace(' ', '-').upper()}-CLI"
        return PlatformInfo(name, spec.kind, control, spec.dig, spec.directory, spec.keys)
    control = DEFAULT_CONTROL[name]
    if name == "vendor":
        control = f"{el.vendor.replace(' ', '-').upper()}-CLI"
    return PlatformInfo(name, name, control)


def resolve_drain(topo: Topology, ids: Iterable[str]) -> tuple[str, ...]:
    """Element ids to drain: element ids as given, a site id means every element of the site."""
    out: list[str] = []
    for ident in ids:
        if ident in topo.elements:
            found = [ident]
        elif ident in topo.sites:
            found = sorted(e.id for e in topo.by_site.get(ident, []))
        else:
            import difflib

            close = difflib.get_close_matches(ident, [*topo.sites, *topo.elements], n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ImsdrError(f"--drain {ident}: not a site or element id of this inventory{hint}")
        out += [e for e in found if e not in out]
    return tuple(sorted(out))


def _diff_lines(removed: tuple[str, ...], added: tuple[str, ...]) -> list[str]:
    return [f"- {line}" for line in removed] + [f"+ {line}" for line in added]


@dataclass(frozen=True)
class RecordChange:
    """One rrset that answers differently in the drained state, in the views listed."""

    zone: str
    name: str
    rdtype: str
    views: tuple[str, ...]
    removed: tuple[str, ...]
    added: tuple[str, ...]

    def diff_lines(self) -> list[str]:
        return _diff_lines(self.removed, self.added)


@dataclass(frozen=True)
class DispatcherChange:
    file: str
    setid: int
    source: str
    removed: tuple[str, ...]
    added: tuple[str, ...]

    def diff_lines(self) -> list[str]:
        return _diff_lines(self.removed, self.added)


@dataclass(frozen=True)
class Reload:
    """One command on one server, with what it prints when it worked."""

    element: str
    address: str
    command: str
    expected: str
    placeholder: bool = False
    down: bool = False  # the element is drained itself (down): skipped, loaded when it comes back
    # seconds the script retries a command answered "not found": a zone a catalog creates on a
    # secondary (RFC 9432) exists only once the catalog is transferred and processed
    wait_s: int = 0


@dataclass
class DrainChanges:
    drained: tuple[str, ...]
    records: list[RecordChange] = field(default_factory=list)
    dispatcher: list[DispatcherChange] = field(default_factory=list)
    reloads: list[Reload] = field(default_factory=list)
    layout_changed: bool = False
    promoted: tuple[str, ...] = ()  # secondaries made primary: every primary is drained
    demoted: tuple[str, ...] = ()  # the drained primaries, rendered as secondaries of the promoted
    failback_reloads: list[Reload] = field(default_factory=list)  # with a promotion: the failback's order
    rejoin_reloads: list[Reload] = field(default_factory=list)  # a demoted primary back as a secondary

    @property
    def empty(self) -> bool:
        return not (self.records or self.dispatcher)

    def returning(self) -> DrainChanges:
        """The same changes seen from the failback: the drained elements come back and load the
        normal files too, so none of their reloads is skipped."""
        back = [Reload(r.element, r.address, r.command, r.expected, r.placeholder) for r in self.reloads]
        if self.promoted:  # the old primaries take the role back first, then the promoted step down
            dns = {r.element for r in self.failback_reloads}
            back = [*self.failback_reloads, *(r for r in back if r.element not in dns)]
        return DrainChanges(self.drained, self.records, self.dispatcher, back, self.layout_changed,
                            self.promoted, self.demoted)

    def live_reloads(self) -> list[Reload]:
        """The commands to run now: every reload but those of drained (down) elements."""
        return [r for r in self.reloads if not r.down]

    def by_element(self, live_only: bool = True) -> dict[str, list[Reload]]:
        """Reload commands per element, in the order they are run."""
        out: dict[str, list[Reload]] = {}
        for r in self.live_reloads() if live_only else self.reloads:
            out.setdefault(r.element, []).append(r)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "drained": list(self.drained),
            "records": [{"zone": r.zone, "name": r.name, "type": r.rdtype, "views": list(r.views),
                         "removed": list(r.removed), "added": list(r.added)} for r in self.records],
            "dispatcher": [{"file": d.file, "set": d.setid, "source": d.source, "removed": list(d.removed),
                            "added": list(d.added)} for d in self.dispatcher],
            "reload": [{"element": r.element, "address": r.address, "command": r.command,
                        "expected": r.expected, "placeholder": r.placeholder, "down": r.down}
                       for r in self.reloads],
            "layout_changed": self.layout_changed,
            "promoted": list(self.promoted),
            "demoted": list(self.demoted),
        }


def _rr_lines(rrset: Any) -> tuple[str, ...]:
    if rrset is None:
        return ()
    return tuple(f"{rrset.name}. {rrset.ttl} IN {rrset.rdtype} {rd.to_text()}" for rd in rrset.rdatas)


def record_changes(normal: DnsPlan, drained: DnsPlan) -> list[RecordChange]:
    """Every rrset that a view answers differently, identical changes grouped: every record of the
    home and access zones, the apex NS of the ENUM zones (a drained name server leaves them too)."""
    normal.materialise_all()
    drained.materialise_all()
    grouped: dict[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for view in normal.views:
        other = drained.view(view.name)
        for zone_name, zone in normal.view_zones(view).items():
            before = normal.zone_for_view(view, zone_name).rrsets
            after = drained.zone_for_view(other, zone_name).rrsets
            # an ENUM zone names no element but its name servers (apex NS), among millions of numbers
            keys = sorted(set(before) | set(after)) if zone.kind in ("home", "access") else [(zone_name, "NS")]
            for key in keys:
                if key[1] == "SOA":
                    continue  # the serial is set when the files are written
                old, new = _rr_lines(before.get(key)), _rr_lines(after.get(key))
                if old != new:
                    removed = tuple(line for line in old if line not in new)
                    added = tuple(line for line in new if line not in old)
                    grouped.setdefault((zone_name, key[0], key[1], removed, added), []).append(view.name)
    return [RecordChange(z, n, t, tuple(views), rem, add)
            for (z, n, t, rem, add), views in sorted(grouped.items(), key=lambda kv: kv[0][:3])]


def _set_lines(sets: list[DispatcherSet]) -> dict[str, tuple[int, list[str]]]:
    return {s.source: (s.setid, [d.line(s.setid) for d in s.destinations]) for s in sets}


def dispatcher_changes(topo: Topology, drained: frozenset[str]) -> list[DispatcherChange]:
    """Per source element (one list file each): the lines its set loses or gains."""
    before, after = _set_lines(dispatcher_sets(topo)), _set_lines(dispatcher_sets(topo, drained))
    out = []
    for source in [*before, *(s for s in after if s not in before)]:
        setid, old = before.get(source, after.get(source, (0, [])))
        new = after.get(source, (setid, []))[1]
        if old != new:
            out.append(DispatcherChange(dispatcher_list_path(source), setid, source,
                                        tuple(x for x in old if x not in new), tuple(x for x in new if x not in old)))
    return out


def dns_server_elements(topo: Topology) -> list[Element]:
    ids = list(topo.network.dns.nameservers) or sorted(e.id for e in topo.by_type.get("enum_dns", []))
    return [topo.elements[i] for i in ids if i in topo.elements]


def promotion_reloads(topo: Topology, promoted: tuple[str, ...], demoted: tuple[str, ...],
                      normal: DnsPlan | None = None) -> list[Reload]:
    """The failback after a promotion: each returning primary, running as a secondary of the
    promoted server since it came back, takes the primary role back (``rndc reconfig`` turns its
    zones ``type primary`` again, the reload reads the normal files); then each promoted server
    steps down (``rndc reconfig``: its zones are ``type secondary`` again, loaded from its older
    copies on disk, so ``rndc retransfer`` of each of the ``normal`` plan's zones fetches the
    current ones from the returned primary instead of waiting for the refresh timer)."""
    out: list[Reload] = []
    for ident in demoted:
        el = topo.elements[ident]
        plat = platform_of(topo, el)
        out.append(Reload(ident, first_address(el), f"{plat.control} reconfig", RNDC_RECONFIG_OK, plat.placeholder))
        out.append(Reload(ident, first_address(el), f"{plat.control} reload", "server reload successful",
                          plat.placeholder))
    for ident in promoted:
        el = topo.elements[ident]
        plat = platform_of(topo, el)
        out.append(Reload(ident, first_address(el), f"{plat.control} reconfig", RNDC_RECONFIG_OK, plat.placeholder))
        if normal is not None:
            out += retransfers(topo, normal, (ident,))
    return out


def first_address(el: Element) -> str:
    v4 = [a for a in el.addresses if ":" not in a]
    return (v4 or list(el.addresses))[0]


def rejoin_reloads(topo: Topology, drained: DnsPlan, demoted: tuple[str, ...],
                   excluded: frozenset[str] = frozenset()) -> list[Reload]:
    """What a drained primary runs when it comes back as a secondary of the promoted server: a
    fresh transfer of every zone it holds (``rndc retransfer``; the copies it may keep on disk
    from an earlier time as a secondary are older, and a secondary loaded from disk waits for its
    refresh timer before asking). ``excluded``: the drained elements (the layout it rejoins)."""
    return retransfers(topo, drained, demoted, down=True, excluded=excluded)


def retransfers(topo: Topology, plan: DnsPlan, ids: Iterable[str], down: bool = False,
                excluded: frozenset[str] = frozenset()) -> list[Reload]:
    """``rndc retransfer ZONE IN VIEW`` for every zone instance the servers ``ids`` hold in the
    layout without ``excluded``: a zone shared with ``in-view`` once, in the view that defines
    it; on a secondary fed by catalog zones every view's copy, as each is its own zone there
    (a copy skipped would keep serving what it loaded from disk until its refresh timer)."""
    from imsdr.dns.views import server_layout, uses_catalogs

    layout = server_layout(topo, excluded)
    servers = {s.id: s for s in layout.servers}
    out: list[Reload] = []
    for ident in ids:
        el, server = topo.elements[ident], servers.get(ident)
        plat = platform_of(topo, el)
        own_copies = server is not None and server.role == "secondary" and uses_catalogs(layout, server)
        seen: set[str] = set()
        for view in plan.views:
            if view.side == "none" or (server is not None and not server.holds(view)):
                continue
            for zone in plan.view_zones(view):
                path = zone_file_path(view, zone, plan).path
                if path in seen and not own_copies:
                    continue  # a zone shared with in-view: transferred once, in the view that defines it
                seen.add(path)
                out.append(Reload(ident, first_address(el), f"{plat.control} retransfer {zone} IN {view.name}",
                                  "", plat.placeholder, down=down,
                                  wait_s=CATALOG_MEMBER_WAIT_S if own_copies else 0))
    return out


def reloads(topo: Topology, normal: DnsPlan, drained: DnsPlan, records: list[RecordChange],
            dispatcher: list[DispatcherChange], excluded: frozenset[str] = frozenset(),
            promoted: tuple[str, ...] = ()) -> tuple[list[Reload], bool]:
    """The commands that load the drained files: per DNS server, per changed zone of a view (the
    view that defines the zone file; views sharing it with ``in-view`` follow), and per Kamailio
    whose dispatcher set changed. Layout changes (a view's zone file appears or disappears) need
    ``rndc reconfig`` and a full ``rndc reload``. ``rndc reconfig`` always comes first: the render
    replaces the directory, and named reads relative zone file names from the directory it changed
    to when it last read its configuration. A promoted server (``promoted``) reads its new
    ``named.conf`` (every zone ``type primary``) with ``rndc reconfig``, then loads every zone file
    with a full ``rndc reload``."""
    layout_changed = zone_files(normal) != zone_files(drained) or bool(promoted)
    zone_views: list[tuple[str, str]] = []
    if records:
        defining: dict[str, str] = {}
        for view in drained.views:
            for zone in drained.view_zones(view):
                defining.setdefault(zone_file_path(view, zone, drained).path, view.name)
        for change in records:
            for view_name in change.views:
                path = zone_file_path(drained.view(view_name), change.zone, drained).path
                pair = (change.zone, defining[path])
                if pair not in zone_views:
                    zone_views.append(pair)
    out: list[Reload] = []
    if records or promoted:
        from imsdr.dns.views import server_layout

        # the servers that load zone files: every primary (secondaries follow by NOTIFY and
        # transfer, as the serials move forward) of the drained layout, a promoted survivor among them
        for held in server_layout(topo, excluded).primaries:
            server = topo.elements[held.id]
            plat = platform_of(topo, server)
            addr = first_address(server)
            if layout_changed:
                out.append(Reload(server.id, addr, f"{plat.control} reconfig", RNDC_RECONFIG_OK, plat.placeholder))
                out.append(Reload(server.id, addr, f"{plat.control} reload", "server reload successful",
                                  plat.placeholder))
                continue
            # the render replaced the directory: reconfig makes named read named.conf again and
            # change to the new directory (no zone is reloaded), so the reloads read the new files
            # (every server: each one's named then reads the directory the render left)
            out.append(Reload(server.id, addr, f"{plat.control} reconfig", RNDC_RECONFIG_OK, plat.placeholder))
            for zone, view in sorted(zone_views):
                if not held.holds(drained.view(view)):
                    continue  # another service area's view: this server has none to reload
                out.append(Reload(server.id, addr, f"{plat.control} reload {zone} IN {view}", RNDC_RELOAD_OK,
                                  plat.placeholder))
    for source in sorted({d.source for d in dispatcher}):
        el = topo.elements[source]
        plat = platform_of(topo, el)
        command = (f"{plat.control} dispatcher.reload" if plat.kind == "kamailio"
                   else f"{plat.control} reload-dispatcher-list")
        out.append(Reload(source, first_address(el), command, KAMCMD_RELOAD_OK, plat.kind != "kamailio"))
    return out, layout_changed


def drain_changes(topo: Topology, ids: Iterable[str], normal: DnsPlan | None = None,
                  drained: DnsPlan | None = None) -> DrainChanges:
    """Everything that differs between the normal and the drained state of ``ids``."""
    return drained_state(topo, ids, normal, drained).changes


@dataclass
class DrainedState:
    """One drained (failed-over) state, computed once: the drained element ids, the normal and the
    drained DNS plans, and what differs between them. ``render dns --drain`` writes it, the runbook
    pages print its steps and ``verify --drain`` checks a live server against it, so none of them
    asks the topology again and they cannot disagree."""

    topo: Topology
    drained: tuple[str, ...]
    normal: DnsPlan
    plan: DnsPlan
    changes: DrainChanges

    @property
    def drained_set(self) -> frozenset[str]:
        return frozenset(self.drained)

    def live_servers(self) -> list[Element]:
        """The DNS servers that answer in the drained state (the drained ones are down)."""
        return [s for s in dns_server_elements(self.topo) if s.id not in self.drained_set]

    @property
    def promoted(self) -> tuple[str, ...]:
        """The secondaries this drained state makes primary (every primary is drained)."""
        return self.changes.promoted

    def answers(self) -> list[tuple[str, str, str, str]]:
        """(view, zone, name, type) of every answer that differs from the normal state."""
        return [(view, c.zone, c.name, c.rdtype) for c in self.changes.records for view in c.views]


def drained_state(topo: Topology, ids: Iterable[str], normal: DnsPlan | None = None,
                  drained: DnsPlan | None = None) -> DrainedState:
    """Compute the drained state of ``ids`` (element or site ids) once."""
    drained_ids = resolve_drain(topo, ids)
    normal = normal or build_dns_plan(topo)
    drained = drained or build_dns_plan(topo, excluded=drained_ids)
    from imsdr.dns.views import server_layout

    records = record_changes(normal, drained)
    gone = frozenset(drained_ids)
    dispatcher = dispatcher_changes(topo, gone)
    before, after = server_layout(topo), server_layout(topo, gone)
    promoted = after.promoted
    after_roles = {s.id: s.role for s in after.servers}
    demoted = tuple(s.id for s in before.primaries if after_roles.get(s.id) == "secondary")
    commands, layout = reloads(topo, normal, drained, records, dispatcher, gone, promoted)
    commands = [Reload(r.element, r.address, r.command, r.expected, r.placeholder, r.element in gone)
                for r in commands]
    return DrainedState(topo, drained_ids, normal, drained,
                        DrainChanges(drained_ids, records, dispatcher, commands, layout, promoted, demoted,
                                     promotion_reloads(topo, promoted, demoted, normal),
                                     rejoin_reloads(topo, drained, demoted, gone)))


RELOAD_DIR = "reload"


def reload_script_path(element: str) -> str:
    """The script that loads this directory on one server (``sh DIR/reload/<element>.sh``)."""
    return f"{RELOAD_DIR}/{element}.sh"


def script_ok_line(element: str, count: int) -> str:
    """What a reload script prints when every command printed what it should."""
    return f"{element}: {count} command(s), every output as expected"


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def render_reload_script(element: str, commands: list[Reload], title: str, inventory: str) -> str:
    """One server's reload commands as a POSIX sh script: each command's output is compared with
    what it prints when it worked; the first difference stops the script (exit 1) with the
    command and its output on stderr, and the commands after it are not run."""
    lines = [
        "#!/bin/sh",
        f"# {title}: the reload commands of {element}, in order.",
        f"# Rendered by imsdr from inventory {inventory}; do not edit by hand. Run: sh {reload_script_path(element)}",
        "set -u",
        "fail() { printf 'FAILED on %s: %s\\n%s\\n' " + _sh_quote(element) + " \"$1\" \"$2\" >&2; exit 1; }",
    ]
    for r in commands:
        quoted = _sh_quote(r.command)
        if r.wait_s:  # "not found" is retried once a second: the zone is still to be created
            lines.append(f"n=0; while ! out=$({r.command} 2>&1); do case \"$out\" in *{_sh_quote(RNDC_NOT_FOUND)}*) "
                         f"[ \"$n\" -lt {r.wait_s} ] || fail {quoted} \"$out\"; n=$((n+1)); sleep 1 ;; "
                         f"*) fail {quoted} \"$out\" ;; esac; done")
        else:
            lines.append(f"out=$({r.command} 2>&1) || fail {quoted} \"$out\"")
        if r.expected == RNDC_RELOAD_OK:
            lines.append(f"case \"$out\" in {_sh_quote(RNDC_RELOAD_OK)}|{_sh_quote(RNDC_RELOAD_CURRENT)}) ;; "
                         f"*) fail {quoted} \"$out\" ;; esac")
        elif r.expected:
            lines.append(f"[ \"$out\" = {_sh_quote(r.expected)} ] || fail {quoted} \"$out\"")
        else:
            lines.append(f"[ -z \"$out\" ] || fail {quoted} \"$out\"")
    lines.append(f"echo {_sh_quote(script_ok_line(element, len(commands)))}")
    return "\n".join(lines) + "\n"


def reload_scripts(changes: DrainChanges, inventory: str, failback: bool = False) -> dict[str, str]:
    """relative path -> script text, one per element that reloads (vendor placeholders excluded:
    their commands are the vendor's to fill in)."""
    title = ("Fail back from the drained state of " if failback else "Drained state of ") + \
        ", ".join(changes.drained)
    scripts = {reload_script_path(element): render_reload_script(element, commands, title, inventory)
               for element, commands in changes.by_element().items() if not commands[0].placeholder}
    rejoin: dict[str, list[Reload]] = {}
    for r in [] if failback else changes.rejoin_reloads:
        rejoin.setdefault(r.element, []).append(r)
    for element, commands in rejoin.items():  # run when the drained primary is back, as a secondary
        if not commands[0].placeholder:
            scripts[reload_script_path(element)] = render_reload_script(
                element, commands, title + " (back as a secondary of the promoted server)", inventory)
    return scripts


def render_drain_note(changes: DrainChanges, inventory: str) -> str:
    """DRAIN.md: a readable summary of what differs from the normal state, on which servers, in
    which order; the commands themselves are in one script per server (``reload/<server>.sh``)."""
    zones = sorted({c.zone for c in changes.records})
    lines = [
        f"# Drained state: {', '.join(changes.drained)}",
        "",
        f"{DRAINED_MARKER} {' '.join(changes.drained)} -->",
        "",
        f"Rendered by `imsdr render dns --drain` from inventory `{inventory}`: the zones, views and",
        "dispatcher lists of this directory leave the elements above out of every answer. Do not edit",
        "by hand; render the normal state again (without `--drain`) to fail back.",
        "",
        "## What changes",
        "",
        f"- {len(changes.records)} rrset change(s) in {len(zones)} zone(s): "
        + (", ".join(f"`{z}`" for z in zones) if zones else "none") + ".",
        f"- {len(changes.dispatcher)} dispatcher set change(s)"
        + (": " + ", ".join(f"`{d.file}`" for d in changes.dispatcher) if changes.dispatcher else "") + ".",
        "",
    ]
    if changes.promoted:
        demoted = ", ".join(changes.demoted)
        lines += [
            "## Promotion",
            "",
            f"Every primary ({demoted}) is drained: {', '.join(changes.promoted)} is promoted. Its",
            "`named/<server>.conf` in this directory holds every zone as `type primary` (it loads the zone",
            "files of this directory and NOTIFYs the other servers); its reload script runs first. The serials",
            "continue upward from the directory this render replaced. The drained primaries are rendered as",
            f"its secondaries: when {demoted} comes back, it loads this directory first and transfers every",
            "zone (a secondary first); the failback render gives it the primary role back.",
            "",
        ]
        for element in dict.fromkeys(r.element for r in changes.rejoin_reloads):
            count = sum(r.element == element for r in changes.rejoin_reloads)
            lines += [f"When {element} is back (started on this directory): `sh {reload_script_path(element)}` "
                      f"({count} zone transfer(s)); prints `{script_ok_line(element, count)}`.", ""]
    lines += [
        "## On which servers, in which order",
        "",
    ]
    live = changes.by_element()
    if not live:
        lines += ["Nothing to reload.", ""]
    for n, (element, commands) in enumerate(live.items(), 1):
        if commands[0].placeholder:
            lines += [f"{n}. {element} ({commands[0].address}): placeholder (vendor CLI), replace with the "
                      "vendor's command:", "", "   ```sh"] + [f"   {r.command}" for r in commands] + ["   ```", ""]
        else:
            zones_of = sorted({r.command.split(" reload ", 1)[1].split(" IN ")[0] for r in commands
                               if " reload " in r.command and " IN " in r.command})
            what = (f"{len(zones_of)} zone reload(s)" if zones_of else
                    "dispatcher reload" if "dispatcher" in commands[-1].command else
                    "configuration re-read, none of its zones changed"
                    if all(r.command.endswith(" reconfig") for r in commands) else "full reload")
            lines.append(f"{n}. {element} ({commands[0].address}): `sh {reload_script_path(element)}` "
                         f"({len(commands)} command(s): {what}); prints "
                         f"`{script_ok_line(element, len(commands))}`.")
    down = sorted({r.element for r in changes.reloads if r.down} | set(changes.demoted))
    if down:
        lines += ["", "Down (drained themselves), skipped: " + ", ".join(down) + ". They are loaded when they",
                  "come back: render the normal state first, then run their reload script"
                  + (f" ({', '.join(changes.demoted)}: first as a secondary, see Promotion)." if changes.demoted
                     else ".")]
    lines += ["", "## Record changes against the normal state", ""]
    if not changes.records:
        lines += ["No DNS record changes.", ""]
    for c in changes.records:
        lines += [f"`{c.name}` {c.rdtype} in zone `{c.zone}`, views {', '.join(c.views)}:", "", "```diff"]
        lines += c.diff_lines() + ["```", ""]
    lines += ["## Dispatcher changes", ""]
    if not changes.dispatcher:
        lines += ["No dispatcher list changes.", ""]
    for d in changes.dispatcher:
        lines += [f"`{d.file}` set {d.setid} (on {d.source}):", "", "```diff"] + d.diff_lines() + ["```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def previously_drained(directory: Path, topo: Topology) -> tuple[str, ...]:
    """The elements a previous ``--drain`` render left out of ``directory`` (its DRAIN.md), so
    rendering the normal state over it can print the reload commands of the failback."""
    from imsdr.untrusted import UntrustedFile, open_untrusted_file

    try:
        with open_untrusted_file(directory / DRAIN_NOTE, 64 << 20, encoding="utf-8") as fh:
            for _ in range(10):
                line = fh.readline()
                if line.startswith(DRAINED_MARKER):
                    words = line[len(DRAINED_MARKER):].replace("-->", " ").split()
                    return tuple(w for w in words if w in topo.elements)
    except (OSError, UnicodeDecodeError, UntrustedFile):
        return ()
    return ()
