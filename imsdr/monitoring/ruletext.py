"""Text pieces every rule file is written with: quoted YAML scalars, PromQL numbers, regexes, the
``runbook_url`` of an element's page, so each rule family writes the same bytes for the same plan."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

SEVERITY = {"error": "error", "warning": "warning", "info": "info"}
_REGEX_SPECIAL = frozenset(".^$*+?()[]{}|\\")


def regex_alternation(ids: tuple[str, ...] | list[str]) -> str:
    """A PromQL regex (anchored by PromQL) matching exactly ``ids``: their regex characters (a dot
    of a dotted id) escaped, nothing else."""
    return "|".join("".join(f"\\{ch}" if ch in _REGEX_SPECIAL else ch for ch in i) for i in sorted(set(ids)))


def number(value: float) -> str:
    """A float as PromQL reads it, exact enough to reproduce the threshold to the unit."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def quoted(text: str) -> str:
    """A YAML double-quoted scalar (JSON string syntax is valid YAML)."""
    return json.dumps(text, ensure_ascii=False)


def selector(metric: str, **labels: str) -> str:
    """``metric{label="value", ...}`` with PromQL string escaping (JSON's is a subset)."""
    return metric + "{" + ", ".join(f"{key}={quoted(value)}" for key, value in labels.items()) + "}"


class Pages:
    """The runbook page of each element: its type's page, or its province's page when the
    runbooks are split per province (imsdr.runbook.split)."""

    def __init__(self, topology: Topology) -> None:
        from imsdr.runbook.split import provinces_of

        self.province_of = provinces_of(topology)

    def of(self, el: Element) -> str:
        from imsdr.runbook.context import PAGE_OF_TYPE

        page = PAGE_OF_TYPE[el.type.value].path
        province = self.province_of.get(el.site)
        return f"{page.removesuffix('.md')}-{province}.md" if province else page


def alert_rule(name: str, expr: str, for_: str, labels: dict[str, str], summary: str, description: str,
               runbook_url: str) -> list[str]:
    """One alerting rule, in a fixed key order."""
    label_text = ", ".join(f"{key}: {quoted(value)}" for key, value in labels.items())
    return [
        f"      - alert: {name}",
        f"        expr: {expr}",
        f"        for: {for_}",
        f"        labels: {{{label_text}}}",
        "        annotations:",
        f"          summary: {quoted(summary)}",
        f"          description: {quoted(description)}",
        f"          runbook_url: {quoted(runbook_url)}",
    ]


def group(name: str, rules: list[str], header: list[str]) -> str:
    lines = [*(f"# {h}" for h in header), "groups:", f"  - name: {name}"]
    lines += ["    rules:", *rules] if rules else ["    rules: []"]
    return "\n".join(lines) + "\n"
