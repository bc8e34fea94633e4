"""The load model: who carries whose traffic, normally and after failures.

Load is expressed as *flows*. A flow is an amount of traffic (users or Erlangs) with an ordered list
of *tiers* of candidate elements: the first tier with a surviving member carries it, shared among
its survivors (in proportion to capacity, or equally when a capacity is missing). A flow whose
tiers are all down is *unserved*. Access flows have a second stage: whichever SBC carries the
users hands them to that SBC's P-CSCF list.

* SBC: each local network's subscribers, shared equally by its SBCs; tiers: the SBC, the other
  SBCs of the local network, then the DR SBC of the ring/hub (``Topology.dr_sbc``).
* P-CSCF: the serving SBC's list — one load-sharing tier (DNS load sharing, the recommended
  mode), or one tier per entry when the P-CSCFs are an active-standby pair or a static pool.
* S-CSCF: all subscribers shared by the S-CSCF pools (by capacity) and inside a pool by
  capacity, × (1 + registration share × (restoration cost − 1)) where restoration data is on;
  tiers follow the pool's selection (static: next member; fixed: none; otherwise all peers).
* HSS/SLF: all subscribers (HSS × (1 + restoration overhead) when restoration data is on);
  a pair's mate takes over (active-standby: one flow on the first member).
* DRA: the subscribers of its province (its clients' Cx/Dx/Sh requests all pass through it,
  imsdr.diameter); sized in Diameter transactions per second (``dimensions.py``, ``storm.py``),
  so it has no capacity in users; the pair's mate takes over, losing the pair loses the province.
* MGCF/IM-MGW: the pool's busy-hour Erlangs, shared by Erlang capacity (circuits at the grade
  of service, Erlang B); the peers take over.
* ENUM/DNS, AS and CSCFs without the S-CSCF role: no load unit; they carry every subscriber
  structurally (infinite capacity) so losing every set/peer shows as an outage.

One module past 600 lines: every load unit (per element type) is built from the same flows,
weights and capacities of one pass over the topology; split per type, each part would rebuild
that pass or take it as a parameter list of a dozen indices.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import TYPE_CHECKING, Any

from imsdr.capacity.erlang import carried_traffic
from imsdr.capacity.formulas import cscf_restoration_factor, exact
from imsdr.model.rfc2782 import first_pick_probabilities
from imsdr.model.selection import sbc_pcscf_targets, srv_tiers

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Group, Topology

USERS = "users"
UnitUsers = tuple["Group | None", list[str], Fraction, tuple[tuple[str, Fraction], ...]]
ERLANGS = "erlangs"


@dataclass(frozen=True, slots=True)
class Flow:
    """Traffic that the first surviving tier carries."""

    id: str
    service: str  # sbc (access, with the P-CSCF stage), scscf, hss, slf, mgcf, imgw, enum_dns, as, cscf
    unit: str  # users | erlangs
    amount: Fraction  # in load units (S-CSCF: user-equivalents incl. restoration overhead)
    tiers: tuple[tuple[str, ...], ...]
    ln_weights: tuple[tuple[str, Fraction], ...]  # how unserved traffic splits over local networks
    users_per_unit: Fraction = Fraction(1)  # converts load units back to users
    stage2: bool = False  # access flow: then the serving SBC's P-CSCF tiers
    structural: bool = False  # no capacity unit: only "does anything take over" matters
    #: DNS-selected hop: the SRV weights of each tier's members (aligned with ``tiers``); the
    #: first tier with a survivor carries the flow, split by the RFC 2782 first-try probabilities
    #: of its surviving records (:func:`srv_split`), as ``resolve`` computes them
    srv: tuple[tuple[int, ...], ...] | None = None

    @property
    def origin(self) -> str | None:
        return self.tiers[0][0] if self.tiers and self.tiers[0] else None


def element_capacity(el: Element, gos: float, num: Callable[[Any], Any] = exact) -> Fraction | None:
    """Capacity in the unit the load model uses for the element's type (None: not modelled)."""
    cap = el.capacity
    t = el.type.value
    if t in ("sbc", "pcscf", "cscf"):
        return num(cap.registered_users) if cap.registered_users else None
    if t in ("hss", "slf"):
        value = cap.subscribers or cap.registered_users
        return num(value) if value else None
    if t in ("mgcf", "imgw"):
        if cap.circuits:
            return num(round(carried_traffic(cap.circuits, gos), 3))
        return num(cap.busy_hour_erlangs) if cap.busy_hour_erlangs else None
    return None


