"""Catalog zones (RFC 9432) proven with a real primary and secondary BIND 9.18.

Under master-slave the primary publishes one catalog per view and the secondary's named.conf
holds, per view, only that catalog: every member zone reaches the secondary through the catalog.
Inside a network namespace the test creates (loopback 127.0.0.10 and .11, as in
test_dns_master_slave.py):

1. the secondary serves every zone of every view, its fragment holding no member zone;
2. a new number block (a new zone): re-render, ``rndc reload`` on the primary only; the
   secondary's fragment is byte-identical and never reloaded, yet it serves the new zone in every
   core view within a bounded time;
3. a new local network (a new view): views are configuration in BIND, so the secondary's fragment
   gains exactly that view (its match list and its catalog, no zone); after ``rndc reconfig`` on the
   secondary the view's zones arrive through its catalog;
4. promotion: the primary stops, the secondary gets the primary's rendering (``rndc reconfig``):
   its catalog members give way to primary zones of the same names, and it serves every zone.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml
from named_harness import NETNS_ENV, run_in_netns
from test_dns_master_slave import keyring, signed_serial, wait_serials

from imsdr.dns.catalog import catalog_zone, member_label
from imsdr.dns.plan import build_dns_plan
from imsdr.dns.render import render_dns
from imsdr.dns.views import view_zone_refs
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

WAIT = 40.0  # seconds: NOTIFY is immediate, catalog updates every 2 s; the bound stops a broken setup
PRIMARY, SECONDARY = "127.0.0.10", "127.0.0.11"
IN_NETNS = os.environ.get(NETNS_ENV) == "1"
NEW_BLOCK = {"id": "coast-fixed", "prefix": "+8629977700", "style": "wildcard", "domain": "ims.example.net"}
NEW_LN = {"id": "bay", "name": "Bay Town", "prefixes": ["198.51.100.192/27", "2001:db8:106::/48"],
          "resolvers": ["203.0.113.137"], "home_sites": ["site-b"], "subscribers": 100000,
          "busy_hour_erlangs": 2000}


def topology_of(path: Path) -> Topology:
    inv, source = load_inventory(path)
    return Topology(inv, source)


def master_slave(data: dict[str, Any], zones_dir: Path) -> None:
    for el in data["elements"]:
        if el["id"] == "dns-a-1":
            el["addresses"] = [PRIMARY]
        if el["id"] == "dns-b-1":
            el["addresses"] = [SECONDARY]
    data["redundancy"]["enum_dns"] = {"sync": "master-slave", "primaries": ["dns-a-1"], "load_sharing": "regional"}
    data["network"]["dns"]["secondary_directory"] = str(zones_dir)


def add_local_network(data: dict[str, Any]) -> None:
    data["local_networks"].append(dict(NEW_LN))
    for el in data["elements"]:
        if el["id"] == "sbc-coast":
            el["serves"] = [*el["serves"], "bay"]


def instances(topo: Topology) -> dict[tuple[str, str], str]:
    """(view key, zone) -> view name of every zone instance a view serves."""
    plan = build_dns_plan(topo)
    return {(v.key_name, ref.zone): v.name for v in plan.views if v.side != "none"
            for ref in view_zone_refs(plan, v)}


def serials(out: Path, topo: Topology) -> dict[tuple[str, str], int]:
    """(view key, zone) -> the SOA serial the primary's files give it."""
    plan = build_dns_plan(topo)
    wanted = {}
    for view in plan.views:
        if view.side == "none":
            continue
        for ref in view_zone_refs(plan, view):
            text = (out / ref.path).read_text()
            wanted[(view.key_name, ref.zone)] = int(re.search(r"IN SOA\s+\S+ \S+ (\d+) ", text).group(1))
    return wanted


def view_block(conf: str, view: str) -> str:
    start = conf.index(f'view "{view}" {{')
    return conf[start:conf.index("\n};\n", start) + 4]


