"""INV-001: the inventory does not load or validate.

No check runs on an invalid inventory, so this rule finds nothing by itself: `imsdr check`
reports each load or validation problem as an INV-001 finding (with its file, line and column)
in the machine formats (JSON, SARIF, GitHub annotations, Markdown), so that code scanning and
pull-request annotations show the most common mistakes too. The exit code stays 2.
"""

from __future__ import annotations

from collections.abc import Iterator

from imsdr.diagnostics import Finding, Problem, Severity
from imsdr.rules.base import Rule, RuleContext, make_doc

INVALID_INPUT = "INV-001"


def _nothing(rule: Rule, ctx: RuleContext) -> Iterator[Finding]:
    return iter(())


def problem_finding(problem: Problem) -> Finding:
    """One load or validation problem as a finding of INV-001."""
    where = f"{problem.path}: " if problem.path else ""
    return Finding(INVALID_INPUT, Severity.ERROR, f"{where}{problem.message}", location=problem.location,
                   hint="fix the inventory: nothing else is checked until it validates (`imsdr validate`)")


RULES: list[Rule] = [
    Rule(
        INVALID_INPUT, Severity.ERROR,
        "The inventory does not load or validate",
        make_doc(
            """
            Every design rule needs a valid inventory: YAML that loads safely, fields the schema
            knows with values of the right type, and references (sites, elements, local
            networks) that exist. Each problem is reported with its file, line and column, in
            one run, and `imsdr check` exits 2; no DR rule runs until the inventory validates
            (domain.md §1 describes what an inventory models).
            """,
            """
            sites:
              - {id: site-a, power: [grid-1], transmision: [ring-1], ...}
            """,
            """
            sites:
              - {id: site-a, power: [grid-1], transmission: [ring-1], ...}
            """,
        ),
        _nothing,
    ),
]
