"""Tables for people: the capacity, simulation and scenario reports as Rich tables.

The CLI passes the console to print on; these functions only lay the reports out. Verdicts are
styled with Rich ``Text`` objects, never markup strings, so that no id or name is read as a tag.

Large reports are summarised: a national capacity report has thousands of checks, and tables
that long are read by nobody (and cost seconds to lay out). Above ``SUMMARY_ABOVE`` rows the
capacity tables show a count per section and only the checks that are not ok; ``--all`` lists
every check, as the JSON and Markdown formats always do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from imsdr.capacity.formulas import fmt, pct
from imsdr.output import SUMMARY_ABOVE
from imsdr.output.switchover_text import switchover_text, worst_switchover_phrase

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from imsdr.capacity.report import CapacityReport
    from imsdr.scenarios.run import ScenariosReport, WorstCase
    from imsdr.scenarios.simulate import SimulationReport

VERDICT_STYLES = {
    "ok": "green",
    "no loss": "green",
    "fail": "bold red",
    "outage": "bold red",
    "degraded": "yellow",
    "unknown": "yellow",
}


def table(title: str, *columns: str, caption: str | None = None) -> Table:
    from rich import box
    from rich.table import Table

    t = Table(title=title, caption=caption, box=box.SIMPLE_HEAD, title_justify="left", show_lines=False)
    for i, col in enumerate(columns):
        # the subject stays on one line; formulas and prose wrap
        t.add_column(col, overflow="fold", no_wrap=i == 0)
    return t


def styled(text: str, style: str) -> Text:
    from rich.text import Text

    return Text(text, style=style)


def verdict(value: str) -> Text:
    return styled(value, VERDICT_STYLES.get(value, ""))


# --- capacity ----------------------------------------------------------------------------------------


Section = tuple[str, Sequence[Any], Callable[["Table", Any], None], tuple[str, ...]]


def _sections(report: CapacityReport) -> list[Section]:
    """(name, checks, add_row, empty table) per section of the report, in reading order."""

    def pool(t: Table, p: Any) -> None:
        t.add_row(p.id, p.element_type, f"N={len(p.members)}, K={p.spare}", fmt(p.load), "\n".join(p.formula),
                  verdict(p.verdict))

    def pair(t: Table, p: Any) -> None:
        t.add_row(p.id, p.element_type, ", ".join(p.members), "\n".join(p.formula), verdict(p.verdict))

    def hss(t: Table, h: Any) -> None:
        t.add_row(h.id, "\n".join(h.formula), verdict(h.verdict))

    def cscf(t: Table, c: Any) -> None:
        t.add_row(c.id, "\n".join(c.formula))

    def trunk(t: Table, tr: Any) -> None:
        t.add_row(tr.id, tr.element_type, "\n".join(tr.formula), verdict(tr.verdict))

    def takeover(t: Table, tk: Any) -> None:
        t.add_row(tk.failed, tk.element_type, fmt(tk.load), "\n".join(tk.formula), verdict(tk.verdict))

    def site(t: Table, s: Any) -> None:
        t.add_row(s.site, s.element_type, s.formula, verdict(s.verdict))

    def risk(t: Table, r: Any) -> None:
        t.add_row(f"{r.kind} {r.id}", ", ".join(r.sites), r.message, verdict(r.verdict))

    def storm(t: Table, s: Any) -> None:
        t.add_row(s.scenario, s.formula, s.message, verdict(s.verdict))

    def dimension(t: Table, d: Any) -> None:
        t.add_row(d.id, d.dimension.replace("_", " "), d.formula, verdict(d.verdict))

    return [
        ("N+K pools", report.pools, pool, ("pool", "type", "N, K", "load", "formula", "verdict")),
        ("1+1 pairs", report.pairs, pair, ("pair", "type", "members", "formula", "verdict")),
        ("HSS sizing with dynamic restoration data", report.hss, hss, ("HSS", "formula", "verdict")),
        ("S-CSCF load with restoration data", report.cscf, cscf, ("pool", "formula")),
        ("Trunks (Erlang B)", report.trunks, trunk, ("group", "type", "formula", "verdict")),
        ("DR SBC and P-CSCF takeovers", report.takeovers, takeover,
         ("failed", "type", "load", "taken over by", "verdict")),
        ("Site survivability (one site lost)", report.sites, site, ("site", "type", "formula", "verdict")),
        ("Region, power feed and transmission route losses", report.risks, risk,
         ("lost", "sites", "result", "verdict")),
        ("Registration storm of a site or region loss", report.storms, storm,
         ("lost", "storm", "result", "verdict")),
        ("Sessions, DNS queries and background Diameter", report.dimensions, dimension,
         ("element", "dimension", "formula", "verdict")),
    ]


def capacity_tables(console: Console, report: CapacityReport, show_all: bool = False) -> None:
    """Every check of ``report`` (small reports, or ``show_all``), else a summary and the checks
    that are not ok; then the elements' issues and the overall verdict."""
    sections = _sections(report)
    total = sum(len(checks) for _, checks, _, _ in sections)
    full = show_all or total <= SUMMARY_ABOVE
    if not full:
        _capacity_summary(console, sections)
    for title, checks, add_row, columns in sections:
        shown: Iterable[Any] = checks if full else [c for c in checks if getattr(c, "verdict", "ok") != "ok"]
        shown = list(shown)
        if not shown:
            continue
        t = table(title if full else f"{title}: checks not ok", *columns)
        for check in shown:
            add_row(t, check)
        console.print(t)
    for e in report.elements:
        console.print(f"{e.kind}: {e.message}")
    if full:
        for el_id, el_type, fields in report.missing:
            console.print(f"capacity missing: {el_id} ({el_type}) gives no {' or '.join(fields)}")
        for el_id, el_type, name in report.unchecked:
            console.print(f"capacity never checked: {el_id} ({el_type}) gives {name}, which no {el_type} check reads")
    elif report.missing or report.unchecked:
        console.print(f"{len(report.missing):,} capacity dimensions missing, {len(report.unchecked):,} given but "
                      "never checked (--all lists them)")
    if not full:
        console.print(f"{total:,} checks in all; --all lists every check with its formula")
    n = len(report.failures())
    line = styled(f"{report.network}: {fmt(report.subscribers)} subscribers, {fmt(report.busy_hour_erlangs)} "
                  f"busy-hour Erlangs, utilisation limit {pct(report.max_utilisation)} → capacity ", "")
    line.append_text(verdict(report.verdict))
    line.append(f" ({n} shortfall{'s' if n != 1 else ''})")
    console.print(line)


