"""imsdr's own DNS lint: refuses a plan before anything is written.

BIND only *warns* about some real mistakes (an SRV or NAPTR target without an address
record, an SRV target that is a CNAME) unless run with strict flags; imsdr refuses them.
Checks, per view (base content plus that view's overrides):

* every rrset validates itself (names, TTLs, rdata fields, NAPTR flags/services/regexp);
* every rdata written by imsdr parses back with dnspython;
* SRV target: has A/AAAA in the plan, and is not a CNAME (RFC 2782);
* NAPTR flag 's' replacement has SRV records; flag 'a' replacement has A/AAAA;
* NS target inside the plan has A/AAAA; CNAME never shares a name with other data;
* every zone has SOA and NS; ENUM blocks: the exact line the streaming writer emits is parsed
  with dnspython once per block and must give the NAPTR imsdr meant.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from imsdr.dns.plan import CORE_BASE, DnsPlan, Origin, ViewPlan
from imsdr.dns.records import CNAME, NAPTR, NS, SRV, Rdata, RecordChecks, RRset, dnspython_check, dnspython_parse

if TYPE_CHECKING:
    from imsdr.diagnostics import Problem
    from imsdr.inventory.build import SourceMap
    from imsdr.model.topology import Topology


@dataclass(frozen=True, slots=True)
class LintIssue:
    severity: Literal["error", "warning"]
    message: str
    origin: Origin


_BASE = CORE_BASE


def _origin(plan: DnsPlan, zone: str, rrset: RRset) -> Origin:
    found = plan.origin_of(zone, rrset.name, rrset.rdtype)
    return found if found is not None else Origin("", (), "")


def lint_plan(plan: DnsPlan, views: bool = True) -> list[LintIssue]:
    """Every reason ``plan`` cannot be written. ``views=False`` lints the base zones only, without
    computing a lazy plan's views (what a quick check can afford at national scale)."""
    return PlanLint(plan).issues(views)


class PlanLint:
    """One plan's lint in two steps that share their work: the base zones (``check``'s DNS-005,
    ``issues(views=False)``), then the views on top (``render dns``, ``issues()``).

    ``imsdr plan`` lints its plan for the check and again before writing dns/: with one object
    passed down the pipeline the base zones are linted once. ``issues()`` gives exactly what a
    fresh :func:`lint_plan` gives: the views are linted with the memos and the findings of the
    base step, in the same order. A plan built lazily is linted again from the start for its views
    (computing them first, as a fresh lint does)."""

    def __init__(self, plan: DnsPlan) -> None:
        self.plan = plan
        self._run: _Run | None = None  # the base step's memos, until the views are linted
        self._base: list[LintIssue] | None = None
        self._all: list[LintIssue] | None = None

    def issues(self, views: bool = True) -> list[LintIssue]:
        if not views:
            if self._base is None:
                if self._run is None:
                    self._run = _Run(self.plan, views=False)
                self._base = self._run.finish(views=False)
            return self._base
        if self._all is None:
            run = self._run
            if run is None or run.lazy:  # (views not computed before the base step: start over)
                run = _Run(self.plan, views=True)
            self._all = run.finish(views=True)
            self._run = None  # its memos are garbage now
        return self._all


