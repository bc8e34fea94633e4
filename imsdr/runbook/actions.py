"""The "Actions" of the runbook pages: declare, notify, drain, fail back — with exact commands.

Everything here is plain data for the templates, computed from the same model as the rest of
imsdr: the drained state and its reload commands come from :mod:`imsdr.dns.drain` (what
``imsdr render dns --drain`` writes), the expected ``dig`` answers from the DNS plans, the
detection times from the timers the simulation uses. A step is a dict:

``title``, ``owner``, ``host`` (where to run it), ``commands`` (shell lines, run in order),
``expect`` (``exact``: the output is these lines, whitespace and line order aside;
``includes``: these lines appear; ``empty``: no output; ``same``: every command prints the same;
``manual``: the vendor's placeholder, check by eye), ``expected`` (lines), ``go``, ``nogo``,
``rollback`` and ``wait_s`` (seconds to wait before checking, or 0).

One piece past 600 lines on purpose: every procedure (drain, promotion, drain period, failback,
the secondary-first return) is built by one :class:`ActionBuilder` from one drained state and one
index of the dispatcher sets; split, each part would take that state back as arguments and the
steps of one procedure would be assembled in several places.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from imsdr.dns.dispatcher import dispatcher_list_path, dispatcher_sets, sip_uri
from imsdr.dns.drain import (
    DrainChanges,
    dig_port,
    dns_server_elements,
    drained_state,
    first_address,
    platform_of,
    reload_script_path,
    script_ok_line,
)
from imsdr.dns.plan import build_dns_plan
from imsdr.dns.views import area_holds, server_areas
from imsdr.runbook import alerts
from imsdr.runbook.context import sample_source
from imsdr.runbook.steps import step as typed_step

if TYPE_CHECKING:
    from imsdr.capacity.timing import AccessTypes
    from imsdr.dns.plan import DnsPlan
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

# Above this many elements the pages give the drain procedure with the commands `render dns
# --drain` prints instead of computing every element's drained state (one DNS plan per element).
DETAILED_DRAIN_LIMIT = 200
DEFAULT_OWNER = "on-call engineer"
DIAMETER_SERVERS = ("hss", "slf", "dra")  # failures seen as a Diameter peer not OPEN on the clients


def owner_for(topo: Topology, service: str) -> dict[str, Any]:
    """Who runs the steps for ``service`` (an element type, or '' for a site): the first contact
    named for that service, else the first one called for everything."""
    contacts = topo.inventory.contacts
    specific = [c for c in contacts if service and service in {s.value for s in c.services}]
    general = [c for c in contacts if not c.services]
    for contact in (*specific, *general)[:1]:
        return {"role": contact.role, "name": contact.name, "phone": contact.phone}
    return {"role": DEFAULT_OWNER, "name": "", "phone": ""}


def notify_list(topo: Topology, service: str | None) -> list[dict[str, Any]]:
    """Who to call for ``service`` (None: everyone, e.g. a site loss), with their escalation."""
    roles = {c.role: c for c in topo.inventory.contacts}
    out = []
    for c in topo.inventory.contacts:
        if service is not None and c.services and service not in {s.value for s in c.services}:
            continue
        target = roles.get(c.escalate_to) if c.escalate_to else None
        out.append({"role": c.role, "name": c.name, "phone": c.phone,
                    "escalate_to": c.escalate_to, "escalate_after": c.escalate_after,
                    "escalate_name": target.name if target else None,
                    "escalate_phone": target.phone if target else None})
    return out


def recovery_target(topo: Topology, service: str) -> dict[str, Any] | None:
    for key, target in topo.inventory.recovery_targets.items():
        if key.value == service:
            return {"rto": target.rto, "rpo": target.rpo}
    return None


def _step(title: str, owner: Mapping[str, Any], host: str, commands: Sequence[str], expect: str,
          expected: Sequence[str] = (), go: str = "", nogo: str = "", rollback: str = "",
          wait_s: int = 0, **rest: Any) -> dict[str, Any]:
    """One step of the typed model (:class:`imsdr.runbook.steps.Step`), as the templates read it."""
    return typed_step(title, owner, host, commands, expect, expected, go=go, nogo=nogo, rollback=rollback,
                      wait_s=wait_s, **rest)


VERIFY_DRAIN_OK = "no drift: every server answers the drained state"
VERIFY_FAILBACK_OK = "no drift: every server answers the normal state"
PRIMARY_STATUS = "type: primary"  # rndc zonestatus, BIND 9.18
SECONDARY_STATUS = "type: secondary"
REGISTERED_OK = "usrloc:registered_users = 0"  # kamcmd stats.get_statistics registered_users, Kamailio 5.6


def flags_command(control: str, uri: str) -> str:
    """The dispatcher state of one destination on a Kamailio: prints ``FLAGS: AP`` (active, probed)
    or ``FLAGS: IP`` (inactive: OPTIONS unanswered) once per distinct state."""
    return f"{control} dispatcher.list | grep -F -A1 'URI: {uri}' | grep -o 'FLAGS: [A-Z]*' | sort -u"


def count_command(control: str, uri: str) -> str:
    return f"{control} dispatcher.list | grep -F 'URI: {uri}' | wc -l"


APPLY_PLAN_DIR = "plan"
APPLY_FLAGS = "--targets targets.yaml --state apply-state"


def apply_commands(inventory: str, ids: Sequence[str]) -> dict[str, str]:
    """The ``imsdr apply`` commands that do the page's drain and failback (docs/apply.md): the same
    drained state, delivered canary first, each server verified, all rolled back on a failure, then
    the page's drain period."""
    drains = " ".join(f"--drain {i}" for i in ids)
    return {"apply": f"imsdr apply {APPLY_PLAN_DIR} {drains} --inventory {inventory} {APPLY_FLAGS}",
            "apply_back": f"imsdr apply {APPLY_PLAN_DIR} --failback --inventory {inventory} {APPLY_FLAGS}"}


def _dig_lines(plan: DnsPlan, check: Mapping[str, Any]) -> list[str]:
    rrset = plan.lookup_rrset(check["view"], check["qname"], check["rdtype"])
    if rrset is None:
        return []
    return [f"{rrset.name}. {rrset.ttl} IN {rrset.rdtype} {rd.to_text()}" for rd in rrset.rdatas]


