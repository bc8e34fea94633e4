"""``render dns``: plan -> lint -> zone files, named.conf fragment, dispatcher lists, README.

Everything is written into a staging directory and swapped in atomically; a lint failure or
any error leaves the previous output untouched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from imsdr.dns.dispatcher import pcscf_icscf_sets, render_dispatcher_list, sbc_pcscf_sets
from imsdr.dns.lint import lint_plan, lint_problems
from imsdr.dns.plan import DnsPlan, ViewPlan, build_dns_plan
from imsdr.dns.views import ZoneFileRef, render_named_conf, zone_files
from imsdr.dns.zonefile import (
    RenderCache,
    choose_serial,
    header_lines,
    prepare_zone,
    read_previous,
    write_prepared,
)
from imsdr.errors import RenderError
from imsdr.output.atomic import atomic_directory, safe_join
from imsdr.output.markdown import markdown_code, markdown_text

if TYPE_CHECKING:
    from imsdr.model.topology import Topology

NAMED_CONF = "named.conf.imsdr"
SBC_PCSCF_LIST = "kamailio/dispatcher-sbc-pcscf.list"
PCSCF_ICSCF_LIST = "kamailio/dispatcher-pcscf-icscf.list"
_BASE = ViewPlan("(base)", "default", "", (), "base content")


@dataclass(frozen=True)
class WrittenFile:
    path: str
    kind: str  # zone | named.conf | dispatcher | readme
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


def check_plan(topology: Topology, plan: DnsPlan | None = None) -> DnsPlan:
    """Build (unless given) and lint the DNS plan; raise RenderError with every problem found."""
    plan = plan or build_dns_plan(topology)
    errors = [i for i in lint_plan(plan) if i.severity == "error"]
    if errors:
        raise RenderError(
            f"refusing to write DNS files: the DNS plan has {len(errors)} problem(s)",
            lint_problems(errors, topology.source),
        )
    return plan


def render_dns(topology: Topology, out: Path, inventory: str, serial: int | None = None) -> RenderReport:
    """Render every DNS/dispatcher file of ``topology`` into ``out``, atomically (lint first)."""
    plan = check_plan(topology)
    out = Path(out)
    with atomic_directory(out) as staging:
        report = write_dns_files(topology, plan, staging, previous=out, inventory=inventory, serial=serial)
    report.out = out
    return report


def write_dns_files(
    topology: Topology,
    plan: DnsPlan,
    directory: Path,
    previous: Path | None,
    inventory: str,
    serial: int | None = None,
) -> RenderReport:
    """Write the files of a linted ``plan`` into an existing (staging) ``directory``.

    ``previous`` is where the last output lives (for the SOA serial rule); None for a fresh start.
    Callers that build their own atomic tree (``imsdr plan``) use this; others use ``render_dns``.
    """
    directory = Path(directory)
    inventory = printable(inventory)
    report = RenderReport(directory, notes=list(plan.notes), views=[v.name for v in plan.views])
    cache: RenderCache = {}  # rrset text shared by the per-view copies of a zone
    for ref in zone_files(plan):
        report.files.append(_write_zone_file(plan, ref, previous, directory, inventory, serial, cache))
    del cache
    _write_text(directory, NAMED_CONF, render_named_conf(plan, inventory))
    report.files.append(WrittenFile(NAMED_CONF, "named.conf", records=len(plan.views)))
    for path, sets, title in (
        (SBC_PCSCF_LIST, sbc_pcscf_sets(topology), "SBC -> P-CSCF"),
        (PCSCF_ICSCF_LIST, pcscf_icscf_sets(topology), "P-CSCF -> I-CSCF"),
    ):
        _write_text(directory, path, render_dispatcher_list(sets, title, inventory))
        count = sum(len(s.destinations) for s in sets)
        report.files.append(WrittenFile(path, "dispatcher", records=count))
    report.files.append(WrittenFile("README.md", "readme"))
    _write_text(directory, "README.md", render_readme(plan, report, inventory))
    return report


def printable(label: str) -> str:
    """A label safe inside zone-file and named.conf comments (one printable line)."""
    return "".join(ch if ch.isprintable() and ch not in "\r\n" else "?" for ch in label)[:200]


def _write_text(staging: Path, relative: str, text: str) -> None:
    path = safe_join(staging, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text if text.endswith("\n") else text + "\n")


def _write_zone_file(
    plan: DnsPlan,
    ref: ZoneFileRef,
    previous: Path | None,
    staging: Path,
    inventory: str,
    forced: int | None,
    cache: RenderCache | None = None,
) -> WrittenFile:
    view = plan.view(ref.view) if ref.view else _BASE
    zone = plan.zone_for_view(view, ref.zone)
    header = header_lines(zone, ref.view, inventory, plan.network)
    comments = {}
    if ref.view and view.kind == "local":
        note = (
            "local SBC first, DR SBC second; BIND does not keep this A/AAAA order "
            "(no fixed rrset-order): clients should follow the SRV priorities"
        )
        comments = {(plan.sbc_name, "A"): note, (plan.sbc_name, "AAAA"): note}
    prepared = prepare_zone(zone, header, comments, cache)  # every record rendered once: digest and lines
    old = read_previous(safe_join(previous, ref.path)) if previous is not None else None
    serial = choose_serial(prepared.digest, old, forced)
    path = safe_join(staging, ref.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as fh:
        records = write_prepared(fh, prepared, serial, header)
    return WrittenFile(ref.path, "zone", zone.name, ref.view, records, serial)


def render_readme(plan: DnsPlan, report: RenderReport, inventory: str) -> str:
    lines = [
        f"# DNS and dispatcher files for {markdown_text(plan.network)}",
        "",
        f"Rendered by `imsdr render dns` from inventory {markdown_code(inventory)}. Do not edit by hand: change the",
        "inventory and render again (the whole directory is replaced atomically).",
        "",
        "## Files",
        "",
        "| file | what | zone | view | records | SOA serial |",
        "|---|---|---|---|---|---|",
    ]
    for f in report.files:
        what = {
            "zone": "zone file",
            "named.conf": "named.conf fragment (ACLs and views)",
            "dispatcher": "Kamailio dispatcher list",
            "readme": "this file",
        }[f.kind]
        view = f.view or ("all views without an override" if f.kind == "zone" else "")
        lines.append(
            f"| `{f.path}` | {what} | {f.zone or ''} | {view} | {f.records if f.kind != 'readme' else ''} "
            f"| {f.serial if f.serial is not None else ''} |"
        )
    lines += [
        "",
        "## Load into BIND 9",
        "",
        "1. Copy this directory to the name server, e.g. `/etc/bind/imsdr/`.",
        '2. In `named.conf`, set `options { directory "/etc/bind/imsdr"; };` (zone file names are',
        '   relative to it) and add `include "/etc/bind/imsdr/named.conf.imsdr";`.',
        "3. Once views exist every zone must be inside a view: remove zone statements outside views",
        '   (on Debian, the `include "/etc/bind/named.conf.default-zones";` line).',
        "4. Check and load: `named-checkconf -z /etc/bind/named.conf`, then `rndc reconfig`",
        "   (new zones or views) or `rndc reload` (changed zone files).",
        "",
        "Every zone file passes `named-checkzone -k fail -n fail -S fail -M fail -r fail -i local`.",
        "",
        "Views, first match wins: one per local network (its user prefixes) where",
        f"`{plan.sbc_name}` answers the local SBC first (SRV priority 10) and the DR SBC second",
        "(priority 20); one per site (its core subnets) where the I-CSCF entry and the pool names",
        "answer same site first (10), same region next (20), other regions last (30); and `default`.",
        "BIND does not keep the order of A/AAAA records (it rotates them) unless",
        "`rrset-order { ... order fixed; }` is set and BIND was built with `--enable-fixed-rrset`;",
        "Debian's BIND is not, so the SRV priorities are what carries local-first/DR-second.",
        "Zones identical in several views are defined once and shared with `in-view`.",
        "",
        "## SOA serials",
        "",
        "Each zone file carries a `content-digest` comment. When rendering again over this",
        "directory, a zone whose digest is unchanged keeps its serial; a changed zone gets",
        "`max(today's YYYYMMDD00, previous serial + 1)`; a new zone gets `YYYYMMDD00` (UTC, or the",
        "date of `SOURCE_DATE_EPOCH`). `imsdr render dns --serial N` sets every serial to N.",
        "",
        "## Load into Kamailio (dispatcher module, Kamailio 5.6)",
        "",
        f"- `{SBC_PCSCF_LIST}`: on the SBC, one set per SBC (set id in the comment above it).",
        f"- `{PCSCF_ICSCF_LIST}`: on the P-CSCF, one set per P-CSCF.",
        "",
        'Use `modparam("dispatcher", "list_file", "/etc/kamailio/<file>")`, then',
        '`ds_select_dst("<set>", "8")` for failover in priority order (dispatcher priority: higher',
        'value first, the opposite of SRV) or `"9"` for capacity-weighted load sharing (`weight=` is a',
        "percent of the whole set). Reload with `kamcmd dispatcher.reload`. Destinations with flags 8",
        "are probed with OPTIONS once `ds_ping_interval` is set.",
    ]
    if plan.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in plan.notes]
    return "\n".join(lines) + "\n"