class _Run:
    """The state of one lint: findings so far (deduplicated) and the memos of the rrset checks.
    Made by linting the base zones; :meth:`finish` adds the views (once) or, on copies of the
    findings, the base-only tail."""

    def __init__(self, plan: DnsPlan, views: bool) -> None:
        self.plan = plan
        self.out: list[LintIssue] = [LintIssue("error", i.message, i.origin) for i in plan.issues]
        self.seen: set[tuple[str, str, str]] = set()
        err = self.err
        for zone in [*plan.zones.values(), *plan.access_zones.values(), *plan.sbc_zones.values()]:
            if (zone.name, "SOA") not in zone.rrsets:
                err(f"zone {zone.name} has no SOA", Origin("", (), ""))
            if (zone.name, "NS") not in zone.rrsets:
                err(f"zone {zone.name} has no NS records", Origin("", ("network", "dns", "nameservers"), ""))
        self.lazy = bool(plan.pending)
        if views:
            plan.materialise_all()
        self.answers = _Answers(plan)
        self.checked_text: set[tuple[object, ...]] = set()
        self.checked_types: set[str] = set()
        self.checked_tuples: set[int] = set()  # id() of NAPTR/SOA rdata tuples read back (the plan holds them)
        self.checks = RecordChecks()  # the same names, rdatas and rdata tuples recur in many rrsets and views
        self.leaks = _Leaks(plan)
        self.enum_zones = {z.name for z in plan.zones.values() if z.kind == "enum"}
        self.number_shapes: set[tuple[object, ...]] = set()
        self.digits_of: dict[str, str] = {}  # ENUM zone -> its digits (the same few zones, 100,000s of records)
        self._rrsets(self._base(), numbers_sorted=True)

    def err(self, message: str, origin: Origin) -> None:
        _add(self.out, self.seen, message, origin)

    def finish(self, views: bool) -> list[LintIssue]:
        """The findings with the views linted (this run's own list), or without them (a copy)."""
        plan = self.plan
        if views:
            self._rrsets(plan.all_rrsets(base=False))
            out, seen = self.out, self.seen
        else:
            out, seen = list(self.out), set(self.seen)
        for message, origin in _zone_problems(plan):
            _add(out, seen, message, origin)
        _check_file_names(plan, lambda message, origin: _add(out, seen, message, origin), views)
        return out

    def _base(self) -> Iterator[tuple[str, ViewPlan | None, RRset]]:
        """``plan.all_rrsets(views=False)`` without the ENUM numbers' rrsets of a shape already
        checked (:meth:`_new_numbers`)."""
        for zone, view in self.plan.base_zones():
            name = zone.name
            rrsets: Iterable[RRset] = zone.rrsets.values()
            if name in self.enum_zones:
                rrsets = self._new_numbers(name, rrsets)
            for rrset in rrsets:
                yield name, view, rrset

    def _new_numbers(self, zone: str, rrsets: Iterable[RRset]) -> list[RRset]:
        """The ``rrsets`` of ENUM zone ``zone`` that :meth:`_rrsets` checks: all but the numbers'
        NAPTRs of a shape checked before (:func:`_number_shape`; a new one is remembered).

        One loop for the zone's hundreds of thousands of records. The usual spelling of a number
        (one-digit labels) gets the same tuple as :func:`_number_shape` worked out here, any other
        spelling that function itself. The wildcards repeated below the exceptions' ancestors
        share one tuple of records: when the zone's digits are not in its regexp, no number's are
        and every such wildcard of one TTL has one shape, so after the first it is left out at once."""
        zone_number = self.digits_of.get(zone)
        if zone_number is None:
            zone_number = self.digits_of[zone] = zone_digits(zone)
        suffix = "." + zone
        cut = -len(suffix)
        one_digit_labels = _ONE_DIGIT_LABELS.fullmatch
        shapes = self.number_shapes
        seen_wildcards: dict[int, tuple[tuple[Rdata, ...], int]] = {}  # id(rdatas) -> (rdatas, TTL) of a shape seen
        out = []
        for rrset in rrsets:
            rdatas = rrset.rdatas
            if rrset.rdtype != "NAPTR" or len(rdatas) != 1:
                out.append(rrset)
                continue
            name = rrset.name
            rd = rdatas[0]
            end = len(name) + cut  # (the name relative to the zone is name[:end])
            start = 2 if name.startswith("*.", 0, end) else 0
            if type(rd) is NAPTR and name.endswith(suffix) and one_digit_labels(name, start, end):
                if start:
                    seen = seen_wildcards.get(id(rdatas))
                    if seen is not None and seen[0] is rdatas and seen[1] == rrset.ttl:
                        continue
                    if zone_number and zone_number not in rd.regexp:
                        seen_wildcards[id(rdatas)] = (rdatas, rrset.ttl)
                number = zone_number + name[end - 1:start - 1 if start else None:-2]
                shape: tuple[object, ...] | None = (
                    start != 0, rrset.ttl, rd.order, rd.preference, rd.flags, rd.services,
                    rd.regexp.replace(number, "0"), rd.replacement)
            else:
                shape = _number_shape(rrset, zone, zone_number)
            if shape is not None:
                if shape in shapes:
                    continue
                shapes.add(shape)
            out.append(rrset)
        return out

    def _rrsets(self, rrsets: Iterable[tuple[str, ViewPlan | None, RRset]], numbers_sorted: bool = False) -> None:
        """Check ``rrsets``; ``numbers_sorted``: the ENUM numbers of a shape checked before are
        left out already (:meth:`_base`)."""
        plan, err, answers, leaks = self.plan, self.err, self.answers, self.leaks
        checked_text, checked_types, checked_tuples = self.checked_text, self.checked_types, self.checked_tuples
        checks, number_shapes, digits_of = self.checks, self.number_shapes, self.digits_of
        enum_zones = () if numbers_sorted else self.enum_zones
        for zone_name, view, rrset in rrsets:
            if zone_name in enum_zones and rrset.rdtype == "NAPTR" and len(rrset.rdatas) == 1:
                # a provisioned number (hundreds of thousands nationally): its record is one of a few
                # shapes with the number's digits in the regexp; each shape is checked once
                zone_number = digits_of.get(zone_name)
                if zone_number is None:
                    zone_number = digits_of[zone_name] = zone_digits(zone_name)
                shape = _number_shape(rrset, zone_name, zone_number)
                if shape is not None:
                    if shape in number_shapes:
                        continue
                    number_shapes.add(shape)
            origin: Origin | None = None  # looked up only when something is wrong
            where = f" (view {view.name})" if view else ""
            for problem in rrset.problems(checks):
                origin = origin if origin is not None else _origin(plan, zone_name, rrset)
                err(problem + where, origin)
            # dnspython reads back every SOA, every NAPTR shape (order, preference, flags, services,
            # regexp: the quoting and escaping; its replacement is a name, written like every other
            # target and checked by name_problems) and one rdata of each other type
            rdtype = rrset.rdtype
            if rdtype in ("NAPTR", "SOA"):
                read_back = () if id(rrset.rdatas) in checked_tuples else rrset.rdatas
                checked_tuples.add(id(rrset.rdatas))
            elif rdtype not in checked_types and rrset.rdatas:
                checked_types.add(rdtype)
                read_back = rrset.rdatas[:1]
            else:
                read_back = ()
            for rd in read_back:
                if isinstance(rd, NAPTR):
                    key: tuple[object, ...] = ("NAPTR", rd.order, rd.preference, rd.flags, rd.services, rd.regexp)
                else:
                    key = (rdtype, rd.to_text())
                if key not in checked_text:
                    checked_text.add(key)
                    why = dnspython_check(rd.to_text(), rdtype, zone_name)
                    if why:
                        origin = origin if origin is not None else _origin(plan, zone_name, rrset)
                        err(why, origin)
            faults = answers.rrset_faults(view or _BASE, rrset.rdatas)
            if faults or rdtype == "CNAME":
                origin = origin if origin is not None else _origin(plan, zone_name, rrset)
                _check_targets(faults, rrset, origin, err, where)
            if view is not None and view.side == "access":
                leaked = leaks.names(rrset)
                if leaked:
                    origin = origin if origin is not None else _origin(plan, zone_name, rrset)
                    for name, what in leaked:
                        err(f"internal name {name} ({what}) is visible to access clients in view {view.name} "
                            f"({rrset.name} {rrset.rdtype}); core names are served only in core views", origin)


