"""Importance of each basic event: Fussell–Vesely, in its cut-set form.

``FV(e) = (Σ_{cut sets C ∋ e} P(C) × lost fraction + switchover minutes of e) / downtime``: the
share of a service's expected downtime that involves ``e``. Its numerator, in minutes per year, is
the expected gain of a fix that stops ``e`` from failing at all (the rare-event approximation of
the risk reduction worth); "what to fix first" ranks by it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from imsdr.availability.figures import Importance


def fussell_vesely(involved: dict[str, float], downtime: float, keep: int) -> list[Importance]:
    """The ``keep`` events that account for the most minutes (``involved``: event → minutes of the
    cut sets containing it plus its switchover minutes)."""
    from imsdr.availability.figures import Importance

    ranked = sorted(involved.items(), key=lambda item: (-item[1], item[0]))[:keep]
    return [Importance(ev, m / downtime if downtime else 0.0, m) for ev, m in ranked if m > 0]