def _capacity_summary(console: Console, sections: list[Section]) -> None:
    t = table("Capacity checks (summary)", "section", "checks", "ok", "not ok")
    for title, checks, _, _ in sections:
        if not checks:
            continue
        verdicts = [getattr(c, "verdict", "ok") for c in checks]
        bad = [v for v in verdicts if v != "ok"]
        counts = ", ".join(f"{bad.count(v)} {v}" for v in sorted(set(bad)))
        t.add_row(title, f"{len(checks):,}", f"{len(checks) - len(bad):,}", counts or "0")
    console.print(t)


# --- simulate ----------------------------------------------------------------------------------------


def simulation_tables(console: Console, report: SimulationReport) -> None:
    t = table(f"Failure of {', '.join(report.requested)}", "failed", "type", "load", "taken over by",
              "switchover")
    for f in report.failed:
        sw = "never: nothing takes over" if f.switchover is None else f.switchover.formula()
        t.add_row(f.id, f.element_type, f"{fmt(f.load)} {f.unit}", f.takeover_how, sw)
    console.print(t)
    if report.survivors:
        t = table("Surviving members", "group", "survivors")
        for gid, members in report.survivors:
            t.add_row(gid, ", ".join(members) or styled("none", "bold red"))
        console.print(t)
    if report.loads:
        trunks = any(r.blocking is not None for r in report.loads)
        columns = ("blocking", "occupancy") if trunks else ()
        t = table("Load after failover", "element", "type", "before", "after", "capacity", "utilisation",
                  *columns, "status")
        for r in report.loads:
            extra = (_blocking(r.blocking), "–" if r.occupancy is None else pct(r.occupancy)) if trunks else ()
            t.add_row(
                r.id,
                r.element_type,
                fmt(r.load_before),
                fmt(r.load_after),
                "–" if r.capacity is None else fmt(r.capacity),
                "–" if r.utilisation is None else pct(r.utilisation),
                *extra,
                verdict("ok") if r.status == "ok" else styled(r.status, "bold red"),
            )
        console.print(t)
    if report.local_networks:
        t = table("Unserved per local network", "local network", "subscribers", "unserved users",
                  "unserved Erlangs")
        for ln in report.local_networks:
            t.add_row(ln.id, fmt(ln.subscribers), fmt(round(ln.unserved_users)), fmt(ln.unserved_erlangs))
        console.print(t)
    _storm_table(console, report)
    t = table("Impact and failback", "element", "impact", "failback")
    for f in report.failed:
        t.add_row(f.id, "\n".join(f"• {x}" for x in f.impact), "\n".join(f"• {x}" for x in f.failback))
    console.print(t)
    switchover = worst_switchover_phrase(report.switchover_s, report.switchover_from, report.verdict)
    line = styled("verdict ", "")
    line.append_text(verdict(report.verdict))
    line.append(f"; {switchover}; unserved "
                f"{fmt(round(report.unserved_users))} users, {fmt(report.unserved_erlangs)} Erlangs")
    console.print(line)


def _blocking(value: float | None) -> str:
    from imsdr.capacity.erlang import blocking_text

    return "–" if value is None else blocking_text(value)


def _seconds(value: float | None) -> str:
    return "–" if value is None else ("never" if value == float("inf") else f"{fmt(value)} s")