def _add(out: list[LintIssue], seen: set[tuple[str, str, str]], message: str, origin: Origin) -> None:
    """Append an error unless the same message was reported for the same inventory part."""
    if (message, origin.ident, str(origin.field)) not in seen:
        seen.add((message, origin.ident, str(origin.field)))
        out.append(LintIssue("error", message, origin))


def _zone_problems(plan: DnsPlan) -> Iterator[tuple[str, Origin]]:
    """(message, origin) of each core zone's CNAME beside other data and of its ENUM blocks."""
    for zone in plan.zones.values():
        names: dict[str, set[str]] = {}
        if "CNAME" in map(_RDTYPE, zone.rrsets):  # (no CNAME: no name to look at; an ENUM zone has 100,000s of keys)
            for name, rdtype in zone.rrsets:
                names.setdefault(name, set()).add(rdtype)
        for name, types in names.items():
            if "CNAME" in types and len(types) > 1:
                yield (
                    f"{name} has a CNAME and other data ({', '.join(sorted(types - {'CNAME'}))}); "
                    "a CNAME must be alone at its name",
                    _origin(plan, zone.name, zone.rrsets[(name, "CNAME")]),
                )
        for block in zone.blocks:
            origin = Origin(block.id, ("prefix",), f"ENUM block '{block.id}'")
            for message in _check_block(block, zone.name):
                yield message, origin


