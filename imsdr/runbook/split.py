"""Runbooks of a national network, split per province (service area) so a page stays readable.

A network whose sites name two or more ``province`` values gets, for each element-type page, the
DR drill and the capacity appendix, one page per province (``pcscf-<province>.md``: that
province's elements, groups, failures, local networks, checks and capacity rows) and an index
page under the usual name (``pcscf.md``) that links them. Links between pages keep working: the
index stands where the single page stood, and site pages were per site already. A network with
one province (or none named) renders exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from imsdr.runbook.context import TYPE_PAGES, province_sections

if TYPE_CHECKING:
    from imsdr.model.topology import Topology
    from imsdr.runbook.context import Analyses
    from imsdr.runbook.render import Page

MAX_PAGE_BYTES = 500 * 1024  # what one page may weigh; tests hold the national example to it


def provinces_of(topo: Topology) -> dict[str, str]:
    """site id -> province, when the sites name two or more provinces; {} otherwise."""
    named = {s.id: s.province for s in topo.sites.values() if s.province}
    if len(set(named.values())) < 2:
        return {}
    return {s.id: s.province or "unassigned" for s in topo.sites.values()}


def province_pages(topo: Topology, analyses: Analyses, context: Mapping[str, Any]) -> list[Page] | None:
    """The split page set (index pages included), or None when the network is not split."""
    from imsdr.runbook.render import Page

    province_of = provinces_of(topo)
    if not province_of:
        return None
    provinces = sorted(set(province_of.values()))
    present = {p["key"] for p in context["type_pages"]}
    owner = _owners(topo, province_of)
    domains = _domains(topo, province_of)
    shared_domains = {topo.network.primary_domain, topo.network.threegpp_domain}
    elements = context["elements"]
    groups = context["groups"]
    capacity = _capacity(context["capacity_appendix"], owner, provinces)
    per: dict[str, dict[str, Any]] = {}
    # each list of verification queries split between the provinces once (the sections of every
    # province start from the same list of the type's checks)
    split: dict[int, tuple[list[Any], dict[str, list[Any]]]] = {}
    divided = province_sections(topo, analyses, elements, groups, owner, provinces)
    for prov in provinces:
        sections = divided[prov]
        for section in sections.values():
            checks = section["dns_checks"]
            known = split.get(id(checks))
            if known is None or known[0] is not checks:
                known = split[id(checks)] = (checks, _split_checks(checks, provinces, owner, domains, shared_domains))
            section["dns_checks"] = list(known[1][prov])
        per[prov] = {
            "types": sections,
            "sites": [s for s in context["sites"] if province_of.get(s["id"]) == prov],
            "local_networks": [ln for ln in context["local_networks"] if owner.get(ln["id"]) == prov],
            "capacity_appendix": capacity[prov],
        }
    pages: list[Page] = [Page("README.md", "README.md.j2", "Overview", {})]
    for tp in TYPE_PAGES:
        if tp.key not in present:
            continue
        stem = tp.path.removesuffix(".md")
        rows = [{"province": prov, "page": f"{stem}-{prov}.md",
                 "elements": len(per[prov]["types"][tp.key]["elements"]),
                 "groups": len(per[prov]["types"][tp.key]["groups"]),
                 "worst_switchover_s": per[prov]["types"][tp.key]["worst_switchover_s"]} for prov in provinces]
        pages.append(Page(tp.path, "province-index.md.j2", f"{tp.title} DR",
                          {"index": {"title": f"{tp.title} disaster recovery", "rows": rows,
                                     "what": f"{tp.title} elements"}}))
        pages += [Page(f"{stem}-{prov}.md", tp.template, f"{tp.title} DR: {prov}",
                       {"types": per[prov]["types"], "local_networks": per[prov]["local_networks"]})
                  for prov in provinces]
    pages += [Page(s["page"], "site.md.j2", f"Site failure: {s['id']}", {"site": s}) for s in context["sites"]]
    for path, template, title, key in (("drill.md", "drill.md.j2", "DR drill", "sites"),
                                       ("capacity.md", "capacity.md.j2", "Capacity appendix", "capacity_appendix")):
        stem = path.removesuffix(".md")
        rows = [{"province": prov, "page": f"{stem}-{prov}.md", "elements": sum(1 for p in owner.values() if p == prov),
                 "groups": None, "worst_switchover_s": None} for prov in provinces]
        extra: dict[str, Any] = {"index": {"title": title, "rows": rows, "what": "inventory objects"}}
        if key == "capacity_appendix":  # network-wide rows (no one province's subject) stay on the index
            extra["capacity_appendix"] = capacity[None]
            pages.append(Page(path, "capacity.md.j2", title, extra))
        else:
            pages.append(Page(path, "province-index.md.j2", title, extra))
        pages += [Page(f"{stem}-{prov}.md", template, f"{title}: {prov}", {key: per[prov][key]}) for prov in provinces]
    pages.append(Page("findings.md", "findings.md.j2", "Open findings and waivers", {}))
    return pages


def _owners(topo: Topology, province_of: dict[str, str]) -> dict[str, str]:
    """Every element, group, site and local network id -> its province."""
    owner = dict(province_of)
    for el in topo.elements.values():
        owner[el.id] = province_of.get(el.site, "unassigned")
    for group in topo.groups.values():
        members = [m for m in group.members if m in topo.elements]
        if members:
            owner[group.id] = owner[members[0]]
    for ln in topo.local_networks.values():
        if ln.home_sites and ln.home_sites[0] in province_of:
            owner[ln.id] = province_of[ln.home_sites[0]]
    return owner


def _domains(topo: Topology, province_of: dict[str, str]) -> dict[str, set[str]]:
    """province -> the home domains its elements' names are under."""
    out: dict[str, set[str]] = {}
    homes = set(topo.network.home_domains)
    for el in topo.elements.values():
        # the longest home domain the name is or is under: its suffixes, longest first (a few
        # labels, not every home domain of a national network per element)
        fqdn = topo.fqdn(el)
        dot = -1
        while True:
            suffix = fqdn[dot + 1:]
            if suffix in homes:
                out.setdefault(province_of.get(el.site, "unassigned"), set()).add(suffix)
                break
            dot = fqdn.find(".", dot + 1)
            if dot < 0:
                break
    return out


