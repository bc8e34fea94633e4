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
    PCSCF_ICSCF_LIST,
    SBC_PCSCF_LIST,
    DispatcherSet,
    pcscf_icscf_sets,
    sbc_pcscf_sets,
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
RNDC_RECONFIG_OK = ""  # rndc reconfig prints nothing on success
KAMCMD_RELOAD_OK = "Ok. Dispatcher successfully reloaded."  # kamcmd dispatcher.reload, Kamailio 5.6


@dataclass(frozen=True)
class PlatformInfo:
    """How to operate one element: the platform kind and the control tool invocation."""

    name: str
    kind: str  # bind | kamailio | vendor
    control: str
    dig: str = "dig"
    directory: str = "/etc/imsdr/dns"

    @property
    def placeholder(self) -> bool:
        return self.kind == "vendor"


def platform_of(topo: Topology, el: Element) -> PlatformInfo:
    """The element's platform: its ``platform`` field, else the default of its type."""
    name = el.platform or DEFAULT_PLATFORM_OF_TYPE.get(el.type.value, "vendor")
    spec = topo.inventory.platforms.get(name)
    if spec is not None:
        control = spec.control or DEFAULT_CONTROL[spec.kind]
        if spec.kind == "vendor" and spec.control is None:
            control = f"{el.vendor.replace(' ', '-').upper()}-CLI"
        return PlatformInfo(name, spec.kind, control, spec.dig, spec.directory)
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


@dataclass
class DrainChanges:
    drained: tuple[str, ...]
    records: list[RecordChange] = field(default_factory=list)
    dispatcher: list[DispatcherChange] = field(default_factory=list)
    reloads: list[Reload] = field(default_factory=list)
    layout_changed: bool = False

    @property
    def empty(self) -> bool:
        return not (self.records or self.dispatcher)

    def to_dict(self) -> dict[str, Any]:
        return {
            "drained": list(self.drained),
            "records": [{"zone": r.zone, "name": r.name, "type": r.rdtype, "views": list(r.views),
                         "removed": list(r.removed), "added": list(r.added)} for r in self.records],
            "dispatcher": [{"file": d.file, "set": d.setid, "source": d.source, "removed": list(d.removed),
                            "added": list(d.added)} for d in self.dispatcher],
            "reload": [{"element": r.element, "address": r.address, "command": r.command,
                        "expected": r.expected, "placeholder": r.placeholder} for r in self.reloads],
            "layout_changed": self.layout_changed,
        }


def _rr_lines(rrset: Any) -> tuple[str, ...]:
    if rrset is None:
        return ()
    return tuple(f"{rrset.name}. {rrset.ttl} IN {rrset.rdtype} {rd.to_text()}" for rd in rrset.rdatas)


