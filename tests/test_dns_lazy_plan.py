"""The performance shortcuts of the DNS plan give the same plan as the plain computation.

* ``build_dns_plan(lazy=True)`` (resolve, verify) computes a view's overrides on first use: the
  result must equal the eager plan, view by view, however the view is reached;
* a site view only visits services with a member in the site's region: checked against visiting
  every service;
* ``DnsPlan.view`` uses a name index that must follow views appended later.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from imsdr.dns.plan import DnsPlan, ViewPlan, _Builder, build_dns_plan
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Topology:
    from imsdr.example.national import NationalParams, write_yaml

    path = tmp_path_factory.mktemp("lazy") / "national3.yaml"
    params = NationalParams(provinces=3, sites_per_province=4, local_networks_per_province=5, seed=7,
                            enum_numbers=0, enum_block_size=1000, wildcard_blocks=True)
    with open(path, "w", encoding="utf-8") as fh:
        write_yaml(params, fh)
    inv, source = load_inventory(Path(path))
    return Topology(inv, source)


def test_lazy_plan_materialises_each_view_like_the_eager_plan(topology: Topology) -> None:
    eager = build_dns_plan(topology)
    lazy = build_dns_plan(topology, lazy=True)
    assert [v.name for v in lazy.views] == [v.name for v in eager.views]
    assert set(lazy.pending) == {v.name for v in eager.views if v.overrides}  # nothing computed yet
    assert lazy.zones == eager.zones
    some = [v for v in eager.views if v.overrides]
    assert any(v.kind == "local" for v in some) and any(v.kind == "site" for v in some)
    for view in some:
        # reached by a lookup of a name the view overrides: that answer is the overriding one
        (zone, rrsets), *_ = view.overrides.items()
        (name, rdtype), rrset = next(iter(rrsets.items()))
        assert lazy.lookup_rrset(view.name, name, rdtype) == rrset
        assert view.name not in lazy.pending
        assert lazy.view(view.name).overrides == view.overrides
    lazy_all = build_dns_plan(topology, lazy=True)
    assert sorted(map(repr, lazy_all.all_rrsets())) == sorted(map(repr, eager.all_rrsets()))
    assert not lazy_all.pending


def test_site_views_skip_only_services_without_a_member_in_the_region(topology: Topology) -> None:
    builder = _Builder(topology)
    plan = builder.build()
    services = builder.services()
    checked = 0
    for view in plan.views:
        if view.kind != "site":
            continue
        reference = ViewPlan(view.name, view.kind, view.subject, view.match_clients, view.description,
                             area=view.area)
        gpp = topology.network.threegpp_domain
        for name, members, origin in services:  # every service, no region shortcut
            if not (plan.areas and name == gpp):  # (with areas: each area's own I-CSCFs, below)
                builder._service(name, members, origin, site=view.subject, target=reference)
        if plan.areas:
            builder._area_apex(reference, builder.area_ns, gpp)
        assert reference.overrides == view.overrides, view.name
        checked += 1
    assert checked == len(topology.sites)


def test_view_index_follows_appended_views(topology: Topology) -> None:
    plan: DnsPlan = build_dns_plan(topology)
    assert plan.view("default") is plan.views[-1]
    extra = ViewPlan("late", "default", "", (), "appended after the first lookup")
    plan.views.append(extra)
    assert plan.view("late") is extra
    with pytest.raises(KeyError):
        plan.view("no-such-view")


def test_base_only_lint_computes_no_view_and_finds_base_problems(topology: Topology) -> None:
    from imsdr.dns.lint import lint_plan
    from imsdr.dns.records import SRV, RRset

    lazy = build_dns_plan(topology, lazy=True)
    pending = set(lazy.pending)
    assert lint_plan(lazy, views=False) == []
    assert set(lazy.pending) == pending and pending  # no view was computed
    assert lint_plan(build_dns_plan(topology)) == []  # (and the whole plan is clean too)
    zone = next(z for z in lazy.zones.values() if z.kind == "home")
    name = f"_sip._udp.broken.{zone.name}"
    zone.rrsets[(name, "SRV")] = RRset(name, "SRV", 60, (SRV(10, 100, 5060, f"nowhere.{zone.name}"),))
    messages = [i.message for i in lint_plan(lazy, views=False)]
    assert messages == [f"{name} SRV target nowhere.{zone.name} has no A/AAAA record in the plan"]
    assert set(lazy.pending) == pending
