"""National scale: ~124 sites, ~5,000 elements, ~7,600 site pairs, evaluated incrementally.

Timings are measured by benchmarks/run.py, never asserted here."""

from __future__ import annotations

import pytest

from imsdr.example.national import NationalParams, national_yaml
from imsdr.inventory.build import load_inventory_text
from imsdr.model.risk import shared_risks
from imsdr.model.topology import Topology
from imsdr.scenarios import Engine, run_scenarios


@pytest.fixture(scope="module")
def national() -> Topology:
    inv, source = load_inventory_text(national_yaml(NationalParams(enum_numbers=0)), "national.yaml")
    return Topology(inv, source)


def test_depth_2_at_national_scale(national: Topology) -> None:
    assert len(national.sites) == 124 and len(national.elements) > 4900
    report = run_scenarios(national, 2)
    n_sites = len(national.sites)
    risks = len(shared_risks(national))  # every region, power feed and transmission route
    assert len(report.rows) == n_sites + risks + len(national.elements) + n_sites * (n_sites - 1) // 2
    assert not report.depth1_loses_traffic  # the generator is redundant by construction


def test_site_states_are_built_once_and_reused(national: Topology) -> None:
    eng = Engine(national, exact_numbers=False)
    a, b, c = sorted(national.sites)[:3]
    eng.evaluate_sites([a, b])
    state = eng.site_state(a)
    eng.evaluate_sites([a, c])
    assert eng.site_state(a) is state
    assert len(eng._site_cache) == 3


def _type_units(model, type_: str):  # type: ignore[no-untyped-def]
    from imsdr.capacity.load import is_scscf

    els = model.topology.by_type[type_]
    members = [e.id for e in els if (type_ != "cscf") or is_scscf(e)]
    return model.units_of(members)


def test_exact_allocation_gives_the_same_numbers_as_the_per_local_network_loop(national: Topology) -> None:
    """The regrouped exact allocation must give the very Fractions (and weights) of the plain loop."""
    from imsdr.capacity.load import LoadModel

    model = LoadModel(national)
    subscribers = model._subscriber_values()
    erlangs = {ln.id: model.num(ln.busy_hour_erlangs) for ln in national.local_networks.values()}
    for type_ in ("cscf", "hss", "slf", "mgcf", "as"):
        units = _type_units(model, type_)
        for values in (subscribers, erlangs):
            fast = model.allocate(units, values)
            caps = [model.unit_capacity(g, ms) for g, ms in units]
            slow = model._allocate_loop(units, values, caps, all(caps), model.scopes(units, values))
            assert len(fast) == len(slow) > 1
            for (amount, weights), (ref_amount, ref_weights) in zip(fast, slow, strict=True):
                assert amount == ref_amount and type(amount) is type(ref_amount)
                assert [(ln, w) for ln, w in weights] == [(ln, float(w)) for ln, w in ref_weights]


def test_site_checks_match_a_walk_over_every_survivor(national: Topology) -> None:
    """The site rows patch only changed positions; a plain walk over every element must agree."""
    from imsdr.capacity.report import capacity_report

    eng = Engine(national)
    report = capacity_report(national, eng)
    rows = {(r.site, r.element_type): r for r in report.sites}
    assert len(rows) > 124
    for site in sorted(national.sites)[:12]:
        failed = eng.site_elements([site])
        outcome = eng.evaluate(failed)
        for t in {eng.type_of[x] for x in failed}:
            row = rows.get((site, t))
            if row is None:
                continue
            idxs = [eng.index[e.id] for e in national.by_type[t]]
            survivors = [x for x in idxs if x not in failed]
            loads = {x: outcome.loads.get(eng.ids[x], eng.normal[x]) for x in survivors}
            unserved = outcome.service_unserved.get("scscf" if t == "cscf" else t, 0.0)
            assert row.load == round(sum(loads.values()) + unserved, 3)
            worst, worst_u = None, None
            for x in survivors:
                cap = eng.cap_after[x]  # a site loss: trunks at the failure grade of service
                if cap != float("inf") and loads[x] > 0 and (worst_u is None or loads[x] / cap > worst_u):
                    worst, worst_u = eng.ids[x], loads[x] / cap
            assert (row.worst_element, row.worst_utilisation) == (worst, None if worst_u is None else round(worst_u, 4))


def test_capacity_report_at_national_scale(national: Topology) -> None:
    from imsdr.capacity.report import capacity_report

    report = capacity_report(national, Engine(national))
    assert report.sites and report.hss and report.trunks