_ONE_DIGIT_LABELS = re.compile(r"[0-9](?:\.[0-9])*")


def _number_shape(rrset: RRset, zone: str, zone_number: str) -> tuple[object, ...] | None:
    """An ENUM number's NAPTR rrset with its own digits blanked out (None: not a number's name);
    ``zone_number``: :func:`zone_digits` of ``zone``. Two numbers of one shape pass or fail the
    same checks: the digits are valid anywhere."""
    rel = rrset.name[: -len(zone) - 1] if rrset.name.endswith("." + zone) else ""
    wildcard = rel.startswith("*.")
    if wildcard:  # a wildcard repeated below a provisioned number's ancestors
        rel = rel[2:]
    if _ONE_DIGIT_LABELS.fullmatch(rel):  # (the usual spelling: its digits are every other character)
        number = zone_number + rel[::-2]
    else:
        digits = rel.replace(".", "")
        if not digits.isdigit() or not digits.isascii() or len(digits) * 2 - 1 != len(rel):
            return None
        number = zone_number + digits[::-1]
    rd = rrset.rdatas[0]
    if not isinstance(rd, NAPTR):
        return None
    return (wildcard, rrset.ttl, rd.order, rd.preference, rd.flags, rd.services, rd.regexp.replace(number, "0"),
            rd.replacement)


def zone_digits(zone: str) -> str:
    """The digits of an ENUM zone's labels, most significant first ('5.5.6.8.e164.arpa' -> '8655')."""
    out = []
    for label in zone.split("."):
        if len(label) == 1 and label.isdigit():
            out.append(label)
        else:
            break
    return "".join(reversed(out))


NAME_MAX = 255  # bytes in one file name (Linux, most file systems)


def _check_file_names(plan: DnsPlan, err: Callable[[str, Origin], None], views: bool = True) -> None:
    """A zone file name is the zone name plus '.zone': a valid zone of 251+ characters makes a
    name no file system takes. Refused here, with the inventory line, not as ENAMETOOLONG later.
    ``views=False``: the base zones' file names only."""
    if views:
        from imsdr.dns.views import zone_files

        refs = [(ref.zone, ref.path) for ref in zone_files(plan)]
    else:  # (the file layout of the views is not needed, nor its module imported)
        refs = [(zone, f"zones/{zone}.zone") for zone in {**plan.zones, **plan.access_zones}]
    for zone, path in refs:
        for part in path.split("/"):
            size = len(part.encode("utf-8"))
            if size > NAME_MAX:
                err(f"zone {zone}: its file name ('<zone>.zone') would be {size} bytes, over the "
                    f"{NAME_MAX} a file system allows; use a shorter name", _zone_origin(plan, zone))
                break


def _zone_origin(plan: DnsPlan, zone: str) -> Origin:
    """The inventory part a zone's name comes from: its home domain, or its ENUM block."""
    if zone in plan.home_domains:
        return Origin("", ("network", "home_domains", plan.home_domains.index(zone)), f"home domain {zone}")
    return plan.origins.get((zone, zone, "NAPTR"), Origin("", ("network",), ""))


