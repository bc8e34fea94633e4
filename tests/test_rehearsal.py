"""Rehearsal: a P-CSCF page's procedure, driven against real BIND and Kamailio on loopback.

A ``named`` serves the normal plan; a Kamailio SBC loads the rendered dispatcher list and the
rendered probing parameters; two Kamailio P-CSCF stand-ins answer its OPTIONS. The test freezes one
stand-in (SIGSTOP: it stops answering, like a hung or unreachable host; no ICMP error shortcuts the
timeout), measures when Kamailio's dispatcher marks it down and compares with the detection time
the page predicts, then runs the page's drain steps and failback steps *as written on the rendered
page* (commands and expected outputs are parsed from the Markdown, never repeated here), and
checks that the normal DNS answers and dispatcher state are back.

Timers are small (OPTIONS every 1 s, 2 failures, 1 s timeout: 3 s detection) to keep the run short.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from named_harness import RNDC_SECRET, free_port, stop_process, wrapper_conf
from test_dns_kamailio import kamailio_bin, kamcmd_bin, module_dir

# Kamailio's dispatcher pinger and tm timers tick in whole seconds: a state change can come up to one
# probe interval earlier than interval × threshold + timeout (the first missed probe may be sent
# just after the stop) and a little later (timer granularity, the polling of this test).
EARLY_TOLERANCE_S = 1.0  # one probe interval
LATE_TOLERANCE_S = 1.0

# named listens only on addresses configured on an interface (127.0.0.1 on lo); Kamailio and dig -b
# may use any loopback address
SBC, PCSCF_A, PCSCF_B, DNS = "127.0.10.5", "127.0.10.10", "127.0.20.10", "127.0.0.1"
CORE_A_SOURCE = "127.0.10.0/24"


def _inventory(directory: Path, ctl: Path, rndc_conf: Path, rndc_port: int, dns_port: int,
               ports: dict[str, int]) -> str:
    return textwrap.dedent(f"""\
        version: 1
        network:
          name: Rehearsal IMS
          operator_domain: rehearsal.example.org
          home_domains: [ims.rehearsal.example.org]
          country_code: "86"
          deployment: lab
          timers: {{options_interval: 1, options_failure_threshold: 2, options_timeout: 1,
                    diameter_watchdog: 6, registration_refresh: 600, session_timer: 600}}
          ttl: {{soa: 60, ns: 60, naptr: 30, srv: 5, a: 5, aaaa: 5, enum: 60, negative: 5}}
          dns: {{transports: [udp], nameservers: [dns-a]}}
        sites:
          - {{id: site-a, name: Site A, region: north, power: [ups-a], transmission: [ring-a],
              core_subnets: ["{CORE_A_SOURCE}"]}}
          - {{id: site-b, name: Site B, region: south, power: [ups-b], transmission: [ring-b],
              core_subnets: [127.0.20.0/24]}}
        local_networks:
          - {{id: town, name: Town, prefixes: [127.0.30.0/24], home_sites: [site-a], subscribers: 1000,
              busy_hour_erlangs: 20}}
        elements:
          - {{id: dns-a, type: enum_dns, site: site-a, vendor: opensource, addresses: [{DNS}],
              platform: lab-bind}}
          - {{id: sbc-a, type: sbc, site: site-a, vendor: opensource, addresses: [{SBC}], port: {ports['sbc']},
              transports: [udp], serves: [town], pcscfs: [pcscf-a, pcscf-b],
              capacity: {{registered_users: 5000}}, options_probing: active, platform: lab-kamailio}}
          - {{id: pcscf-a, type: pcscf, site: site-a, vendor: opensource, addresses: [{PCSCF_A}], platform: kam-a,
              port: {ports['pcscf-a']}, transports: [udp], capacity: {{registered_users: 5000}}}}
          - {{id: pcscf-b, type: pcscf, site: site-b, vendor: opensource, addresses: [{PCSCF_B}], platform: kam-b,
              port: {ports['pcscf-b']}, transports: [udp], capacity: {{registered_users: 5000}}}}
          - {{id: cscf-a, type: cscf, roles: [icscf, scscf], site: site-a, vendor: opensource,
              addresses: [127.0.10.20], transports: [udp], capacity: {{registered_users: 5000}},
              features: [restoration_data]}}
          - {{id: cscf-b, type: cscf, roles: [icscf, scscf], site: site-b, vendor: opensource,
              addresses: [127.0.20.20], transports: [udp], capacity: {{registered_users: 5000}},
              features: [restoration_data]}}
          - {{id: hss-a, type: hss, site: site-a, vendor: opensource, addresses: [127.0.10.30],
              capacity: {{subscribers: 10000}}}}
          - {{id: hss-b, type: hss, site: site-b, vendor: opensource, addresses: [127.0.20.30],
              capacity: {{subscribers: 10000}}}}
        redundancy:
          pairs:
            - {{id: pcscf-pair, members: [pcscf-a, pcscf-b], mode: active-active, dns_name: pcscf}}
            - {{id: hss-pair, members: [hss-a, hss-b], mode: active-standby, sync: realtime}}
          pools:
            - {{id: cscf-pool, members: [cscf-a, cscf-b], spare: 1, selection: dns, role: scscf,
                dns_name: scscf}}
        contacts:
          - {{role: core-on-call, name: Casey Core (fictional), phone: "+1 555 0101"}}
        recovery_targets:
          pcscf: {{rto: 600, rpo: 0}}
        platforms:
          lab-bind: {{kind: bind, control: "rndc -c {rndc_conf} -s {DNS} -p {rndc_port}",
                      dig: "dig -p {dns_port}", directory: "{directory}", keys: "{directory.parent}/named/tsig.keys"}}
          lab-kamailio: {{kind: kamailio, control: "kamcmd -s unix:{ctl}", directory: "{directory}"}}
          kam-a: {{kind: kamailio, control: "kamcmd -s unix:{ctl.parent / 'pcscf-a.ctl'}"}}
          kam-b: {{kind: kamailio, control: "kamcmd -s unix:{ctl.parent / 'pcscf-b.ctl'}"}}
        """)


def _kamailio_cfg(listen: str, port: int, ctl: Path, body: str, extra: str = "") -> str:
    return f"""#!KAMAILIO
