"""network.dns.host_zone: element host records in ``<label>.<home domain>``, one zone per side that
every view shares; the per-view home-domain zones keep only what differs per view. (Real BIND
serving it: tests/test_dns_named.py.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from imsdr.diameter import diameter_configs
from imsdr.dns.lint import lint_plan
from imsdr.dns.plan import DnsPlan, build_dns_plan
from imsdr.dns.render import render_dns
from imsdr.dns.views import server_layout, zone_files
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

HOME = "ims.example.net"
HOSTS = f"hosts.{HOME}"


def _topology(make_inventory: Callable[..., Path], label: str | None = "hosts",
              mutate: Callable[[dict[str, Any]], None] | None = None) -> Topology:
    def change(d: dict[str, Any]) -> None:
        if label is not None:
            d["network"]["dns"]["host_zone"] = label
        if mutate is not None:
            mutate(d)

    inv, source = load_inventory(make_inventory(change))
    return Topology(inv, source)


def _home_names(plan: DnsPlan, zone: str = HOME) -> set[str]:
    return {name for name, _ in plan.zones[zone].rrsets}


def test_derived_names_are_in_the_host_zone_and_every_consumer_reads_them(make_inventory: Callable[..., Path]) -> None:
    topo = _topology(make_inventory)
    assert topo.fqdn("hss-a-1") == f"hss-a-1.{HOSTS}"
    assert topo.home_domain("hss-a-1") == HOME  # the Diameter realm stays the home domain
    plan = build_dns_plan(topo)
    assert plan.host_zones == (HOSTS,)
    assert lint_plan(plan) == []
    # the name servers' own names and the SRV targets lead into the host zone
    assert [s.fqdn for s in server_layout(topo).servers] == [f"dns-a-1.{HOSTS}", f"dns-b-1.{HOSTS}"]
    assert {rd.target for rd in plan.lookup("core-site-a", f"_sip._udp.{HOME}", "SRV")} <= {
        f"{e.id}.{HOSTS}" for e in topo.by_type["cscf"]}
    assert plan.lookup("core-site-a", f"hss-a-1.{HOSTS}", "A")[0].to_text() == "192.0.2.30"
    # Diameter identities: the same computed name
    texts = "\n".join(t for c in diameter_configs(topo) for t in c.files.values())
    assert f"hss-a-1.{HOSTS}" in texts and f"hss-a-1.{HOME}\"" not in texts


def test_home_zone_keeps_only_what_differs_and_delegates_the_host_zone(make_inventory: Callable[..., Path]) -> None:
    plan = build_dns_plan(_topology(make_inventory))
    host_names = {n for n in _home_names(plan) if n.endswith("." + HOSTS)}
    glue = {f"dns-a-1.{HOSTS}", f"dns-b-1.{HOSTS}"}
    assert host_names == glue  # in the home-domain zone: the name servers' glue, no other host
    assert plan.zones[HOME].rrsets[(HOSTS, "NS")] == plan.zones[HOSTS].rrsets[(HOSTS, "NS")]
    assert {n for n, _ in plan.access_zones[HOME].rrsets if n.endswith("." + HOSTS)} == glue
    assert (HOSTS, "NS") in plan.sbc_zones[HOME].rrsets
    # the host zones of each side: the access side has SBCs and name servers only, the SBC side
    # the P-CSCFs and name servers only
    access = {n.split(".")[0] for n, _ in plan.access_zones[HOSTS].rrsets if n != HOSTS}
    assert access == {"dns-a-1", "dns-b-1", "sbc-capital", "sbc-coast", "sbc-harbour", "sbc-hill", "sbc-lake",
                      "sbc-river"}
    sbc = {n.split(".")[0] for n, _ in plan.sbc_zones[HOSTS].rrsets if n != HOSTS}
    assert sbc == {"dns-a-1", "dns-b-1", "pcscf-a-1", "pcscf-b-1", "pcscf-b-2", "pcscf-c-1"}
    # no view overrides a host record: one file per side
    plan.materialise_all()
    assert not any(HOSTS in v.overrides for v in plan.views)
    refs = [r for r in zone_files(plan) if r.zone == HOSTS]
    assert [(r.view, r.path) for r in refs] == [(None, f"zones/{s}/{HOSTS}.zone") for s in ("access", "core", "sbc")]


def test_an_explicit_fqdn_under_the_label_goes_there_too_and_others_stay(make_inventory: Callable[..., Path]) -> None:
    def names(d: dict[str, Any]) -> None:
        for el in d["elements"]:
            if el["id"] == "hss-a-1":
                el["fqdn"] = f"hss1.{HOSTS}"
            if el["id"] == "slf-a-1":
                el["fqdn"] = f"slf-a-1.{HOME}"

    plan = build_dns_plan(_topology(make_inventory, mutate=names))
    assert (f"hss1.{HOSTS}", "A") in plan.zones[HOSTS].rrsets
    assert (f"slf-a-1.{HOME}", "A") in plan.zones[HOME].rrsets  # named outside the host zone: stays
    assert lint_plan(plan) == []


def test_a_label_that_names_a_per_view_name_is_refused(make_inventory: Callable[..., Path]) -> None:
    for label, clash in (("sbc", f"sbc.{HOME}"), ("pcscf1", f"pcscf1.{HOME}")):
        plan = build_dns_plan(_topology(make_inventory, label))
        assert any(clash in i.message and "host_zone" in i.message for i in plan.issues), (label, plan.issues)


def test_without_the_setting_nothing_moves(make_inventory: Callable[..., Path]) -> None:
    topo = _topology(make_inventory, None)
    plan = build_dns_plan(topo)
    assert plan.host_zones == () and topo.fqdn("hss-a-1") == f"hss-a-1.{HOME}"
    assert (f"hss-a-1.{HOME}", "A") in plan.zones[HOME].rrsets


def test_host_zone_is_smaller_on_the_primary(make_inventory: Callable[..., Path], tmp_path: Path) -> None:
    """The point of it: the same bytes are not written (and loaded) once per view."""
    sizes = {}
    for label in (None, "hosts"):
        out = tmp_path / f"out-{label}"
        render_dns(_topology(make_inventory, label), out, "p.yaml", serial=1)
        sizes[label] = sum(p.stat().st_size for p in (out / "zones").rglob("*.zone"))
    assert sizes["hosts"] < sizes[None]


def test_catalogs_list_the_host_zone_in_every_view_and_secondaries_get_no_in_view(
        make_inventory: Callable[..., Path], tmp_path: Path) -> None:
    """What the primary gains, a catalog secondary does not: a catalog member cannot be an
    in-view reference, so each view's catalog names the host zone and the secondary holds it per view."""
    from imsdr.dns.catalog import catalog_path, member_label

    def master_slave(d: dict[str, Any]) -> None:
        d["redundancy"]["enum_dns"] = {"sync": "master-slave", "primaries": ["dns-a-1"]}

    topo = _topology(make_inventory, mutate=master_slave)
    out = tmp_path / "out"
    render_dns(topo, out, "p.yaml", serial=1)
    plan = build_dns_plan(topo)
    served = [v for v in plan.views if v.side != "none"]
    for view in served:
        catalog = (out / catalog_path(view.name)).read_text()
        assert f"{member_label(HOSTS)}.zones\t0\tIN\tPTR\t{HOSTS}." in catalog, view.name
    primary = (out / "named" / "dns-a-1.conf").read_text()
    assert primary.count(f'zone "{HOSTS}" {{ in-view') == len(served) - 3  # one definition per side
    secondary = (out / "named" / "dns-b-1.conf").read_text()
    assert f'zone "{HOSTS}"' not in secondary and "in-view" not in secondary  # members come from the catalogs


def test_the_kamailio_importer_derives_names_by_the_same_rule() -> None:
    """A dispatcher line naming a host (no duid, no address) finds the element of an earlier draft
    by the name imsdr derives for it: with host_zone, under the host zone."""
    from imsdr.importers.draft import Draft
    from imsdr.importers.kamailio import DraftIndex

    draft = Draft(network={"home_domains": [HOME], "dns": {"host_zone": "hosts"}},
                  elements={"pcscf-a-1": {"type": "pcscf", "addresses": ["192.0.2.10"]}})
    index = DraftIndex(draft)
    assert index.element("", f"pcscf-a-1.{HOSTS}.")[0] == "pcscf-a-1"
    assert index.element("", f"pcscf-a-1.{HOME}")[0] is None