def test_catalogs_render_and_load(tmp_path: Path, make_inventory: Any) -> None:
    """Without servers: the files pass named-checkzone and named-checkconf -z, the secondary's
    fragment names no member zone, and a new block changes the primary's catalogs only."""
    zones_dir = tmp_path / "secondary"
    inventory = make_inventory(lambda d: master_slave(d, zones_dir))
    out, keys = tmp_path / "dns", tmp_path / "keys" / "tsig.keys"
    topo = topology_of(inventory)
    render_dns(topo, out, inventory.name, serial=2026010100, keys=keys)
    secondary = (out / "named/dns-b-1.conf").read_text()
    primary = (out / "named/dns-a-1.conf").read_text()
    zones = re.findall(r'zone "([^"]+)"', secondary)
    assert zones and all(z.endswith(".catalog.invalid") for z in zones), zones
    plan = build_dns_plan(topo)
    keyed = [v for v in plan.views if v.side != "none"]
    assert len(re.findall(r"catalog-zones \{", secondary)) == len(keyed)
    for view in keyed:
        block = view_block(primary, view.name)
        path = f"catalogs/{catalog_zone(view.name)}.zone"
        assert f'zone "{catalog_zone(view.name)}" {{\n        type primary; file "{path}";' in block
        text = (out / path).read_text()
        members = re.findall(r"^([0-9a-f]{16})\.zones\t0\tIN\tPTR\t(\S+)\.$", text, re.M)
        assert sorted(z for _, z in members) == sorted(r.zone for r in view_zone_refs(plan, view))
        assert all(label == member_label(z) for label, z in members)
        assert 'version\t0\tIN\tTXT\t"2"' in text
        checkzone = subprocess.run(
            ["named-checkzone", "-k", "fail", "-n", "fail", "-S", "fail", "-M", "fail", "-r", "fail", "-m", "fail",
             "-i", "local", catalog_zone(view.name), str(out / path)],
            capture_output=True, text=True, timeout=60, check=False)
        assert checkzone.returncode == 0, checkzone.stdout + checkzone.stderr
    for server in ("dns-a-1", "dns-b-1"):
        wrapper = tmp_path / f"{server}.named.conf"
        wrapper.write_text(f'options {{ directory "{out}"; include "{out}/named-options.conf"; }};\n'
                           f'include "{keys}";\ninclude "{out}/named/{server}.conf";\n')
        check = subprocess.run(["named-checkconf", "-z", str(wrapper)], capture_output=True, text=True,
                               timeout=120, check=False)
        assert check.returncode == 0, check.stdout + check.stderr

    # a new number block: the catalogs of the core views gain it; no secondary fragment changes
    data = yaml.safe_load(inventory.read_text())
    data["enum_blocks"].append(dict(NEW_BLOCK))
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    render_dns(topology_of(inventory), out, inventory.name, keys=keys)
    assert (out / "named/dns-b-1.conf").read_text() == secondary
    new_zone = "0.0.7.7.7.9.9.2.6.8.e164.arpa"
    core = (out / "catalogs/core-site-a.catalog.invalid.zone").read_text()
    users = (out / "catalogs/users-capital.catalog.invalid.zone").read_text()
    assert f"PTR\t{new_zone}." in core and new_zone not in users  # ENUM: core views only
    # the serial rule: a changed catalog moves forward, an unchanged one keeps its serial
    assert "IN\tSOA\tinvalid. invalid. 2026010100 " in users
    assert "IN\tSOA\tinvalid. invalid. 2026010100 " not in core


def test_provisioning_has_no_catalog(tmp_path: Path, make_inventory: Any) -> None:
    """Every server is a primary of the same files under provisioning: nothing to distribute."""
    inventory = make_inventory()
    out = tmp_path / "dns"
    render_dns(topology_of(inventory), out, inventory.name, serial=2026010100)
    assert not (out / "catalogs").exists()
    assert "catalog" not in "".join(p.read_text() for p in (out / "named").glob("*.conf"))


def test_catalogs_in_a_network_namespace() -> None:
    """Run the scenario below in a fresh network namespace (loopback only) and check it passed."""
    print("\n" + run_in_netns(__file__, "test_catalog_scenario", (PRIMARY, SECONDARY),
                                         "catalogs on loopback: ", timeout=400))


