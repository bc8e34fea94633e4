"""One typed model of a runbook step: what to run, where, what it prints, go/no-go, rollback.

The Markdown pages render it (``_actions.md.j2`` reads :meth:`Step.to_dict`), the rehearsal tests
execute it from the rendered page, and a future ``imsdr apply`` can execute the same objects: one
description of a step, not one per consumer.

``expect`` says how the output is judged: ``exact`` (these lines, whitespace and order aside),
``includes`` (these lines appear), ``empty`` (no output), ``manual`` (a vendor placeholder, judged
by eye). ``wait_s``: seconds to wait after the previous step before running it. ``until_s``: run
it again every ``poll_s`` seconds until the output is as expected, at most ``until_s`` seconds
(a drain period); 0 = run once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

EXPECT_KINDS = ("exact", "includes", "empty", "manual")


@dataclass(frozen=True)
class Step:
    title: str
    owner: Mapping[str, Any]
    host: str
    commands: tuple[str, ...]
    expect: str
    expected: tuple[str, ...] = ()
    go: str = ""
    nogo: str = ""
    rollback: str = ""
    wait_s: int = 0
    until_s: int = 0
    poll_s: int = 0
    lever: str = ""  # an optional action that shortens the wait (e.g. forced re-registration)
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.expect not in EXPECT_KINDS:
            raise ValueError(f"step {self.title!r}: expect must be one of {EXPECT_KINDS}, not {self.expect!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "owner": dict(self.owner), "host": self.host, "commands": list(self.commands),
                "expect": self.expect, "expected": list(self.expected), "go": self.go, "nogo": self.nogo,
                "rollback": self.rollback, "wait_s": self.wait_s, "until_s": self.until_s, "poll_s": self.poll_s,
                "lever": self.lever, "notes": list(self.notes)}


def step(title: str, owner: Mapping[str, Any], host: str, commands: Sequence[str], expect: str,
         expected: Sequence[str] = (), **rest: Any) -> dict[str, Any]:
    """A :class:`Step` as the templates read it."""
    return Step(title, owner, host, tuple(commands), expect, tuple(expected), **rest).to_dict()


def step_text(number: int, step: Step) -> list[str]:
    """One step as plain lines: what ``imsdr apply --dry-run`` prints, in the words of the pages
    (title and host, each command, then what it must print)."""
    lines = [f"{number}. {step.title} [on {step.host}]"]
    lines += [f"   $ {command}" for command in step.commands]
    if step.expect == "empty":
        lines.append("   expect: no output")
    elif step.expected:
        label = {"exact": "expect exactly", "includes": "expect lines"}.get(step.expect, "expect")
        lines += [f"   {label}: {line}" for line in step.expected]
    if step.until_s:
        lines.append(f"   repeat every {step.poll_s} s until so, at most {step.until_s} s")
    lines += [f"   note: {note}" for note in step.notes]
    return lines
