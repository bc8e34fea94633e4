"""Importance of each basic event: Fussell–Vesely, in its cut-set form.

``FV(e) = (Σ_{cut sets C ∋ e} P(C) × lost fraction + switchover minutes of e) / downtime``: the
share of a service's expected downtime that involves ``e``. Its numerator, in minutes per year, is
the expected gain of a fix that stops ``e`` from failing at all (the rare-event approximation of
the risk reduction worth); "what to fix first" ranks by it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.availability.figures import CutSet, Importance


def fussell_vesely(cut_sets: list[CutSet], switchover: dict[str, float], downtime: float) -> list[Importance]:
    """Every event in a cut set or with switchover loss, ranked by the minutes it accounts for."""
    from imsdr.availability.figures import Importance

    minutes: dict[str, float] = defaultdict(float)
    for cs in cut_sets:
        for ev in cs.events:
            minutes[ev] += cs.minutes
    for ev, m in switchover.items():
        minutes[ev] += m
    ranked = sorted(minutes.items(), key=lambda item: (-item[1], item[0]))
    return [Importance(ev, m / downtime if downtime else 0.0, m) for ev, m in ranked if m > 0]