debug=1
log_stderror=yes
children=1
listen=udp:{listen}:{port}
disable_tcp=yes
auto_aliases=no
dns=no
rev_dns=no
mpath="{module_dir()}/"
loadmodule "kex.so"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "ctl.so"
modparam("ctl", "binrpc", "unix:{ctl}")
{extra}
request_route {{
{body}
}}
"""


STAND_IN_BODY = '    if (method == "OPTIONS") { sl_send_reply("200", "OK"); exit; }\n    sl_send_reply("404", "No");'


@dataclass
class Lab:
    root: Path
    inventory: Path
    dns_dir: Path
    env: dict[str, str]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str, argv: list[str]) -> None:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        self.processes[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                start_new_session=True)

    def signal(self, name: str, sig: int) -> None:
        os.killpg(self.processes[name].pid, sig)  # the process group this test started

    def sh(self, command: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=self.inventory.parent, env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.read_text(errors='replace')[-4000:]}"
                         for p in sorted(self.root.glob("*.log")))

    def stop_all(self) -> None:
        for name, proc in self.processes.items():
            stop_process(proc, group=True)
            log = self.root / f"{name}.log"
            if log.exists() and proc.returncode not in (0, -15, None):
                sys.stderr.write(f"--- {name} ---\n{log.read_text(errors='replace')[-2000:]}\n")


def _wait_for(predicate, timeout: float, what: str, lab: Lab) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}\n{lab.logs()}")


@contextlib.contextmanager
def running_lab() -> Iterator[Lab]:
    """named, the SBC and two P-CSCF stand-ins on loopback, stopped (by process group) on exit;
    used by this module per test and by others once per module."""
    for tool in ("named", "rndc", "dig"):
        assert shutil.which(tool) or Path(f"/usr/sbin/{tool}").exists(), f"{tool} missing: run bash .ci/test"
    root = Path(tempfile.mkdtemp(prefix="rh-"))  # short: Kamailio's unix socket path is limited
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin",
           "COLUMNS": "200"}
    ports = {"sbc": free_port(), "pcscf-a": free_port(), "pcscf-b": free_port()}
    dns_port, rndc_port = free_port(), free_port()
    rndc_conf = root / "rndc.conf"
    rndc_conf.write_text(f'key "rndc-key" {{ algorithm hmac-sha256; secret "{RNDC_SECRET}"; }};\n'
                         f'options {{ default-key "rndc-key"; default-server {DNS}; default-port {rndc_port}; }};\n')
    dns_dir = root / "dns"
    inventory = root / "lab.yaml"
    inventory.write_text(_inventory(dns_dir, root / "sbc.ctl", rndc_conf, rndc_port, dns_port, ports))
    lab = Lab(root, inventory, dns_dir, env)
    try:
        first = lab.sh(f"imsdr render dns {inventory.name} --out {dns_dir}")
        assert first.returncode == 0, first.stderr
        workdir = root / "named"
        workdir.mkdir()
        # the operator's named.conf around the rendered server fragment: TSIG keys file, rndc channel
        (workdir / "named.conf").write_text(wrapper_conf(dns_dir, workdir, dns_port, "named/dns-a.conf",
                                                         address=DNS, control_port=rndc_port))
        lab.start("named", [shutil.which("named") or "/usr/sbin/named", "-g", "-4", "-n", "1", "-c",
                            str(workdir / "named.conf")])
        for name, address in (("pcscf-a", PCSCF_A), ("pcscf-b", PCSCF_B)):
            cfg = root / f"{name}.cfg"
            cfg.write_text(_kamailio_cfg(address, ports[name], root / f"{name}.ctl", STAND_IN_BODY,
                                         extra='loadmodule "usrloc.so"'))  # a registered-users count
            lab.start(name, [kamailio_bin(), "-DD", "-E", "-f", str(cfg), "-Y", str(root), "-P",
                             str(root / f"{name}.pid"), "-w", str(root)])
        sbc_cfg = root / "sbc.cfg"
        sbc_cfg.write_text(_kamailio_cfg(
            SBC, ports["sbc"], root / "sbc.ctl", "    exit;",
            extra='loadmodule "dispatcher.so"\n'
                  f'modparam("dispatcher", "list_file", "{dns_dir}/kamailio/sbc-a/dispatcher.list")\n'
                  f'include_file "{dns_dir}/kamailio/sbc-a/dispatcher-probing.cfg"'))
        check = subprocess.run([kamailio_bin(), "-c", "-f", str(sbc_cfg)], capture_output=True, text=True,
                               timeout=30)
        assert check.returncode == 0, check.stdout + check.stderr
        lab.start("sbc", [kamailio_bin(), "-DD", "-E", "-f", str(sbc_cfg), "-Y", str(root), "-P",
                          str(root / "sbc.pid"), "-w", str(root)])
        _wait_for(lambda: "hostmaster" in lab.sh(f"dig -p {dns_port} @{DNS} -b 127.0.10.1 ims.rehearsal.example.org "
                                                 "SOA +short +time=1 +tries=1").stdout, 20, "named", lab)
        _wait_for(lambda: lab.sh(f"{kamcmd_bin()} -s unix:{root / 'sbc.ctl'} core.uptime").returncode == 0, 20,
                  "the SBC's control socket", lab)
        yield lab
    finally:
        lab.stop_all()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def lab() -> Iterator[Lab]:
    with running_lab() as started:
        yield started


# --- reading the rendered page -----------------------------------------------------------------

@dataclass
class Step:
    title: str
    commands: list[str]
    expect: str  # exact | includes | empty
    expected: list[str]
    wait_s: float
    until_s: float = 0.0  # poll until the output is as expected, at most this long


def _section(page: str, heading: str) -> str:
    start = page.index(f"\n{heading}\n")
    rest = page[start + len(heading) + 2:]
    end = re.search(r"\n#{1,4} ", rest)
    return rest[: end.start()] if end else rest


def _blocks(text: str, lang: str) -> list[list[str]]:
    return [block.strip("\n").split("\n") if block.strip("\n") else []
            for block in re.findall(rf"```{lang}\n(.*?)```", text, re.S)]


def _steps(section: str) -> list[Step]:
    steps = []
    for chunk in re.split(r"\n(?=\*\*Step \d+\. )", "\n" + section)[1:]:
        title = re.match(r"\*\*Step \d+\. (.*?)\.\*\*", chunk)
        assert title, chunk[:200]
        assert "Placeholder (vendor CLI" not in chunk, f"placeholder step in a rehearsed procedure: {title.group(1)}"
        (commands,) = _blocks(chunk, "sh")
        wait = re.search(r"^Wait (\d+) s ", chunk, re.M)
        until = re.search(r"^Repeat every \d+ s until the output is as expected, at most (\d+) s", chunk, re.M)
        if "Expected output: none." in chunk:
            expect, expected = "empty", []
        else:
            expect = "includes" if "Expected output includes:" in chunk else "exact"
            (expected,) = _blocks(chunk, "text")
        assert "- Go: " in chunk and "- No-go: " in chunk and "- Rollback: " in chunk, title.group(1)
        steps.append(Step(title.group(1), commands, expect, expected, float(wait.group(1)) if wait else 0.0,
                          float(until.group(1)) if until else 0.0))
    return steps


def _norm(lines: list[str]) -> list[str]:
    return sorted(" ".join(line.split()) for line in lines if line.strip())


def _run_steps(lab: Lab, steps: list[Step]) -> int:
    """Run every step's commands in order and check the expected output the page states."""
    checked = 0
    for step in steps:
        time.sleep(step.wait_s)
        deadline = time.monotonic() + step.until_s
        while True:
            output: list[str] = []
            for command in step.commands:
                result = lab.sh(command)
                assert result.returncode == 0, (f"{step.title}: `{command}` failed:\n{result.stdout}"
                                                f"{result.stderr}{lab.logs()}")
                output += result.stdout.splitlines()
            if not step.until_s or _norm(output) == _norm(step.expected) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        if step.expect == "empty":
            assert _norm(output) == [], f"{step.title}: expected no output, got {output}"
        elif step.expect == "exact":
            assert _norm(output) == _norm(step.expected), f"{step.title}: got {output}, page says {step.expected}"
        else:
            got = set(_norm(output))
            missing = [line for line in _norm(step.expected) if line not in got]
            assert not missing, f"{step.title}: missing {missing} in {output}"
        checked += 1
    return checked