class _Answers:
    """What a view answers at the targets of SRV, NAPTR and NS records, for one lint run.

    Hundreds of thousands of targets are checked in hundreds of views, mostly at names no view
    overrides; such a name answers in every view as in its side's base content, so each record's
    target is judged once per side (and once per view only where that view overrides the name):
    the same answers as ``plan.lookup``."""

    def __init__(self, plan: DnsPlan) -> None:
        self.plan = plan
        self.found: dict[tuple[object, str, str], bool] = {}
        self.faults: dict[tuple[object, int], tuple[str, ...]] = {}  # (scope, id(rdata)) -> faults
        self.overridden: dict[int, frozenset[str]] = {}  # id(view) -> names its overrides hold
        # id(rdatas) -> (that tuple, the names its records point at, whether all are SRV records)
        self.targets: dict[int, tuple[tuple[Rdata, ...], frozenset[str], bool]] = {}
        self.tuple_faults: dict[tuple[object, int], tuple[tuple[Rdata, str], ...]] = {}  # (scope, id(rdatas))
        self.srv_memo: dict[tuple[object, str], tuple[str, ...]] = {}  # (scope, SRV target) -> faults
        self.bad_memo: dict[tuple[object, frozenset[str]], dict[str, tuple[str, ...]]] = {}  # (scope, targets)

    def _overridden(self, view: ViewPlan) -> frozenset[str]:
        names = self.overridden.get(id(view))
        if names is None:
            names = self.overridden[id(view)] = frozenset(
                n for rrsets in view.overrides.values() for n, _ in rrsets)
        return names

    def _scope(self, view: ViewPlan, name: str) -> object:
        if name in self._overridden(view):
            return id(view)
        return (view.side, view.area, view.kind) if view.area else view.side  # areas: what a view serves differs

    def rrset_faults(self, view: ViewPlan, rdatas: tuple[Rdata, ...]) -> tuple[tuple[Rdata, str], ...]:
        """(record, fault) for every fault of :meth:`target_faults` over ``rdatas``, in record order.

        One tuple of records recurs at many names and in many views; when ``view`` overrides none
        of the names they point at, they answer there as in any view of its side, so the tuple is
        judged once per side (by identity: the plan holds the tuple, its id is not reused). A
        tuple of SRV records (hundreds, in a few distinct targets) is judged by its targets."""
        if len(rdatas) == 1:  # (most rrsets: one address; its record is remembered)
            return tuple((rdatas[0], fault) for fault in self.target_faults(view, rdatas[0]))
        known = self.targets.get(id(rdatas))
        if known is None or known[0] is not rdatas:
            srv_only = set(map(type, rdatas)) == {SRV}  # (a set operation each, not a step per record)
            if srv_only:
                names = frozenset(map(_TARGET, rdatas)) - {"."}
            else:
                names = frozenset(name for rd in rdatas if (name := _target(rd)) not in (None, "."))
            known = self.targets[id(rdatas)] = (rdatas, names, srv_only)
        names = known[1]
        if not names:
            return ()
        scope = view.side if self._overridden(view).isdisjoint(names) else id(view)
        key = (scope, id(rdatas))
        faults = self.tuple_faults.get(key)
        if faults is None:
            if known[2]:
                bad = self._bad_targets(view, scope, names)
                faults = () if not bad else tuple(
                    (rd, fault) for rd in rdatas for fault in bad.get(rd.target, ()))  # type: ignore[union-attr]
            else:
                faults = tuple((rd, fault) for rd in rdatas for fault in self.target_faults(view, rd))
            self.tuple_faults[key] = faults
        return faults

    def _bad_targets(self, view: ViewPlan, scope: object, names: frozenset[str]) -> dict[str, tuple[str, ...]]:
        """SRV target -> its faults, for the ``names`` that have some (the same targets come back in
        many tuples: a pool's SRV set is reordered per view, not changed)."""
        bad = self.bad_memo.get((scope, names))
        if bad is None:
            bad = self.bad_memo[(scope, names)] = {
                name: found for name in names if (found := self.srv_faults(view, name))}
        return bad

    def srv_faults(self, view: ViewPlan, name: str) -> tuple[str, ...]:
        """What is wrong with ``name`` as the target of an SRV record, as ``view`` answers it."""
        key = (self._scope(view, name), name)
        faults = self.srv_memo.get(key)
        if faults is None:
            if self.has(view, name, "CNAME"):
                faults = ("srv-cname",)
            else:
                faults = () if self.has_address(view, name) else ("srv-address",)
            self.srv_memo[key] = faults
        return faults

    def has(self, view: ViewPlan, name: str, rdtype: str) -> bool:
        key = (self._scope(view, name), name, rdtype)
        found = self.found.get(key)
        if found is None:
            found = self.found[key] = bool(self.plan.lookup(view, name, rdtype))
        return found

    def has_address(self, view: ViewPlan, name: str) -> bool:
        return self.has(view, name, "A") or self.has(view, name, "AAAA")

    def target_faults(self, view: ViewPlan, rd: object) -> tuple[str, ...]:
        """What is wrong with the target of ``rd`` as ``view`` answers it ('' codes, see below)."""
        name = _target(rd)
        if name is None or name == ".":
            return ()
        key = (self._scope(view, name), id(rd))  # the rdata is held by the plan: its id is stable
        faults = self.faults.get(key)
        if faults is None:
            faults = self.faults[key] = self._faults(view, rd, name)
        return faults

    def _faults(self, view: ViewPlan, rd: object, name: str) -> tuple[str, ...]:
        if isinstance(rd, SRV):
            return self.srv_faults(view, name)
        if isinstance(rd, NAPTR):
            flag = rd.flags.lower()
            out = []
            if flag == "s" and not self.has(view, name, "SRV"):
                out.append("naptr-srv")
            if flag == "a" and not self.has_address(view, name):
                out.append("naptr-address")
            return tuple(out)
        if self.plan.find_zone(name) is not None and not self.has_address(view, name):
            return ("ns-address",)
        return ()


