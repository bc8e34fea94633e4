"""The availability report for people and programs: JSON payload, Markdown, Rich tables, an SVG chart.

The SVG chart is plain SVG 1.1 (rectangles and text, no script, no external reference): one bar
per service, the network's user-weighted downtime per year split by its largest contributors.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape

from imsdr.availability.services import SERVICE_LABELS, minutes, percent

if TYPE_CHECKING:
    from rich.console import Console

    from imsdr.availability.analytic import AvailabilityReport, ServiceAvailability
    from imsdr.availability.montecarlo import SimulationEstimate

CHART_CONTRIBUTORS = 5  # per service bar; the rest is "other"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")


def service_to_dict(row: ServiceAvailability) -> dict[str, Any]:
    return {
        "service": row.service, "local_network": row.local_network, "access": row.access, "users": row.users,
        "availability": row.availability, "target_percent": row.target, "below_target": row.below_target,
        "downtime_minutes": row.downtime_minutes, "outage_minutes": row.outage_minutes,
        "switchover_minutes": row.switchover_minutes, "user_minutes": row.user_minutes, "method": row.method,
        "cut_set_count": row.cut_set_count,
        "cut_sets": [{"events": list(c.events), "probability": c.probability, "fraction": c.fraction,
                      "minutes": c.minutes} for c in row.cut_sets],
        "contributors": [{"label": c.label, "kind": c.kind, "minutes": c.minutes} for c in row.contributors],
        "importance": [{"event": i.event, "fussell_vesely": i.fussell_vesely, "gain_minutes": i.gain_minutes}
                       for i in row.importance],
    }


def availability_to_dict(report: AvailabilityReport, estimate: SimulationEstimate | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "network": report.network, "max_cut_order": report.max_cut_order, "basic_events": report.events,
        "importance_measure": "fussell-vesely", "defaults": list(report.defaults),
        "services": [service_to_dict(r) for r in report.services],
        "fix_first": [{"event": i.event, "fussell_vesely": i.fussell_vesely, "gain_user_minutes": i.gain_minutes}
                      for i in report.fix_first],
        "below_target": sum(1 for r in report.services if r.below_target),
    }
    if estimate is not None:
        data["simulation"] = estimate.to_dict()
    return data


def _summary_rows(report: AvailabilityReport, top_n: int = 3) -> list[tuple[str, ...]]:
    rows = []
    for r in report.services:
        top = ", ".join(f"{c.label if c.kind == 'outage' else 'switchover ' + c.label} ({minutes(c.minutes)})"
                        for c in r.contributors[:top_n])
        target = "–" if r.target is None else f"{r.target:g} %" + (" BELOW" if r.below_target else "")
        rows.append((SERVICE_LABELS[r.service], r.local_network, r.access, percent(r.availability), target,
                     minutes(r.downtime_minutes), minutes(r.outage_minutes), minutes(r.switchover_minutes),
                     f"{r.user_minutes:,.0f}", top))
    return rows


HEADER = ("service", "local network", "access", "availability", "target", "downtime min/yr", "outage", "switchover",
          "user-min/yr", "top contributors (min/yr)")


def availability_markdown(report: AvailabilityReport, estimate: SimulationEstimate | None = None,
                          chart: str | None = None, level: int = 1) -> str:
    from imsdr.output.markdown import markdown_text

    h = "#" * level
    lines = [f"{h} Availability: {markdown_text(report.network)}", ""]
    lines.append("Expected downtime per year of each service and local network: outage while a minimal cut set "
                 "is in effect plus the switchover time every failure costs the users it moves "
                 f"(cut sets up to order {report.max_cut_order}; importance: Fussell–Vesely). "
                 "Model and formulas: docs/availability.md.")
    lines.append("")
    if report.defaults:
        lines.append("Planning defaults used (replace with field data): "
                     + ", ".join(markdown_text(d) for d in report.defaults) + ".")
        lines.append("")
    if chart:
        lines += [f"![Downtime per year by contributor]({chart})", ""]
    lines += _md_table(HEADER, _summary_rows(report))
    lines += ["", f"{h}# What to fix first", "",
              "Network-wide expected user-minutes per year removed if the event never happened.", ""]
    lines += _md_table(("event", "Fussell–Vesely", "user-min/yr removed"),
                       [(i.event, f"{i.fussell_vesely:.3f}", f"{i.gain_minutes:,.0f}") for i in report.fix_first])
    if estimate is not None:
        lines += ["", f"{h}# Monte Carlo cross-check", ""]
        lines += _md_table(("service", "local network", "access", "analytic min/yr", "simulated min/yr",
                            "95 % interval", "contains"),
                           [(SERVICE_LABELS[e.service], e.local_network, e.access, minutes(e.analytic),
                             minutes(e.mean),
                             f"{minutes(e.low)} – {minutes(e.high)}", "yes" if e.contains else "no")
                            for e in estimate.rows])
    lines += ["", f"{h}# Cut sets", ""]
    for r in report.services:
        lines += [f"{h}## {SERVICE_LABELS[r.service]}, {markdown_text(r.local_network)} ({r.access})", "",
                  f"{r.cut_set_count} minimal cut sets; outage {r.method}. The largest:", ""]
        lines += _md_table(("cut set", "probability", "users lost", "min/yr"),
                           [(" + ".join(c.events), f"{c.probability:.3e}", f"{c.fraction:.3f}", minutes(c.minutes))
                            for c in r.cut_sets[:5]])
        lines.append("")
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def _md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    from imsdr.output.markdown import markdown_text

    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(markdown_text(c) for c in row) + " |" for row in rows]
    return out


def availability_tables(console: Console, report: AvailabilityReport,
                        estimate: SimulationEstimate | None = None) -> None:
    from imsdr.output.tables import styled, table

    t = table(f"Availability: {report.network}", "service", "LN", "access", "availability", "target", "down min/yr",
              "outage", "switch", "user-min/yr", "largest contributor (min/yr)",
              caption=f"cut sets up to order {report.max_cut_order}; importance: Fussell–Vesely")
    for row, r in zip(_summary_rows(report, 1), report.services, strict=True):
        cells: list[Any] = list(row)
        if r.below_target:
            cells[4] = styled(row[4], "bold red")
        t.add_row(*cells)
    console.print(t)
    fix = table("What to fix first", "event", "Fussell–Vesely", "user-min/yr removed")
    for i in report.fix_first:
        fix.add_row(i.event, f"{i.fussell_vesely:.3f}", f"{i.gain_minutes:,.0f}")
    console.print(fix)
    if estimate is not None:
        mc = table(f"Monte Carlo: {estimate.years} simulated years, seed {estimate.seed}", "service", "local network",
                   "access", "analytic", "simulated", "95 % interval", "contains")
        for e in estimate.rows:
            mc.add_row(SERVICE_LABELS[e.service], e.local_network, e.access, minutes(e.analytic), minutes(e.mean),
                       f"{minutes(e.low)} – {minutes(e.high)}", "yes" if e.contains else styled("no", "bold red"))
        console.print(mc)
    if report.defaults:
        console.print("planning defaults used (replace with field data): " + ", ".join(report.defaults),
                      markup=False, highlight=False)


# --- SVG chart ---------------------------------------------------------------------------------------------


def service_contributors(report: AvailabilityReport) -> list[tuple[str, float, list[tuple[str, float]]]]:
    """Per service: (label, user-weighted downtime min/yr, [(contributor, min/yr)] largest first,
    the rest summed as "other")."""
    out = []
    for service, label in SERVICE_LABELS.items():
        rows = report.rows(service)
        users = sum(r.users for r in rows)
        if not rows:
            continue
        parts: dict[str, float] = defaultdict(float)
        total = 0.0
        for r in rows:
            w = r.users / users if users else 1 / len(rows)
            total += w * r.downtime_minutes
            for c in r.contributors:
                name = c.label if c.kind == "outage" else f"switchover {c.label}"
                parts[name] += w * c.minutes
        ranked = sorted(parts.items(), key=lambda item: (-item[1], item[0]))
        top = ranked[:CHART_CONTRIBUTORS]
        other = total - sum(m for _n, m in top)
        if other > 1e-9:
            top.append(("other", other))
        out.append((label, total, top))
    return out


def availability_svg(report: AvailabilityReport) -> str:
    """A horizontal stacked bar per service: downtime per year by contributor, with a legend."""
    data = service_contributors(report)
    names: list[str] = []
    for _label, _total, parts in data:
        for name, _m in parts:
            if name not in names:
                names.append(name)
    colour = {n: ("#cccccc" if n == "other" else PALETTE[i % len(PALETTE)]) for i, n in enumerate(names)}
    left, bar_w, bar_h, gap, top = 150, 480, 22, 14, 40
    longest = max((t for _l, t, _p in data), default=0.0) or 1.0
    height = top + len(data) * (bar_h + gap) + 20 + len(names) * 18 + 10
    title = f"Expected downtime per year by contributor (user-weighted minutes): {report.network}"
    width = max(left + bar_w + 110, int(len(title) * 8.2) + 20)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<title>Downtime per year by contributor: {escape(report.network)}</title>',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="10" y="22" font-size="14" font-weight="bold">{escape(title)}</text>']
    y = top
    for label, total, parts in data:
        out.append(f'<text x="10" y="{y + 15}">{escape(label)}</text>')
        x = float(left)
        for name, m in parts:
            w = bar_w * m / longest
            if w <= 0:
                continue
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{bar_h}" fill="{colour[name]}">'
                       f'<title>{escape(name)}: {m:.3f} min/yr</title></rect>')
            x += w
        out.append(f'<text x="{x + 6:.2f}" y="{y + 15}">{total:.3f} min</text>')
        y += bar_h + gap
    y += 10
    for name in names:
        out.append(f'<rect x="10" y="{y}" width="12" height="12" fill="{colour[name]}"/>')
        out.append(f'<text x="28" y="{y + 10}">{escape(name)}</text>')
        y += 18
    out.append("</svg>")
    return "\n".join(out) + "\n"
