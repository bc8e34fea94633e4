"""Master-slave promotion rehearsed on two real named: the enum-dns page's steps, as rendered.

The primary (dns-a-1, 127.0.0.10) and the secondary (dns-b-1, 127.0.0.11) load their rendered
fragments on port 53 of their own loopback address, in a network namespace the test creates
(``unshare --net``; the host's network is never touched). The primary is stopped (the failure),
then the test runs the drain steps of the rendered ``enum-dns.md`` page *as written* (commands
and expected outputs parsed from the Markdown): the render of the drained state, the promotion of
dns-b-1 (its reload script: ``rndc reconfig`` turns its zones ``type primary``), the zone-status
check and ``imsdr verify --drain`` (signed with the views' keys). The survivor must then serve
the drained zones with serials that continued upward. The failback steps follow: dns-a-1 starts
on the drained directory, where it is a secondary of dns-b-1 (``verify --drain --server`` passes
on it before anything else), the normal state is rendered, dns-a-1 takes the primary role back
and dns-b-1 steps down, and ``verify --drain --failback`` passes on both. Then the same cycle
from the ``site-site-a.md`` page (a site drain: every element of site-a), its DNS steps run as
written and its Kamailio dispatcher steps skipped (no Kamailio runs here; tests/test_rehearsal.py
and tests/test_sip_drain.py execute those against real Kamailio).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from named_harness import NETNS_ENV, RNDC_SECRET, run_in_netns, start_named
from test_dns_master_slave import keyring, signed_serial
from test_rehearsal import _norm, _section, _steps

from imsdr.dns.plan import build_dns_plan
from imsdr.inventory.build import load_inventory
from imsdr.model.topology import Topology

PRIMARY, SECONDARY = "127.0.0.10", "127.0.0.11"
IN_NETNS = os.environ.get(NETNS_ENV) == "1"
WAIT = 30.0  # seconds: NOTIFY and transfers are immediate; the bound stops a broken setup


def test_promotion_in_a_network_namespace() -> None:
    """Run the scenario below in a fresh network namespace (loopback only) and check it passed."""
    print("\n" + run_in_netns(__file__, "test_promotion_rehearsed_from_the_page", (PRIMARY, SECONDARY),
                              "promotion on loopback: "))


def _rndc_conf(path: Path, address: str, port: int) -> None:
    path.write_text(f'key "rndc-key" {{ algorithm hmac-sha256; secret "{RNDC_SECRET}"; }};\n'
                    f'options {{ default-key "rndc-key"; default-server {address}; default-port {port}; }};\n')


def _sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _run(steps: list[Any], cwd: Path, env: dict[str, str], on_step: Any = None, logs: Any = None,
         skip_kamailio: bool = False) -> list[str]:
    """Run every step's commands in order; check the output the page states. Returns the titles.
    ``skip_kamailio``: a site page's dispatcher steps (run by tests/test_rehearsal.py) are skipped."""
    done = []
    for step in steps:
        if skip_kamailio and step.commands and all("kamcmd" in c for c in step.commands):
            done.append(f"(skipped, no Kamailio here) {step.title}")
            continue
        if on_step is not None:
            on_step(step)
        # a transfer completes a moment after the command that starts it: the verify steps (and only
        # they) are given WAIT seconds to see it, the page's other steps are run once
        settle = WAIT if any(c.startswith("imsdr verify") for c in step.commands) else 0.0
        deadline = time.monotonic() + max(step.until_s, settle)
        while True:
            output: list[str] = []
            failed = ""
            for command in step.commands:
                for source in re.findall(r"-b (\S+)", command):  # dig -b: the view's source address
                    subprocess.run(["ip", "addr", "add", f"{source}/32", "dev", "lo"], capture_output=True,
                                   check=False, timeout=10)
                result = _sh(command, cwd, env)
                if result.returncode != 0:
                    failed = f"`{command}` exit {result.returncode}:\n{result.stdout}{result.stderr}"
                output += result.stdout.splitlines()
            got = _norm(output)
            ok = not failed and (got == [] if step.expect == "empty" else got == _norm(step.expected)
                                 if step.expect == "exact" else set(_norm(step.expected)) <= set(got))
            if ok or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert ok, (f"{step.title}: {failed or output}; page says {step.expect} {step.expected}"
                    + (logs() if logs is not None else ""))
        done.append(step.title)
    return done


