"""Topology export for ``imsdr graph``: Mermaid flowchart or Graphviz DOT.

Sites are groups (Mermaid subgraphs / DOT clusters) holding their elements; local networks sit
in their own group. Edges: a local network's users reach its SBCs (access), the two members of
a 1+1 pair are linked (redundancy), pool members link to a pool node, and a DR SBC points at
each local network it backs up (DR). Output is deterministic: everything in inventory order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from imsdr.model.topology import TYPE_LABELS
from imsdr.output.markdown import mermaid_text

if TYPE_CHECKING:
    from imsdr.model.topology import Topology



@dataclass
class View:
    """The part of the topology to draw (all of it, or one site and what it depends on)."""

    sites: list[str] = field(default_factory=list)
    elements: dict[str, list[str]] = field(default_factory=dict)  # site → element ids
    local_networks: list[str] = field(default_factory=list)
    access: list[tuple[str, str]] = field(default_factory=list)  # (ln, sbc)
    pairs: list[tuple[str, str, str]] = field(default_factory=list)  # (group, a, b)
    pools: list[tuple[str, list[str]]] = field(default_factory=list)  # (group, members drawn)
    dr: list[tuple[str, str]] = field(default_factory=list)  # (sbc, ln)


def build_view(topo: Topology, site: str | None = None) -> View:
    """Select what to draw. With ``site``: its elements, their pair/pool peers, the local networks
    its SBCs serve or back up, and the DR SBCs of those local networks."""
    els = topo.elements
    if site is None:
        chosen = set(els)
        lns = set(topo.local_networks)
    else:
        here = {e.id for e in topo.by_site.get(site, [])}
        chosen = set(here)
        for el_id in here:
            chosen.update(topo.peers(el_id))
        lns = {ln_id for el_id in here for ln_id in els[el_id].serves}
        lns.update(ln_id for ln_id, sbc in topo.dr_sbc.items() if sbc.id in here)
        lns.update(ln_id for ln_id, ln in topo.local_networks.items() if site in ln.home_sites)
        for ln_id in list(lns):
            backer = topo.dr_sbc.get(ln_id)
            if backer is not None:
                chosen.add(backer.id)
            chosen.update(s.id for s in topo.sbcs_of_ln.get(ln_id, []))
    view = View()
    for el in topo.inventory.elements:
        if el.id in chosen:
            view.elements.setdefault(el.site, []).append(el.id)
    view.sites = [s for s in topo.sites if s in view.elements or s == site]
    view.local_networks = [ln for ln in topo.local_networks if ln in lns]
    for ln_id in view.local_networks:
        for sbc in topo.sbcs_of_ln.get(ln_id, []):
            if sbc.id in chosen:
                view.access.append((ln_id, sbc.id))
    for group in topo.groups.values():
        members = [m for m in group.members if m in chosen and m in els]
        if len(members) < 2 and not (site is None and members):
            continue
        if group.kind == "pair" and len(members) == 2:
            view.pairs.append((group.id, members[0], members[1]))
        else:
            view.pools.append((group.id, members))
    for ln_id, sbc in topo.dr_sbc.items():
        if ln_id in lns and sbc.id in chosen:
            view.dr.append((sbc.id, ln_id))
    view.dr.sort(key=lambda x: view.local_networks.index(x[1]))
    return view


# --- Mermaid ---------------------------------------------------------------------------------

def _mid(kind: str, ident: str) -> str:
    return f"{kind}_{ident.replace('-', '_')}"


def _mlabel(text: str) -> str:
    """A quoted Mermaid label: every character Mermaid could read as syntax as an entity code."""
    return '"' + mermaid_text(text) + '"'


def to_mermaid(topo: Topology, site: str | None = None) -> str:
    view = build_view(topo, site)
    els = topo.elements
    out = ["flowchart LR"]
    for site_id in view.sites:
        s = topo.sites[site_id]
        title = _mlabel(f"{s.name} ({site_id}), region {s.region}")
        out.append(f"  subgraph {_mid('site', site_id)}[{title}]")
        for el_id in view.elements.get(site_id, []):
            el = els[el_id]
            out.append(f"    {_mid('el', el_id)}[{_mlabel(f'{el_id} ({TYPE_LABELS[el.type.value]})')}]")
        out.append("  end")
    if view.local_networks:
        out.append(f"  subgraph local_networks[{_mlabel('local networks')}]")
        for ln_id in view.local_networks:
            ln = topo.local_networks[ln_id]
            out.append(f"    {_mid('ln', ln_id)}([{_mlabel(f'{ln.name} ({ln_id})')}])")
        out.append("  end")
    for group_id, _members in view.pools:
        spare = topo.groups[group_id].spare
        out.append(f"  {_mid('pool', group_id)}{{{{{_mlabel(f'{group_id} (pool N+{spare})')}}}}}")
    for ln_id, sbc_id in view.access:
        out.append(f"  {_mid('ln', ln_id)} --> {_mid('el', sbc_id)}")
    for group_id, a, b in view.pairs:
        out.append(f"  {_mid('el', a)} <-->|{_mlabel(f'{group_id} 1+1')}| {_mid('el', b)}")
    for group_id, members in view.pools:
        for member in members:
            out.append(f"  {_mid('el', member)} --- {_mid('pool', group_id)}")
    for sbc_id, ln_id in view.dr:
        out.append(f"  {_mid('el', sbc_id)} -.->|{_mlabel('DR')}| {_mid('ln', ln_id)}")
    return "\n".join(out) + "\n"


# --- the failed state (site pages, `imsdr graph --fail`) ------------------------------------------

def lost_local_networks(topo: Topology, failed: Iterable[str]) -> list[str]:
    """The local networks whose users must re-register: one of their SBCs failed (the networks a
    failed SBC serves: ``Topology.sbcs_of_ln`` lists each SBC under those, read from the failed
    ones rather than from every local network)."""
    lost: set[str] = set()
    for ident in set(failed):
        el = topo.elements.get(ident)
        if el is not None and el.type.value == "sbc":
            lost.update(el.serves)
    return sorted(lost)


def failed_state_mermaid(topo: Topology, failed: Iterable[str], takeovers: Mapping[str, Sequence[str]],
                         lost: Iterable[str] = ()) -> str:
    """The failed elements (red, inside their sites; a site whose every element failed is titled
    FAILED) with an arrow from each to what takes over, or to "no takeover"; the ``lost`` local
    networks re-register with their surviving SBCs. The site pages draw a site's failure with it,
    ``imsdr graph --fail`` any failure."""
    els = topo.elements
    gone = [e for e in sorted(set(failed)) if e in els]
    gone_set = set(gone)
    backers = {e: [b for b in takeovers.get(e, []) if b in els and b not in gone_set] for e in gone}
    by_site: dict[str, list[str]] = {}
    for el_id in gone:
        by_site.setdefault(els[el_id].site, []).append(el_id)
    survivors: dict[str, list[str]] = {}
    for el_id in gone:
        for backer in backers[el_id]:
            at = survivors.setdefault(els[backer].site, [])
            if backer not in at:
                at.append(backer)
    lines = ["flowchart LR"]
    for site_id in sorted(by_site):
        site = topo.sites[site_id]
        whole = gone_set >= {e.id for e in topo.by_site.get(site_id, [])}
        title = f"FAILED: {site.name} ({site_id})" if whole else f"{site.name} ({site_id})"
        lines.append(f"  subgraph {_mid('site', site_id)}[{_mlabel(title)}]")
        for el_id in [*by_site[site_id], *sorted(survivors.pop(site_id, []))]:
            lines.append(f"    {_element_node(topo, el_id)}")
        lines.append("  end")
    for other_site in sorted(survivors):
        s = topo.sites[other_site]
        lines.append(f"  subgraph {_mid('site', other_site)}[{_mlabel(f'{s.name} ({other_site})')}]")
        for el_id in sorted(survivors[other_site]):
            lines.append(f"    {_element_node(topo, el_id)}")
        lines.append("  end")
    lost_lns = sorted(set(lost))
    for ln_id in lost_lns:
        ln = topo.local_networks[ln_id]
        lines.append(f"  {_mid('ln', ln_id)}([{_mlabel(f'{ln.name} users')}])")
    for el_id in gone:
        if not backers[el_id]:
            lines.append(f"  {_mid('el', el_id)} --x {_mid('none', el_id)}[{_mlabel('no takeover')}]")
        for backer in backers[el_id]:
            lines.append(f"  {_mid('el', el_id)} ==>|takes over| {_mid('el', backer)}")
    for ln_id in lost_lns:
        for sbc in topo.sbc_answer(ln_id):
            if sbc.id not in gone_set:
                lines.append(f"  {_mid('ln', ln_id)} -.->|re-register| {_mid('el', sbc.id)}")
    lines.append("  classDef failed fill:#f8d7da,stroke:#b02a37")
    if gone:
        lines.append(f"  class {','.join(_mid('el', e) for e in gone)} failed")
    return "\n".join(lines) + "\n"


def _element_node(topo: Topology, el_id: str) -> str:
    el = topo.elements[el_id]
    return f"{_mid('el', el_id)}[{_mlabel(f'{el_id} {TYPE_LABELS[el.type.value]}')}]"


# --- DOT ----------------------------------------------------------------------------------------

def _q(text: str) -> str:
    """A DOT quoted string: backslash and quote escaped, '\\n' for line breaks, no other control
    character."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + "".join(ch if ch.isprintable() else " " for ch in text) + '"'


