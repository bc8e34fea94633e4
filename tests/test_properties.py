"""Property tests: generated valid inventories (sites, local networks, elements, groups, ENUM
blocks) never crash the pipeline, render valid and reproducible zones, resolve the same way
from the plan as from the rendered files, and size monotonically.

Run with ``--hypothesis-show-statistics`` to see how many examples each property ran.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import dns.zone
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from imsdr.cli.app import app
from imsdr.inventory.build import load_inventory_text

runner = CliRunner()
COMMON = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                  print_blob=True, database=None)

label = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)
text = st.from_regex(r"[A-Za-z][A-Za-z0-9 ._-]{0,20}", fullmatch=True).map(str.strip).filter(bool)


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args), prog_name="imsdr")


@st.composite
def inventories(draw: st.DrawFn) -> dict[str, Any]:
    """A valid inventory: 1-4 sites, 1-4 local networks each with its SBC, P-CSCFs, CSCFs, HSS,
    optional MGCF/AS, pairs and pools, an SBC DR ring or hub, and a few ENUM blocks."""
    n_sites = draw(st.integers(1, 4))
    sites = []
    for i in range(n_sites):
        site: dict[str, Any] = {"id": f"site-{i}", "name": draw(text), "region": f"region-{i % 2}",
                                "power": [f"grid-{i}"], "transmission": [f"ring-{i}"]}
        if draw(st.booleans()):
            site["core_subnets"] = [f"192.0.2.{i * 32}/27"]
        sites.append(site)
    site_ids = [s["id"] for s in sites]
    pick_site = st.sampled_from(site_ids)

    domain = f"ims.{draw(label)}.net"
    n_ln = draw(st.integers(1, 4))
    lns = []
    for j in range(n_ln):
        prefixes = [f"198.51.100.{j * 64}/26"]
        if draw(st.booleans()):
            prefixes.append(f"2001:db8:{100 + j}::/48")
        lns.append({"id": f"ln-{j}", "name": draw(text), "prefixes": prefixes, "home_sites": [draw(pick_site)],
                    "subscribers": draw(st.integers(0, 200_000)),
                    "busy_hour_erlangs": draw(st.integers(0, 3_000))})

    counter = iter(range(1, 250))
    dual = draw(st.booleans())

    def addresses() -> list[str]:
        k = next(counter)
        out = [f"203.0.113.{k}"]
        if dual:
            out.append(f"2001:db8:ff::{k:x}")
        return out

    elements: list[dict[str, Any]] = []

    def element(prefix: str, etype: str, n: int, **extra: Any) -> list[str]:
        ids = []
        for i in range(n):
            el = {"id": f"{prefix}-{i}", "type": etype, "site": draw(pick_site), "vendor": "vendor-a",
                  "addresses": addresses(), **extra}
            elements.append(el)
            ids.append(el["id"])
        return ids

    dns_ids = element("dns", "enum_dns", draw(st.integers(1, 2)))
    pcscf_ids = element("pcscf", "pcscf", draw(st.integers(1, 3)),
                        capacity={"registered_users": draw(st.integers(1, 500_000))})
    for j, ln in enumerate(lns):
        chosen = draw(st.permutations(pcscf_ids))[: draw(st.integers(1, len(pcscf_ids)))]
        elements.append({"id": f"sbc-{j}", "type": "sbc", "site": ln["home_sites"][0], "vendor": "vendor-b",
                         "addresses": addresses(), "serves": [ln["id"]], "pcscfs": list(chosen),
                         "capacity": {"registered_users": draw(st.integers(1, 500_000))},
                         "features": ["virtual_sbc"] if draw(st.booleans()) else []})
    roles = draw(st.lists(st.sampled_from(["icscf", "scscf", "ecscf", "bgcf"]), min_size=1, max_size=4,
                          unique=True))
    cscf_ids = element("cscf", "cscf", draw(st.integers(1, 3)), roles=roles,
                       capacity={"registered_users": draw(st.integers(1, 500_000))},
                       features=["restoration_data"] if draw(st.booleans()) else [])
    hss_ids = element("hss", "hss", draw(st.integers(1, 2)),
                      capacity={"subscribers": draw(st.integers(1, 1_000_000))})
    mgcf_ids = element("mgcf", "mgcf", draw(st.integers(0, 2)), capacity={"circuits": draw(st.integers(1, 500))})
    as_ids = element("as", "as", draw(st.integers(0, 2)), capacity={"sessions": draw(st.integers(1, 50_000))})

    pairs = []
    for ids, name in ((hss_ids, "hss-pair"), (dns_ids, "dns-pair")):
        if len(ids) == 2:
            pairs.append({"id": name, "members": ids, "mode": draw(st.sampled_from(["active-active",
                                                                                    "active-standby"]))})
    pools: list[dict[str, Any]] = [{"id": "cscf-pool", "members": cscf_ids, "spare": draw(st.integers(0, 1)),
                                    "role": "scscf", "dns_name": "scscf"}]
    if mgcf_ids:
        pools.append({"id": "mgcf-pool", "members": mgcf_ids, "busy_hour_erlangs": draw(st.integers(1, 300))})
    if as_ids:
        pools.append({"id": "as-pool", "members": as_ids, "dns_name": "mmtel"})
    redundancy: dict[str, Any] = {"pairs": pairs, "pools": pools}
    if n_ln >= 2:
        layout = draw(st.sampled_from(["ring", "hub", "none"]))
        if layout == "ring":
            redundancy["sbc_dr"] = {"layout": "ring", "order": list(draw(st.permutations([ln["id"] for ln in lns])))}
        elif layout == "hub":
            redundancy["sbc_dr"] = {"layout": "hub", "hub": f"sbc-{draw(st.integers(0, n_ln - 1))}"}

    blocks = []
    heads = draw(st.lists(st.integers(1000, 9999), max_size=3, unique=True))
    for b, head in enumerate(heads):
        prefix = f"+86{head}"
        if draw(st.booleans()):
            blocks.append({"id": f"block-{b}", "prefix": prefix, "style": "wildcard", "domain": domain})
        else:
            count = draw(st.integers(1, 60))
            first = draw(st.integers(0, 999 - count + 1))
            blocks.append({"id": f"block-{b}", "prefix": prefix, "length": len(prefix) - 1 + 3,
                           "style": "numbers", "domain": domain, "first": f"{prefix}{first:03d}",
                           "last": f"{prefix}{first + count - 1:03d}"})

    network: dict[str, Any] = {
        "name": draw(text), "operator_domain": "example.net", "home_domains": [domain], "country_code": "86",
        "deployment": "lab" if n_sites == 1 else draw(st.sampled_from(["production", "lab"])),
        "timers": {"options_interval": draw(st.integers(1, 60)), "diameter_watchdog": draw(st.integers(6, 10)),
                   "registration_refresh": draw(st.integers(600, 3600))},
        "ttl": {"srv": draw(st.integers(0, 3600)), "a": draw(st.integers(0, 3600))},
        "dns": {"transports": draw(st.lists(st.sampled_from(["udp", "tcp", "tls"]), min_size=1, max_size=3,
                                            unique=True))},
    }
    return {"version": 1, "network": network, "sites": sites, "local_networks": lns, "elements": elements,
            "redundancy": redundancy, "enum_blocks": blocks}


def dump(inv: dict[str, Any]) -> str:
    return yaml.safe_dump(inv, sort_keys=False, default_flow_style=None, width=200)


@contextmanager
def workdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="imsdr-prop-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes() for p in sorted(root.rglob("*"))}


# --- validate --------------------------------------------------------------------------------------

@settings(COMMON, max_examples=50)
@given(inventories())
def test_generated_inventories_validate(inv: dict[str, Any]) -> None:
    loaded, source = load_inventory_text(dump(inv), "generated.yaml")
    assert [e.id for e in loaded.elements] == [e["id"] for e in inv["elements"]]
    assert source.locate_id(inv["elements"][-1]["id"]) is not None


# --- plan: never crashes; zones parse and pass named-checkzone; deterministic and idempotent --------

ORIGIN = re.compile(r"^\$ORIGIN\s+(\S+)", re.MULTILINE)


def check_zone(path: Path) -> None:
    content = path.read_text()
    found = ORIGIN.search(content)
    assert found, f"{path}: no $ORIGIN"
    origin = found.group(1)
    dns.zone.from_text(content, origin=origin, relativize=False, check_origin=True)
    done = subprocess.run(["named-checkzone", "-q", "-k", "fail", "-n", "fail", "-i", "local",
                           origin.rstrip("."), str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"named-checkzone {path}:\n{done.stdout}{done.stderr}"


@settings(COMMON, max_examples=15)
@given(inventories())
def test_plan_succeeds_or_reports_findings_with_valid_reproducible_zones(inv: dict[str, Any]) -> None:
    with workdir() as work:
        path = work / "generated.yaml"
        path.write_text(dump(inv))
        out = work / "out"
        first = invoke("plan", str(path), "--out", str(out))
        assert first.exception is None or isinstance(first.exception, SystemExit), repr(first.exception)
        assert first.exit_code in (0, 1), first.stdout + first.stderr
        assert "Traceback" not in first.stderr
        event(f"plan exit {first.exit_code}")
        zones = sorted(out.rglob("*.zone"))
        assert zones, "no zone rendered"
        for zone in zones:
            check_zone(zone)
        rendered = snapshot(out)
        again = invoke("plan", str(path), "--out", str(out))  # idempotent: same bytes over itself
        assert again.exit_code == first.exit_code
        assert snapshot(out) == rendered
        other = work / "other"
        elsewhere = invoke("plan", str(path), "--out", str(other))  # deterministic: same bytes elsewhere
        assert elsewhere.exit_code == first.exit_code
        assert snapshot(other) == rendered


# --- resolve (from the plan) agrees with the rendered zone files -------------------------------------

VIEW = re.compile(r'^view "([^"]+)" \{\n    match-clients \{ ([^}]*) \};\n(.*?)^\};', re.MULTILINE | re.DOTALL)
ACL = re.compile(r'^acl "([^"]+)" \{ ([^}]*) \};', re.MULTILINE)
ZONE_FILE = re.compile(r'zone "([^"]+)" \{\s*type primary; file "([^"]+)";')
IN_VIEW = re.compile(r'zone "([^"]+)" \{ in-view "([^"]+)"; \};')


def zone_source(out: Path) -> Any:
    """A resolver source built only from what `render dns` wrote (named.conf views + zone files)."""
    from imsdr.resolve.source import ZoneSource
    from imsdr.resolve.views import ViewSpec

    conf = next(iter(sorted((out / "named").glob("*.conf")))).read_text()  # the first server's
    acls = {name: [e.strip() for e in body.split(";") if e.strip()] for name, body in ACL.findall(conf)}
    specs, zones, loaded = [], {}, {}
    for name, match, body in VIEW.findall(conf):
        elements = tuple(e.strip() for e in match.split(";") if e.strip())  # quotes, keys: views.py reads them
        specs.append(ViewSpec(name, elements, acls))
        zones[name] = []
        for origin, file in ZONE_FILE.findall(body):
            zone = dns.zone.from_file(str(out / file), origin=origin + ".", relativize=False, check_origin=False)
            loaded[(name, origin)] = zone
            zones[name].append(zone)
        for origin, other in IN_VIEW.findall(body):
            zones[name].append(loaded[(other, origin)])
    assert specs, "no views in named/<server>.conf"
    return ZoneSource(specs, zones)


def comparable(candidates: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(c["target"], c["port"], c["transport"], c["priority"], c["weight"], c["p_first_exact"],
             tuple(sorted(c["addresses"]))) for c in candidates]


@settings(COMMON, max_examples=20)
@given(inventories())
def test_resolve_agrees_with_rendered_zones(inv: dict[str, Any]) -> None:
    from imsdr.resolve.offline import resolve_in

    with workdir() as work:
        path = work / "generated.yaml"
        path.write_text(dump(inv))
        out = work / "dns"
        rendered = invoke("render", "dns", str(path), "--out", str(out), "--serial", "1")
        assert rendered.exit_code == 0, rendered.stdout + rendered.stderr
        source = zone_source(out)
        domain = inv["network"]["home_domains"][0]
        names = [domain, f"sip:{domain}", f"sbc.{domain}", f"scscf.{domain}"]
        for block in inv["enum_blocks"]:
            names.append(block.get("first") or block["prefix"] + "123")
        clients = [str(next(ipaddress.ip_network(p).hosts())) for ln in inv["local_networks"]
                   for p in ln["prefixes"]]
        ln_clients = set(clients)
        clients += [str(next(ipaddress.ip_network(s["core_subnets"][0]).hosts()))
                    for s in inv["sites"] if s.get("core_subnets")]
        for client in clients:
            for name in names:
                planned = invoke("resolve", str(path), name, "--from", client, "--format", "json")
                assert planned.exit_code in (0, 1), planned.stderr
                from_plan = json.loads(planned.stdout)
                from_zones = resolve_in(source, name, client=client, enum_suffix="e164.arpa").to_dict()
                assert from_plan["view"] == from_zones["view"], (name, client)
                assert from_plan["resolved"] == from_zones["resolved"], (name, client, from_plan, from_zones)
                assert comparable(from_plan["candidates"]) == comparable(from_zones["candidates"]), (name, client)
                event(f"resolved: {from_plan['resolved']}")
                if name == f"sbc.{domain}" and client in ln_clients:
                    assert from_zones["resolved"], f"{client} cannot resolve its SBC"


# --- capacity verdicts are monotonic ------------------------------------------------------------------

RANK = {"ok": 0, "lab": 0, "unknown": 1, "fail": 2}


def capacity(inv: dict[str, Any], work: Path, name: str) -> dict[str, Any]:
    path = work / name
    path.write_text(dump(inv))
    result = invoke("capacity", str(path), "--format", "json")
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert result.exit_code == (1 if data["verdict"] == "fail" else 0)
    return data


def verdicts(report: dict[str, Any]) -> dict[tuple[str, ...], str]:
    found = {}
    for section, checks in report.items():
        if not isinstance(checks, list):
            continue
        for i, check in enumerate(checks):
            if isinstance(check, dict) and "verdict" in check:
                key = check.get("id") or check.get("failed") or f"{check.get('site')}/{check.get('element_type')}"
                found[(section, str(key), str(i))] = check["verdict"]
    return found


def with_more_capacity(inv: dict[str, Any], factor: int) -> dict[str, Any]:
    bigger = json.loads(json.dumps(inv))
    for el in bigger["elements"]:
        el["capacity"] = {k: v * factor for k, v in el.get("capacity", {}).items()}
    return bigger


@settings(COMMON, max_examples=30)
@given(inventories(), st.sampled_from([2, 3, 10]))
def test_adding_capacity_never_turns_a_pass_into_a_fail(inv: dict[str, Any], factor: int) -> None:
    with workdir() as work:
        before = capacity(inv, work, "before.yaml")
        after = capacity(with_more_capacity(inv, factor), work, "after.yaml")
    event(f"capacity before: {before['verdict']}, after x{factor}: {after['verdict']}")
    assert RANK[after["verdict"]] <= RANK[before["verdict"]]
    assert after["failures"] <= before["failures"]
    old, new = verdicts(before), verdicts(after)
    assert old.keys() == new.keys()
    for key, verdict in old.items():
        assert RANK[new[key]] <= RANK[verdict], (key, verdict, new[key])


@settings(COMMON, max_examples=25)
@given(inventories(), st.data())
def test_adding_capacity_to_one_element_never_turns_a_pass_into_a_fail(inv: dict[str, Any],
                                                                       data: st.DataObject) -> None:
    """Also when only one element grows (it may become the largest member, or draw more users)."""
    index = data.draw(st.integers(0, len(inv["elements"]) - 1))
    factor = data.draw(st.sampled_from([2, 10]))
    bigger = json.loads(json.dumps(inv))
    grown = bigger["elements"][index]
    grown["capacity"] = {k: v * factor for k, v in grown.get("capacity", {}).items()}
    with workdir() as work:
        before = capacity(inv, work, "before.yaml")
        after = capacity(bigger, work, "after.yaml")
    old, new = verdicts(before), verdicts(after)
    for key, verdict in old.items():
        assert RANK[new[key]] <= RANK[verdict], (grown["id"], factor, key, verdict, new[key])
