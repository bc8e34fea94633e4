"""The capacity headroom picture: element type × failure scenario, each cell the busiest surviving
element's utilisation, coloured against its limit (``max_utilisation``; 100% for trunks, whose
Erlang capacity already holds the grade of service).

Pure report → SVG text; deterministic (same report, same bytes). Scenarios are the report's
:class:`imsdr.capacity.report.HeadroomCell` columns: normal, each site lost, each service region
lost; a network with more than :data:`MAX_COLUMNS` of them shows normal, the regions and the sites
whose loss leaves the least headroom.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from imsdr.capacity.formulas import pct

if TYPE_CHECKING:
    from imsdr.capacity.report import CapacityReport, HeadroomCell

MAX_COLUMNS = 24
NEAR = 0.9  # a cell at or above this share of its limit is "near the limit"
COLOURS = {"ok": "#8fd18f", "near": "#f3c969", "over": "#e8746b", "lost": "#d0d0d0"}
TYPE_LABELS = {"sbc": "SBC", "pcscf": "P-CSCF", "cscf": "CSCF", "hss": "HSS", "slf": "SLF", "mgcf": "MGCF",
               "imgw": "IM-MGW"}


def band(cell: HeadroomCell) -> str:
    """ok | near | over | lost: the colour class of a cell."""
    if cell.utilisation is None:
        return "lost"
    if cell.utilisation > cell.limit + 1e-9:
        return "over"
    return "near" if cell.utilisation >= NEAR * cell.limit else "ok"


def scenario_label(scenario: str) -> str:
    kind, _, ident = scenario.partition(":")
    return "normal" if scenario == "normal" else f"{ident} lost" if kind == "site" else f"region {ident} lost"


def shown_scenarios(cells: tuple[HeadroomCell, ...]) -> list[str]:
    """The columns of the picture, in the report's order (see the module docstring)."""
    scenarios = list(dict.fromkeys(c.scenario for c in cells))
    if len(scenarios) <= MAX_COLUMNS:
        return scenarios
    keep = {s for s in scenarios if not s.startswith("site:")}
    worst: dict[str, float] = {}
    for c in cells:
        if c.scenario.startswith("site:"):
            share = 2.0 if c.utilisation is None else c.utilisation / c.limit
            worst[c.scenario] = max(worst.get(c.scenario, 0.0), share)
    room = max(MAX_COLUMNS - len(keep), 0)
    keep |= set(sorted(worst, key=lambda s: (-worst[s], s))[:room])
    return [s for s in scenarios if s in keep]


def headroom_svg(report: CapacityReport) -> str:
    """The picture as SVG text (an empty grid says so)."""
    cells = report.headroom
    scenarios = shown_scenarios(cells)
    types = list(dict.fromkeys(c.element_type for c in cells))
    at = {(c.element_type, c.scenario): c for c in cells}
    left, top, cell_w, cell_h = 90, 64, 118, 34
    width = max(left + cell_w * max(len(scenarios), 1) + 20, 560)
    legend_y = top + cell_h * max(len(types), 1) + 18
    height = legend_y + 40
    title = f"Capacity headroom: {report.network} (limit {pct(report.max_utilisation)})"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f"<title>{escape(title)}</title>",
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="10" y="22" font-size="14" font-weight="bold">{escape(title)}</text>']
    if not cells:
        out.append('<text x="10" y="50">No sized element (no capacity given): nothing to draw.</text>')
    for j, scenario in enumerate(scenarios):
        x = left + j * cell_w + cell_w / 2
        out.append(f'<text x="{x:.1f}" y="{top - 10}" text-anchor="middle">{escape(scenario_label(scenario))}</text>')
    for i, type_ in enumerate(types):
        y = top + i * cell_h
        out.append(f'<text x="10" y="{y + cell_h / 2 + 4:.1f}">{escape(TYPE_LABELS.get(type_, type_))}</text>')
        for j, scenario in enumerate(scenarios):
            cell = at.get((type_, scenario))
            if cell is None:
                continue
            x = left + j * cell_w
            kind = band(cell)
            text = "lost" if cell.utilisation is None else pct(cell.utilisation)
            who = cell.element or "no survivor"
            tip = (f"{TYPE_LABELS.get(type_, type_)}, {scenario_label(scenario)}: {who} at {text} "
                   f"(limit {pct(cell.limit)})")
            out.append(f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{COLOURS[kind]}" '
                       f'class="{kind}"><title>{escape(tip)}</title></rect>')
            out.append(f'<text x="{x + (cell_w - 2) / 2:.1f}" y="{y + 14}" text-anchor="middle">{escape(text)}</text>')
            out.append(f'<text x="{x + (cell_w - 2) / 2:.1f}" y="{y + 27}" text-anchor="middle" font-size="9">'
                       f"{escape(who)}</text>")
    x = 10
    for kind, label in (("ok", "within the limit"), ("near", f"≥ {NEAR:.0%} of the limit"),
                        ("over", "above the limit"), ("lost", "no surviving element")):
        out.append(f'<rect x="{x}" y="{legend_y}" width="12" height="12" fill="{COLOURS[kind]}"/>')
        out.append(f'<text x="{x + 16}" y="{legend_y + 10}">{escape(label)}</text>')
        x += 24 + int(len(label) * 6.5)
    out.append("</svg>")
    return "\n".join(out) + "\n"