def record_changes(normal: DnsPlan, drained: DnsPlan) -> list[RecordChange]:
    """Every rrset of the home zones that a view answers differently, identical changes grouped."""
    normal.materialise_all()
    drained.materialise_all()
    grouped: dict[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for view in normal.views:
        other = drained.view(view.name)
        for zone_name, zone in normal.zones_of(view.side).items():
            if zone.kind not in ("home", "access"):
                continue  # ENUM zones hold no element
            before = normal.zone_for_view(view, zone_name).rrsets
            after = drained.zone_for_view(other, zone_name).rrsets
            for key in sorted(set(before) | set(after)):
                if key[1] == "SOA":
                    continue  # the serial is set when the files are written
                old, new = _rr_lines(before.get(key)), _rr_lines(after.get(key))
                if old != new:
                    removed = tuple(line for line in old if line not in new)
                    added = tuple(line for line in new if line not in old)
                    grouped.setdefault((zone_name, key[0], key[1], removed, added), []).append(view.name)
    return [RecordChange(z, n, t, tuple(views), rem, add)
            for (z, n, t, rem, add), views in sorted(grouped.items(), key=lambda kv: kv[0][:3])]


def _set_lines(sets: list[DispatcherSet]) -> dict[int, tuple[str, list[str]]]:
    return {s.setid: (s.source, [d.line(s.setid) for d in s.destinations]) for s in sets}


def dispatcher_changes(topo: Topology, drained: frozenset[str]) -> list[DispatcherChange]:
    out = []
    for path, make in ((SBC_PCSCF_LIST, sbc_pcscf_sets), (PCSCF_ICSCF_LIST, pcscf_icscf_sets)):
        before, after = _set_lines(make(topo)), _set_lines(make(topo, drained))
        for setid in sorted(set(before) | set(after)):
            source, old = before.get(setid, after.get(setid, ("", [])))
            new = after.get(setid, (source, []))[1]
            if old != new:
                out.append(DispatcherChange(path, setid, source, tuple(x for x in old if x not in new),
                                            tuple(x for x in new if x not in old)))
    return out


def dns_server_elements(topo: Topology) -> list[Element]:
    ids = list(topo.network.dns.nameservers) or sorted(e.id for e in topo.by_type.get("enum_dns", []))
    return [topo.elements[i] for i in ids if i in topo.elements]


def reloading_servers(topo: Topology) -> list[Element]:
    """The servers that load zone files: every primary (secondaries follow by NOTIFY and transfer,
    as the serials move forward)."""
    from imsdr.dns.views import server_layout

    return [topo.elements[s.id] for s in server_layout(topo).primaries]


def first_address(el: Element) -> str:
    v4 = [a for a in el.addresses if ":" not in a]
    return (v4 or list(el.addresses))[0]


def reloads(topo: Topology, normal: DnsPlan, drained: DnsPlan, records: list[RecordChange],
            dispatcher: list[DispatcherChange]) -> tuple[list[Reload], bool]:
    """The commands that load the drained files: per DNS server, per changed zone of a view (the
    view that defines the zone file; views sharing it with ``in-view`` follow), and per Kamailio
    whose dispatcher set changed. Layout changes (a view's zone file appears or disappears) need
    ``rndc reconfig`` and a full ``rndc reload``. ``rndc reconfig`` always comes first: the render
    replaces the directory, and named reads relative zone file names from the directory it changed
    to when it last read its configuration."""
    layout_changed = zone_files(normal) != zone_files(drained)
    zone_views: list[tuple[str, str]] = []
    if records:
        defining: dict[str, str] = {}
        for view in drained.views:
            for zone in drained.zones_of(view.side):
                defining.setdefault(zone_file_path(view, zone, drained).path, view.name)
        for change in records:
            for view_name in change.views:
                path = zone_file_path(drained.view(view_name), change.zone, drained).path
                pair = (change.zone, defining[path])
                if pair not in zone_views:
                    zone_views.append(pair)
    out: list[Reload] = []
    if records:
        for server in reloading_servers(topo):
            plat = platform_of(topo, server)
            addr = first_address(server)
            if layout_changed:
                out.append(Reload(server.id, addr, f"{plat.control} reconfig", RNDC_RECONFIG_OK, plat.placeholder))
                out.append(Reload(server.id, addr, f"{plat.control} reload", "server reload successful",
                                  plat.placeholder))
                continue
            # the render replaced the directory: reconfig makes named read named.conf again and
            # change to the new directory (no zone is reloaded), so the reloads read the new files
            out.append(Reload(server.id, addr, f"{plat.control} reconfig", RNDC_RECONFIG_OK, plat.placeholder))
            for zone, view in sorted(zone_views):
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
    drained_ids = resolve_drain(topo, ids)
    normal = normal or build_dns_plan(topo)
    drained = drained or build_dns_plan(topo, excluded=drained_ids)
    records = record_changes(normal, drained)
    dispatcher = dispatcher_changes(topo, frozenset(drained_ids))
    commands, layout = reloads(topo, normal, drained, records, dispatcher)
    return DrainChanges(drained_ids, records, dispatcher, commands, layout)


def render_drain_note(changes: DrainChanges, inventory: str) -> str:
    """DRAIN.md: what differs from the normal state and the commands that load this directory."""
    lines = [
        f"# Drained state: {', '.join(changes.drained)}",
        "",
        f"{DRAINED_MARKER} {' '.join(changes.drained)} -->",
        "",
        f"Rendered by `imsdr render dns --drain` from inventory `{inventory}`: the zones, views and",
        "dispatcher lists of this directory leave the elements above out of every answer. Do not edit",
        "by hand; render the normal state again (without `--drain`) to fail back.",
        "",
        "## Record changes against the normal state",
        "",
    ]
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
    lines += ["## Load it", ""]
    if not changes.reloads:
        lines += ["Nothing to reload.", ""]
    by_element: dict[str, list[Reload]] = {}
    for r in changes.reloads:
        by_element.setdefault(r.element, []).append(r)
    for element, commands in by_element.items():
        note = " (placeholder: replace with the vendor's command)" if commands[0].placeholder else ""
        lines += [f"On {element} ({commands[0].address}){note}:", "", "```sh"]
        lines += [r.command for r in commands] + ["```", ""]
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
