"""How a switchover time is said in summaries: never "0 s" for an outage nothing takes over.

The failure engine reports the slowest switchover among the failed elements something took over
(``Outcome.switchover_s``, ``worst_switchover_from``); when nothing took over any of them that is 0
with no element, which is not a fast switchover but none at all.
"""

from __future__ import annotations

from imsdr.capacity.formulas import fmt

OUTAGE = "outage"  # as imsdr.capacity.engine.OUTAGE (output does not import the engine)
NOT_TAKEN_OVER = "not taken over"


def switchover_text(seconds: float, source: str | None, verdict: str, *, name_source: bool = False) -> str:
    """``seconds`` of the slowest switchover, taken from ``source`` (None: nothing was taken over).

    An outage without a taken-over element is "not taken over"; a scenario without loss and
    without a switchover (the failed elements carried nothing) is "–". ``name_source`` appends the
    element in parentheses."""
    if source is None:
        return NOT_TAKEN_OVER if verdict == OUTAGE else "–"
    return f"{fmt(seconds)} s" + (f" ({source})" if name_source else "")


def worst_switchover_phrase(seconds: float, source: str | None, verdict: str) -> str:
    """The summary's phrase: "worst switchover 32 s (cscf-a-1)" or "nothing takes over"."""
    if source is None:
        return "nothing takes over" if verdict == OUTAGE else "no switchover needed"
    return f"worst switchover {switchover_text(seconds, source, verdict, name_source=True)}"
