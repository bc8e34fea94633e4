"""Markdown runbooks: context building (context.py), diagrams (diagrams.py), rendering (render.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from imsdr.runbook.context import TYPE_PAGES
from imsdr.runbook.render import Page


def runbook_pages(context: Mapping[str, Any], split: list[Page] | None = None) -> list[Page]:
    """The page set: index, one page per element type present, one per site, the DR drill, findings,
    capacity. ``split``: the per-province page set of a national network
    (:func:`imsdr.runbook.split.province_pages`), used as it is."""
    if split is not None:
        return split
    pages = [Page("README.md", "README.md.j2", "Overview", {})]
    present = {p["key"] for p in context["type_pages"]}
    pages += [Page(p.path, p.template, f"{p.title} DR", {}) for p in TYPE_PAGES if p.key in present]
    pages += [Page(s["page"], "site.md.j2", f"Site failure: {s['id']}", {"site": s})
              for s in context["sites"]]
    pages += [Page("drill.md", "drill.md.j2", "DR drill", {}),
              Page("findings.md", "findings.md.j2", "Open findings and waivers", {}),
              Page("capacity.md", "capacity.md.j2", "Capacity appendix", {})]
    return pages
