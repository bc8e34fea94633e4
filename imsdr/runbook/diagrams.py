"""Mermaid diagrams for the runbook: the topology (sites as subgraphs) and per-site failover.

Node ids are derived from inventory ids (lowercase letters, digits and '-'), with '-' mapped to
'_' and a kind prefix, so they never collide and never contain Mermaid operators. Label text is
quoted and every character Mermaid could read as syntax is written as a Mermaid entity code
(``#37;`` for '%', so a name holding ``%%{init: ...}%%`` is no directive; ``#lt;`` for '<', so
it is no HTML), which Mermaid shows as the character itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from imsdr.model.topology import TYPE_LABELS
from imsdr.output.markdown import mermaid_text

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

# Above this many elements the index diagram shows sites, not elements (readability, size).
ELEMENT_DIAGRAM_LIMIT = 80



def node_id(kind: str, ident: str) -> str:
    return f"{kind}_{ident.replace('-', '_')}"


def label(text: str) -> str:
    return f'"{mermaid_text(text)}"'


def edge(text: str) -> str:
    """Text for an edge label between pipes (unquoted)."""
    return mermaid_text(text, quoted=False)


def element_node(el: Element) -> str:
    return f"{node_id('el', el.id)}[{label(f'{el.id} {TYPE_LABELS[el.type.value]}')}]"


def _pairs_of(members: Sequence[str], kind: str) -> Iterable[tuple[str, str]]:
    """Links drawn for a redundancy group: a pair is one link; a pool is a chain (not a mesh)."""
    if len(members) < 2:
        return
    if kind == "pair" or len(members) == 2:
        for other in members[1:]:
            yield members[0], other
        return
    yield from zip(members, members[1:], strict=False)


def topology_diagram(topo: Topology) -> str:
    """The topology as ``imsdr graph`` draws it (:func:`imsdr.output.topology.to_mermaid`: sites
    as subgraphs, pairs and pools, access and DR links); above :data:`ELEMENT_DIAGRAM_LIMIT`
    elements, sites instead of elements (a national network's elements are past what Mermaid
    draws; ``imsdr graph --site`` draws one site's)."""
    from imsdr.output.topology import to_mermaid

    if len(topo.elements) > ELEMENT_DIAGRAM_LIMIT:
        return _site_level_diagram(topo)
    return to_mermaid(topo)


def _site_level_diagram(topo: Topology) -> str:
    """National scale: sites as nodes inside region subgraphs; links count redundancy between sites."""
    lines = ["flowchart LR"]
    regions: dict[str, list[str]] = {}
    for site in topo.sites.values():
        regions.setdefault(site.region, []).append(site.id)
    for region in sorted(regions):
        lines.append(f"  subgraph {node_id('region', region)}[{label('region ' + region)}]")
        for site_id in sorted(regions[region]):
            count = len(topo.by_site.get(site_id, []))
            site = topo.sites[site_id]
            text = label(f"{site.name} ({site_id}): {count} elements")
            lines.append(f"    {node_id('site', site_id)}[{text}]")
        lines.append("  end")
    links: dict[tuple[str, str], int] = {}
    for group in topo.groups.values():
        members = [m for m in group.members if m in topo.elements]
        for a, b in _pairs_of(members, group.kind):
            sa, sb = sorted((topo.elements[a].site, topo.elements[b].site))
            if sa != sb:
                links[(sa, sb)] = links.get((sa, sb), 0) + 1
    for (sa, sb), count in sorted(links.items()):
        text = edge(f"{count} redundancy links")
        lines.append(f"  {node_id('site', sa)} <-.->|{text}| {node_id('site', sb)}")
    dr_links: dict[tuple[str, str], int] = {}
    for ln_id, sbc in topo.dr_sbc.items():
        for local in topo.sbcs_of_ln.get(ln_id, [])[:1]:
            if local.site != sbc.site:
                key = (sbc.site, local.site)
                dr_links[key] = dr_links.get(key, 0) + 1
    for (backer, backed), count in sorted(dr_links.items()):
        text = edge(f"SBC DR x{count}")
        lines.append(f"  {node_id('site', backer)} -.->|{text}| {node_id('site', backed)}")
    return "\n".join(lines) + "\n"


def failover_diagram(
    topo: Topology,
    site_id: str,
    takeovers: Mapping[str, Sequence[str]],
    lost_local_networks: Iterable[str] = (),
) -> str:
    """A failed site (red) with arrows from each failed element to what takes over: the drawing
    ``imsdr graph --fail SITE`` prints (:func:`imsdr.output.topology.failed_state_mermaid`)."""
    from imsdr.output.topology import failed_state_mermaid

    return failed_state_mermaid(topo, [e.id for e in topo.by_site.get(site_id, [])], takeovers,
                                lost_local_networks)
