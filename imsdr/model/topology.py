"""The graph model every analysis queries: indices over the inventory plus a networkx graph.

Nodes are ``site:<id>``, ``ln:<id>``, ``el:<id>`` and ``group:<id>``; edges carry a ``kind``:
``located_at``, ``member_of``, ``backs_up``, ``serves``, ``dr_for`` (SBC backs up another
local network), ``signalling``, ``diameter``, ``dns`` and ``access``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import networkx as nx

    from imsdr.inventory.build import SourceMap
    from imsdr.inventory.schema import Element, Inventory, LocalNetwork, Pair, Pool, Site

GroupKind = Literal["pair", "pool"]

# How element types are written for people (tables, diagrams, runbooks), in reading order.
TYPE_LABELS: dict[str, str] = {
    "enum_dns": "ENUM/DNS", "sbc": "SBC", "pcscf": "P-CSCF", "cscf": "CSCF", "hss": "HSS",
    "slf": "SLF", "dra": "DRA", "mgcf": "MGCF", "imgw": "IM-MGW", "as": "AS",
}

# Signalling adjacencies of an IMS core: (from type, from role) → (to type, to role), "" = any.
_SIGNALLING: tuple[tuple[str, str, str, str], ...] = (
    ("sbc", "", "pcscf", ""),
    ("pcscf", "", "cscf", "icscf"),
    ("cscf", "icscf", "cscf", "scscf"),
    ("cscf", "scscf", "as", ""),
    ("as", "", "cscf", "icscf"),
    ("as", "", "cscf", "scscf"),
    ("mgcf", "", "cscf", "icscf"),
    ("mgcf", "", "cscf", "bgcf"),
    ("mgcf", "", "imgw", ""),
)
_DIAMETER_CLIENTS: tuple[tuple[str, str], ...] = (("cscf", "icscf"), ("cscf", "scscf"), ("as", ""))


@dataclass(frozen=True, slots=True)
class Group:
    """A pair or pool, with its kind, so callers need not care which list it came from."""

    kind: GroupKind
    spec: Pair | Pool

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def members(self) -> list[str]:
        return self.spec.members

    @property
    def spare(self) -> int:
        return self.spec.spare if self.kind == "pool" else 1  # type: ignore[union-attr]


class Topology:
    """Read-only indices and graph over a validated inventory."""

    def __init__(self, inventory: Inventory, source: SourceMap | None = None,
                 enum_exceptions: object | None = None) -> None:
        self.inventory = inventory
        self.source = source
        self._with_role: dict[str, tuple[Element, ...]] = {}
        # provisioned per-number ENUM records (a file given beside the inventory, never in it):
        # every DNS plan built from this topology places them (imsdr.dns.enum_exceptions). An
        # imsdr.dns.enum_exceptions.EnumExceptions, typed as object: the model sits below dns
        # and does not import it (docs/layers.md)
        self.enum_exceptions = enum_exceptions
        self.network = inventory.network
        self.sites: dict[str, Site] = {s.id: s for s in inventory.sites}
        self.local_networks: dict[str, LocalNetwork] = {ln.id: ln for ln in inventory.local_networks}
        self.elements: dict[str, Element] = {e.id: e for e in inventory.elements}
        self.groups: dict[str, Group] = {}
        for pair in inventory.redundancy.pairs:
            self.groups[pair.id] = Group("pair", pair)
        for pool in inventory.redundancy.pools:
            self.groups[pool.id] = Group("pool", pool)
        self.groups_of: dict[str, list[Group]] = defaultdict(list)
        for group in self.groups.values():
            for member in group.members:
                self.groups_of[member].append(group)
        self.by_type: dict[str, list[Element]] = defaultdict(list)
        self.by_site: dict[str, list[Element]] = defaultdict(list)
        for el in inventory.elements:
            self.by_type[el.type.value].append(el)
            self.by_site[el.site].append(el)
        self.sbcs_of_ln: dict[str, list[Element]] = defaultdict(list)
        for el in self.by_type["sbc"]:
            for ln_id in el.serves:
                self.sbcs_of_ln[ln_id].append(el)

    # --- names ----------------------------------------------------------------------------

    def fqdn(self, element: Element | str) -> str:
        el = self.elements[element] if isinstance(element, str) else element
        return el.fqdn or f"{el.id}.{self.network.primary_domain}"

    def home_domain(self, element: Element | str) -> str:
        """The home domain the element's host name is under (the longest of
        ``network.home_domains``), else the primary one: its Diameter realm (imsdr.diameter)."""
        name = self.fqdn(element)
        best = ""
        for domain in self.network.home_domains:
            if name.endswith("." + domain) and len(domain) > len(best):
                best = domain
        return best or self.network.primary_domain

    def element_region(self, element: Element | str) -> str:
        el = self.elements[element] if isinstance(element, str) else element
        return self.sites[el.site].region

    def with_role(self, role: str) -> list[Element]:
        """The CSCFs with ``role``, in inventory order (computed once per role: runbooks ask per element)."""
        if role not in self._with_role:
            self._with_role[role] = tuple(e for e in self.by_type["cscf"] if any(r.value == role for r in e.roles))
        return list(self._with_role[role])

    def peers(self, element_id: str) -> list[str]:
        """Every element sharing a pair or pool with ``element_id``, in group order."""
        seen = {element_id}  # a set, not the list: pools of hundreds of members
        out: list[str] = []
        for group in self.groups_of.get(element_id, []):
            for m in group.members:
                if m not in seen:
                    seen.add(m)
                    out.append(m)
        return out

    # --- SBC cross-local-network DR ------------------------------------------------------------

    @cached_property
    def dr_sbc(self) -> dict[str, Element]:
        """local network id → the SBC of another local network that backs it up (ring/hub)."""
        dr = self.inventory.redundancy.sbc_dr
        result: dict[str, Element] = {}
        if dr is None or dr.layout == "none":
            return result
        if dr.layout == "ring":
            order = dr.order
            for i, ln_id in enumerate(order):
                backer = order[i - 1]
                if backer != ln_id and self.sbcs_of_ln.get(backer):
                    result[ln_id] = self.sbcs_of_ln[backer][0]
        elif dr.layout == "hub" and dr.hub in self.elements:
            hub = self.elements[dr.hub]
            for ln_id in self.local_networks:
                if ln_id not in hub.serves:
                    result[ln_id] = hub
        return result

    def sbc_answer(self, ln_id: str) -> list[Element]:
        """SBCs a UE of ``ln_id`` is given, in order: local ones first, then the DR SBC."""
        local = list(self.sbcs_of_ln.get(ln_id, []))
        backup = self.dr_sbc.get(ln_id)
        if backup is not None and backup not in local:
            local.append(backup)
        return local

    # --- graph -----------------------------------------------------------------------------------

    @cached_property
    def graph(self) -> nx.MultiDiGraph:
        import networkx as nx  # imported on first use: ~160 ms that most commands never need

        g = nx.MultiDiGraph()
        for site in self.sites.values():
            g.add_node(f"site:{site.id}", kind="site", region=site.region)
        for ln in self.local_networks.values():
            g.add_node(f"ln:{ln.id}", kind="local_network")
            for site_id in ln.home_sites:
                g.add_edge(f"ln:{ln.id}", f"site:{site_id}", kind="homed_at")
        for el in self.elements.values():
            g.add_node(f"el:{el.id}", kind="element", type=el.type.value, site=el.site)
            g.add_edge(f"el:{el.id}", f"site:{el.site}", kind="located_at")
            for ln_id in el.serves:
                g.add_edge(f"el:{el.id}", f"ln:{ln_id}", kind="serves")
                g.add_edge(f"ln:{ln_id}", f"el:{el.id}", kind="access")
            for pcscf in el.pcscfs:
                g.add_edge(f"el:{el.id}", f"el:{pcscf}", kind="signalling")
        for group in self.groups.values():
            g.add_node(f"group:{group.id}", kind=group.kind)
            for member in group.members:
                g.add_edge(f"el:{member}", f"group:{group.id}", kind="member_of")
                for other in group.members:
                    if other != member:
                        g.add_edge(f"el:{other}", f"el:{member}", kind="backs_up", group=group.id)
        for ln_id, sbc in self.dr_sbc.items():
            g.add_edge(f"el:{sbc.id}", f"ln:{ln_id}", kind="dr_for")
        self._add_core_adjacencies(g)
        return g

    def scope(self, element: Element | str) -> str:
        """The IMS core an element belongs to: its site's province ('' when the site names none).

        Core adjacencies (signalling, Diameter, DNS) are drawn only inside one scope, so a national
        inventory of many provincial cores does not become an all-to-all graph (millions of edges).
        """
        el = self.elements[element] if isinstance(element, str) else element
        return self.sites[el.site].province or ""

    def _add_core_adjacencies(self, g: nx.MultiDiGraph) -> None:
        by_type: dict[tuple[str, str], list[Element]] = defaultdict(list)
        by_role: dict[tuple[str, str], list[Element]] = defaultdict(list)
        members: dict[str, list[Element]] = defaultdict(list)
        for el in self.elements.values():
            scope = self.scope(el)
            members[scope].append(el)
            by_type[(scope, el.type.value)].append(el)
            for role in el.roles:
                by_role[(scope, role.value)].append(el)

        def matching(scope: str, type_: str, role: str) -> list[Element]:
            return by_role.get((scope, role), []) if role else by_type.get((scope, type_), [])

        def in_scope_or_all(scope: str, types: tuple[str, ...]) -> list[Element]:
            found = [el for t in types for el in by_type.get((scope, t), [])]
            return found or [el for t in types for el in self.by_type[t]]

        edges: list[tuple[str, str, dict[str, str]]] = []
        signalling = {"kind": "signalling"}
        for scope in members:
            for src_type, src_role, dst_type, dst_role in _SIGNALLING:
                if src_type == "sbc":
                    targets = in_scope_or_all(scope, ("pcscf",))
                    for sbc in by_type.get((scope, "sbc"), []):
                        if not sbc.pcscfs:  # no explicit list: any P-CSCF of its core
                            edges.extend((f"el:{sbc.id}", f"el:{dst.id}", signalling) for dst in targets)
                    continue
                dsts = matching(scope, dst_type, dst_role)
                for src in matching(scope, src_type, src_role):
                    edges.extend((f"el:{src.id}", f"el:{dst.id}", signalling)
                                 for dst in dsts if src.id != dst.id)
            databases = in_scope_or_all(scope, ("hss", "slf"))
            for client_type, role in _DIAMETER_CLIENTS:
                for client in matching(scope, client_type, role):
                    edges.extend((f"el:{client.id}", f"el:{db.id}", {"kind": "diameter"}) for db in databases)
            servers = in_scope_or_all(scope, ("enum_dns",))
            for el in members[scope]:
                if el.type.value != "enum_dns":
                    edges.extend((f"el:{el.id}", f"el:{dns.id}", {"kind": "dns"}) for dns in servers)
        g.add_edges_from(edges)

    def edges_of_kind(self, kind: str) -> list[tuple[str, str]]:
        return [(u, v) for u, v, k in self.graph.edges(data="kind") if k == kind]
