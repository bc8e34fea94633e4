"""What a capacity check is, and what it gets to look at.

A :class:`CapacityCheck` is one self-describing unit of the capacity report: the report field it
fills (its id), what it checks, and the function that computes its rows from the run's
:class:`CheckInputs`. The registry (:mod:`imsdr.capacity.checks.registry`) lists them in the
order they are evaluated; :mod:`imsdr.capacity.report` assembles the report from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from imsdr.capacity.engine import Engine, Outcome
    from imsdr.capacity.load import LoadModel
    from imsdr.capacity.storm import Storm, StormIndex
    from imsdr.model.topology import Topology

OK = "ok"
FAIL = "fail"
UNKNOWN = "unknown"  # capacity missing: cannot be sized
LAB = "lab"  # a lab deployment's element/site loss: reported, not a shortfall
SIZED_TYPES = ("sbc", "pcscf", "cscf", "hss", "slf", "mgcf", "imgw")


def rounded(x: Fraction | float | None, digits: int = 4) -> float | None:
    return None if x is None else round(float(x), digits)


class ElementLosses:
    """The outcomes of losing one element, shared by the pool and pair simulations and the SBC and
    P-CSCF takeovers: the same loss is evaluated once. A loaded SBC or P-CSCF is evaluated with
    ``detail`` (who takes over), which only adds the receivers to the very same outcome."""

    def __init__(self, eng: Engine) -> None:
        self.eng = eng
        self.outcomes: dict[str, Outcome] = {}

    def lose(self, lost: tuple[str, ...]) -> Outcome:
        eng = self.eng
        if len(lost) != 1:
            return eng.evaluate(lost)
        outcome = self.outcomes.get(lost[0])
        if outcome is None:
            x = eng.index[lost[0]]
            detail = eng.type_of[x] in ("sbc", "pcscf") and eng.normal[x] > 0
            outcome = self.outcomes[lost[0]] = eng.evaluate({x}, detail=detail)
        return outcome


@dataclass
class CheckInputs:
    """Everything a capacity check may read, for one report: the topology, its failure engine
    (``model`` is the engine's load model, ``max_utilisation`` its exact limit), every site and
    shared-risk loss evaluated once (``losses``, by scenario label), the single-element losses
    shared by the group simulations and the takeovers, and the rows of the checks already run
    (``results``, by check id: a check may read an earlier one's)."""

    topology: Topology
    eng: Engine
    losses: dict[str, Outcome]
    element_losses: ElementLosses
    results: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    # filled with the registration storm of every site and region loss, by scenario label, when
    # the caller keeps them (``capacity_report(…, storms=…)``)
    storms: dict[str, Storm] | None = None
    _storm_index: StormIndex | None = field(default=None, init=False, repr=False)

    @property
    def model(self) -> LoadModel:
        return self.eng.model

    @property
    def storm_index(self) -> StormIndex:
        """The engine's storm index (its S-CSCF/HSS/SLF/DRA flows by local network), built once
        for the storms and the dimensions."""
        if self._storm_index is None:
            from imsdr.capacity.storm import StormIndex

            self._storm_index = StormIndex(self.eng)
        return self._storm_index


@dataclass(frozen=True)
class CapacityCheck:
    """One check of the capacity report: ``id`` is the report field its rows fill, ``description``
    says what it checks, ``run`` computes the rows. ``lab_shown``: in a ``deployment: lab`` (one
    site, no DR by design) its failures are shown with the verdict ``lab``, not counted."""

    id: str
    description: str
    run: Callable[[CheckInputs], Iterable[Any]]
    lab_shown: bool = False