class ActionBuilder:
    """Builds the Actions data of every type page and site page from one model."""

    def __init__(self, topo: Topology, normal: DnsPlan, checks: Mapping[str, list[dict[str, Any]]],
                 inventory: str, failures: Mapping[str, Mapping[str, Any]]) -> None:
        self.topo = topo
        self.normal = normal
        self.checks = checks
        # the file name goes into shell commands and code spans: written only when it is plainly safe
        plain = inventory and re.fullmatch(r"[A-Za-z0-9_.+-]+", inventory) and not inventory.startswith("-")
        self.inventory = inventory if plain else "INVENTORY.yaml"
        self.failures = failures
        self._open_peers: set[tuple[str, str]] | None = None
        self.detailed = len(topo.elements) <= DETAILED_DRAIN_LIMIT
        self.servers = dns_server_elements(topo)
        self.areas = server_areas(topo)  # server id -> its service area: the views it holds
        self._cx_clients: tuple[Element, ...] | None = None
        self._access: AccessTypes | None = None  # the access types of each SBC's and P-CSCF's users
        self._scscfs: tuple[Element, ...] | None = None  # the candidate observers of an AS or MGCF
        self._at_site: dict[int, tuple[Sequence[Element], dict[str, tuple[Element, ...]]]] = {}
        self._listed_in: dict[str, list[tuple[str, int, Element]]] = {}  # destination -> its sets
        self._uris: dict[tuple[str, str], str] = {}  # (source, destination) -> the URI in its list
        for ds in dispatcher_sets(topo):
            for d in ds.destinations:
                self._listed_in.setdefault(d.element, []).append(
                    (dispatcher_list_path(ds.source), ds.setid, topo.elements[ds.source]))
                self._uris[(ds.source, d.element)] = d.uri

    # --- shared pieces ---------------------------------------------------------------------------

    def _holding(self, servers: Sequence[Element], view_area: str) -> list[Element]:
        """The servers of ``servers`` whose configuration has the views of ``view_area``."""
        return [s for s in servers if area_holds(self.areas.get(s.id, ""), view_area)]

    def render_dir(self) -> str:
        """The directory the servers load the rendered files from (the DNS servers' platform)."""
        for server in self.servers:
            return platform_of(self.topo, server).directory
        return "/etc/imsdr/dns"

    def uri_in(self, source: Element, el: Element) -> str:
        """The URI ``source``'s dispatcher list gives ``el`` (the hop's transport)."""
        return self._uris.get((source.id, el.id)) or sip_uri(el)

    def sources_of(self, el: Element) -> list[tuple[str, int, Element]]:
        """(list file, set id, source element) of every dispatcher set that lists ``el``."""
        return list(self._listed_in.get(el.id, []))

    def detection(self, el: Element) -> dict[str, Any]:
        """How ``el``'s failure is seen, by whom, and how long it takes (the simulation's timers)."""
        t = el.type.value
        failure = self.failures.get(el.id) or {}
        seconds = failure.get("detection_s")
        if t in DIAMETER_SERVERS:
            how = ("Diameter peer state not OPEN on the I-CSCF/S-CSCF/AS (watchdog 2 × Tw, or BFD/SCTP "
                   "heartbeat when configured and faster)")
        elif t == "enum_dns":
            how = "queries to it time out; resolvers use the other set"
        else:
            how = "SIP OPTIONS unanswered: probe interval × failure threshold + one timeout"
        return {"seconds": seconds, "how": how}

    def declare_checks(self, el: Element) -> list[dict[str, Any]]:
        """Commands that show ``el`` failed, run where the failure is seen; exact where imsdr knows
        the platform (Kamailio, BIND), a marked placeholder for vendor CLIs."""
        t = el.type.value
        out = []
        if t in ("pcscf", "cscf"):
            for path, setid, source in self.sources_of(el):
                plat = platform_of(self.topo, source)
                if plat.kind != "kamailio":
                    continue
                uri = self.uri_in(source, el)
                out.append({"host": f"{source.id} ({first_address(source)})", "placeholder": False,
                            "command": flags_command(plat.control, uri), "failed": ["FLAGS: IP"],
                            "normal": ["FLAGS: AP"],
                            "what": f"dispatcher state of {el.id} in {path} set {setid}",
                            "alert": alerts.labelled(alerts.DISPATCHER_DOWN, source=source.id, element=el.id)})
                break
        if t == "enum_dns":
            plat = platform_of(self.topo, el)
            zone = self.topo.network.primary_domain
            timeout = int(self.topo.network.timers.options_timeout if el.timers.options_timeout is None
                          else el.timers.options_timeout)
            out.append({"host": "any host in a core subnet", "placeholder": False,
                        "command": f"{plat.dig} @{first_address(el)} {zone} SOA +short +time={timeout} +tries=1",
                        "failed": [";; connection timed out; no servers could be reached"],
                        "normal": [f"the SOA record of {zone}"], "what": f"{el.id} answers DNS",
                        "alert": alerts.labelled(alerts.DNS_SERVER_DOWN, server=el.id)})
        if not out:
            out += self._observer_checks(el)
        return out

    def _diameter_alert(self, client: Element, server: Element) -> str | None:
        """The alert that fires when ``client`` loses ``server``, if the plan expects it open."""
        if self._open_peers is None:
            self._open_peers = {(c.id, p.id) for c, p in alerts.expected_open_peers(self.topo)}
        if (client.id, server.id) not in self._open_peers:
            return None
        return alerts.labelled(alerts.DIAMETER_PEER_NOT_OPEN, client=client.id, peer=server.id)

    def observers(self, el: Element) -> list[Element]:
        """Who sees ``el`` fail when its site is gone (a dead element cannot be logged into): an
        SBC's P-CSCFs, an HSS/SLF's Diameter clients (the CSCFs), an AS's and an MGCF's S-CSCFs
        and BGCF/CSCFs. Two at different sites where there are, so a declaration does not rest on
        one observer's view."""
        topo, t = self.topo, el.type.value
        candidates: Sequence[Element]
        if t == "sbc":
            candidates = [topo.elements[p] for p in el.pcscfs if p in topo.elements] or \
                topo.by_type.get("pcscf", [])
        elif t in DIAMETER_SERVERS:
            candidates = self._diameter_clients()
        elif t in ("as", "mgcf"):
            if self._scscfs is None:
                self._scscfs = tuple(topo.with_role("scscf") or topo.by_type.get("cscf", []))
            candidates = self._scscfs
        else:
            return []
        # the first candidate at another site, then the first at its own; else the first two
        other = next((c for c in candidates if c.site != el.site and c.id != el.id), None)
        if other is None:
            return list(islice((c for c in candidates if c.id != el.id), 2))
        same = next((c for c in self._first_at_site(candidates).get(el.site, ()) if c.id != el.id), None)
        return [other] if same is None else [other, same]

    def _first_at_site(self, candidates: Sequence[Element]) -> dict[str, tuple[Element, ...]]:
        """site -> the first two of ``candidates`` there (one may be the failed element itself),
        once per list: the same thousands of CSCFs are the candidates of every HSS, AS and MGCF."""
        known = self._at_site.get(id(candidates))
        if known is not None and known[0] is candidates:
            return known[1]
        first: dict[str, tuple[Element, ...]] = {}
        for c in candidates:
            at = first.get(c.site, ())
            if len(at) < 2:
                first[c.site] = (*at, c)
        self._at_site[id(candidates)] = (candidates, first)
        return first

    def _diameter_clients(self) -> tuple[Element, ...]:
        """The I-/S-CSCFs (an HSS's or SLF's Diameter clients), once per builder."""
        if self._cx_clients is None:
            self._cx_clients = tuple(e for e in self.topo.by_type.get("cscf", [])
                                     if any(r.value in ("icscf", "scscf") for r in e.roles))
        return self._cx_clients

    def _observer_checks(self, el: Element) -> list[dict[str, Any]]:
        out = []
        t = el.type.value
        address = first_address(el)
        for peer in self.observers(el):
            plat = platform_of(self.topo, peer)
            host = f"{peer.id} ({first_address(peer)}), a peer of {el.id}"
            if t in DIAMETER_SERVERS:
                if plat.kind == "kamailio":
                    command = (f"{plat.control} cdp.list_peers | grep -A3 -F '{self.topo.fqdn(el)}' "
                               "| grep -o '[IR]_Open' | sort -u")
                    out.append({"host": host, "placeholder": False, "command": command, "failed": ["(no output)"],
                                "normal": ["I_Open or R_Open"],
                                "what": f"the Diameter peer state of {el.id} on {peer.id}",
                                "alert": self._diameter_alert(peer, el)})
                    continue
                command = f"{plat.control} show diameter peer {el.id}"
                failed, normal = ["(vendor output: peer CLOSED / not OPEN)"], ["(vendor output: peer OPEN)"]
            elif t == "sbc" and plat.kind == "kamailio":  # Kamailio keeps no state of an upstream SBC
                port = el.port
                command = f"sipsak -s sip:{address}:{port}"
                failed, normal = ["(no reply: sipsak reports a timeout)"], ["(a 200 reply)"]
            elif t == "sbc":
                command = f"{plat.control} show sip peer {address}"
                failed, normal = ["(vendor output: no request from it, OPTIONS to it unanswered)"], \
                    ["(vendor output: peer reachable)"]
            else:
                command = f"{plat.control} show sip peer {address}"
                failed, normal = ["(vendor output: requests to it time out (408) or are refused)"], \
                    ["(vendor output: peer reachable)"]
            out.append({"host": host, "placeholder": True, "command": command, "failed": failed, "normal": normal,
                        "what": f"{el.id} as {peer.id} sees it",
                        "alert": self._diameter_alert(peer, el) if t in ("hss", "slf") else None})
        if not out:  # nobody imsdr knows observes it: its own alarms, if it can still be reached
            plat = platform_of(self.topo, el)
            out.append({"host": f"{el.id} ({address})", "placeholder": plat.placeholder,
                        "command": f"{plat.control} {'core.uptime' if plat.kind == 'kamailio' else 'show alarms'}",
                        "failed": ["an error or no answer (element down)"],
                        "normal": ["(its uptime / no critical alarm)"], "what": f"{el.id}'s own state"})
        return out

    # --- drain and failback of one element (or a site) ------------------------------------------

    def procedure(self, ids: Sequence[str], label: str, service: str, skip_site: str | None = None,
                  subject: Element | None = None) -> dict[str, Any]:
        """Drain and failback steps for ``ids`` (elements, or every element of a site)."""
        topo = self.topo
        directory = self.render_dir()
        owner_dns = owner_for(topo, "enum_dns")
        owner = owner_for(topo, service)
        drain_cmd = f"imsdr render dns {self.inventory} --out {directory} --drain {' --drain '.join(ids)}"
        back_cmd = f"imsdr render dns {self.inventory} --out {directory}"
        if not self.detailed:
            return {**apply_commands(self.inventory, ids),
                    "detailed": False, "vendor": False, "render": drain_cmd, "failback_render": back_cmd, "steps": [],
                    "failback_steps": [], "ttl_s": max(topo.network.ttl.srv, topo.network.ttl.a)}
        drained_plan = build_dns_plan(topo, excluded=tuple(sorted(self._expand(ids))))
        state = drained_state(topo, ids, normal=self.normal, drained=drained_plan)
        changes = state.changes
        if changes.empty and subject is not None:
            return self._vendor_procedure(subject, owner)
        reloads = [r for r in changes.live_reloads()
                   if skip_site is None or topo.elements[r.element].site != skip_site]
        printed = [f"{r.element}: {r.command}" for r in changes.live_reloads()]
        steps: list[dict[str, Any]] = []
        if changes.empty:
            printed = []
        steps.append(_step(
            f"Render the drained state of {label}", owner_dns, "the host holding the inventory "
            f"(writes {directory}, which the servers load)", [drain_cmd], "includes" if printed else "empty",
            printed,
            go="exit status 0 and the reload commands printed are the ones below",
            nogo="exit status 2: nothing was written; read the error, fix the inventory, do not edit the files",
            rollback=f"`{back_cmd}` renders the normal state again"))
        dns_reloads = [r for r in reloads if r.element in {s.id for s in self.servers}]
        kam_reloads = [r for r in reloads if r.element not in {s.id for s in self.servers}]
        promotion = self.promotion(changes)
        for ident in changes.promoted:  # the first load: the survivor becomes the primary
            steps += self._promote_steps(ident, [r for r in dns_reloads if r.element == ident], directory,
                                         owner_dns, back_cmd, promotion)
        for server in self.servers:
            mine = [r for r in dns_reloads if r.element == server.id]
            if not mine or server.id in changes.promoted:
                continue
            steps.append(self._load_step(f"Load the changed zones on {server.id}", server, mine, directory,
                                         owner_dns, f"`{back_cmd}`, then the same command"))
        for r in kam_reloads:
            el = topo.elements[r.element]
            steps.append(_step(
                f"Load the new dispatcher list on {el.id}", owner, f"{el.id} ({r.address})", [r.command],
                "manual" if r.placeholder else "exact", [r.expected],
                go="the line shown", nogo="`error: 500 - Ongoing reload`: the last reload was less than 5 s "
                "ago (Kamailio's reload_delta), run it again after 5 s; any other error: the old list stays "
                "loaded, escalate",
                rollback=f"`{back_cmd}`, then the same command"))
        steps += self._verify_steps(ids, drained_plan, changes, owner, owner_dns, skip_site, drained=True)
        ttl = self._ttl(changes)
        if subject is not None and subject.type.value in ("pcscf", "sbc"):
            steps += self._pco_steps(subject, owner)
            steps.append(self._drain_period_step(subject, owner, ttl, back_cmd))
        failback = self._failback(ids, label, service, changes, drained_plan, back_cmd, drain_cmd, skip_site,
                                  subject)
        return {**apply_commands(self.inventory, ids),
                "detailed": True, "vendor": False, "render": drain_cmd, "failback_render": back_cmd, "steps": steps,
                "promotion": promotion, "changes": changes.to_dict(), "record_changes": len(changes.records),
                "dispatcher_changes": len(changes.dispatcher), "ttl_s": ttl, **failback}

    def promotion(self, changes: DrainChanges) -> dict[str, Any] | None:
        """When the drain contains every master-slave (or backend-db) primary: who is promoted, who
        comes back as a secondary, and when to decide (the provisioning window, not the SOA
        expire: the secondaries keep answering until the expire, what stops at once is
        provisioning, which only a primary takes)."""
        if not changes.promoted:
            return None
        from imsdr.dns.records import SOA

        design = self.topo.inventory.redundancy.enum_dns
        return {"promoted": list(changes.promoted), "demoted": list(changes.demoted),
                "window_s": design.provisioning_window, "expire_s": SOA("", "", 0).expire,
                "sync": design.sync}

    def _zone_view(self) -> tuple[str, str]:
        """A zone every server holds as primary or secondary, and a view that serves it: the home
        domain in the first site (core) view."""
        view = next((v for v in self.normal.views if v.kind == "site"), self.normal.views[0])
        return self.topo.network.primary_domain, view.name

    def _promote_steps(self, ident: str, mine: list[Any], directory: str, owner_dns: Mapping[str, Any],
                       back_cmd: str, promotion: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        """Promote ``ident``: its reload script reads its new named.conf (every zone ``type primary``)
        and loads the rendered files; then its zone status says it is the primary."""
        server = self.topo.elements[ident]
        plat = platform_of(self.topo, server)
        window = promotion["window_s"] if promotion else 0
        demoted = ", ".join(promotion["demoted"]) if promotion else ""
        notes = (f"Decide at the provisioning window ({window} s, `redundancy.enum_dns.provisioning_window`): "
                 f"promote when {demoted} is not back within it. Until then the secondaries keep answering "
                 f"(for the SOA expire, {(promotion['expire_s'] if promotion else 0) // 86400} days), but no "
                 "provisioning "
                 "change reaches any server",
                 f"The serials continue upward: the render reads the directory {demoted} loaded, so every "
                 f"zone {ident} transferred keeps its serial and every changed zone gets a higher one")
        steps = [self._load_step(f"Promote {ident} to primary (every primary is drained)", server, mine, directory,
                                 owner_dns, f"`{back_cmd}`, then the same command (it is a secondary again)",
                                 notes=notes)]
        if mine and not mine[0].placeholder:
            zone, view = self._zone_view()
            steps.append(_step(
                f"Check {ident} holds the zones as primary", owner_dns, f"{ident} ({first_address(server)})",
                [f"{plat.control} zonestatus {zone} in {view}"], "includes", [PRIMARY_STATUS],
                go=f"`{PRIMARY_STATUS}`: {ident} loads the zone files itself and takes provisioning",
                nogo="`type: secondary`: the old named.conf is still loaded; run the promote step again",
                rollback="none needed"))
        return steps

    def _vendor_procedure(self, el: Element, owner: Mapping[str, Any]) -> dict[str, Any]:
        """An element no DNS answer or dispatcher list of imsdr names (HSS, SLF, IM-MGW, ...): it is
        taken out of service on the element itself, with its vendor's commands (marked placeholders
        unless the platform says otherwise)."""
        topo = self.topo
        plat = platform_of(topo, el)
        host = f"{el.id} ({first_address(el)})"
        steps: list[dict[str, Any]] = []
        back: list[dict[str, Any]] = []
        reactivate: list[dict[str, Any]] = []  # after it is back in service and resynchronised
        for group in topo.groups_of.get(el.id, []):
            mates = [topo.elements[m] for m in group.members if m != el.id and m in topo.elements]
            if getattr(group.spec, "mode", None) == "active-standby" and mates:
                mate = mates[0]
                mplat = platform_of(topo, mate)
                steps.append(_step(
                    f"Make {mate.id} the active member of {group.id}", owner, f"{mate.id} ({first_address(mate)})",
                    [f"{mplat.control} set ha-role active", f"{mplat.control} show ha-role"], "manual",
                    go=f"{mate.id} reports active and serves reads and writes",
                    nogo=f"{mate.id} stays standby: stop, keep {el.id} in service, escalate",
                    rollback=f"`{mplat.control} set ha-role standby` on {mate.id}"))
                if group.members and group.members[0] == el.id:  # el held the active role: give it back
                    reactivate.append(_step(
                        f"Make {el.id} the active member of {group.id} again", owner, host,
                        [f"{plat.control} set ha-role active", f"{plat.control} show ha-role",
                         f"{mplat.control} show ha-role"], "manual",
                        go=f"{el.id} reports active and {mate.id} standby: one active member, the "
                           "configured one",
                        nogo=f"both report active (split brain): set {el.id} standby at once and escalate; "
                             f"{el.id} stays standby: leave {mate.id} active, escalate",
                        rollback=f"`{plat.control} set ha-role standby` on {el.id}"))
        if el.type.value in DIAMETER_SERVERS:
            steps.append(_step(
                f"Move the Diameter routes of {el.id}'s clients to its mate", owner,
                "each Diameter client (I-CSCF, S-CSCF, AS) of the element",
                [f"{plat.control} show diameter routes"], "manual",
                go="the clients' routes for the realm point at the mate (the Diameter page's reload step "
                   "loads the peer configuration imsdr renders for them)",
                nogo="a client still routes to it: reload that client's Diameter configuration, escalate",
                rollback=f"the same reload with {el.id} as the route"))
        steps.append(_step(
            f"Take {el.id} out of service", owner, host,
            [f"{plat.control} set out-of-service", f"{plat.control} show diameter peers"], "manual",
            go="its clients' peers to it are closed and the traffic is on its mates (their peers OPEN)",
            nogo="clients still send to it: put it back in service and escalate",
            rollback=f"`{plat.control} set in-service`"))
        back.append(_step(
            f"Put {el.id} back in service", owner, host,
            [f"{plat.control} set in-service", f"{plat.control} show diameter peers"], "manual",
            go="its clients' peers to it are OPEN again", nogo="peers stay closed: take it out again, escalate",
            rollback=f"`{plat.control} set out-of-service`"))
        back += reactivate
        return {"detailed": True, "vendor": True, "render": "", "failback_render": "", "steps": steps,
                "changes": None, "record_changes": 0, "dispatcher_changes": 0, "ttl_s": 0,
                "checklist": self._data_checklist({el.id}), "failback_steps": back, "failback_wait_s": 0,
                "canary": False}

    def _data_checklist(self, gone: set[str]) -> list[dict[str, Any]]:
        topo = self.topo
        checklist = []
        for el_id in sorted(gone):
            el = topo.elements[el_id]
            for group in topo.groups_of.get(el_id, []):
                if group.spec.sync != "none" and el.type.value in ("hss", "slf", "enum_dns", "as"):
                    plat = platform_of(topo, el)
                    checklist.append({"what": f"data of {el_id} resynchronised with {group.id}",
                                      "command": f"{plat.control} show replication status",
                                      "host": f"{el_id} ({first_address(el)})", "placeholder": plat.placeholder,
                                      "expected": "(vendor output: in sync, no backlog)"})
                    break
        return checklist

    def _expand(self, ids: Sequence[str]) -> set[str]:
        out: set[str] = set()
        for ident in ids:
            if ident in self.topo.sites:
                out |= {e.id for e in self.topo.by_site.get(ident, [])}
            else:
                out.add(ident)
        return out

    def _ttl(self, changes: DrainChanges) -> int:
        """How long SIP clients may keep the old answers: the TTL of the changed records they use
        (NS changes matter to resolvers, which already try the other name servers on a timeout)."""
        ttls = [int(line.split()[1]) for c in changes.records if c.rdtype != "NS"
                for line in (*c.removed, *c.added)]
        return max(ttls, default=0)

    def _verify_steps(self, ids: Sequence[str], plan: DnsPlan, changes: DrainChanges, owner: Mapping[str, Any],
                      owner_dns: Mapping[str, Any], skip_site: str | None, drained: bool) -> list[dict[str, Any]]:
        """Kamailio no longer (or again) lists the elements; DNS answers as the plan says."""
        topo, steps = self.topo, []
        gone = self._expand(ids)
        for source in sorted({d["source"] for d in changes.to_dict()["dispatcher"]}):
            el = topo.elements[source]
            plat = platform_of(topo, el)
            if plat.kind != "kamailio" or (skip_site and el.site == skip_site) or source in gone:
                continue
            uris = sorted({self.uri_in(el, topo.elements[e]) for e in gone
                           if any(src.id == source for _p, _s, src in self._listed_in.get(e, []))})
            for uri in uris:
                if drained:
                    steps.append(_step(
                        f"Check {el.id} no longer lists `{uri}`", owner, f"{el.id} ({first_address(el)})",
                        [count_command(plat.control, uri)], "exact", ["0"],
                        go="0: no set sends to it", nogo="a number above 0: the old list is loaded; reload again",
                        rollback="none needed"))
        servers = [s for s in self.servers if s.id not in gone and not (skip_site and s.site == skip_site)]
        if changes.records and servers:
            steps.append(self._verify_drain_step(ids, owner_dns, failback=False))
        keys = {(c.name, c.rdtype) for c in changes.records}
        seen = set()
        for checks in self.checks.values():
            for check in checks:
                if (check["qname"], check["rdtype"]) not in keys or check["command"] in seen:
                    continue
                seen.add(check["command"])
                lines = _dig_lines(plan, check)
                held = self._holding(servers, check["view_area"])
                if not held or len(seen) > 1:
                    continue  # verify --drain checks every answer; one a human sees is enough
                server = held[0]
                command = check["command"].replace(f"{check['dig']} @{check['server']} ",
                                                   f"{platform_of(topo, server).dig} @{first_address(server)} ", 1)
                steps.append(_step(
                    f"Check the answer of `{check['qname']}` {check['rdtype']} in view {check['view']}", owner_dns,
                    f"a host in the view's source range (`-b` sets the source address), asking {server.id}", [command],
                    "exact" if lines else "empty", lines,
                    go="the answer shown (order aside)",
                    nogo="the old answer: the zone was not reloaded; repeat the reload step",
                    rollback="none needed"))
        return steps

    def _failback(self, ids: Sequence[str], label: str, service: str, changes: DrainChanges, drained: DnsPlan,
                  back_cmd: str, drain_cmd: str, skip_site: str | None, subject: Element | None) -> dict[str, Any]:
        topo = self.topo
        owner, owner_dns = owner_for(topo, service), owner_for(topo, "enum_dns")
        gone = self._expand(ids)
        checklist = self._data_checklist(gone)
        # asked from the first core view of the subject's service area (its province), of the servers holding it
        site_views = [v for v in self.normal.views if v.kind == "site"]
        own = next((v for v in site_views if subject is not None and v.subject == subject.site), None)
        core = next((v for v in site_views if own is None or v.area == own.area), None)
        source = (sample_source(list(core.match_clients), 4) or sample_source(list(core.match_clients), 6)
                  if core is not None else None)
        from_core = f" -b {source}" if source else ""
        asked = self._holding(self.servers, core.area) if core is not None else self.servers
        checklist.append({"what": "DNS serials equal across servers (every server loaded the same files)",
                          "command": " ; ".join(f"{platform_of(topo, s).dig} @{first_address(s)}{from_core} "
                                                f"{topo.network.primary_domain} SOA +short"
                                                for s in asked),
                          "host": f"a host in a core subnet{f' ({core.subject})' if core else ''}",
                          "placeholder": False,
                          "expected": "the same line from every server"})
        steps: list[dict[str, Any]] = []
        back = changes.returning()
        for ident in changes.demoted:  # back as a secondary of the promoted server first
            mine = [r for r in changes.rejoin_reloads if r.element == ident]
            if mine:
                steps.append(self._load_step(
                    f"Start {ident} as a secondary of {', '.join(changes.promoted)}", topo.elements[ident], mine,
                    self.render_dir(), owner_dns, f"stop named on {ident}",
                    notes=(f"First start named on {ident} with the drained directory: its `named/{ident}.conf` "
                           f"there makes it a secondary of {', '.join(changes.promoted)}; the script transfers "
                           "every zone afresh",)))
            steps.append(self._secondary_first_step(ids, ident, changes.promoted, owner_dns))
        printed = [f"{r.element}: {r.command}" for r in back.reloads]
        steps.append(_step(
            f"Render the normal state (fail back {label})", owner_dns, "the host holding the inventory",
            [back_cmd], "includes" if printed else "empty", printed,
            go="exit status 0; the reload commands printed are the ones of the drain",
            nogo="exit status 2: nothing was written; stay drained and escalate",
            rollback=f"`{drain_cmd}` renders the drained state again"))
        kam = [r for r in back.reloads if r.element not in {s.id for s in self.servers}
               and not (skip_site and topo.elements[r.element].site == skip_site)]
        returning = [e for e in sorted(gone) if topo.elements[e].type.value in ("pcscf", "cscf")]
        wait = max((self._detection_seconds(topo.elements[r.element]) for r in kam), default=0)
        for i, r in enumerate(kam):
            el = topo.elements[r.element]
            plat = platform_of(topo, el)
            commands = [r.command]
            steps.append(_step(
                f"{'Canary: ' if i == 0 else ''}load the normal dispatcher list on {el.id}"
                f"{' (one SBC at a time)' if len(kam) > 1 else ''}", owner, f"{el.id} ({r.address})", commands,
                "manual" if r.placeholder else "exact", [r.expected],
                go="the line shown", nogo="`error: 500 - Ongoing reload`: the last reload was less than 5 s "
                "ago (Kamailio's reload_delta), run it again after 5 s; any other error: the drained list stays "
                "loaded, escalate",
                rollback=f"`{drain_cmd}`, then the same command"))
            if plat.kind == "kamailio":
                for e in returning:
                    uri = self.uri_in(el, topo.elements[e])
                    steps.append(_step(
                        f"Check {e} answers {el.id}'s OPTIONS", owner, f"{el.id} ({r.address})",
                        [flags_command(plat.control, uri)], "exact", ["FLAGS: AP"],
                        go="FLAGS: AP: it answers OPTIONS and takes traffic again",
                        nogo=f"FLAGS: TP (trying: probes missed, fewer than the threshold): wait one more "
                             f"probe interval and check again; FLAGS: IP: {e} does not answer OPTIONS, no "
                             "traffic goes to it",
                        rollback=f"`{drain_cmd}`, then `{r.command}` on {el.id}",
                        wait_s=self._detection_seconds(el) + self._interval(el)))
        dns_ids = {s.id for s in self.servers} | set(changes.demoted)
        for ident in dict.fromkeys(r.element for r in back.reloads if r.element in dns_ids):
            # the drained servers are back: they load the normal files too (after a promotion the
            # old primary takes the role back first, then the promoted server steps down)
            server = topo.elements[ident]
            mine = [r for r in back.reloads if r.element == ident]
            title = (f"Return the primary role to {ident}" if ident in changes.demoted else
                     f"{ident} steps down to secondary" if ident in changes.promoted else
                     f"Load the normal zones on {ident}")
            steps.append(self._load_step(title, server, mine, self.render_dir(), owner_dns,
                                         f"`{drain_cmd}`, then the same command"))
        if changes.records and self.servers:
            steps.append(self._verify_drain_step(ids, owner_dns, failback=True))
        for check in self._normal_checks(changes)[:1]:  # one answer a human sees; verify checks the rest
            steps.append(check)
        if subject is not None and subject.type.value in ("pcscf", "sbc"):
            steps += self._pco_steps(subject, owner, back=True)
        canary = any(s["expected"] == ["FLAGS: AP"] for s in steps)
        return {"checklist": checklist, "failback_steps": steps, "failback_wait_s": wait, "canary": canary}

    def _secondary_first_step(self, ids: Sequence[str], ident: str, promoted: Sequence[str],
                              owner_dns: Mapping[str, Any]) -> dict[str, Any]:
        """The returning old primary starts on the drained directory, where it is a secondary of
        the promoted server: it transfers every zone at the promoted server's serials, so it never
        serves its own older copy as a primary next to the new one."""
        server = self.topo.elements[ident]
        plat = platform_of(self.topo, server)
        port = dig_port(plat.dig)
        target = first_address(server) + (f":{port}" if port != 53 else "")
        keys = next((platform_of(self.topo, s).keys for s in self.servers if platform_of(self.topo, s).keys), None)
        command = (f"imsdr verify {self.inventory} --drain {' --drain '.join(ids)} --server {target}"
                   + (f" --keys {keys}" if keys else ""))
        survivors = ", ".join(promoted)
        return _step(
            f"Check {ident} came back as a secondary of {survivors}", owner_dns,
            "the host holding the inventory",
            [command], "includes", [VERIFY_DRAIN_OK],
            go=f"exit status 0 and the line shown: {ident} transferred every zone from {survivors} and answers "
               "the drained state",
            nogo=f"exit status 1: the transfer has not completed (check `rndc zonestatus` on {ident}, the TSIG "
                 f"keys and that {survivors} allows the transfer); never start {ident} on the normal files "
                 "before this passes",
            rollback=f"stop named on {ident}",
            notes=(f"Do not render the normal state yet: {ident} must first serve the zones {survivors} served "
                   "while it was away (a secondary first), then it takes the primary role back",))

    def _normal_checks(self, changes: DrainChanges) -> list[dict[str, Any]]:
        keys = {(c.name, c.rdtype) for c in changes.records}
        owner_dns = owner_for(self.topo, "enum_dns")
        out, seen = [], set()
        for checks in self.checks.values():
            for check in checks:
                if (check["qname"], check["rdtype"]) not in keys or check["command"] in seen:
                    continue
                seen.add(check["command"])
                out.append(_step(
                    f"Check the normal answer of `{check['qname']}` {check['rdtype']} in view {check['view']}",
                    owner_dns, "a host in the view's source range", [check["command"]], "exact", check["expected"],
                    go="the normal answer (order aside)", nogo="the drained answer: reload the zones again",
                    rollback="none needed"))
        return out

    def _load_step(self, title: str, server: Element, mine: list[Any], directory: str,
                   owner: Mapping[str, Any], rollback: str, notes: Sequence[str] = ()) -> dict[str, Any]:
        """Run the server's reload script (its commands and the output each must print are in it)."""
        host = f"{server.id} ({first_address(server)})"
        if mine[0].placeholder:
            return _step(title, owner, host, [r.command for r in mine], "manual",
                         [r.expected for r in mine if r.expected], go="the vendor's success output",
                         nogo="an error names the zone: stop and escalate", rollback=rollback, notes=tuple(notes))
        return _step(
            title, owner, host, [f"sh {directory}/{reload_script_path(server.id)}"], "exact",
            [script_ok_line(server.id, len(mine))],
            go="the line shown: every reload printed what it prints when it worked (`zone reload queued` "
               "only means queued: the verify step below confirms the new answers)",
            nogo="`FAILED on ...` names the command and its output; the commands after it were not run: "
                 "fix the cause and run the script again (a reload already done prints `zone reload up-to-date`)",
            rollback=rollback, notes=tuple(notes))

    def _verify_drain_step(self, ids: Sequence[str], owner: Mapping[str, Any], failback: bool) -> dict[str, Any]:
        """``imsdr verify --drain``: every changed answer, every view, every live server."""
        keys = next((platform_of(self.topo, s).keys for s in self.servers if platform_of(self.topo, s).keys), None)
        command = (f"imsdr verify {self.inventory} --drain {' --drain '.join(ids)}"
                   + (f" --keys {keys}" if keys else "") + (" --failback" if failback else ""))
        host = ("the host holding the inventory (each query is signed with its view's TSIG key, which "
                "selects the view)" if keys else
                "a host holding the inventory and an address inside every view's source range (or set "
                "`keys` on the DNS platform: signed queries select the view from anywhere)")
        state = "normal" if failback else "drained"
        return _step(
            f"Verify the {state} state on every view of every DNS server", owner, host, [command], "includes",
            [VERIFY_FAILBACK_OK if failback else VERIFY_DRAIN_OK],
            go=f"exit status 0 and the line shown: every answer the drain changes is the {state} one",
            nogo="exit status 1: the table names the server, view and answer still different; repeat that "
                 "server's load step, then this check",
            rollback="none needed")

    def _registration_refresh(self, el: Element) -> int:
        """The fixed-access refresh interval of the users registered through ``el``: the one the
        simulation and the capacity model use (element timer, network timer, or TS 24.229 from the
        registration expiry)."""
        from imsdr.capacity.timing import registration_refresh

        return registration_refresh(self.topo, el)

    def drain_period_s(self, el: Element, ttl_s: int) -> int:
        """How long until the users registered through ``el`` have moved: every UE refreshes its
        registration within one refresh interval (and a binding not refreshed expires then), and a
        UE that resolves its next hop by DNS sees the drained answer within the TTL."""
        return self._registration_refresh(el) + ttl_s

    def _drain_period_step(self, el: Element, owner: Mapping[str, Any], ttl_s: int, back_cmd: str) -> dict[str, Any]:
        plat = platform_of(self.topo, el)
        period = self.drain_period_s(el, ttl_s)
        refresh = self._registration_refresh(el)
        poll = max(1, min(30, refresh // 10))
        if el.type.value == "sbc":
            lever = ("flush the SBC's registration cache (vendor command), so each UE's next request is "
                     "refused and the UE registers again through the DNS/outbound-proxy order")
        else:
            lever = ("PS users: P-CSCF restoration (TS 23.380 §5), the S-CSCF/HSS restore each user at its "
                     "first terminating request; fixed users: network-initiated de-registration from the "
                     "S-CSCF (reg-event NOTIFY, RFC 3680), after which the UE registers again elsewhere")
        if plat.kind == "kamailio":
            commands, expect, expected = [f"{plat.control} stats.get_statistics registered_users"], "exact", \
                [REGISTERED_OK]
        else:
            commands, expect, expected = [f"{plat.control} show registrations count"], "manual", \
                ["(vendor output: 0 registered users)"]
        from imsdr.capacity.timing import access_types, ps_refresh_interval

        if self._access is None:  # worked out once for every SBC and P-CSCF, not per element
            from imsdr.capacity.timing import AccessTypes

            self._access = AccessTypes(self.topo)
        kinds = access_types(self.topo, el, self._access)
        notes: tuple[str, ...] = ()
        if "ps" in kinds:
            ps = ps_refresh_interval(self.topo)
            notes = (f"PS (VoLTE) users registered through {el.id} refresh only every {ps.seconds} s "
                     f"({ps.how}) and keep their IPsec flow: they move within this period only by the lever "
                     "(P-CSCF restoration, per user at the first terminating request, TS 23.380) or the "
                     "P-GW/SMF list change above"
                     + ("" if "fixed" in kinds else "; no fixed-access user is registered through it"),)
        return _step(
            f"Wait for the users registered through {el.id} to move (drain period {period} s)", owner,
            f"{el.id} ({first_address(el)})", commands, expect, expected,
            go=f"0 (or below the threshold you chose): the users registered through {el.id} have moved; it "
               "can be stopped without failing terminating calls",
            nogo=f"still above after {period} s (one registration refresh {refresh} s + TTL {ttl_s} s): UEs "
                 "that did not refresh, or that keep their flow (VoLTE/IPsec, RFC 5626 outbound); use the "
                 f"lever, or accept that their terminating calls fail until they register again; no answer "
                 f"at all ({el.id} has failed): its users re-register elsewhere at their refresh, wait the "
                 f"{period} s",
            rollback=f"`{back_cmd}` and the load steps again: new registrations return to {el.id}",
            until_s=period, poll_s=poll, lever=lever, notes=notes)

    def _pco_steps(self, el: Element, owner: Mapping[str, Any], back: bool = False) -> list[dict[str, Any]]:
        """PS users learn their P-CSCFs from the P-GW/SMF (PCO): a drain changes that list too."""
        out = []
        for ln in self.topo.local_networks.values():
            gw = ln.packet_gateway
            if ln.access == "fixed" or gw is None:
                continue
            cli = f"{gw.id.upper()}-CLI"
            verb = "add" if back else "remove"
            out.append(_step(
                f"{'Put' if back else 'Take'} {el.id} {'back into' if back else 'out of'} the P-CSCF list "
                f"{gw.kind.upper()} {gw.id} hands to {ln.id}'s UEs", owner, f"{gw.id} ({gw.kind})",
                [f"{cli} {verb} pcscf-address apn {gw.apn} {first_address(el)}",
                 f"{cli} show pcscf-addresses apn {gw.apn}"], "manual",
                go=f"the list {'includes' if back else 'no longer includes'} {first_address(el)}: new PDN "
                   "connections get the new list (PCO); existing ones keep theirs until P-CSCF restoration "
                   "or re-attach",
                nogo="the list is unchanged: escalate to the packet-core team",
                rollback=f"`{cli} {'remove' if back else 'add'} pcscf-address apn {gw.apn} {first_address(el)}`"))
        return out

    def _interval(self, source: Element) -> int:
        return int(source.timers.options_interval or self.topo.network.timers.options_interval)

    def _detection_seconds(self, source: Element) -> int:
        net, own = self.topo.network.timers, source.timers
        interval = own.options_interval or net.options_interval
        threshold = own.options_failure_threshold or net.options_failure_threshold
        timeout = own.options_timeout or net.options_timeout
        return int(interval * threshold + timeout)


def storm(topo: Topology, el: Element, failure_storm: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Registrations when ``el``'s users come back on failback: the users its failure moved (or
    restored), arriving over the same window as the traffic model's storm of that failure."""
    if not failure_storm:
        return None
    back = next((f for f in failure_storm.get("failback", ()) if f["id"] == el.id), None)
    if back is not None:  # an SBC/P-CSCF: the failback storm on it, paced one dispatcher source at a time
        return {"users": back["users"], "refresh_s": back["refresh_s"],
                "per_second": back["peak_rate"] / 2, "register_per_second": back["peak_rate"],
                "capacity": None, "rate_capacity": back["capacity"], "rate_utilisation": back["utilisation"],
                "headroom_ok": back["verdict"] != "overload", "utilisation": back["utilisation"],
                "sources": back["sources"], "step_s": back["step_s"], "all_back_s": back["all_back_s"]}
    users = failure_storm["moved_users"] + failure_storm["restored_users"]
    window = failure_storm["window_s"]
    if not users:
        return None
    capacity = el.capacity.registered_users
    limit = topo.network.capacity_model.max_utilisation
    return {"users": users, "refresh_s": window,
            "reregister": "502" if topo.network.restoration.scscf_restoration_response == "502" else "504",
            "per_second": users / window if window else None,
            "capacity": capacity,
            "headroom_ok": capacity is None or users <= capacity * limit,
            "utilisation": users / capacity if capacity else None}


# When to act, per element type, and why: the reason differs, so one RTO formula does not fit all.
DECISION_RULES: dict[str, dict[str, str]] = {
    "sbc": {
        "when": "drain as soon as the failure is confirmed and not flapping: the failed state shows in two "
                "checks one probe interval apart, beyond the detection time",
        "why": "a fixed-access UE or IAD sends every new request to its first proxy address first and waits "
               "a whole transaction timeout (Timer B/F, 32 s) on the dead SBC before trying the second; "
               "only the drained DNS answers and lists stop that wait"},
    "pcscf": {
        "when": "drain as soon as the failure is confirmed and not flapping (two checks one probe interval "
                "apart show the failed state)",
        "why": "the SBCs already route new requests around it, but users registered through it keep their "
               "Path: their terminating calls fail until they register again; the drain period below moves "
               "them"},
    "hss": {
        "when": "swap the active role only when the active member is down as seen by two observers (the "
                "Diameter peer state on clients at two sites) and is fenced so it cannot come back active "
                "by itself",
        "why": "two active members writing at once (split brain) corrupt subscriber data; a swap on one "
               "observer's word risks exactly that, a short outage of Cx/Sh does not"},
    "enum_dns": {
        "when": "drain a failed server once the failure is confirmed (resolvers already skip it after one query "
                "timeout); under master-slave, when every primary is lost, promote a surviving secondary if no "
                "primary is back within the provisioning window (`redundancy.enum_dns.provisioning_window`)",
        "why": "the secondaries keep answering until the SOA expire, so the answers are not at risk; what stops at "
               "once is provisioning (new and ported numbers), which only a primary takes; a promotion on a short "
               "outage costs a failback with two role changes"},
    "slf": {
        "when": "swap or drain only when the member is down as seen by two observers (Diameter peer state "
                "on clients at two sites)",
        "why": "the SLF answers redirects only: a short outage costs retries, a wrong swap costs nothing "
               "durable, but a flapping peer makes every client re-route twice"},
}
DEFAULT_RULE = {
    "when": "drain when the element is not back at the decision point below",
    "why": "the clients' own failover covers short outages; the drain makes the failover explicit within "
           "the RTO"}


def decision_rule(el_type: str) -> dict[str, str]:
    return DECISION_RULES.get(el_type, DEFAULT_RULE)


def _budget(topo: Topology, target: Mapping[str, Any] | None, detection_s: float | None,
            switchover_s: float | None, ttl_s: int) -> dict[str, Any]:
    """The procedure's times against the RTO; the drain decision point leaves room for the TTL."""
    rows = []
    if detection_s is not None:
        rows.append({"what": "detection (automatic)", "seconds": detection_s})
    if switchover_s is not None:
        rows.append({"what": "automatic switchover, detection included (simulated)", "seconds": switchover_s})
    if ttl_s:
        rows.append({"what": "after a drain: clients see the new answers within the TTL", "seconds": ttl_s})
    rto = target["rto"] if target else None
    decision = None
    code = "502" if topo.network.restoration.scscf_restoration_response == "502" else "504 with the restoration body"
    if rto is not None:
        decision = max(0, int(rto - (detection_s or 0) - ttl_s))
    return {"rows": rows, "rto": rto, "rpo": target["rpo"] if target else None,
            "switchover_within_rto": None if rto is None or switchover_s is None else switchover_s <= rto,
            "reregister": code,
            "decision_s": decision}


def build_actions(topo: Topology, normal: DnsPlan, checks: Mapping[str, list[dict[str, Any]]],
                  inventory: str, element_failures: Mapping[str, Mapping[str, Any]],
                  site_failures: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Actions of every element and every site (see the module doc for the step shape)."""
    builder = ActionBuilder(topo, normal, checks, inventory, element_failures)
    elements: dict[str, Any] = {}
    for el in sorted(topo.elements.values(), key=lambda e: e.id):
        t = el.type.value
        failure = element_failures.get(el.id) or {}
        proc = builder.procedure([el.id], el.id, t, subject=el)
        target = recovery_target(topo, t)
        elements[el.id] = {
            "id": el.id,
            "type": t,
            "detection": builder.detection(el),
            "declare": builder.declare_checks(el),
            "notify": notify_list(topo, t),
            "owner": owner_for(topo, t),
            "target": target,
            "budget": {**_budget(topo, target, failure.get("detection_s"), failure.get("switchover_s"),
                                 proc["ttl_s"]), "rule": decision_rule(t)},
            "procedure": proc,
            "storm": storm(topo, el, failure.get("storm")) if t in ("sbc", "pcscf", "cscf") else None,
        }
    sites: dict[str, Any] = {}
    for site_id in sorted(topo.sites):
        failure = site_failures.get(site_id) or {}
        proc = builder.procedure([site_id], f"site {site_id}", "", skip_site=site_id)
        survivors = [s for s in builder.servers if s.site != site_id]
        rtos = [t.rto for t in topo.inventory.recovery_targets.values()]
        target = {"rto": min(rtos), "rpo": min(t.rpo for t in topo.inventory.recovery_targets.values())} \
            if rtos else None
        per_service = []
        for takeover in failure.get("takeovers", []):
            t = takeover["type"]
            row = next((r for r in per_service if r["service"] == t), None)
            if row is None:
                target = recovery_target(topo, t)
                row = {"service": t, "label": takeover["type_label"], "rto": target["rto"] if target else None,
                       "rpo": target["rpo"] if target else None, "switchover_s": None, "element": None}
                per_service.append(row)
            s_ = takeover["switchover_s"]
            if s_ is not None and (row["switchover_s"] is None or s_ > row["switchover_s"]):
                row["switchover_s"], row["element"] = s_, takeover["failed"]
        for row in per_service:
            row["within"] = None if row["rto"] is None or row["switchover_s"] is None \
                else row["switchover_s"] <= row["rto"]
        sites[site_id] = {
            "id": site_id,
            "services": per_service,
            "notify": notify_list(topo, None),
            "owner": owner_for(topo, ""),
            "target": target,
            "budget": _budget(topo, target, None, failure.get("switchover_s"), proc["ttl_s"]),
            "procedure": proc,
            "dns_survivors": [{"id": s.id, "address": first_address(s)} for s in survivors],
            "declare": [
                {"signal": "power or transmission alarm", "check": ", ".join(
                    [*topo.sites[site_id].power, *topo.sites[site_id].transmission]),
                 "threshold": "any feed lost with no restoration estimate"},
                {"signal": "elements of two or more types at the site fail their checks",
                 "check": "the Declare tables of the element pages, for the elements listed below",
                 "threshold": "two types down at once, beyond their detection times"},
            ],
        }
    return {"elements": elements, "sites": sites, "detailed": builder.detailed,
            "contacts": notify_list(topo, None),
            "render_dir": builder.render_dir()}


def drain_period_steps(topo: Topology, ids: Sequence[str], inventory: str) -> list[tuple[str, dict[str, Any]]]:
    """(element id, step) of each drain-period step the pages give for draining ``ids`` (a P-CSCF or
    an SBC: wait for the users registered through it to move): what ``imsdr apply --drain`` waits
    for after applying the drained state, so the page and the apply wait for the same thing."""
    normal = build_dns_plan(topo)
    builder = ActionBuilder(topo, normal, {}, inventory, {})
    state = drained_state(topo, ids, normal=normal)
    ttl = builder._ttl(state.changes)
    back = f"imsdr render dns {builder.inventory} --out {builder.render_dir()}"
    out = []
    for element_id in state.drained:
        el = topo.elements[element_id]
        if el.type.value in ("pcscf", "sbc"):
            out.append((element_id, builder._drain_period_step(el, owner_for(topo, el.type.value), ttl, back)))
    return out