def is_scscf(el: Element) -> bool:
    return el.type.value == "cscf" and any(r.value == "scscf" for r in el.roles)


class LoadModel:
    """Flows, capacities and normal loads of one topology (built once, read by every analysis)."""

    def __init__(self, topology: Topology, exact_numbers: bool = True) -> None:
        """``exact_numbers``: Fractions (audit-exact, for the capacity report) or floats (fast, for
        scenario sweeps)."""
        self.topology = topology
        self.num: Callable[[Any], Any] = exact if exact_numbers else _to_float
        net = topology.network
        self.cm = net.capacity_model
        self.flows: list[Flow] = []
        self.unit: dict[str, str] = {}
        self.gos: dict[str, float] = {}
        self.trunk_erlangs: dict[str, Fraction] = {}  # group id → busy-hour Erlangs
        for group in topology.groups.values():
            if group.kind == "pool" and self._group_type(group) in ("mgcf", "imgw"):
                pool = group.spec
                gos = pool.grade_of_service or self.cm.grade_of_service  # type: ignore[union-attr]
                for m in group.members:
                    self.gos.setdefault(m, gos)
                if pool.busy_hour_erlangs:  # type: ignore[union-attr]
                    self.trunk_erlangs[group.id] = self.num(pool.busy_hour_erlangs)  # type: ignore[union-attr]
        self._share_cache: dict[tuple[str, ...], dict[str, Fraction]] = {}
        self.capacity: dict[str, Fraction | None] = {
            el.id: element_capacity(el, self.gos.get(el.id, self.cm.grade_of_service), self.num)
            for el in topology.elements.values()
        }
        #: capacity a survivor offers after a failure: trunks are held to the failure grade of
        #: service (never stricter than the normal one); every other type as normally
        self.capacity_failure: dict[str, Fraction | None] = dict(self.capacity)
        for el in topology.elements.values():
            if el.type.value in ("mgcf", "imgw") and el.capacity.circuits:
                gos = self.failure_gos(self.gos.get(el.id, self.cm.grade_of_service))
                self.capacity_failure[el.id] = element_capacity(el, gos, self.num)
        self.subscribers = sum((ln.subscribers for ln in topology.local_networks.values()), 0)
        self.erlangs_total = sum(
            (self.num(ln.busy_hour_erlangs) for ln in topology.local_networks.values()), self.num(0)
        )
        self._erl_weights = self._weights(
            {ln.id: self.num(ln.busy_hour_erlangs) for ln in topology.local_networks.values()}
        )
        self.restoration = any(
            is_scscf(e) and e.has(_feature("restoration_data")) for e in topology.elements.values()
        )
        self.scscf_factor = cscf_restoration_factor(
            self.cm.registration_share, self.cm.restoration_registration_cost
        )
        self.pcscf_tiers: dict[str, tuple[tuple[str, ...], ...]] = {}
        self._clients_by_ln: dict[str, dict[str, dict[str, Fraction]]] = {}
        self._client_totals: dict[str, dict[str, Fraction]] = {}  # client type → ln → Σ of its sites
        #: service → [(group, members, users served, local-network weights)]
        self.unit_users: dict[str, list[UnitUsers]] = defaultdict(list)
        self._build_access()
        self._build_scscf()
        self._build_units("hss", USERS)
        self._build_units("slf", USERS)
        self._build_units("dra", USERS)
        self._build_units("mgcf", ERLANGS)
        self._build_units("imgw", ERLANGS)
        self._build_units("enum_dns", USERS, structural=True)
        self._build_units("as", USERS, structural=True)
        self._build_units("cscf", USERS, structural=True)  # CSCFs without the S-CSCF role
        self.normal_load, self.normal_unserved = self._normal()

    # --- helpers ------------------------------------------------------------------------------------

    def failure_gos(self, gos: float) -> float:
        """Grade of service the surviving trunks are held to after a failure."""
        return max(gos, self.cm.grade_of_service_failure)

    def _weights(self, values: dict[str, Fraction]) -> tuple[tuple[str, Fraction], ...]:
        total = sum(values.values(), self.num(0))
        if not total:
            n = len(values)
            return tuple((k, Fraction(1, n)) for k in sorted(values)) if n else ()
        return tuple((k, v / total) for k, v in sorted(values.items()) if v)

    def _group_type(self, group: Group) -> str | None:
        types = {self.topology.elements[m].type.value for m in group.members if m in self.topology.elements}
        return types.pop() if len(types) == 1 else None

    def share_weights(self, members: Iterable[str]) -> dict[str, Fraction]:
        """Each member's share of load split across ``members``: by capacity, else equally.

        Memoised per member tuple (capacities are fixed once the model is built); callers only
        read the returned dict."""
        key = tuple(members)
        cached = self._share_cache.get(key)
        if cached is None:
            cached = self._share_cache[key] = self._share_weights(list(key))
        return cached

    def _share_weights(self, members: list[str]) -> dict[str, Fraction]:
        caps = [self.capacity.get(m) for m in members]
        if members and all(c for c in caps):
            total = sum(caps, self.num(0))  # type: ignore[arg-type]
            return {m: c / total for m, c in zip(members, caps, strict=True)}  # type: ignore[operator]
        return {m: self.num(1) / len(members) for m in members} if members else {}

    def member_tiers(self, group: Group | None, member: str) -> tuple[tuple[str, ...], ...]:
        """Who takes over ``member``'s load, tier by tier, following its group's design."""
        if group is None:
            return ((member,),)
        members = group.members
        if members.count(member) == 1:  # (C-level scans, not a Python loop per member)
            i = members.index(member)
            others = members[:i] + members[i + 1 :]
        else:
            others = [m for m in members if m != member]
        if group.kind == "pair":
            return ((member,), *((o,) for o in others))
        selection = group.spec.selection  # type: ignore[union-attr]
        if selection == "fixed":
            return ((member,),)
        if selection == "static":
            i = members.index(member)
            order = members[i + 1 :] + members[:i]
            return ((member,), *((o,) for o in order))
        return ((member,), tuple(others)) if others else ((member,),)

    # --- flow builders ---------------------------------------------------------------------------------

    def _build_access(self) -> None:
        topo = self.topology
        for sbc in topo.by_type["sbc"]:
            self.unit[sbc.id] = USERS
            targets, prefs = sbc_pcscf_targets(topo, sbc)  # the SBC's dispatcher list, in order
            tiers: dict[int, list[str]] = {}
            for el, pref in zip(targets, prefs, strict=True):
                tiers.setdefault(pref, []).append(el.id)
            if tiers:
                self.pcscf_tiers[sbc.id] = tuple(tuple(tiers[p]) for p in sorted(tiers))
        for p in topo.by_type["pcscf"]:
            self.unit[p.id] = USERS
        for ln in sorted(topo.local_networks.values(), key=lambda x: x.id):
            local = [s.id for s in topo.sbcs_of_ln.get(ln.id, [])]
            dr = topo.dr_sbc.get(ln.id)
            weights = ((ln.id, self.num(1)),)
            if not local:
                tiers = ((dr.id,),) if dr is not None else ()
                self.flows.append(
                    Flow(
                        f"access:{ln.id}", "sbc", USERS, self.num(ln.subscribers), tiers, weights, stage2=True
                    )
                )
                continue
            share = self.num(ln.subscribers) / len(local)
            for sbc_id in local:
                tiers: tuple[tuple[str, ...], ...] = ((sbc_id,),)
                others = tuple(s for s in local if s != sbc_id)
                if others:
                    tiers += (others,)
                if dr is not None and dr.id not in local:
                    tiers += ((dr.id,),)
                self.flows.append(
                    Flow(f"access:{ln.id}:{sbc_id}", "sbc", USERS, share, tiers, weights, stage2=True)
                )

    def units_of(self, members: list[str]) -> list[tuple[Group | None, list[str]]]:
        """Redundancy units over ``members``: the groups made only of them, then singletons."""
        member_set = set(members)
        units: list[tuple[Group | None, list[str]]] = []
        seen: set[str] = set()
        for group in self.topology.groups.values():
            ms = [m for m in group.members if m in member_set]
            if ms and len(ms) == len(group.members) and not (set(ms) & seen):
                units.append((group, ms))
                seen.update(ms)
        units.extend((None, [m]) for m in members if m not in seen)
        return units

    def unit_capacity(self, group: Group | None, members: list[str]) -> Fraction | None:
        caps = [self.capacity.get(m) for m in members]
        if not all(caps):
            return None
        if group is not None and group.kind == "pair":
            return min(caps)  # type: ignore[type-var]
        return sum(caps, self.num(0))  # type: ignore[arg-type]

    def allocate(
        self, units: list[tuple[Group | None, list[str]]], values: dict[str, Fraction],
        member_scope: dict[str, frozenset[str]] | None = None,
    ) -> list[tuple[Fraction, tuple[tuple[str, Fraction], ...]]]:
        """Share each local network's traffic among the units in its scope, by unit capacity.

        A unit is in a local network's scope when one of its members sits in a province of one of
        the local network's home sites; without provinces (or without any unit in scope) every
        unit is. Returns, per unit, its amount and how that amount splits over local networks.
        """
        caps = [self.unit_capacity(g, ms) for g, ms in units]
        scopes = self.scopes(units, values)
        if member_scope is not None:  # DNS service areas: a local network's queries go to its area's servers
            for ln_id in scopes:
                own = member_scope.get(ln_id, frozenset())
                scopes[ln_id] = tuple(k for k, (_g, ms) in enumerate(units) if own & set(ms)) or scopes[ln_id]
        if self.num is exact:
            return self._allocate_exact(units, values, caps if all(caps) else None, scopes)
        return self._allocate_loop(units, values, caps, all(caps), scopes)

    def scopes(
        self, units: list[tuple[Group | None, list[str]]], values: dict[str, Fraction]
    ) -> dict[str, tuple[int, ...]]:
        """Local network (with a value) → indices of the units that share its traffic."""
        topo = self.topology
        provinces = [{topo.sites[topo.elements[m].site].province for m in ms} - {None} for _g, ms in units]
        by_province: dict[str, list[int]] = defaultdict(list)
        for k, provs in enumerate(provinces):
            for prov in provs:
                by_province[prov].append(k)
        everyone = tuple(range(len(units)))
        scopes: dict[str, tuple[int, ...]] = {}  # local network → indices of the units sharing it
        for ln_id in sorted(values):
            if not values[ln_id] or not units:
                continue
            ln = topo.local_networks[ln_id]
            ln_provs = {topo.sites[h].province for h in ln.home_sites if h in topo.sites} - {None}
            scopes[ln_id] = tuple(sorted({k for prov in ln_provs for k in by_province.get(prov, [])})) or everyone
        return scopes

    def _allocate_loop(
        self,
        units: list[tuple[Group | None, list[str]]],
        values: dict[str, Fraction],
        caps: list[Fraction | None],
        use_caps: bool,
        scopes: dict[str, tuple[int, ...]],
    ) -> list[tuple[Fraction, tuple[tuple[str, Fraction], ...]]]:
        """:meth:`allocate` local network by local network (the float path)."""
        ratio_cache: dict[tuple[int, ...], list[Fraction]] = {}
        amounts = [self.num(0)] * len(units)
        contrib: list[dict[str, Fraction]] = [{} for _ in units]
        for ln_id, cand in scopes.items():
            value = values[ln_id]
            ratios = ratio_cache.get(cand)
            if ratios is None:
                if use_caps:
                    denom = sum((caps[k] for k in cand), self.num(0))  # type: ignore[misc]
                    ratios = [caps[k] / denom for k in cand]  # type: ignore[operator]
                else:
                    ratios = [self.num(1) / len(cand)] * len(cand)
                ratio_cache[cand] = ratios
            for k, ratio in zip(cand, ratios, strict=True):
                share = value * ratio
                amounts[k] += share
                contrib[k][ln_id] = contrib[k].get(ln_id, self.num(0)) + share
        out = []
        for amount, parts in zip(amounts, contrib, strict=True):
            weights = tuple((ln, v / amount) for ln, v in sorted(parts.items())) if amount else ()
            out.append((amount, weights))
        return out

    def _allocate_exact(
        self,
        units: list[tuple[Group | None, list[str]]],
        values: dict[str, Fraction],
        caps: list[Fraction | None] | None,
        scopes: dict[str, tuple[int, ...]],
    ) -> list[tuple[Fraction, tuple[tuple[str, Fraction], ...]]]:
        """:meth:`allocate` in exact arithmetic with few Fraction operations (same numbers).

        A local network of value v whose scope ``cand`` has total weight D gives unit k the share
        v·c_k/D. Grouping by scope: unit k's amount is c_k·S_k with S_k = Σ over its scopes of
        (Σ v)/D, and each local network's weight in it is (v·c_k/D)/(c_k·S_k) = v/(D·S_k).
        Exact arithmetic makes the regrouping give the very same Fractions.
        """
        n = len(units)
        totals: dict[tuple[int, ...], Fraction] = {}
        for ln_id, cand in scopes.items():
            totals[cand] = totals.get(cand, 0) + values[ln_id]
        weight = [caps[k] if caps is not None else Fraction(1) for k in range(n)]
        denom: dict[tuple[int, ...], Fraction] = {
            cand: sum((weight[k] for k in cand), Fraction(0)) for cand in totals
        }
        scaled: list[Fraction] = [Fraction(0)] * n  # S_k
        for cand, total in totals.items():
            per = total / denom[cand]
            for k in cand:
                scaled[k] += per
        # the weights are only ever read as floats: n/d of Python ints is correctly rounded, so
        # each is the very float(Fraction) the exact product would give, without building it
        inv: dict[tuple[int, tuple[int, ...]], tuple[int, int]] = {}
        contrib: list[list[tuple[str, float]]] = [[] for _ in units]
        for ln_id, cand in scopes.items():  # sorted by local network already
            value = values[ln_id]
            vn, vd = value.numerator, value.denominator
            for k in cand:
                f = inv.get((k, cand))
                if f is None:
                    x = denom[cand] * scaled[k]
                    f = inv[(k, cand)] = (x.denominator, x.numerator)
                contrib[k].append((ln_id, vn * f[0] / (vd * f[1])))
        out = []
        for k in range(n):
            amount = weight[k] * scaled[k]  # type: ignore[operator]
            out.append((amount, tuple(contrib[k]) if amount else ()))
        return out

    def _subscriber_values(self) -> dict[str, Fraction]:
        return {ln.id: self.num(ln.subscribers) for ln in self.topology.local_networks.values()}

    def _build_scscf(self) -> None:
        members = [e.id for e in self.topology.by_type["cscf"] if is_scscf(e)]
        units = self.units_of(members)
        for (group, ms), (amount, weights) in zip(
            units, self.allocate(units, self._subscriber_values()), strict=True
        ):
            self.unit_users["scscf"].append((group, ms, amount, weights))
            self._emit_unit("scscf", group, ms, amount, USERS, weights)

    def _build_units(self, type_: str, unit: str, structural: bool = False) -> None:
        topo = self.topology
        members = [e.id for e in topo.by_type[type_] if not (type_ == "cscf" and is_scscf(e))]
        member_scope = None
        if type_ == "enum_dns":  # the servers the rendered DNS sends queries to (imsdr.model.areas)
            from imsdr.model.areas import dns_clients

            serving, member_scope = dns_clients(topo)
            wanted = set(serving)
            members = [m for m in members if m in wanted]
        if not members:
            return
        units = self.units_of(members)
        if unit == ERLANGS:
            erl = {ln.id: self.num(ln.busy_hour_erlangs) for ln in topo.local_networks.values()}
            for (group, ms), (_amount, weights) in zip(units, self.allocate(units, erl), strict=True):
                if group is not None and group.id in self.trunk_erlangs:
                    self._emit_unit(
                        type_, group, ms, self.trunk_erlangs[group.id], ERLANGS, weights or self._erl_weights
                    )
                else:
                    for m in ms:
                        self.unit[m] = ERLANGS
            return
        factor = self.num(1)
        if type_ == "hss" and self.restoration:
            factor += self.num(self.cm.hss_restoration_overhead)
        for (group, ms), (amount, weights) in zip(
            units, self.allocate(units, self._subscriber_values(), member_scope), strict=True
        ):
            self.unit_users[type_].append((group, ms, amount, weights))
            self._emit_unit(
                type_,
                group,
                ms,
                amount * factor,
                unit,
                weights,
                structural=structural,
                users_per_unit=1 / factor,
            )

    def _emit_unit(
        self,
        service: str,
        group: Group | None,
        members: list[str],
        amount: Fraction,
        unit: str,
        weights: tuple[tuple[str, Fraction], ...],
        *,
        structural: bool = False,
        users_per_unit: Fraction | float = 1,
    ) -> None:
        for m in members:
            self.unit[m] = unit
        if self._dns_selected(group, members):
            self._emit_dns(service, group, members, amount, unit, weights, structural, users_per_unit)
            return
        if group is not None and group.kind == "pair" and group.spec.mode == "active-standby":  # type: ignore[union-attr]
            first = members[0]
            self.flows.append(
                Flow(
                    f"{service}:{group.id}",
                    service,
                    unit,
                    amount,
                    self.member_tiers(group, first),
                    weights,
                    users_per_unit,
                    structural=structural,
                )
            )
            return
        shares = (
            self.share_weights(members)
            if not structural
            else {m: self.num(1) / len(members) for m in members}
        )
        for m in members:
            flow_amount = amount * shares[m]
            upu = users_per_unit
            if service == "scscf" and self.topology.elements[m].has(_feature("restoration_data")):
                flow_amount *= self.scscf_factor
                upu = 1 / self.scscf_factor
            gid = group.id if group is not None else m
            self.flows.append(
                Flow(
                    f"{service}:{gid}:{m}",
                    service,
                    unit,
                    flow_amount,
                    self.member_tiers(group, m),
                    weights,
                    upu,
                    structural=structural,
                )
            )

    # --- DNS-selected pools ---------------------------------------------------------------------------

    def _dns_selected(self, group: Group | None, members: list[str]) -> bool:
        """A pool whose clients find the members through its published SRV name."""
        if group is None or group.kind != "pool" or group.spec.selection != "dns":  # type: ignore[union-attr]
            return False
        if group.spec.dns_name is None:  # type: ignore[union-attr]
            return False  # nothing published to resolve: the peers share the load
        return all(self.topology.elements[m].type.value in _SIP_TYPES for m in members)

    def client_sites(
        self, service: str, weights: tuple[tuple[str, Fraction], ...]
    ) -> list[tuple[str | None, Fraction]]:
        """Where the clients of a DNS-selected pool sit, as shares of its traffic: the S-CSCF is
        resolved at the site of the P-CSCF (and its same-site I-CSCF) that carries the users; an
        AS, MGCF or IM-MGW at the site of the S-CSCF that serves them. ``weights`` say which local
        networks the pool's traffic belongs to; each brings its users' client sites (normal loads
        of the client flows). No client known: one client without a site (the base answer)."""
        client_type = "pcscf" if service == "scscf" else "cscf"
        by_ln = self._clients_by_ln.get(client_type)
        if by_ln is None:
            by_ln = self._clients_by_ln[client_type] = self._client_sites_per_ln(client_type)
        totals = self._client_totals.setdefault(client_type, {})
        zero = self.num(0)
        per_site: dict[str, Fraction] = {}
        for ln, w in weights:
            sites = by_ln.get(ln)
            if not sites:
                continue
            total = totals.get(ln)
            if total is None:  # every pool of the local network's province reads it
                total = totals[ln] = sum(sites.values(), zero)
            for site, amount in sites.items():
                per_site[site] = per_site.get(site, zero) + w * amount / total
        total = sum(per_site.values(), zero)
        if not total:
            return [(None, self.num(1))]
        return [(site, per_site[site] / total) for site in sorted(per_site) if per_site[site]]

    def _client_sites_per_ln(self, client_type: str) -> dict[str, dict[str, Fraction]]:
        """local network → site → users its traffic brings to ``client_type`` elements there."""
        services = ("sbc",) if client_type == "pcscf" else ("scscf",)
        out: dict[str, dict[str, Fraction]] = defaultdict(dict)
        elements = self.topology.elements
        zero = self.num(0)
        for flow in self.flows:
            if flow.service not in services:
                continue
            parts, _lost = self.assign(flow, ())
            for el_id, amt in parts:
                el = elements[el_id]
                if el.type.value != client_type:
                    continue
                if client_type == "cscf":
                    amt = amt * flow.users_per_unit  # (a P-CSCF's users count as they are: × 1)
                for ln, w in flow.ln_weights:
                    sites = out[ln]
                    # × a weight of 1 of the amount's own type changes neither value nor type
                    share = amt if w == 1 and type(w) is type(amt) else amt * w
                    sites[el.site] = sites.get(el.site, zero) + share
        return out

    def _emit_dns(
        self,
        service: str,
        group: Group,
        members: list[str],
        amount: Fraction,
        unit: str,
        weights: tuple[tuple[str, Fraction], ...],
        structural: bool,
        users_per_unit: Fraction | float,
    ) -> None:
        """One flow per client site, routed by the SRV answer of the pool name in that site's view."""
        elements = [self.topology.elements[m] for m in members]
        upu = users_per_unit
        if service == "scscf" and all(e.has(_feature("restoration_data")) for e in elements):
            amount = amount * self.scscf_factor
            upu = 1 / self.scscf_factor
        for site, share in self.client_sites(service, weights):
            answer = srv_tiers(self.topology, elements, site)
            self.flows.append(
                Flow(
                    f"{service}:{group.id}:@{site or 'any'}",
                    service,
                    unit,
                    amount * share,
                    tuple(tuple(m for m, _w in tier) for tier in answer),
                    weights,
                    upu,
                    structural=structural,
                    srv=tuple(tuple(w for _m, w in tier) for tier in answer),
                )
            )

    # --- evaluation ----------------------------------------------------------------------------------

    def assign(self, flow: Flow, failed: Container[str]) -> tuple[list[tuple[str, Fraction]], Fraction]:
        """Where ``flow`` goes when ``failed`` are down: (element, amount) pairs and the unserved amount."""
        out: list[tuple[str, Fraction]] = []
        if flow.srv is not None:
            for tier, srv in zip(flow.tiers, flow.srv, strict=True):
                alive = [(m, w) for m, w in zip(tier, srv, strict=True) if m not in failed]
                if alive:
                    split = srv_split(tuple(w for _m, w in alive))
                    return [(m, flow.amount * self.num(p)) for (m, _w), p in zip(alive, split, strict=True)], (
                        self.num(0))
            return out, flow.amount
        first = self._first_tier(flow.tiers, failed)
        if first is None:
            return out, flow.amount
        unserved = self.num(0)
        for el_id, amt in self._spread(first, flow.amount):
            out.append((el_id, amt))
            if flow.stage2 and el_id in self.pcscf_tiers:
                second = self._first_tier(self.pcscf_tiers[el_id], failed)
                if second is None:
                    unserved += amt
                else:
                    out.extend(self._spread(second, amt))
        return out, unserved

    @staticmethod
    def _first_tier(tiers: tuple[tuple[str, ...], ...], failed: Container[str]) -> tuple[str, ...] | None:
        for tier in tiers:
            alive = tuple(m for m in tier if m not in failed)
            if alive:
                return alive
        return None

    def _spread(self, members: tuple[str, ...], amount: Fraction) -> list[tuple[str, Fraction]]:
        if len(members) == 1:
            return [(members[0], amount)]
        return [(m, amount * w) for m, w in self.share_weights(members).items()]

    def _normal(self) -> tuple[dict[str, Fraction], dict[str, Fraction]]:
        load: dict[str, Fraction] = {}
        unserved: dict[str, Fraction] = {}
        zero = self.num(0)
        for flow in self.flows:
            parts, lost = self.assign(flow, ())
            for el_id, amt in parts:
                # 0 + amt is amt: start from the first part (one Fraction addition fewer each)
                load[el_id] = load[el_id] + amt if el_id in load else amt
            if lost:
                unserved[flow.service] = unserved.get(flow.service, zero) + lost
        return load, unserved


_SIP_TYPES = frozenset({"sbc", "pcscf", "cscf", "mgcf", "as"})  # what the DNS plan publishes SRV for


@cache
def srv_split(weights: tuple[int, ...]) -> tuple[Fraction, ...]:
    """RFC 2782 first-try probabilities of the records of one priority (the ``resolve`` code)."""
    return tuple(first_pick_probabilities(list(weights)))


def _to_float(value: Any) -> float:
    return float(value)


@cache
def _feature(name: str):  # type: ignore[no-untyped-def]
    """The Feature member ``name`` (looked up once per name: the Enum call is not free)."""
    from imsdr.inventory.schema import Feature

    return Feature(name)