def _declare_command(page: str, element: str) -> tuple[float, str, str]:
    declare = _section(page, "### Declare")
    row = next(line for line in declare.splitlines() if line.startswith(f"| {element} | "))
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
    detection = float(cells[1].removesuffix(" s"))
    command = cells[4].strip("`").replace("\\|", "|")
    return detection, command, cells[5]


def test_pcscf_page_rehearsed_against_named_and_kamailio(lab: Lab) -> None:
    rendered = lab.sh(f"imsdr render runbook {lab.inventory.name} --out {lab.root / 'runbook'}")
    assert rendered.returncode == 0, rendered.stderr
    page = (lab.root / "runbook" / "pcscf.md").read_text()
    predicted, declare, failed_shows = _declare_command(page, "pcscf-a")
    assert predicted == 1 * 2 + 1  # interval × threshold + timeout of the inventory
    assert failed_shows == "FLAGS: IP"

    # normal state: Kamailio probes both stand-ins and sees them up
    _wait_for(lambda: lab.sh(declare).stdout.strip() == "FLAGS: AP", 15, "pcscf-a up on the SBC", lab)

    # the failure: pcscf-a stops answering; measure when the dispatcher marks it down. The change
    # happened between the last poll that still showed it up and the first that shows it down (a
    # loaded machine widens that bracket, it does not move it): both ends are checked.
    time.sleep(0.3)
    lab.signal("pcscf-a", signal.SIGSTOP)
    stopped = time.monotonic()
    last_up, first_down = 0.0, None
    while time.monotonic() - stopped < predicted + 15:
        asked = time.monotonic() - stopped
        state = lab.sh(declare).stdout.strip()
        if state == failed_shows:
            first_down = asked
            break
        last_up = asked
        time.sleep(0.05)
    assert first_down is not None, f"pcscf-a never marked down\n{lab.logs()}"
    sys.stderr.write(f"rehearsal: detection predicted {predicted:g} s, measured between {last_up:.2f} s "
                     f"and {first_down:.2f} s after the stop\n")
    assert last_up <= predicted + LATE_TOLERANCE_S, (predicted, last_up)
    assert first_down >= predicted - EARLY_TOLERANCE_S, (predicted, first_down)

    # the page's drain procedure, as written
    drain = _steps(_section(page, "#### Drain pcscf-a"))
    assert [s.title.split(" ")[0] for s in drain][:2] == ["Render", "Load"]
    # the drain period reads the registered users on pcscf-a itself, which is frozen here (a failure,
    # not a planned drain): test_sip_drain runs that step against a live registrar
    assert drain[-1].title.startswith("Wait for the users registered through pcscf-a") and drain[-1].until_s
    drain = drain[:-1]
    assert _run_steps(lab, drain) == len(drain) >= 5
    assert "duid=pcscf-a" not in (lab.dns_dir / "kamailio/sbc-a/dispatcher.list").read_text()

    # the outage lasts a while (at least Kamailio's 5 s reload_delta between two list reloads), then
    # pcscf-a recovers: the pre-failback checklist item with a command, and the failback as written
    time.sleep(5)
    lab.signal("pcscf-a", signal.SIGCONT)
    checklist = _section(page, "#### Before failing back pcscf-a")
    serials = re.search(r"DNS serials equal across servers.*?`([^`]+)`", checklist)
    assert serials
    outputs = [lab.sh(c.strip()).stdout.strip() for c in serials.group(1).split(";")]
    assert len(set(outputs)) == 1 and outputs[0], outputs
    back = _steps(_section(page, "#### Fail back pcscf-a"))
    assert any(s.expected == ["FLAGS: AP"] and s.wait_s >= predicted for s in back)  # the OPTIONS canary
    assert _run_steps(lab, back) == len(back)

    # normal answers are back: every verification check of the page passes, and Kamailio probes
    # pcscf-a again and sees it up
    assert lab.sh(declare).stdout.strip() == "FLAGS: AP"
    for block, expected in zip(_blocks(_section(page, "## Verification"), "sh"),
                               _blocks(_section(page, "## Verification"), "text"), strict=True):
        (command,) = block
        result = lab.sh(command)
        assert _norm(result.stdout.splitlines()) == _norm(expected), (command, result.stdout)