def to_json(topo: Topology, site: str | None = None, inventory: str | None = None) -> str:
    """The same selection as the diagrams, for pipelines."""
    from imsdr.output.jsonout import dumps, envelope

    view = build_view(topo, site)
    return dumps(envelope("graph", {
        "format": "imsdr.graph/1",
        "site": site,
        "sites": [{"id": s, "region": topo.sites[s].region, "elements": [
            {"id": e, "type": topo.elements[e].type.value} for e in view.elements.get(s, [])]}
            for s in view.sites],
        "local_networks": view.local_networks,
        "access": [{"local_network": ln, "sbc": sbc} for ln, sbc in view.access],
        "pairs": [{"group": g, "members": [a, b]} for g, a, b in view.pairs],
        "pools": [{"group": g, "members": members} for g, members in view.pools],
        "dr": [{"sbc": sbc, "local_network": ln} for sbc, ln in view.dr],
    }, inventory))


def to_dot(topo: Topology, site: str | None = None) -> str:
    view = build_view(topo, site)
    els = topo.elements
    title = topo.network.name + (f" - site {site}" if site else "")
    out = [
        "digraph imsdr {",
        f"  graph [rankdir=LR, label={_q(title)}, fontname=Helvetica];",
        "  node [shape=box, fontname=Helvetica];",
        "  edge [fontname=Helvetica];",
    ]
    for site_id in view.sites:
        s = topo.sites[site_id]
        out.append(f"  subgraph {_q('cluster_site_' + site_id)} {{")
        out.append(f"    label={_q(f'{s.name} ({site_id})' + chr(10) + f'region {s.region}')};")
        for el_id in view.elements.get(site_id, []):
            el = els[el_id]
            out.append(f"    {_q('el:' + el_id)} [label={_q(el_id + chr(10) + TYPE_LABELS[el.type.value])}, "
                       f"class={_q(el.type.value)}];")
        out.append("  }")
    if view.local_networks:
        out.append(f"  subgraph {_q('cluster_local_networks')} {{")
        out.append(f"    label={_q('local networks')};")
        for ln_id in view.local_networks:
            ln = topo.local_networks[ln_id]
            out.append(f"    {_q('ln:' + ln_id)} [shape=ellipse, label={_q(f'{ln.name} ({ln_id})')}, "
                       "class=\"local_network\"];")
        out.append("  }")
    for group_id, _members in view.pools:
        spare = topo.groups[group_id].spare
        text = _q(f"{group_id}\npool N+{spare}")
        out.append(f"  {_q('group:' + group_id)} [shape=hexagon, label={text}, class=\"pool\"];")
    for ln_id, sbc_id in view.access:
        out.append(f"  {_q('ln:' + ln_id)} -> {_q('el:' + sbc_id)} [class=\"access\"];")
    for group_id, a, b in view.pairs:
        out.append(f"  {_q('el:' + a)} -> {_q('el:' + b)} [dir=both, style=bold, label={_q(group_id)}, "
                   "class=\"pair\"];")
    for group_id, members in view.pools:
        for member in members:
            out.append(f"  {_q('el:' + member)} -> {_q('group:' + group_id)} [arrowhead=none, style=dotted, "
                       "class=\"pool_member\"];")
    for sbc_id, ln_id in view.dr:
        out.append(f"  {_q('el:' + sbc_id)} -> {_q('ln:' + ln_id)} [style=dashed, color=red, label=\"DR\", "
                   "class=\"dr\"];")
    out.append("}")
    return "\n".join(out) + "\n"
