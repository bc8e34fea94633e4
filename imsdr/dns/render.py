"""``render dns``: plan -> lint -> zone files, one named.conf per DNS server, resolver forward
zones, dispatcher lists, README.

Everything is written into a staging directory and swapped in atomically; a lint failure or
any error leaves the previous output untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from imsdr.analysis import cyclic_gc_paused
from imsdr.dns.catalog import catalog_path, catalog_zone, render_catalog
from imsdr.dns.dispatcher import (
    dispatcher_list_path,
    dispatcher_sets,
    hop_title,
    probing_cfg_path,
    render_dispatcher_list,
    render_probing_cfg,
)
from imsdr.dns.drain import (
    DRAIN_NOTE,
    DrainChanges,
    drained_state,
    previously_drained,
    reload_scripts,
    render_drain_note,
    resolve_drain,
)
from imsdr.dns.lint import PlanLint, lint_problems
from imsdr.dns.plan import DnsPlan, ViewPlan, base_view, build_dns_plan
from imsdr.dns.views import (
    NamedConfParts,
    ServerLayout,
    ZoneFileRef,
    render_named_conf,
    render_options,
    render_resolver_conf,
    server_conf_path,
    server_layout,
    server_order,
    zone_files,
)
from imsdr.dns.zonefile import (
    LayoutCache,
    RdataTexts,
    RenderCache,
    choose_serial,
    header_lines,
    prepare_zone,
    read_previous,
    today,
    write_prepared,
)
from imsdr.errors import RenderError
from imsdr.output.atomic import (
    HashingFile,
    OutputTarget,
    WrittenDigests,
    as_target,
    atomic_directory,
    safe_join,
    write_text,
)
from imsdr.output.markdown import markdown_code, markdown_text

if TYPE_CHECKING:
    from imsdr.model.topology import Topology

NAMED_OPTIONS = "named-options.conf"  # included inside every server's options block


@dataclass(frozen=True)
class WrittenFile:
    path: str
    kind: str  # zone | named.conf | resolver | dispatcher | kamailio | drain | readme
    zone: str | None = None
    view: str | None = None  # None: shared by every view without an override
    records: int = 0
    serial: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "kind": self.kind,
            "zone": self.zone,
            "view": self.view,
            "records": self.records,
            "serial": self.serial,
        }


@dataclass
class RenderReport:
    out: Path
    files: list[WrittenFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)
    keys_added: list[str] = field(default_factory=list)
    drain: DrainChanges | None = None
    failback: DrainChanges | None = None  # the normal state rendered over a drained directory


def check_plan(topology: Topology, plan: DnsPlan | None = None, lint: PlanLint | None = None) -> DnsPlan:
    """Build (unless given) and lint the DNS plan; raise RenderError with every problem found.
    ``lint``: a lint of ``plan`` already under way (``imsdr plan``: its check linted the base zones)."""
    plan = plan or build_dns_plan(topology)
    if lint is None or lint.plan is not plan:
        lint = PlanLint(plan)
    errors = [i for i in lint.issues() if i.severity == "error"]
    if errors:
        raise RenderError(
            f"refusing to write DNS files: the DNS plan has {len(errors)} problem(s)",
            lint_problems(errors, topology.source),
        )
    return plan


def require_previous_serials(previous: Path | None, label: str, how: str = "give --serial N above the live "
                             "serials (`dig @SERVER ZONE SOA +short`)") -> None:
    """A drained state changes zones on live servers: its serials must continue from the ones they
    serve. They are read from the directory the render replaces; without one, refuse (the serials
    would restart at today's YYYYMMDD00, possibly below the live ones)."""
    if previous is not None and previous.is_dir() and any(previous.glob("zones/*/*.zone")):
        return
    raise RenderError(
        f"refusing to render a drained state into {label}: it holds no previous render, so every "
        "changed zone's SOA serial would start again at today's YYYYMMDD00 and may be lower than "
        "what the live servers serve (they would ignore the change, and secondaries would not "
        f"transfer it). Render over the directory the servers load, or {how}.")


def render_dns(topology: Topology, out: Path | OutputTarget, inventory: str, serial: int | None = None,
               keys: Path | None = None, drain: tuple[str, ...] = ()) -> RenderReport:
    """Render every DNS/dispatcher file of ``topology`` into ``out``, atomically (lint first).

    ``keys``: also make sure that file (outside ``out``, not an input) holds a TSIG key for every
    view, generating the missing ones (see :mod:`imsdr.dns.keys`).
    ``drain``: element or site ids; the files describe the drained state (see :mod:`imsdr.dns.drain`).
    Render over the directory the servers load, so the SOA serial of every changed zone moves forward.
    """
    with cyclic_gc_paused():  # hundreds of thousands of records, texts and memos, none garbage
        return _render_dns(topology, out, inventory, serial, keys, drain)


def _render_dns(topology: Topology, out: Path | OutputTarget, inventory: str, serial: int | None,
                keys: Path | None, drain: tuple[str, ...]) -> RenderReport:
    changes = None
    target = as_target(out)
    out = target.path
    if drain:
        drained = resolve_drain(topology, drain)  # an unknown id first: the likelier mistake
        if serial is None:
            require_previous_serials(out, str(out))
        plan = check_plan(topology, build_dns_plan(topology, excluded=drained))
        changes = drained_state(topology, drained, drained=plan).changes
    else:
        plan = check_plan(topology)
    back = previously_drained(out, topology) if not drain else ()
    failback = drained_state(topology, back, normal=plan).changes.returning() if back else None
    added: list[str] = []
    if keys is not None:
        from imsdr.dns.keys import ensure_keys

        added = ensure_keys(Path(keys), [v.key_name for v in plan.views if v.side != "none"], out, target.inputs)
    with atomic_directory(target) as staging:
        report = write_dns_files(topology, plan, staging, previous=out, inventory=inventory, serial=serial,
                                 drain=changes, failback=failback)
    report.failback = failback
    report.out = out
    report.keys_added = added
    return report


def write_dns_files(
    topology: Topology,
    plan: DnsPlan,
    directory: Path,
    previous: Path | None,
    inventory: str,
    serial: int | None = None,
    drain: DrainChanges | None = None,
    digests: WrittenDigests | None = None,
    failback: DrainChanges | None = None,
) -> RenderReport:
    """Write the files of a linted ``plan`` into an existing (staging) ``directory``.

    ``previous`` is where the last output lives (for the SOA serial rule); None for a fresh start.
    Callers that build their own atomic tree (``imsdr plan``) use this; others use ``render_dns``.
    ``digests``: record the SHA-256 of every file written (``plan`` lists them in plan.json).
    """
    directory = Path(directory)
    inventory = printable(inventory)
    report = RenderReport(directory, notes=list(plan.notes), views=[v.name for v in plan.views], drain=drain)
    exclude = frozenset(drain.drained) if drain else frozenset()
    run = _ZoneRun(previous if previous is not None and previous.is_dir() else None, digests)
    made = run.made  # directories created: the zone files' and the other files'

    def write(relative: str, text: str) -> None:
        path = safe_join(directory, relative)
        if path.parent not in made:  # (one mkdir per directory: kamailio/ holds one per element)
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        write_text(path, text if text.endswith("\n") else text + "\n", digests)

    for ref in zone_files(plan):
        report.files.append(_write_zone_file(plan, ref, run.previous, directory, inventory, serial, run))
    del run  # (the zones' texts and memos: the other files need none of them)
    layout = server_layout(topology, exclude)
    report.notes += list(layout.notes)
    secondary_directory = topology.network.dns.secondary_directory
    rate_limit = topology.network.dns.access_rate_limit
    import ipaddress

    resolvers = frozenset(str(ipaddress.ip_network(r)) for ln in topology.local_networks.values() for r in ln.resolvers)
    parts = NamedConfParts(plan, layout, secondary_directory, rate_limit, resolvers)
    for view, zones in catalog_members(plan, layout, parts):
        path = catalog_path(view.name)
        prior = safe_join(previous, path) if previous is not None and previous.is_dir() else None
        write(path, render_catalog(view.name, zones, plan.network, prior, serial))
        report.files.append(WrittenFile(path, "catalog", catalog_zone(view.name), view.name, len(zones)))
    write(NAMED_OPTIONS, render_options(plan, rate_limit))
    report.files.append(WrittenFile(NAMED_OPTIONS, "named.conf"))
    for server in layout.servers:
        path = server_conf_path(server)
        text = render_named_conf(plan, inventory, layout, server, secondary_directory, parts)
        write(path, text)
        report.files.append(WrittenFile(path, "named.conf", view=server.role, records=len(plan.views)))
    for ln_id in topology.local_networks:
        path = f"resolvers/{ln_id}.conf"
        write(path, render_resolver_conf(plan, topology, layout, ln_id, inventory))
        report.files.append(WrittenFile(path, "resolver", records=len(plan.access_zones)))
    for ds in dispatcher_sets(topology, exclude):  # one list and one probing include per source element
        path = dispatcher_list_path(ds.source)
        write(path, render_dispatcher_list([ds], hop_title(topology, ds), inventory))
        report.files.append(WrittenFile(path, "dispatcher", records=len(ds.destinations)))
        cfg = probing_cfg_path(ds.source)
        write(cfg, render_probing_cfg(topology, topology.elements[ds.source], inventory))
        report.files.append(WrittenFile(cfg, "kamailio"))
    if drain is not None:
        write(DRAIN_NOTE, render_drain_note(drain, inventory))
        report.files.append(WrittenFile(DRAIN_NOTE, "drain"))
    loading = drain if drain is not None else failback
    if loading is not None:  # one reload script per server, run by the runbook's step
        for path, text in reload_scripts(loading, inventory, failback=drain is None).items():
            write(path, text)
            report.files.append(WrittenFile(path, "reload"))
    report.files.append(WrittenFile("README.md", "readme"))
    write("README.md", render_readme(plan, report, inventory, topology, layout))
    return report


def catalog_members(plan: DnsPlan, layout: ServerLayout, parts: NamedConfParts) -> list[tuple[ViewPlan, list[str]]]:
    """(view, the zones it serves) for every view whose catalog a primary publishes."""
    out = []
    for view, refs in zip(plan.views, parts.refs, strict=True):
        if view.side == "none":
            continue
        if any(s.role == "primary" and s.holds(view) and parts.catalogs(s) for s in layout.servers):
            out.append((view, [ref.zone for ref in refs]))
    return out


def printable(label: str) -> str:
    """A label safe inside zone-file and named.conf comments (one printable line)."""
    return "".join(ch if ch.isprintable() and ch not in "\r\n" else "?" for ch in label)[:200]


@dataclass
class _ZoneRun:
    """What the zone files of one render share: rendered rrset text, base zone order, directories."""

    previous: Path | None  # the last output directory, when there is one
    digests: WrittenDigests | None = None  # where each file's SHA-256 is recorded, if anywhere
    cache: RenderCache = field(default_factory=dict)  # rrset text shared by the per-view copies of a zone
    layouts: LayoutCache = field(default_factory=LayoutCache)
    texts: RdataTexts = field(default_factory=RdataTexts)  # each record's text, written once
    made: set[Path] = field(default_factory=set)  # directories created in the staging tree
    day: date = field(default_factory=today)  # the date of new serials: one for the whole run


def _write_zone_file(
    plan: DnsPlan,
    ref: ZoneFileRef,
    previous: Path | None,
    staging: Path,
    inventory: str,
    forced: int | None,
    run: _ZoneRun | None = None,
) -> WrittenFile:
    run = run or _ZoneRun(previous)
    view = plan.view(ref.view) if ref.view else base_view(ref.side)
    base = plan.zones_of(view.side)[ref.zone]
    header = header_lines(base, ref.view, inventory, plan.network)  # (a view's copy: the base's name, purpose)
    comments = {}
    if ref.view and view.kind == "local":
        note = (
            "the local SBC(s) only: a client that takes the first address never lands on the DR SBC "
            f"(published alone as {plan.sbc_dr_name}, and second in the SRV priorities)"
        )
        comments = {(plan.sbc_name, "A"): note, (plan.sbc_name, "AAAA"): note}
    # every record rendered once: digest and lines; a view's copy from its base zone's rendering
    overrides = view.overrides.get(ref.zone) if ref.view else None
    if not overrides:
        # an ENUM zone is written once (no view overrides its names): remembering the text of each
        # of its rrsets (100,000s of exceptions nationally) for later copies would be wasted
        cache = run.cache if base.kind != "enum" else None
        prepared = prepare_zone(base, header, comments, cache, run.layouts.layout(base, base), run.texts)
    else:
        prepared = run.layouts.prepare(base, overrides, header, comments, run.cache, run.texts)
    old = read_previous(safe_join(previous, ref.path)) if previous is not None else None
    serial = choose_serial(prepared.digest, old, forced, run.day)
    path = safe_join(staging, ref.path)
    if path.parent not in run.made:
        path.parent.mkdir(parents=True, exist_ok=True)
        run.made.add(path.parent)
    with HashingFile(path, run.digests) as fh:
        records = write_prepared(fh, prepared, serial, header)  # type: ignore[arg-type]
    return WrittenFile(ref.path, "zone", base.name, ref.view, records, serial)


def render_readme(plan: DnsPlan, report: RenderReport, inventory: str, topology: Topology,
                  layout: ServerLayout) -> str:
    lines = [
        f"# DNS and dispatcher files for {markdown_text(plan.network)}",
        "",
        f"Rendered by `imsdr render dns` from inventory {markdown_code(inventory)}. Do not edit by hand: change the",
        "inventory and render again (the whole directory is replaced atomically).",
        "",
        "## Files",
        "",
        "| file | what | zone | view / role | records | SOA serial |",
        "|---|---|---|---|---|---|",
    ]
    for f in report.files:
        what = {
            "zone": "zone file",
            "named.conf": "named.conf fragment of one DNS server (ACLs, views, zones)",
            "resolver": "forward zones for the access resolvers of a local network",
            "dispatcher": "Kamailio dispatcher list",
            "kamailio": "Kamailio OPTIONS probing parameters (include_file)",
            "drain": "the drained state: what changes, on which servers, in which order",
            "reload": "one server's reload commands (sh), each output checked",
            "catalog": "catalog zone (RFC 9432) of one view: the zones its secondaries serve",
            "readme": "this file",
        }[f.kind]
        view = f.view or ("all views of its side without an override" if f.kind == "zone" else "")
        records = f.records if f.kind in ("zone", "named.conf", "resolver", "dispatcher", "catalog") else ""
        lines.append(
            f"| `{f.path}` | {what} | {f.zone or ''} | {view} | {records} "
            f"| {f.serial if f.serial is not None else ''} |"
        )
    keyed = [v for v in plan.views if v.side != "none"]
    lines += [
        "",
        "## Access and core kept apart",
        "",
        "- `users-<local network>` views match the local network's access resolvers and UE prefixes",
        "  and serve only the **access zones** (`zones/access/`, or `zones/users-*/`): the SBC discovery",
        f"  name `{plan.sbc_name}`, the DR name `{plan.sbc_dr_name}`, each home domain's NAPTR/SRV leading",
        "  to the SBCs, the SBCs' access addresses and the name servers. No CSCF, HSS, SLF, MGCF, AS or",
        "  pool name is in them (the DNS lint refuses a plan that would show one).",
        "- `sbc-<site>` views match the site's SBCs' core-side addresses (before the core view) and serve",
        "  the **SBC zones** (`zones/sbc/`, `zones/sbc-*/`): the P-CSCF names and addresses only.",
        "- `core-<site>` views match the site's core subnets and serve the **core zones** (`zones/core/`,",
        "  `zones/core-*/`, same site first) and the ENUM zones.",
        "- `default` " + ("serves the access data only (`network.dns.default_view: access`)."
                          if any(v.kind == "default" and v.side == "access" for v in plan.views)
                          else "refuses every query (`network.dns.default_view: refuse`)."),
        "",
        "In a user view the A/AAAA of the SBC discovery name hold the local SBC(s) only; the DR SBC",
        f"is published alone as `{plan.sbc_dr_name}` and at SRV priority 20. A UE that follows",
        f"NAPTR/SRV (RFC 3263) needs only the home domain or `{plan.sbc_name}`; an A-only client (an",
        f"IAD) must be configured with `{plan.sbc_name}` as its proxy and `{plan.sbc_dr_name}` as its",
        "second (outbound) proxy.",
        "",
        "## Servers, sync and keys",
        "",
        f"Sync mode: **{layout.sync}**. One `named/<server>.conf` per DNS server:",
        "",
        "| server | address | site | role |",
        "|---|---|---|---|",
    ]
    for s in layout.servers:
        role = s.role + (" (hidden back-end)" if s.hidden else "")
        lines.append(f"| {s.id} | {s.address} | {s.site} | {role} |")
    lines += [""]
    if layout.sync == "provisioning":
        lines += [
            "Every server is a primary of the same zone files. Provisioning writes to every server:",
            "",
            "1. Dual write: apply every change (render, copy, `rndc reload`) to all servers in the same",
            "   change window; check each answers the new SOA serial (`dig @server ZONE SOA`).",
            "2. If one server fails to take the change, roll back: copy the previous output directory",
            "   to the servers that took it and `rndc reload`, so all serve the same serials again.",
            "3. Never leave two servers with different content under the same serial.",
        ]
    else:
        primaries = ", ".join(s.id for s in layout.primaries) or "none"
        lines += [
            f"Primaries: {primaries} (`type primary`, `notify explicit`, `also-notify` every secondary with",
            "the view's key).",
        ]
        if layout.secondaries:
            lines += [
                "Each primary publishes one catalog zone (RFC 9432) per view (`catalogs/<view>.catalog.invalid.zone`):",
                "a secondary's fragment holds per view only that catalog, and BIND adds, transfers (with the view's",
                "key) and removes the member zones itself, keeping them in `network.dns.secondary_directory`",
                f"({topology.network.dns.secondary_directory}), which must exist and be writable by named (named does",
                "not start without it). A new zone or number block changes no secondary's configuration; a new view",
                "(local network, site) is one new view statement on each secondary (`rndc reconfig` there).",
            ]
        else:
            lines.append("No server is a secondary: no catalog zones are published.")
        lines += [
            "",
            "Promotion (every primary lost for longer than the provisioning window, "
            f"{topology.inventory.redundancy.enum_dns.provisioning_window} s, `redundancy.enum_dns."
            "provisioning_window`; the secondaries answer until the SOA expire, but no provisioning",
            "change reaches them meanwhile):",
            "",
            "1. `imsdr render dns --drain <primary or its site>` over this directory: the first surviving",
            "   secondary is rendered as primary (every zone `type primary`, serials continuing upward",
            "   from this directory) and the drained primary as its secondary.",
            "2. On the new primary run `sh reload/<id>.sh` (`rndc reconfig`, `rndc reload`), check",
            "   `rndc zonestatus <zone> in <view>` says `type: primary`, and point provisioning (or the",
            "   back-end database export) at it.",
            "3. When the old primary returns, start it on the drained directory (a secondary first) and",
            "   run its `sh reload/<id>.sh` (`rndc retransfer` of every zone); then render the normal",
            "   state: it takes the primary role back, the promoted server steps down.",
        ]
    lines += [
        "",
        "Every view is locked down: `recursion no` (with service areas the core views recurse for",
        "their own match list only), `allow-query` its match list, `allow-transfer` its TSIG key from",
        "another name server's address only. The key names are below; the secrets are never rendered. Include a keys",
        "file before the server's fragment; `imsdr render dns --keys /etc/bind/imsdr-tsig.keys`",
        "generates the missing keys (hmac-sha256, outside this directory). Every server needs the",
        "same keys file.",
        "",
    ]
    lines += [f"- `{v.key_name}` (view `{v.name}`)" for v in keyed]
    mode = topology.inventory.redundancy.enum_dns.load_sharing or "unset"
    lines += [
        "",
        f"## Load sharing ({mode})",
        "",
        "Which name server each region's clients and access resolvers use first",
        "(`resolvers/<local network>.conf` holds the forward zones):",
        "",
        "| region | servers, in order |",
        "|---|---|",
    ]
    for region in sorted({s.region for s in topology.sites.values()}):
        national = {a.id for a in plan.areas if a.national}  # (service areas: the region's own area)
        area = next((s.area for s in layout.servers if s.region == region and s.area and s.area not in national), "")
        order = ", ".join(s.id for s in server_order(topology, layout, region, area))
        lines.append(f"| {region} | {order} |")
    lines += [
        "",
        "## Load into BIND 9",
        "",
        "Zone file names are relative to named's working directory, so this directory is it; named",
        "must be able to write its working directory (BIND 9.18 refuses to start otherwise).",
        "",
        "1. Once per name server, make the directory, writable by named (imsdr keeps its owner, group",
        "   and mode whenever it replaces it): `install -d -o root -g bind -m 0775 /etc/bind/imsdr`",
        "2. Render into it, or copy this directory's files into it:",
        "   `imsdr render dns INVENTORY --out /etc/bind/imsdr --keys /etc/bind/imsdr-tsig.keys`",
        "   (a new keys file is 0640 with its directory's group, `bind` in `/etc/bind`; an existing one",
        "   keeps its owner, group and mode).",
        "3. In `named.conf` (`managed-keys-directory` keeps named's own files out of this directory,",
        "   which imsdr replaces whole):",
        "",
        "       options {",
        '           directory "/etc/bind/imsdr";',
        '           managed-keys-directory "/var/cache/bind";',
        '           include "/etc/bind/imsdr/named-options.conf";  // version, hostname, server-id none',
        "       };",
        '       include "/etc/bind/imsdr-tsig.keys";',
        '       include "/etc/bind/imsdr/named/<this server>.conf";',
        "",
        "4. Once views exist every zone must be inside a view: remove zone statements outside views",
        '   (on Debian, the `include "/etc/bind/named.conf.default-zones";` line).',
        "5. Check and load: `named-checkconf -z /etc/bind/named.conf`, then `rndc reconfig`",
        "   (new zones or views) or `rndc reload` (changed zone files).",
        "",
        "Every zone file passes `named-checkzone -k fail -n fail -S fail -M fail -r fail -i local`.",
        "Zones identical in several views are defined once and shared with `in-view`.",
        "",
        "## ENUM",
        "",
        "One zone per ENUM block; the country code's parent zone delegates them to the name servers",
        "and answers NXDOMAIN for every number outside the blocks, so the S-CSCF/BGCF breaks out to",
        "the PSTN. The ENUM zones are served in the core views only.",
        "",
        "## SOA serials",
        "",
        "Each zone file carries a `content-digest` comment over its records only (not the inventory's",
        "file name). When rendering again over this directory, a zone whose digest is unchanged keeps",
        "its serial; a changed zone gets `max(today's YYYYMMDD00, previous serial + 1)`; a new zone",
        "gets `YYYYMMDD00` (UTC, or the date of `SOURCE_DATE_EPOCH`). `imsdr render dns --serial N`",
        "sets every serial to N.",
        "",
        "## Load into Kamailio (dispatcher module, Kamailio 5.6)",
        "",
        f"- `{dispatcher_list_path('<SBC>')}`: on that SBC, its own set of P-CSCFs (set id in the",
        "  comment above it); a shared file would make every SBC probe the P-CSCFs of every set.",
        f"- `{dispatcher_list_path('<P-CSCF>')}`: on that P-CSCF, its own set of I-CSCFs.",
        "",
        'Use `modparam("dispatcher", "list_file", "/etc/kamailio/<file>")`, then',
        '`ds_select_dst("<set>", "8")` for failover in priority order (dispatcher priority: higher',
        'value first, the opposite of SRV) or `"9"` for capacity-weighted load sharing (`weight=` is a',
        "percent of the whole set). Reload with `kamcmd dispatcher.reload`. Destinations with flags 8",
        "(active) are probed with OPTIONS; flags 0 (passive) are not probed while they work.",
        f"`include_file \"{probing_cfg_path('<element>')}\"` sets the probe interval, the failure",
        "threshold (`ds_probing_mode 3`: the flagged destinations, continually) and the OPTIONS timeout",
        "from the element's timers. The timeout is set on the probes alone (`t_set_fr` in",
        "`event_route[tm:local-request]`): `fr_timer`/`fr_inv_timer` of relayed requests keep their",
        "values, so a P-CSCF that answers REGISTER in 3 s is not cut off by the SBC's 408.",
    ]
    if report.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    return "\n".join(lines) + "\n"