def _split_checks(checks: list[Any], provinces: list[str], owner: dict[str, str],
                  domains: dict[str, set[str]], shared: set[str]) -> dict[str, list[Any]]:
    """province -> the verification queries of ``checks`` that belong to its pages, in order: asked
    from one of its views (or the default view) about a name that is not another province's own
    (no domain of another province's elements, outside its own and the shared ones, is the name
    or a parent of it)."""
    known = set().union(*domains.values()) - shared if domains else set()
    out: dict[str, list[Any]] = {prov: [] for prov in provinces}
    everywhere = out.keys()
    hits_of: dict[str, set[str]] = {}  # qname -> its known domains (a pool's name is asked of every site view)
    for check in checks:
        qname = str(check.get("qname", ""))
        hits = hits_of.get(qname)
        if hits is None:
            hits = hits_of[qname] = _known_suffixes(qname, known)
        if check.get("view_kind") == "default":
            targets: Iterable[str] = everywhere
        else:
            subject = owner.get(check.get("view_subject"))  # type: ignore[arg-type]
            targets = (subject,) if subject in out else ()
        for prov in targets:
            if not hits or hits <= domains.get(prov, set()):
                out[prov].append(check)
    return out


def _known_suffixes(qname: str, known: set[str]) -> set[str]:
    """The names of ``known`` that are ``qname`` or a parent of it."""
    hits = {qname} & known
    dot = qname.find(".")
    while dot >= 0:
        if qname[dot + 1:] in known:
            hits.add(qname[dot + 1:])
        dot = qname.find(".", dot + 1)
    return hits


def _capacity(appendix: Mapping[str, Any], owner: dict[str, str],
              provinces: list[str]) -> dict[str | None, dict[str, Any]]:
    """province -> the capacity appendix with the rows whose subject is that province's (None:
    no province's), each row's province found once."""
    keys: list[str | None] = [*provinces, None]
    if not appendix.get("available"):
        return {prov: dict(appendix) for prov in keys}
    sections: dict[str | None, list[dict[str, Any]]] = {prov: [] for prov in keys}
    for section in appendix.get("sections", []):
        rows: dict[str | None, list[Any]] = {prov: [] for prov in keys}
        for row in section.get("rows", []):
            prov = _row_province(row, owner)
            if prov in rows:
                rows[prov].append(row)
        for prov in keys:
            sections[prov].append({**section, "rows": rows[prov]})
    return {prov: {**appendix, "sections": sections[prov]} for prov in keys}


def _row_province(row: Mapping[str, Any], owner: dict[str, str]) -> str | None:
    subject = str(row.get("subject", ""))
    for token in subject.replace("(", " ").replace(")", " ").replace(",", " ").split():
        if token in owner:
            return owner[token]
    return None