_TARGET = operator.attrgetter("target")
_RDTYPE = operator.itemgetter(1)  # of a zone's (name, rdtype) keys


def _target(rd: object) -> str | None:
    """The name an SRV, NS or NAPTR record leads to (None for other records)."""
    if isinstance(rd, (SRV, NS)):
        return rd.target
    if isinstance(rd, NAPTR):
        return rd.replacement
    return None


def _check_targets(faults: tuple[tuple[Rdata, str], ...], rrset: RRset, origin: Origin, err, where: str) -> None:  # type: ignore[no-untyped-def]
    """Report the target ``faults`` of ``rrset``'s records (see :meth:`_Answers.rrset_faults`), and
    a CNAME that points at itself."""
    for rd, fault in faults:
        if fault == "srv-cname":
            err(
                f"{rrset.name} SRV target {rd.target} is a CNAME; RFC 2782 requires a name with "  # type: ignore[union-attr]
                f"A/AAAA records{where}",
                origin,
            )
        elif fault == "srv-address":
            err(f"{rrset.name} SRV target {rd.target} has no A/AAAA record in the plan{where}", origin)  # type: ignore[union-attr]
        elif fault == "naptr-srv":
            err(
                f"{rrset.name} NAPTR ({rd.services}) points at {rd.replacement}, which has no SRV "  # type: ignore[union-attr]
                f"records in the plan{where}",
                origin,
            )
        elif fault == "naptr-address":
            err(
                f"{rrset.name} NAPTR ({rd.services}) points at {rd.replacement}, which has no A/AAAA "  # type: ignore[union-attr]
                f"record in the plan{where}",
                origin,
            )
        else:
            err(f"{rrset.name} NS {rd.target} has no A/AAAA record in the plan{where}", origin)  # type: ignore[union-attr]
    if rrset.rdtype == "CNAME":
        for rd in rrset.rdatas:
            if isinstance(rd, CNAME) and rd.target == rrset.name:
                err(f"{rrset.name} CNAME points at itself{where}", origin)