def _storm_table(console: Console, report: SimulationReport) -> None:
    storm = report.storm
    if storm is None or not (storm.moved_users or storm.restored_users):
        return
    t = table(
        f"Registration storm: {fmt(round(storm.moved_users))} users re-register, peak "
        f"{fmt(storm.registrations_per_second)} registrations/s, then "
        f"{fmt(storm.sustained_registrations_per_second)}/s "
        f"over {fmt(storm.window.seconds)} s; {fmt(round(storm.restored_users))} restored from the HSS",
        "element", "peak", "sustained", "refreshes", "capacity", "utilisation", "backlog", "all registered", "verdict",
    )
    for r in storm.elements:
        t.add_row(
            r.id,
            f"{fmt(r.peak_rate)} {r.unit} ({fmt(r.peak_s)} s)",
            fmt(r.sustained_rate),
            fmt(r.background_rate),
            "–" if r.capacity is None else fmt(r.capacity) + ("" if r.limit is None else f" (limit {fmt(r.limit)})"),
            "–" if r.utilisation is None else pct(r.utilisation),
            _seconds(r.backlog_s),
            _seconds(r.drain_s),
            styled(r.verdict, "bold red") if r.verdict == "overload" else verdict(r.verdict),
        )
    console.print(t)
    lasts = "never drains" if storm.drain_s == float("inf") else f"lasts {fmt(storm.drain_s)} s"
    console.print(f"storm {lasts}" + (f" (bottleneck {storm.bottleneck})" if storm.bottleneck else "")
                  + f"; {storm.window.reason}")


# --- scenarios ---------------------------------------------------------------------------------------


def scenario_tables(console: Console, report: ScenariosReport, show_all: bool = False) -> None:
    rows = (
        report.rows
        if show_all or len(report.rows) <= SUMMARY_ABOVE
        else [r for r in report.rows if r.verdict != "no loss"]
    )
    hidden = len(report.rows) - len(rows)
    caption = f"{hidden} scenarios without loss not shown (--all lists them)" if hidden else None
    t = table(f"Failure scenarios (depth {report.depth})", "scenario", "verdict", "switchover", "unserved",
              "busiest survivor", caption=caption)
    for r in rows:
        busiest = "–" if r.busiest is None else f"{r.busiest} {pct(r.busiest_utilisation or 0)}"
        lost = f"{fmt(round(r.unserved_users))} users, {fmt(r.unserved_erlangs)} E"
        t.add_row(r.id, verdict(r.verdict), switchover_text(r.switchover_s, r.switchover_from, r.verdict), lost,
                  busiest)
    console.print(t)
    if report.worst_by_kind:
        t = table("Worst scenario of each kind", "kind", "scenario", "verdict", "unserved", "busiest survivor")
        for r in report.worst_by_kind:
            busiest = "–" if r.busiest is None else f"{r.busiest} {pct(r.busiest_utilisation or 0)}"
            lost = f"{fmt(round(r.unserved_users))} users, {fmt(r.unserved_erlangs)} E"
            t.add_row(r.kind, r.id, verdict(r.verdict), lost, busiest)
        console.print(t)
    if show_all or len(report.worst) <= SUMMARY_ABOVE:
        _worst_table(console, "Worst case per pool, pair and element type", report.worst)
    else:
        _worst_summary(console, report)
    counts = ", ".join(f"{n} {v}" for v, n in report.counts)
    loses = "a depth-1 scenario loses traffic" if report.depth1_loses_traffic else "no depth-1 scenario loses traffic"
    console.print(f"{len(report.rows)} scenarios: {counts}; {loses}")


def _worst_table(console: Console, title: str, worst: Iterable[WorstCase]) -> None:
    t = table(title, "subject", "peak utilisation", "caused by", "most unserved")
    for w in worst:
        peak = "–" if w.utilisation is None else f"{pct(w.utilisation)} {w.element}"
        lost = f"{fmt(w.unserved)} in {w.unserved_scenario}" if w.unserved else "0"
        t.add_row(f"{w.subject} ({w.kind})", peak, w.scenario or "–", lost)
    console.print(t)


def _worst_summary(console: Console, report: ScenariosReport) -> None:
    """The worst case per element type, then per kind and type of group how many pools or pairs
    lose traffic in some scenario and the highest peak among them (``--all`` lists each)."""
    _worst_table(console, "Worst case per element type", [w for w in report.worst if w.kind == "type"])
    groups: dict[tuple[str, str], list[WorstCase]] = {}
    for w in report.worst:
        if w.kind != "type":
            groups.setdefault((w.kind, w.element_type), []).append(w)
    t = table("Worst case per pool and pair (summary)", "kind", "type", "groups", "lose traffic",
              "highest peak utilisation")
    for (kind, element_type), cases in sorted(groups.items()):
        losing = sum(1 for w in cases if w.unserved)
        peaks = [w for w in cases if w.utilisation is not None]
        top = max(peaks, key=lambda w: w.utilisation or 0.0, default=None)  # the first of equal peaks
        peak = "–" if top is None else f"{pct(top.utilisation or 0.0)} {top.subject} ({top.scenario})"
        t.add_row(kind, element_type, f"{len(cases):,}", styled(f"{losing:,}", "bold red") if losing else "0", peak)
    console.print(t)
    n = sum(len(cases) for cases in groups.values())
    console.print(f"{n:,} pools and pairs; --all lists the worst case of each")