def catalog_scenario(tmp_path: Path, make_inventory: Any, start_named: Any) -> None:
    """Collected as a test only inside the namespace (see test_catalogs_in_a_network_namespace)."""
    zones_dir = tmp_path / "secondary-zones"
    zones_dir.mkdir()
    inventory = make_inventory(lambda d: master_slave(d, zones_dir))
    out, keys = tmp_path / "dns", tmp_path / "keys" / "tsig.keys"
    topo = topology_of(inventory)
    render_dns(topo, out, inventory.name, serial=2026010100, keys=keys)
    primary = start_named(out, include="named/dns-a-1.conf", keys=keys, address=PRIMARY, port=53, rndc=True,
                          probe=("ims.example.net", "SOA"))
    secondary = start_named(out, include="named/dns-b-1.conf", keys=keys, address=SECONDARY, port=53,
                            rndc=True)
    ring = keyring(keys)
    wanted = serials(out, topo)
    assert len(wanted) >= 6 * 2 + 3 * 6  # every view's own instance of every zone it serves
    first = wait_serials(SECONDARY, wanted, ring, WAIT)

    # 2. a new number block: the primary alone is reloaded
    conf_before = (out / "named/dns-b-1.conf").read_bytes()
    data = yaml.safe_load(inventory.read_text())
    data["enum_blocks"].append(dict(NEW_BLOCK))
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    topo2 = topology_of(inventory)
    render_dns(topo2, out, inventory.name, keys=keys)
    assert (out / "named/dns-b-1.conf").read_bytes() == conf_before
    new_zone = "0.0.7.7.7.9.9.2.6.8.e164.arpa"
    wanted2 = {k: s for k, s in serials(out, topo2).items() if k[1] in (new_zone, "6.8.e164.arpa")}
    assert len(wanted2) == 3 * 2  # the new block and the parent that delegates it, in the 3 core views
    started = time.monotonic()
    primary.rndc("reload")  # the configuration (a new zone) and the changed files (catalog, parent)
    block_wait = wait_serials(SECONDARY, wanted2, ring, WAIT)
    block_total = time.monotonic() - started
    assert signed_serial(SECONDARY, new_zone, "imsdr-users-capital", ring) is None  # core views only

    # 3. a new local network: a new view, one view statement more on the secondary
    old_conf = conf_before.decode()
    add_local_network(data)
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    topo3 = topology_of(inventory)
    render_dns(topo3, out, inventory.name, keys=keys)
    new_conf = (out / "named/dns-b-1.conf").read_text()
    added = view_block(new_conf, "users-bay")
    assert re.findall(r'\n    zone "([^"]+)"', added) == [catalog_zone("users-bay")]
    without = new_conf.replace("// " + added.split("\n", 1)[0], "").replace(added, "")
    without = re.sub(r'acl "users-bay" \{[^\n]*\n', "", without)
    without = without.replace(' key "imsdr-users-bay";', "").replace("//     imsdr-users-bay\n", "")
    strip = re.compile(r"\n// users of local network [^\n]*\n")  # view comments: one changed (DR SBC text)
    assert strip.sub("\n", without).split() == strip.sub("\n", old_conf).split()
    primary.rndc("reload")
    started = time.monotonic()
    secondary.rndc("reconfig")
    ring = keyring(keys)  # with the new view's key, generated by this render
    wanted3 = {k: s for k, s in serials(out, topo3).items() if k[0] == "imsdr-users-bay"}
    assert len(wanted3) == 2
    view_wait = wait_serials(SECONDARY, wanted3, ring, WAIT)
    view_total = time.monotonic() - started
    assert all(wait_serials(SECONDARY, {k: s}, ring, WAIT) >= 0 for k, s in serials(out, topo3).items())

    # 4. promotion (README): the primary is lost; the secondary gets the primary's rendering
    primary.stop()
    data["redundancy"]["enum_dns"]["primaries"] = ["dns-b-1"]
    inventory.write_text(yaml.safe_dump(data, sort_keys=False))
    topo4 = topology_of(inventory)
    render_dns(topo4, out, inventory.name, keys=keys)
    assert "catalog-zones" not in (out / "named/dns-b-1.conf").read_text()
    started = time.monotonic()
    secondary.rndc("reconfig")  # its catalog members give way to the zones of its new fragment
    promoted = wait_serials(SECONDARY, serials(out, topo4), ring, WAIT)
    promote_total = time.monotonic() - started
    for view, zone in (("users-capital", "ims.example.net"), ("core-site-a", "0.0.7.7.7.9.9.2.6.8.e164.arpa"),
                       ("users-bay", "ims.mnc001.mcc460.3gppnetwork.org")):
        status = secondary.rndc("zonestatus", zone, "IN", view)
        assert re.search(r"^type: primary$", status, re.M), status  # its own file now, not a catalog member
    print(f"\ncatalogs on loopback: {len(wanted)} zone instances through {len(instances(topo))} catalog "
          f"members in {first:.2f} s; a new block's {len(wanted2)} instances {block_total:.2f} s after "
          f"'rndc reload' on the primary alone (wait {block_wait:.2f} s); a new view's {len(wanted3)} zones "
          f"{view_total:.2f} s after 'rndc reconfig' on the secondary (wait {view_wait:.2f} s); promoted to "
          f"primary, every zone served {promote_total:.2f} s after 'rndc reconfig' (wait {promoted:.2f} s)")


if IN_NETNS:  # inside the namespace only: the scenario itself
    test_catalog_scenario = catalog_scenario