class _Leaks:
    """The internal (core) names an rrset would show to access clients, as owner or target."""

    def __init__(self, plan: DnsPlan) -> None:
        self.internal = plan.internal_names
        self.targets: dict[int, tuple[tuple[Rdata, ...], list[str]]] = {}  # id(rdatas) -> (rdatas, targets)

    def names(self, rrset: RRset) -> list[tuple[str, str]]:
        """(name, what it is) for the owner, then each record's target, that is internal."""
        rdatas = rrset.rdatas
        known = self.targets.get(id(rdatas))
        if known is None or known[0] is not rdatas:
            targets = []
            for rd in rdatas:
                target = getattr(rd, "target", None) or getattr(rd, "replacement", None)
                if target:
                    targets.append(target)
            known = self.targets[id(rdatas)] = (rdatas, targets)
        internal = self.internal
        return [(name, internal[name]) for name in (rrset.name, *known[1]) if name in internal]


def _check_block(block, zone: str) -> list[str]:  # type: ignore[no-untyped-def]
    from imsdr.dns.names import name_problems
    from imsdr.dns.zonefile import enum_line_parts

    out = [f"ENUM block '{block.id}' domain: {p}" for p in name_problems(block.domain)]
    if block.style == "wildcard":
        naptr = block.naptr()
        text = naptr.to_text()
    else:
        number = str(block.first)
        naptr = block.naptr(number)
        pre, post = enum_line_parts(block)
        line = f"x{pre}{number}{post}"
        text = line.split("\tNAPTR\t", 1)[1].rstrip("\n")
    out.extend(f"ENUM block '{block.id}': {p}" for p in naptr.problems())
    parsed, why = dnspython_parse(text, "NAPTR", zone)
    if why:
        return [*out, why]
    if parsed.regexp.decode() != naptr.regexp or parsed.flags.decode() != naptr.flags:  # type: ignore[attr-defined]
        out.append(f"ENUM block '{block.id}': written NAPTR {text!r} does not read back as {naptr.regexp!r}")
    return out


def lint_problems(issues: list[LintIssue], source: SourceMap | None) -> list[Problem]:
    """Lint issues as located Problems (file:line:col of the inventory part that caused them)."""
    from imsdr.diagnostics import Problem
    from imsdr.inventory.loader import format_path

    out = []
    for issue in issues:
        o = issue.origin
        location = None
        path = ".".join(str(f) for f in o.field)
        if source is not None:
            if o.ident:
                for kind in ("element", "group", "site", "local_network", "enum_block"):
                    base = source.path_of(kind, o.ident)
                    if base is not None:
                        path = format_path((*base, *o.field))
                        location = source.locate(*base, *o.field) or source.locate(*base)
                        break
            elif o.field:
                location = source.locate(*o.field)
                path = format_path(o.field)
        out.append(Problem(location, path, issue.message))
    return list(dict.fromkeys(out))  # one line per problem, however many places repeat it


def plan_problems(topology: Topology, plan: DnsPlan | None = None, lint: PlanLint | None = None) -> list[Problem]:
    """The errors of the names the inventory gives to DNS, located in the inventory (what
    ``render dns`` would refuse); ``check`` reports them as DNS-005. The base zones of a lazy
    plan are enough: every view repeats those names, and ``render dns`` lints each view too.
    ``lint``: the run's lint of its plan (``imsdr plan``: the writer of dns/ continues it)."""
    from imsdr.analysis import cyclic_gc_paused
    from imsdr.dns.plan import build_dns_plan

    with cyclic_gc_paused():  # (the plan and the lint's memos: many objects, none garbage)
        if lint is None:
            lint = PlanLint(plan if plan is not None else build_dns_plan(topology, lazy=True))
        issues = lint.issues(views=False)
    return lint_problems([i for i in issues if i.severity == "error"], topology.source)
