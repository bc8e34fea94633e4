"""Markdown for `capacity`, `simulate` and `scenarios` (pure report → text; lint-clean)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from imsdr.capacity.formulas import fmt, pct
from imsdr.capacity.timing import PART_LABEL
from imsdr.output.markdown import markdown_text
from imsdr.output.switchover_text import switchover_text, worst_switchover_phrase

if TYPE_CHECKING:
    from imsdr.capacity.report import CapacityReport
    from imsdr.scenarios.run import ScenariosReport
    from imsdr.scenarios.simulate import SimulationReport


def _cell(value: object) -> str:
    return markdown_text(value)


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)
    return out


def _num(value: float | None) -> str:
    return "–" if value is None else fmt(value)


def _pct(value: float | None) -> str:
    return "–" if value is None else pct(value)


def _section(lines: list[str], title: str, level: int) -> None:
    if lines and lines[-1] != "":
        lines.append("")
    lines.append(f"{'#' * level} {title}")
    lines.append("")


def _finish(lines: list[str]) -> str:
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


# --- capacity ------------------------------------------------------------------------------------------


def _formulas(lines: list[str], items: list[str]) -> None:
    """The formula of every check, folded below its table (the picture and tables come first)."""
    lines += ["<details><summary>Formulas with this network's numbers</summary>", "", *items, "", "</details>"]


def headroom_picture(report: CapacityReport) -> str:
    """The headroom picture as a Markdown image carrying its SVG (a data URI): stdout has no file
    beside it to point to."""
    import base64

    from imsdr.output.headroom_svg import headroom_svg

    data = base64.b64encode(headroom_svg(report).encode("utf-8")).decode("ascii")
    return f"![Capacity headroom per element type and failure scenario](data:image/svg+xml;base64,{data})"


def capacity_markdown(report: CapacityReport, level: int = 1, picture: str | None = None) -> str:
    """``picture``: a Markdown image of the headroom picture shown under the verdict (None: none)."""
    h = level
    lines = [f"{'#' * h} Capacity: {markdown_text(report.network)}", ""]
    failures = len(report.failures())
    lines.append(
        f"Verdict: **{report.verdict}** ({failures} shortfall{'s' if failures != 1 else ''}); "
        f"{fmt(report.subscribers)} subscribers, {fmt(report.busy_hour_erlangs)} busy-hour Erlangs, "
        f"utilisation limit {pct(report.max_utilisation)}."
    )
    if picture:
        lines += ["", picture]
    if report.pools:
        _section(lines, "N+K pools", h + 1)
        lines += _table(
            ("pool", "type", "N", "K", "load", "spare needed", "headroom", "after loss", "verdict"),
            (
                (
                    p.id,
                    p.element_type,
                    len(p.members),
                    p.spare,
                    _num(p.load),
                    _num(p.spare_needed),
                    _num(p.headroom),
                    _pct(p.utilisation_after),
                    p.verdict,
                )
                for p in report.pools
            ),
        )
        lines.append("")
        _formulas(lines, [f"- `{p.id}`: " + "; ".join(p.formula) for p in report.pools])
    if report.pairs:
        _section(lines, "1+1 pairs", h + 1)
        lines += _table(
            ("pair", "type", "members", "load", "load / smallest side", "verdict"),
            (
                (
                    p.id,
                    p.element_type,
                    ", ".join(p.members),
                    _num(p.load),
                    _pct(p.utilisation_after),
                    p.verdict,
                )
                for p in report.pairs
            ),
        )
    if report.hss:
        _section(lines, "HSS sizing with dynamic restoration data", h + 1)
        lines += _table(
            ("HSS", "subscribers", "largest S-CSCF", "required", "capacity", "required/capacity", "verdict"),
            (
                (
                    x.id,
                    _num(x.subscribers),
                    f"{x.largest_scscf or '–'} ({_num(x.largest_scscf_users)})",
                    _num(x.required),
                    _num(x.capacity),
                    _pct(x.ratio),
                    x.verdict,
                )
                for x in report.hss
            ),
        )
        lines.append("")
        _formulas(lines, [f"- `{x.id}`: " + " ".join(x.formula) for x in report.hss])
    if report.cscf:
        _section(lines, "S-CSCF load with restoration data", h + 1)
        _formulas(lines, [f"- `{c.id}`: " + "; ".join(c.formula) for c in report.cscf])
    if report.trunks:
        _section(lines, "Trunks (Erlang B)", h + 1)
        lines += _table(
            ("group", "type", "Erlangs", "GoS", "worst site lost", "verdict"),
            (
                (
                    t.id,
                    t.element_type,
                    _num(t.erlangs),
                    pct(t.grade_of_service, 2),
                    t.worst_site or "–",
                    t.verdict,
                )
                for t in report.trunks
            ),
        )
        lines.append("")
        _formulas(lines, [f"- `{t.id}`: " + "; ".join(t.formula) for t in report.trunks])
    if report.takeovers:
        _section(lines, "DR SBC and P-CSCF takeovers", h + 1)
        lines += _table(
            ("failed", "type", "load", "taken over by", "verdict"),
            (
                (t.failed, t.element_type, _num(t.load),
                 ", ".join(f"{tid} at {_pct(util)}" for tid, _after, _cap, util in t.takers) or "nothing",
                 t.verdict)
                for t in report.takeovers
            ),
        )
        lines.append("")
        _formulas(lines, [f"- `{t.failed}`: " + "; ".join(t.formula) for t in report.takeovers])
    if report.sites:
        _section(lines, "Site survivability", h + 1)
        lines += _table(
            ("site lost", "type", "to carry", "surviving capacity", "utilisation", "busiest", "verdict"),
            (
                (
                    s.site,
                    s.element_type,
                    _num(s.load),
                    _num(s.surviving_capacity),
                    _pct(s.utilisation),
                    f"{s.worst_element or '–'} {_pct(s.worst_utilisation)}",
                    s.verdict,
                )
                for s in report.sites
            ),
        )
    if report.elements:
        _section(lines, "Elements", h + 1)
        lines += [f"- {e.kind}: {e.message}" for e in report.elements]
    return _finish(lines)


# --- simulate ------------------------------------------------------------------------------------------


def simulation_markdown(report: SimulationReport, level: int = 2) -> str:
    """One simulated failure; ``level`` is the heading level of its title (runbooks embed it)."""
    h = level
    what = ", ".join(report.requested)
    lines = [f"{'#' * h} Simulated failure: {what}", ""]
    switchover = worst_switchover_phrase(report.switchover_s, report.switchover_from, report.verdict)
    lines.append(
        f"Verdict: **{report.verdict}**; {switchover}; "
        f"unserved {fmt(round(report.unserved_users))} users, {fmt(report.unserved_erlangs)} Erlangs."
    )
    _section(lines, "What takes over", h + 1)
    lines += _table(
        ("failed", "type", "site", "load", "taken over by", "switchover"),
        (
            (
                f.id,
                f.element_type,
                f.site,
                f"{_num(f.load)} {f.unit}",
                f.takeover_how,
                "never (nothing takes over)" if f.switchover is None else f"{fmt(f.switchover.seconds)} s",
            )
            for f in report.failed
        ),
    )
    timed = [f for f in report.failed if f.switchover is not None and f.load > 0]
    if timed:
        _section(lines, "Switchover time", h + 1)
        for f in timed:
            assert f.switchover is not None
            parts = "; ".join(f"{PART_LABEL.get(p.name, p.name)}: {p.how}" for p in f.switchover.parts)
            lines.append(f"- `{f.id}`: {f.switchover.formula()} ({parts})")
    if report.survivors:
        _section(lines, "Surviving members", h + 1)
        lines += [
            f"- `{gid}`: {', '.join(members) if members else 'none'}" for gid, members in report.survivors
        ]
    if report.loads:
        _section(lines, "Load after failover", h + 1)
        trunks = any(r.blocking is not None for r in report.loads)
        lines += _table(
            ("element", "type", "before", "after", "capacity", "utilisation",
             *(("blocking", "occupancy") if trunks else ()), "status"),
            (
                (
                    r.id,
                    r.element_type,
                    _num(r.load_before),
                    _num(r.load_after),
                    _num(r.capacity),
                    _pct(r.utilisation),
                    *(_trunk_cells(r) if trunks else ()),
                    r.status,
                )
                for r in report.loads
            ),
        )
    if report.local_networks:
        _section(lines, "Unserved per local network", h + 1)
        lines += _table(
            ("local network", "subscribers", "unserved users", "busy-hour Erlangs", "unserved Erlangs"),
            (
                (
                    ln.id,
                    fmt(ln.subscribers),
                    fmt(round(ln.unserved_users)),
                    _num(ln.busy_hour_erlangs),
                    _num(ln.unserved_erlangs),
                )
                for ln in report.local_networks
            ),
        )
    storm = report.storm
    if storm is not None and (storm.moved_users or storm.restored_users):
        _section(lines, "Registration storm", h + 1)
        drain = "never drains" if storm.drain_s == float("inf") else f"ends after {fmt(storm.drain_s)} s"
        lines.append(
            f"{fmt(round(storm.moved_users))} users register again: peak {fmt(storm.registrations_per_second)} "
            f"initial registrations/s, then {fmt(storm.sustained_registrations_per_second)}/s ({storm.window.reason}); "
            f"{fmt(round(storm.restored_users))} users restored from the HSS; the storm {drain}"
            + (f" (bottleneck `{storm.bottleneck}`)." if storm.bottleneck else ".")
        )
        lines.append("")
        for a in storm.arrivals:
            lines.append(f"- {a.reason}: {fmt(round(a.users))} users")
        if storm.arrivals:
            lines.append("")
        lines += _table(
            ("element", "peak", "sustained", "refreshes", "capacity", "utilisation", "backlog", "all registered",
             "verdict"),
            (
                (
                    r.id,
                    f"{_num(r.peak_rate)} {r.unit} ({fmt(r.peak_s)} s)",
                    _num(r.sustained_rate),
                    _num(r.background_rate),
                    _num(r.capacity) + ("" if r.limit is None else f" (limit {_num(r.limit)})"),
                    _pct(r.utilisation),
                    _secs(r.backlog_s),
                    _secs(r.drain_s),
                    r.verdict,
                )
                for r in storm.elements
            ),
        )
    _section(lines, "Impact", h + 1)
    for f in report.failed:
        for item in f.impact:
            lines.append(f"- `{f.id}`: {item}")
    _section(lines, "Failback", h + 1)
    for f in report.failed:
        for item in f.failback:
            lines.append(f"- `{f.id}`: {item}")
    return _finish(lines)


# --- scenarios -----------------------------------------------------------------------------------------


def scenarios_markdown(report: ScenariosReport, level: int = 1, all_rows: bool = True) -> str:
    h = level
    counts = ", ".join(f"{n} {v}" for v, n in report.counts)
    lines = [
        f"{'#' * h} Failure scenarios: {markdown_text(report.network)}",
        "",
        f"Depth {report.depth}: {len(report.rows)} scenarios ({counts}); "
        f"a depth-1 scenario loses traffic: **{'yes' if report.depth1_loses_traffic else 'no'}**.",
    ]
    rows = report.rows if all_rows else [r for r in report.rows if r.verdict != "no loss"]
    _section(lines, "Scenarios", h + 1)
    lines += _table(
        ("scenario", "verdict", "worst switchover", "unserved users", "unserved Erlangs", "busiest"),
        (
            (
                r.id,
                r.verdict,
                switchover_text(r.switchover_s, r.switchover_from, r.verdict),
                fmt(round(r.unserved_users)),
                _num(r.unserved_erlangs),
                f"{r.busiest or '–'} {_pct(r.busiest_utilisation)}",
            )
            for r in rows
        ),
    )
    _section(lines, "Worst scenario of each kind", h + 1)
    lines += _table(
        ("kind", "scenario", "verdict", "unserved users", "unserved Erlangs", "busiest"),
        (
            (
                r.kind,
                r.id,
                r.verdict,
                fmt(round(r.unserved_users)),
                _num(r.unserved_erlangs),
                f"{r.busiest or '–'} {_pct(r.busiest_utilisation)}",
            )
            for r in report.worst_by_kind
        ),
    )
    _section(lines, "Worst case per pool, pair and element type", h + 1)
    lines += _table(
        ("subject", "kind", "highest utilisation", "element", "caused by", "most unserved", "by"),
        (
            (
                w.subject,
                w.kind,
                _pct(w.utilisation),
                w.element or "–",
                w.scenario or "–",
                _num(w.unserved) if w.unserved else "0",
                w.unserved_scenario or "–",
            )
            for w in report.worst
        ),
    )
    return _finish(lines)


def _trunk_cells(r: Any) -> tuple[str, str]:
    return ("–" if r.blocking is None else blocking_text(r.blocking)), _pct(r.occupancy)


def blocking_text(value: float) -> str:
    from imsdr.capacity.erlang import blocking_text as text

    return text(value)


def _secs(value: float | None) -> str:
    return "–" if value is None else ("never" if value == float("inf") else f"{fmt(value)} s")
