"""The runbook template context: plain data built from the model and the analysis reports.

Templates never see raw YAML or model objects — only dicts, lists, strings and numbers built
here, so built-in and user (sandboxed) templates read the same, documented structure
(docs/runbooks.md lists it). Everything is ordered deterministically.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from imsdr.model.topology import TYPE_LABELS
from imsdr.restoration.context import restoration_context
from imsdr.runbook.diagrams import failover_diagram, topology_diagram

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

CONTEXT_VERSION = 1


@dataclass(frozen=True, slots=True)
class TypePage:
    key: str
    title: str
    types: tuple[str, ...]
    path: str
    template: str


TYPE_PAGES: tuple[TypePage, ...] = (
    TypePage("sbc", "SBC", ("sbc",), "sbc.md", "element-sbc.md.j2"),
    TypePage("pcscf", "P-CSCF", ("pcscf",), "pcscf.md", "element-pcscf.md.j2"),
    TypePage("cscf", "I/S/E-CSCF/BGCF", ("cscf",), "cscf.md", "element-cscf.md.j2"),
    TypePage("hss", "HSS/SLF", ("hss", "slf", "dra"), "hss-slf.md", "element-hss.md.j2"),
    TypePage("enum_dns", "ENUM/DNS", ("enum_dns",), "enum-dns.md", "element-enum-dns.md.j2"),
    TypePage("mgcf", "MGCF/IM-MGW", ("mgcf", "imgw"), "mgcf-imgw.md", "element-mgcf.md.j2"),
    TypePage("as", "AS", ("as",), "as.md", "element-as.md.j2"),
)
PAGE_OF_TYPE = {t: page for page in TYPE_PAGES for t in page.types}


@dataclass
class Analyses:
    """What the analysis stages produced, already converted to plain dicts.

    ``findings``/``capacity_appendix`` are normalised check and capacity results; ``site_failures`` and
    ``element_failures`` are normalised failure scenarios (see :func:`failure_entry`);
    ``dns_checks`` maps a type page key to verification lookups with expected answers.
    """

    findings: dict[str, Any] | None = None
    capacity_appendix: dict[str, Any] | None = None
    site_failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    element_failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    element_rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # every element: verdict, time
    dns_checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    dns_servers: list[dict[str, str]] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)
    actions: dict[str, Any] = field(default_factory=dict)  # imsdr.runbook.actions.build_actions


# --- helpers ---------------------------------------------------------------------------------

def effective_timers(topo: Topology, el: Element) -> dict[str, int]:
    net = topo.network.timers
    over = el.timers
    return {
        "options_interval": over.options_interval or net.options_interval,
        "options_failure_threshold": over.options_failure_threshold or net.options_failure_threshold,
        "options_timeout": over.options_timeout or net.options_timeout,
        "diameter_watchdog": over.diameter_watchdog or net.diameter_watchdog,
        "registration_refresh": _refresh(topo, el),
        "session_timer": net.session_timer,
    }


def options_detection(timers: Mapping[str, int]) -> int:
    """SIP OPTIONS detection time: interval × failure threshold + one response timeout."""
    return timers["options_interval"] * timers["options_failure_threshold"] + timers["options_timeout"]


def sample_source(prefixes: Sequence[str], family: int = 4) -> str | None:
    """An address inside the first prefix of the family (the first usable host), for `dig -b`."""
    for text in prefixes:
        net = ipaddress.ip_network(text)
        if net.version != family:
            continue
        if net.num_addresses <= 2:
            return str(net.network_address)
        return str(net.network_address + 1)
    return None


def _element(topo: Topology, el: Element) -> dict[str, Any]:
    timers = effective_timers(topo, el)
    site = topo.sites[el.site]
    return {
        "id": el.id,
        "type": el.type.value,
        "type_label": TYPE_LABELS[el.type.value],
        "site": el.site,
        "site_name": site.name,
        "region": site.region,
        "vendor": el.vendor,
        "fqdn": topo.fqdn(el),
        "addresses": list(el.addresses),
        "port": el.port,
        "tls_port": el.tls_port,
        "transports": [t.value for t in el.transports],
        "roles": [r.value for r in el.roles],
        "features": sorted(f.value for f in el.features),
        "answers_options": el.answers_options,
        "options_probing": el.probing.value if el.probing else None,  # not set: the recommended default
        "serves": list(el.serves),
        "pcscfs": list(el.pcscfs),
        "capacity": {k: v for k, v in el.capacity.model_dump().items() if v is not None},
        "groups": [g.id for g in topo.groups_of.get(el.id, [])],
        "peers": topo.peers(el.id),
        "timers": timers,
        "options_detection": options_detection(timers),
        "page": PAGE_OF_TYPE[el.type.value].path,
    }


def _group(topo: Topology, group: Any) -> dict[str, Any]:
    spec = group.spec
    members = [m for m in group.members if m in topo.elements]
    types = sorted({topo.elements[m].type.value for m in members})
    return {
        "id": group.id,
        "kind": group.kind,
        "members": list(group.members),
        "sites": [topo.elements[m].site for m in members],
        "types": types,
        "type_label": "/".join(TYPE_LABELS[t] for t in types),
        "mode": getattr(spec, "mode", None),
        "sync": spec.sync,
        "backup_interval": spec.backup_interval,
        "spare": group.spare,
        "selection": getattr(spec, "selection", None),
        "role": spec.role.value if getattr(spec, "role", None) else None,
        "dns_name": spec.dns_name,
        "fqdn": f"{spec.dns_name}.{topo.network.primary_domain}" if spec.dns_name else None,
        "page": PAGE_OF_TYPE[types[0]].path if types else None,
    }


# --- failure scenarios (normalised) ---------------------------------------------------------------

def failure_entry(
    *,
    failed: Sequence[str],
    takeovers: Mapping[str, Sequence[str]],
    timeline: Sequence[Mapping[str, Any]],
    switchover_s: float | None,
    verdict: str,
    capacity: Sequence[Mapping[str, Any]] = (),
    impact: Sequence[str] = (),
    unserved: Sequence[Mapping[str, Any]] = (),
    failback: Sequence[str] = (),
    lost_local_networks: Sequence[str] = (),
) -> dict[str, Any]:
    """The one shape templates read for a failure scenario, whatever produced it."""
    return {
        "failed": list(failed),
        "takeovers": [{"failed": f, "by": list(takeovers.get(f, []))} for f in failed],
        "timeline": [dict(step) for step in timeline],
        "switchover_s": switchover_s,
        "verdict": verdict,
        "capacity": [dict(row) for row in capacity],
        "impact": list(impact),
        "unserved": [dict(row) for row in unserved],
        "failback": list(failback),
        "lost_local_networks": list(lost_local_networks),
    }


def _local_sbc_checks(analyses: Analyses) -> dict[Any, list[tuple[int, dict[str, Any]]]]:
    """local network -> (position, check) of the SBC queries asked of its view, in order, but the
    lost local SBC's own (A-only clients move to their second proxy, the DR name): grouped once,
    not scanned for every site."""
    out: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    for pos, c in enumerate(analyses.dns_checks.get("sbc", [])):
        if c.get("view_kind") == "local" and not c.get("local_only"):
            out.setdefault(c.get("view_subject"), []).append((pos, c))
    return out


def holding(servers: list[dict[str, str]], view_area: str) -> list[dict[str, str]]:
    """The servers of ``servers`` (``imsdr.runbook.verification.dns_servers``) whose configuration
    has a view of ``view_area``: a check asks one of them (another province's server has no such view)."""
    from imsdr.dns.views import area_holds

    return [s for s in servers if area_holds(s["area"], view_area)]


def _site_dns_checks(topo: Topology, analyses: Analyses, site_id: str,
                     local_checks: dict[Any, list[tuple[int, dict[str, Any]]]]) -> dict[str, Any]:
    """The SBC queries of the local networks a site failure hits, each asked of a surviving server
    that holds its view (``local_checks``: :func:`_local_sbc_checks`)."""
    servers = [s for s in analyses.dns_servers
               if s["id"] not in topo.elements or topo.elements[s["id"]].site != site_id]
    lost = (analyses.site_failures.get(site_id) or {}).get("lost_local_networks", [])
    checks = []
    for _pos, c in sorted(pc for ln in set(lost) for pc in local_checks.get(ln, ())):  # (the SBC checks' order)
        held = holding(servers, c["view_area"])
        if not held:  # (no surviving server has the view)
            continue
        server = held[0]
        checks.append({**c, "server": server["address"], "dig": server["dig"],
                       "command": c["command"].replace(f"{c['dig']} @{c['server']} ",
                                                       f"{server['dig']} @{server['address']} ", 1)})
    return {"dns_checks": checks, "dns_servers": servers}


# --- the context ------------------------------------------------------------------------------------

def _local_networks(topo: Topology) -> list[dict[str, Any]]:
    """Each local network with its SBCs, the DR SBC and the answer a UE of it gets."""
    local_networks = []
    for ln in sorted(topo.local_networks.values(), key=lambda x: x.id):
        dr = topo.dr_sbc.get(ln.id)
        local_networks.append({
            "id": ln.id,
            "name": ln.name,
            "prefixes": list(ln.prefixes),
            "home_sites": list(ln.home_sites),
            "subscribers": ln.subscribers,
            "busy_hour_erlangs": ln.busy_hour_erlangs,
            "sbcs": [s.id for s in topo.sbcs_of_ln.get(ln.id, [])],
            "dr_sbc": dr.id if dr else None,
            "answer": [s.id for s in topo.sbc_answer(ln.id)],
            "sample_source": sample_source(ln.prefixes, 4) or sample_source(ln.prefixes, 6),
        })
    return local_networks


def _site_diagrams(topo: Topology, sites: list[dict[str, Any]]) -> dict[str, Any]:
    """The failover diagram of every site whose failure was simulated."""
    site_diagrams = {}
    for site in sites:
        failure = site["failure"]
        if failure is not None:
            takeovers = {t["failed"]: t["by"] for t in failure["takeovers"]}
            site_diagrams[site["id"]] = failover_diagram(
                topo, site["id"], takeovers, failure.get("lost_local_networks", []))
    return site_diagrams


def build_context(topo: Topology, analyses: Analyses, *, inventory_name: str = "") -> dict[str, Any]:
    """Everything the templates may read."""
    elements = {el.id: _element(topo, el) for el in sorted(topo.elements.values(), key=lambda e: e.id)}
    groups = [_group(topo, g) for g in sorted(topo.groups.values(), key=lambda g: g.id)]
    regions = sorted({s.region for s in topo.sites.values()})
    diameter = _diameter(topo)
    sites = _sites(topo, analyses, elements, diameter["pairs"])
    action_of = analyses.actions.get("elements") or {}
    return {
        "context_version": CONTEXT_VERSION,
        "inventory": inventory_name,
        "network": _network(topo, regions),
        "counts": _counts(topo, groups, regions),
        "elements_by_type": _elements_by_type(topo),
        "elements": elements,
        "groups": groups,
        "groups_by_id": {g["id"]: g for g in groups},
        "local_networks": _local_networks(topo),
        "sites": sites,
        "types": type_sections(topo, analyses, elements, groups),
        "type_pages": [{"key": p.key, "title": p.title, "page": p.path} for p in _present_pages(topo)],
        "sbc_dr": _sbc_dr(topo),
        "enum_dns_design": _enum_design(topo),
        "enum_blocks": [
            {"id": b.id, "prefix": b.prefix, "style": b.style, "domain": b.domain, "length": b.length,
             "first": b.first, "last": b.last}
            for b in sorted(topo.inventory.enum_blocks, key=lambda b: b.id)
        ],
        "dns_servers": analyses.dns_servers,
        "findings": analyses.findings or {"available": False},
        "capacity_appendix": analyses.capacity_appendix or {"available": False},
        "verdicts": analyses.verdicts,
        "diagrams": {"topology": topology_diagram(topo), "sites": _site_diagrams(topo, sites)},
        "restoration_procedures": restoration_context(topo),
        "diameter": diameter,
        "toc": _toc(topo, sites),
        "element_actions": action_of,
        "operations": _operations(topo, analyses, action_of),
    }


def _diameter(topo: Topology) -> dict[str, Any]:
    from imsdr.diameter import runbook_facts

    return runbook_facts(topo)


def _sites(topo: Topology, analyses: Analyses, elements: dict[str, dict[str, Any]],
           diameter_pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each site with its elements, local networks, simulated failure, actions, DNS checks and the
    Diameter pairs whose active member it holds (``diameter_pairs``: ``diameter.pairs``, in order)."""
    pairs_at: dict[str, list[dict[str, Any]]] = {}  # site -> the pairs whose active member is there
    for pair in diameter_pairs:
        active = topo.elements.get(pair["active"])
        if active is not None:
            pairs_at.setdefault(active.site, []).append(pair)
    sites = []
    local_checks = _local_sbc_checks(analyses)
    lns = sorted(topo.local_networks.values(), key=lambda x: x.id)  # (sorted once, not per site)
    for site in sorted(topo.sites.values(), key=lambda s: s.id):
        site_els = sorted(topo.by_site.get(site.id, []), key=lambda e: (e.type.value, e.id))
        sites.append({
            "id": site.id,
            "name": site.name,
            "region": site.region,
            "power": list(site.power),
            "transmission": list(site.transmission),
            "core_subnets": list(site.core_subnets),
            "elements": [e.id for e in site_els],
            "element_count": len(site_els),
            "local_networks": [ln.id for ln in lns if site.id in ln.home_sites],
            "element_rows": [elements[e.id] for e in site_els],
            "diameter_pairs": pairs_at.get(site.id, []),
            "page": f"site-{site.id}.md",
            "failure": analyses.site_failures.get(site.id),
            "actions": (analyses.actions.get("sites") or {}).get(site.id),
            **_site_dns_checks(topo, analyses, site.id, local_checks),
        })
    return sites


def type_sections(topo: Topology, analyses: Analyses, elements: dict[str, dict[str, Any]],
                  groups: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One section per type page: its elements, groups, simulated failures and worst switchover."""
    return _divided_sections(topo, analyses, elements, groups, None, [""])[""]


def province_sections(topo: Topology, analyses: Analyses, elements: dict[str, dict[str, Any]],
                      groups: list[dict[str, Any]], owner: Mapping[str, str],
                      provinces: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """province -> its type sections (:func:`type_sections` of the elements it owns, and the groups
    with a member it owns; ``owner``: id -> province, :mod:`imsdr.runbook.split`)."""
    return _divided_sections(topo, analyses, elements, groups, owner, provinces)


def _divided_sections(topo: Topology, analyses: Analyses, elements: dict[str, dict[str, Any]],
                      groups: list[dict[str, Any]], owner: Mapping[str, str] | None,
                      parts: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """part -> its type sections, each element and group given to its parts in one pass (not
    every part filtering the whole network: 31 provinces). ``owner`` None: one part, everything."""
    action_of = analyses.actions.get("elements") or {}
    out: dict[str, dict[str, dict[str, Any]]] = {part: {} for part in parts}
    for page in TYPE_PAGES:
        els: dict[str, list[dict[str, Any]]] = {part: [] for part in parts}
        for t in page.types:
            for e in sorted(topo.by_type.get(t, []), key=lambda e: e.id):
                part = parts[0] if owner is None else owner.get(e.id)
                if part in els:
                    els[part].append(elements[e.id])
        page_groups: dict[str, list[dict[str, Any]]] = {part: [] for part in parts}
        types = set(page.types)
        for g in groups:
            if not set(g["types"]) & types:
                continue
            if owner is None:
                page_groups[parts[0]].append(g)
                continue
            for part in dict.fromkeys(owner[m] for m in g["members"] if m in owner):
                if part in page_groups:
                    page_groups[part].append(g)
        for part in parts:
            out[part][page.key] = _section(page, els[part], page_groups[part], analyses, action_of)
    return out


def _section(page: TypePage, els: list[dict[str, Any]], groups: list[dict[str, Any]], analyses: Analyses,
             action_of: Mapping[str, Any]) -> dict[str, Any]:
    failures = [
        {"element": e["id"], **analyses.element_failures[e["id"]]}
        for e in els if e["id"] in analyses.element_failures
    ]
    rows = analyses.element_rows
    times = [rows[e["id"]]["switchover_s"] for e in els if e["id"] in rows]
    times += [f["switchover_s"] for f in failures if f.get("switchover_s") is not None]
    return {
        "key": page.key,
        "title": page.title,
        "page": page.path,
        "types": list(page.types),
        "elements": els,
        "groups": groups,
        "failures": failures,
        "not_detailed": len(els) - len(failures),
        "worst_switchover_s": max(times, default=None),
        "dns_checks": analyses.dns_checks.get(page.key, []),
        "features_all": sorted(set.intersection(*(set(e["features"]) for e in els))) if els else [],
        "features_any": sorted({f for e in els for f in e["features"]}),
        "actions": [action_of[e["id"]] for e in els if e["id"] in action_of],
    }


def _network(topo: Topology, regions: list[str]) -> dict[str, Any]:
    net = topo.network
    return {
        "name": net.name,
        "operator_domain": net.operator_domain,
        "home_domains": list(net.home_domains),
        "primary_domain": net.primary_domain,
        "threegpp_domain": net.threegpp_domain,
        "country_code": net.country_code,
        "enum_suffix": net.enum_suffix,
        "deployment": net.deployment,
        "timers": net.timers.model_dump(),
        "ttl": net.ttl.model_dump(),
        "retry_responses": list(net.retry_responses),
        "sbc_name": net.dns.sbc_name,
        "sbc_fqdn": f"{net.dns.sbc_name}.{net.primary_domain}",
        "transports": [t.value for t in net.dns.transports],
        "regions": regions,
    }


def _counts(topo: Topology, groups: list[dict[str, Any]], regions: list[str]) -> dict[str, int]:
    return {
        "sites": len(topo.sites),
        "regions": len(regions),
        "local_networks": len(topo.local_networks),
        "elements": len(topo.elements),
        "pairs": sum(1 for g in groups if g["kind"] == "pair"),
        "pools": sum(1 for g in groups if g["kind"] == "pool"),
        "subscribers": sum(ln.subscribers for ln in topo.local_networks.values()),
        "busy_hour_erlangs": sum(ln.busy_hour_erlangs for ln in topo.local_networks.values()),
    }


def _elements_by_type(topo: Topology) -> list[dict[str, Any]]:
    return [
        {"type": t, "label": TYPE_LABELS[t], "count": len(topo.by_type.get(t, [])),
         "page": PAGE_OF_TYPE[t].path}
        for t in TYPE_LABELS if topo.by_type.get(t)
    ]


def _present_pages(topo: Topology) -> list[TypePage]:
    """The type pages that have elements in this network."""
    return [p for p in TYPE_PAGES if any(topo.by_type.get(t) for t in p.types)]


def _sbc_dr(topo: Topology) -> dict[str, Any]:
    sbc_dr = topo.inventory.redundancy.sbc_dr
    return {
        "layout": sbc_dr.layout if sbc_dr else "none",
        "order": list(sbc_dr.order) if sbc_dr else [],
        "hub": sbc_dr.hub if sbc_dr else None,
    }


def _toc(topo: Topology, sites: list[dict[str, Any]]) -> list[dict[str, str]]:
    toc = [{"title": "Overview", "page": "README.md"}]
    toc += [{"title": f"{p.title} DR", "page": p.path} for p in _present_pages(topo)]
    toc += [{"title": f"Site failure: {s['name']} ({s['id']})", "page": s["page"]} for s in sites]
    toc += [{"title": "DR drill", "page": "drill.md"},
            {"title": "Open findings and waivers", "page": "findings.md"},
            {"title": "Capacity appendix", "page": "capacity.md"}]
    return toc


def _operations(topo: Topology, analyses: Analyses, action_of: dict[str, Any]) -> dict[str, Any]:
    return {
        "available": bool(analyses.actions),
        "detailed": analyses.actions.get("detailed", False),
        "render_dir": analyses.actions.get("render_dir"),
        "contacts": analyses.actions.get("contacts", []),
        "recovery_targets": [{"service": k.value, "label": TYPE_LABELS[k.value], "rto": v.rto, "rpo": v.rpo}
                             for k, v in sorted(topo.inventory.recovery_targets.items(),
                                                key=lambda kv: kv[0].value)],
    }


def _enum_design(topo: Topology) -> dict[str, Any]:
    """The ENUM/DNS sync design as rendered: which server is primary, which transfers from it."""
    from imsdr.dns.records import SOA
    from imsdr.dns.views import server_layout

    design = topo.inventory.redundancy.enum_dns
    layout = server_layout(topo)
    return {
        "sync": design.sync,
        "load_sharing": design.load_sharing,
        "rendered_as": layout.sync,
        "primaries": [s.id for s in layout.primaries],
        "secondaries": [s.id for s in layout.secondaries],
        "soa_expire_s": SOA("", "", 0).expire,  # the SOA expire every rendered zone carries
        "provisioning_window_s": design.provisioning_window,
    }


def _refresh(topo: Topology, el: Element) -> int:
    from imsdr.capacity.timing import registration_refresh

    return registration_refresh(topo, el)
