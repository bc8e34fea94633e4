"""What a change to the inventory does to the rendered plan, per view and record (octoDNS-plan style).

`imsdr plan --check` compares the committed plan directory with a fresh render; this module turns
the two trees into a reviewable summary: DNS rrsets added, removed or changed per zone file (and so
per view), Kamailio dispatcher entries added or removed per list, runbook pages added, removed or
changed, and any other file. Pure functions over two directories; the CLI formats the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from imsdr.capacity.formulas import fmt, pct
from imsdr.output.headroom_svg import scenario_label
from imsdr.output.markdown import markdown_code

if TYPE_CHECKING:
    from imsdr.untrusted import UntrustedTree

CHANGE_ORDER = {"add": 0, "remove": 1, "change": 2}
CAPACITY_PARTS = ("headroom", "load")  # compared in plan.json, not a file's text
MAX_REVIEW_BYTES = 512 << 20  # a committed file read for its review (as imsdr.plan.MAX_REVIEW_BYTES)


@dataclass(frozen=True, slots=True)
class Change:
    """One reviewable change: in which part and file, what (a record or a page), how."""

    part: str  # dns | dispatcher | runbook | file | headroom | load
    where: str  # the view/zone file, the dispatcher list, the page or the file
    what: str  # "name TYPE" for DNS, the entry for dispatcher lists, "" for whole files
    action: str  # add | remove | change
    old: str = ""
    new: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"part": self.part, "where": self.where, "what": self.what, "action": self.action,
                "old": self.old, "new": self.new}


@dataclass
class PlanReview:
    changes: list[Change] = field(default_factory=list)

    def counts(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for c in self.changes:
            part = out.setdefault(c.part, {"add": 0, "remove": 0, "change": 0})
            part[c.action] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"counts": self.counts(), "changes": [c.to_dict() for c in self.changes]}


def review(old_tree: UntrustedTree, new_tree: UntrustedTree, added: list[str], removed: list[str],
           changed: list[str], not_regular: dict[str, str] | None = None) -> PlanReview:
    """The changes between the plan on disk (``old_tree``) and a fresh render (``new_tree``),
    given the file lists of the tree diff.

    The plan on disk is untrusted: an entry of it that is not a regular file (``not_regular``) is
    a changed file and is never read; its zones are parsed with ``$INCLUDE`` and ``$GENERATE``
    refused, and a file that does not parse is a changed file, said so, not an error."""
    not_regular = not_regular or {}
    result = PlanReview()
    for rel, action in [*((r, "add") for r in added), *((r, "remove") for r in removed),
                        *((r, "change") for r in changed)]:
        path = PurePosixPath(rel)
        if rel in not_regular:
            result.changes.append(Change("file", rel, f"not a regular file ({not_regular[rel]}); not read", action))
            continue
        old = old_tree if action != "add" else None
        new = new_tree if action != "remove" else None
        before = len(result.changes)
        try:
            if rel == "plan.json" and action == "change":
                result.changes += _element_changes(_rows(old_tree, rel, "element_headroom", ("element",)),
                                                   _rows(new_tree, rel, "element_headroom", ("element",)))
                result.changes += _headroom_changes(_rows(old_tree, rel, "headroom", ("element_type", "scenario")),
                                                    _rows(new_tree, rel, "headroom", ("element_type", "scenario")))
            if path.suffix == ".zone":
                result.changes += _zone_changes(rel, _rrsets(old, rel), _rrsets(new, rel))
            elif path.suffix == ".list" and "dispatcher" in path.name:
                result.changes += _entry_changes("dispatcher", rel, _entries(old, rel), _entries(new, rel))
            elif path.parts[:1] == ("runbooks",) and path.suffix == ".md":
                result.changes.append(Change("runbook", rel, "", action))
            else:
                result.changes.append(Change("file", rel, "", action))
        except _Unreadable as exc:
            del result.changes[before:]
            result.changes.append(Change("file", rel, f"({exc})", action))
            continue
        if len(result.changes) == before:  # e.g. only the SOA serial or comments moved
            part = "dns" if path.suffix == ".zone" else "dispatcher"
            result.changes.append(Change(part, rel, "(SOA serial or comments only)", action))
    result.changes.sort(key=lambda c: (c.part, c.where, c.what, CHANGE_ORDER[c.action]))
    return result


class _Unreadable(Exception):
    """A file of the plan that cannot be read or parsed; the message says why, in a few words."""


def _text(tree: UntrustedTree, rel: str) -> str:
    from imsdr.untrusted import UntrustedFile

    try:
        return tree.read(rel, MAX_REVIEW_BYTES).decode("utf-8")
    except UntrustedFile as exc:
        raise _Unreadable(f"not read: {exc.reason}") from None
    except UnicodeDecodeError:
        raise _Unreadable("not UTF-8 text") from None


def _rrsets(tree: UntrustedTree | None, rel: str) -> dict[tuple[str, str], str]:
    """(owner, type) → the rdata lines of a zone file, sorted; SOA left out (its serial moves with
    every change and says nothing a reviewer needs). Only ``$ORIGIN`` and ``$TTL`` are honoured:
    ``$INCLUDE`` would read a file outside the tree, ``$GENERATE`` expand without bound."""
    if tree is None:
        return {}
    import dns.exception
    import dns.rdatatype
    import dns.zone

    text = _text(tree, rel)
    try:
        zone = dns.zone.from_text(text, relativize=False, check_origin=False, allow_include=False,
                                  allow_directives={"$ORIGIN", "$TTL"})
    except (dns.exception.DNSException, ValueError, TypeError, KeyError, IndexError, UnicodeError,
            RecursionError, MemoryError) as exc:
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise _Unreadable(f"zone does not parse: {reason}") from None
    found: dict[tuple[str, str], str] = {}
    for name, rdataset in zone.iterate_rdatasets():
        if rdataset.rdtype == dns.rdatatype.SOA:
            continue
        kind = dns.rdatatype.to_text(rdataset.rdtype)
        rdata = sorted(r.to_text() for r in rdataset)
        found[(name.to_text(), kind)] = f"{rdataset.ttl} " + " | ".join(rdata)
    return found


def _zone_changes(where: str, old: dict[tuple[str, str], str], new: dict[tuple[str, str], str]) -> list[Change]:
    changes = []
    for key in sorted(set(old) | set(new)):
        what = f"{key[0]} {key[1]}"
        if key not in old:
            changes.append(Change("dns", where, what, "add", new=new[key]))
        elif key not in new:
            changes.append(Change("dns", where, what, "remove", old=old[key]))
        elif old[key] != new[key]:
            changes.append(Change("dns", where, what, "change", old=old[key], new=new[key]))
    return changes


def _rows(tree: UntrustedTree, rel: str, key: str, by: tuple[str, ...]) -> dict[tuple[str, ...], dict[str, Any]]:
    """The rows of list ``key`` of a plan.json, by the fields ``by``; {} when it has none (an older
    plan) or is not what imsdr writes (a committed file may hold anything)."""
    import json

    try:
        data = json.loads(_text(tree, rel))
    except ValueError:
        return {}
    rows = data.get(key) if isinstance(data, dict) else None
    found: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and all(isinstance(row.get(f), str) for f in by):
            found[tuple(row[f] for f in by)] = row
    return found


def _number(row: dict[str, Any], name: str) -> float | None:
    value = row.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _worst_text(row: dict[str, Any]) -> str:
    worst, scenario = _number(row, "worst_utilisation"), row.get("worst_scenario")
    if worst is None:
        return "?"
    when = "normally" if scenario == "normal" else f"with {scenario_label(str(scenario))}"
    limit = _number(row, "limit")
    over = ", above the limit" if limit is not None and worst > limit + 1e-9 else ""
    return f"{pct(worst)} {when}{over}"


def _carried_text(row: dict[str, Any]) -> str:
    load, capacity, util = _number(row, "load"), _number(row, "capacity"), _number(row, "utilisation")
    if load is None or capacity is None or util is None:
        return "?"
    return f"{fmt(load)} of {fmt(capacity)} {row.get('unit', '')} ({pct(util)})"


def _element_changes(old: dict[tuple[str, ...], dict[str, Any]],
                     new: dict[tuple[str, ...], dict[str, Any]]) -> list[Change]:
    """Per sized element: its worst utilisation after a failure (headroom) and what it carries
    normally against its capacity (load), where the shown text moved."""
    changes = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a is None or b is None:
            row = a or b or {}
            changes.append(Change("headroom", key[0], "", "add" if a is None else "remove",
                                  old="" if a is None else _worst_text(row), new="" if b is None else _worst_text(row)))
            continue
        if _worst_text(a) != _worst_text(b):
            changes.append(Change("headroom", key[0], "", "change", old=_worst_text(a), new=_worst_text(b)))
        if _carried_text(a) != _carried_text(b):
            changes.append(Change("load", key[0], "", "change", old=_carried_text(a), new=_carried_text(b)))
    return changes


def _utilisation_text(cell: dict[str, Any]) -> str:
    util = cell.get("utilisation")
    if not isinstance(util, (int, float)):
        return "no surviving element"
    limit = cell.get("limit")
    over = " (above the limit)" if isinstance(limit, (int, float)) and util > limit + 1e-9 else ""
    return f"{cell.get('element')} at {pct(util)}{over}"


def _load_text(cell: dict[str, Any]) -> str:
    load = cell.get("load")
    return f"{fmt(load)} {cell.get('unit', '')}".strip() if isinstance(load, (int, float)) else "?"


def _headroom_changes(old: dict[tuple[str, ...], dict[str, Any]],
                      new: dict[tuple[str, ...], dict[str, Any]]) -> list[Change]:
    """Headroom (the busiest element's utilisation per type and scenario) and load (what the type
    carries) that moved between the two plans, as shown (one decimal of a percent)."""
    changes = []
    for key in sorted(set(old) | set(new)):
        type_, scenario = key
        where = f"{type_}, {scenario_label(scenario)}"
        a, b = old.get(key), new.get(key)
        if a is None or b is None:
            changes.append(Change("headroom", where, "", "add" if a is None else "remove",
                                  old=_utilisation_text(a) if a else "", new=_utilisation_text(b) if b else ""))
            continue
        if _utilisation_text(a) != _utilisation_text(b):
            changes.append(Change("headroom", where, "", "change", old=_utilisation_text(a), new=_utilisation_text(b)))
        if _load_text(a) != _load_text(b):
            changes.append(Change("load", where, "", "change", old=_load_text(a), new=_load_text(b)))
    return changes


def _entries(tree: UntrustedTree | None, rel: str) -> set[str]:
    if tree is None:
        return set()
    lines = _text(tree, rel).splitlines()
    return {" ".join(line.split()) for line in lines if line.strip() and not line.lstrip().startswith("#")}


def _entry_changes(part: str, where: str, old: set[str], new: set[str]) -> list[Change]:
    return ([Change(part, where, e, "add") for e in sorted(new - old)]
            + [Change(part, where, e, "remove") for e in sorted(old - new)])


def review_markdown(review_: PlanReview, label: str) -> str:
    """A Markdown summary ready to paste into a pull request."""
    if not review_.changes:
        return f"### imsdr plan: {markdown_code(label)} is up to date\n"
    counts = review_.counts()
    parts = ", ".join(f"{part}: +{c['add']} -{c['remove']} ~{c['change']}" for part, c in sorted(counts.items()))
    lines = [f"### imsdr plan: {len(review_.changes)} change(s) to {markdown_code(label)}", "", parts, ""]
    sign = {"add": "+", "remove": "-", "change": "~"}
    capacity = [c for c in review_.changes if c.part in CAPACITY_PARTS]
    if capacity:  # what a reviewer weighs first: how close the network runs to its limits
        lines += ["#### Headroom and load", "", "| | What | Where | Old | New |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {sign[c.action]} | {c.part} | {_cell(c.where)} | {_cell(c.old)} | {_cell(c.new)} |"
                  for c in capacity]
        lines += ["", "#### Files", ""]
    lines += ["| | Part | Where | What | Old | New |", "| --- | --- | --- | --- | --- | --- |"]
    for c in review_.changes:
        if c.part in CAPACITY_PARTS:
            continue
        cells = [sign[c.action], c.part, _cell(c.where), _cell(c.what), _cell(c.old), _cell(c.new)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return markdown_code(text).replace("|", "\\|") if text else ""