def promotion_scenario(tmp_path: Path, make_inventory: Any) -> None:
    """Collected as a test only inside the namespace (see test_promotion_in_a_network_namespace)."""
    root = tmp_path
    out, keys, zones_dir = root / "dns", root / "keys" / "tsig.keys", root / "secondary-zones"
    zones_dir.mkdir()
    rndc_a, rndc_b = root / "rndc-a.conf", root / "rndc-b.conf"

    def mutate(d: dict[str, Any]) -> None:
        for el in d["elements"]:
            if el["id"] == "dns-a-1":
                el["addresses"], el["platform"] = [PRIMARY], "bind-a"
            if el["id"] == "dns-b-1":
                el["addresses"], el["platform"] = [SECONDARY], "bind-b"
        d["redundancy"]["enum_dns"] = {"sync": "master-slave", "primaries": ["dns-a-1"], "load_sharing": "regional",
                                       "provisioning_window": 1800}
        d["network"]["dns"]["secondary_directory"] = str(zones_dir)
        d["platforms"] = {**d.get("platforms", {}),
                          "bind-a": {"kind": "bind", "control": f"rndc -c {rndc_a}", "directory": str(out),
                                     "keys": str(keys)},
                          "bind-b": {"kind": "bind", "control": f"rndc -c {rndc_b}", "directory": str(out),
                                     "keys": str(keys)}}

    inventory = make_inventory(mutate)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin", "COLUMNS": "200"}
    first = _sh(f"imsdr render dns {inventory.name} --out {out} --keys {keys}", inventory.parent, env)
    assert first.returncode == 0, first.stderr
    rb = _sh(f"imsdr render runbook {inventory.name} --out {root / 'runbook'}", inventory.parent, env)
    assert rb.returncode == 0, rb.stderr
    page = (root / "runbook" / "enum-dns.md").read_text()
    drain = _steps(_section(page, "#### Drain dns-a-1"))
    failback = _steps(_section(page, "#### Fail back dns-a-1"))
    assert "provisioning window, **30 min**" in page.replace("\n", " ")
    assert [s.title for s in drain][:3] == ["Render the drained state of dns-a-1",
                                            "Promote dns-b-1 to primary (every primary is drained)",
                                            "Check dns-b-1 holds the zones as primary"]
    assert [s.title for s in failback][:2] == ["Start dns-a-1 as a secondary of dns-b-1",
                                               "Check dns-a-1 came back as a secondary of dns-b-1"]

    servers = {}

    def start(which: str) -> Any:
        address, conf = (PRIMARY, rndc_a) if which == "a" else (SECONDARY, rndc_b)
        server = start_named(out, include=f"named/dns-{which}-1.conf", keys=keys, address=address, port=53,
                             rndc=True, probe=("ims.example.net", "SOA"))
        _rndc_conf(conf, address, server.control_port)
        servers[which] = server
        return server

    try:
        start("a")
        start("b")
        topo = Topology(*load_inventory(inventory))
        plan = build_dns_plan(topo)
        ring = keyring(keys)
        core = next(v for v in plan.views if v.kind == "site")
        enum_zone = next(z for z in plan.view_zones(core) if z.endswith("e164.arpa") and z != "6.8.e164.arpa")
        watched = [(core.key_name, "ims.example.net"), (core.key_name, enum_zone)]
        deadline = time.monotonic() + WAIT
        while any(signed_serial(SECONDARY, z, k, ring) != signed_serial(PRIMARY, z, k, ring) for k, z in watched):
            assert time.monotonic() < deadline, "the secondary never transferred the zones"
            time.sleep(0.1)

        logs = lambda: "".join(s.log()[-60000:] for s in servers.values())  # noqa: E731

        def cycle(drain: list[Any], failback: list[Any], skip: bool, fresh_disk: bool) -> tuple[dict[str, Any], ...]:
            before = {z: signed_serial(SECONDARY, z, k, ring) for k, z in watched}
            servers["a"].stop()  # the primary (or its whole site) is lost
            started = time.monotonic()
            done = _run(drain, inventory.parent, env, logs=logs, skip_kamailio=skip)
            promoted_s = time.monotonic() - started
            assert "type: primary" in servers["b"].rndc("zonestatus", "ims.example.net", "in", core.name)
            after = {z: signed_serial(SECONDARY, z, k, ring) for k, z in watched}
            # the serials continue upward: the changed zones (the NS of the drained server left them)
            assert all(after[z] is not None and after[z] > before[z] for z in before), (before, after)
            drained_conf = (out / "named/dns-a-1.conf").read_text()
            assert "type primary" not in drained_conf and f"primaries {{ {SECONDARY} key" in drained_conf

            # failback: dns-a-1 comes back on the drained directory, a secondary of dns-b-1 first
            start_back = time.monotonic()

            def before_step(step: Any) -> None:
                if step.title.startswith("Start dns-a-1 as a secondary"):
                    if fresh_disk:  # a server that never was a secondary: no copy on its disk, its
                        # catalogs must be transferred before their member zones exist
                        for copy in zones_dir.iterdir():
                            copy.unlink()
                    start("a")

            done += _run(failback, inventory.parent, env, on_step=before_step, logs=logs, skip_kamailio=skip)
            failback_s = time.monotonic() - start_back
            assert "type: primary" in servers["a"].rndc("zonestatus", "ims.example.net", "in", core.name)
            assert "type: secondary" in servers["b"].rndc("zonestatus", "ims.example.net", "in", core.name)
            final = {z: signed_serial(PRIMARY, z, k, ring) for k, z in watched}
            assert all(final[z] > after[z] for z in final), (after, final)  # upward again on the failback
            deadline = time.monotonic() + WAIT
            while any(signed_serial(SECONDARY, z, k, ring) != final[z] for k, z in watched):
                assert time.monotonic() < deadline, "dns-b-1 did not transfer from the returned primary"
                time.sleep(0.1)
            return before, after, final, {"drain_s": round(promoted_s, 1), "failback_s": round(failback_s, 1),
                                          "steps": done}

        # the element page: dns-a-1 comes back with older copies on disk (the two servers share the
        # secondary directory here); the site page: with none
        element = cycle(drain, failback, skip=False, fresh_disk=False)
        assert not any(t.startswith("(skipped") for t in element[3]["steps"])  # every step of the DNS page ran
        site_page = (root / "runbook" / "site-site-a.md").read_text()
        site = cycle(_steps(_section(site_page, "#### Drain site-a")),
                     _steps(_section(site_page, "#### Fail back site-a")), skip=True, fresh_disk=True)
        ran = [t for t in site[3]["steps"] if not t.startswith("(skipped")]
        assert ran[:3] == ["Render the drained state of site site-a",
                           "Promote dns-b-1 to primary (every primary is drained)",
                           "Check dns-b-1 holds the zones as primary"], ran
        assert "Start dns-a-1 as a secondary of dns-b-1" in ran and "Return the primary role to dns-a-1" in ran
        print(f"\npromotion on loopback: element page {element[3]['drain_s']} s drain, {element[3]['failback_s']} s "
              f"failback, serials {element[0]} -> {element[1]} -> {element[2]}; site page {site[3]['drain_s']} s "
              f"drain, {site[3]['failback_s']} s failback ({len(ran)} DNS steps run, "
              f"{len(site[3]['steps']) - len(ran)} Kamailio steps skipped), serials -> {site[1]} -> {site[2]}")
    finally:
        for server in servers.values():
            server.stop()


if IN_NETNS:  # inside the namespace only: the scenario itself
    test_promotion_rehearsed_from_the_page = promotion_scenario
