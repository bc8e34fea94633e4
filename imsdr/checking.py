"""``imsdr check`` of one loaded inventory: the rule catalogue, with the DNS plan's lint beside it.

DNS-005 reports what the DNS plan could not publish, which means building the plan and linting
it: at national scale about as long as the capacity report the CAP- rules read. Neither reads the
other, so with a second CPU (``jobs`` 2) a forked child (:class:`imsdr.output.beside.Beside`)
builds and lints the plan while this process computes the capacity report and runs the rules;
DNS-005 takes the child's problems when its turn comes. The report is the same either way.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.model.topology import Topology
    from imsdr.rules.engine import CheckReport, RuleSettings


def check_topology(topology: Topology, *, today: dt.date | None = None,
                   settings: RuleSettings | None = None, jobs: int = 1) -> CheckReport:
    """The check report of ``topology`` (:func:`imsdr.rules.engine.run_checks`)."""
    from functools import partial

    from imsdr.dns.lint import plan_problems
    from imsdr.rules.engine import run_checks

    if jobs < 2:
        return run_checks(topology, today=today, settings=settings, dns_problems=partial(plan_problems, topology))

    from imsdr.analysis import Analysis
    from imsdr.diagnostics import Problem
    from imsdr.output.beside import Beside

    def lint() -> list[list[object]]:
        return [problem.to_row() for problem in plan_problems(topology)]

    with Beside(lint, "linting the DNS plan") as child:
        analysis = Analysis(topology)
        analysis.capacity  # noqa: B018 - computed now, while the child lints (the CAP- rules read it)
        return run_checks(topology, today=today, settings=settings, analysis=analysis,
                          dns_problems=lambda: [Problem.from_row(row) for row in child.result()])
