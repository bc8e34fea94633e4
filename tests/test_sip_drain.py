"""Real SIP clients through the rendered SBC configuration: normal timers, and a drain that moves
the registered users.

SIPp UEs register through a Kamailio SBC that loads imsdr's rendered dispatcher list and probing
include, towards two Kamailio P-CSCF stand-ins that keep a real registrar (``usrloc``), so the
count of registered users is real (``kamcmd stats.get_statistics registered_users`` prints
``usrloc:registered_users = N``). pcscf-a answers REGISTER after 3 s (a loaded core): every registration
must still succeed — the probing include sets the probe timeout on the OPTIONS probes alone, never
the SBC's ``fr_timer`` for relayed requests.

Then pcscf-a is drained by executing the rendered page's steps in order (commands and expected
outputs parsed from the Markdown): new registrations go to pcscf-b at once, the registered count on
pcscf-a reaches zero within the drain period the page predicts, and terminating requests to every
registered UE (SIPp UAS) succeed throughout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from named_harness import RNDC_SECRET, free_port, wrapper_conf
from test_dns_kamailio import kamailio_bin, kamcmd_bin, module_dir
from test_rehearsal import (
    DNS,
    PCSCF_A,
    PCSCF_B,
    SBC,
    Lab,
    _inventory,
    _wait_for,
)

DOMAIN = "ims.rehearsal.example.org"
REFRESH_S = 12  # the registration refresh of this lab (network.timers.registration_refresh)
UE = "127.0.30.1"  # a UE address of the local network "town"
ORIGIN = "127.0.10.20"  # where the terminating requests come from (the S-CSCF's address)
SLOW_REGISTER_S = 3


def sipp_bin() -> str:
    found = shutil.which("sipp")
    assert found, "sipp is missing: run bash .ci/test, which installs sip-tester"
    return found


def _modules(*names: str) -> str:
    return "".join(f'loadmodule "{n}.so"\n' for n in names)


def _cfg(listen: str, port: int, ctl: Path, modules: str, body: str, children: int = 1) -> str:
    return f"""#!KAMAILIO
debug=1
log_stderror=yes
children={children}
listen=udp:{listen}:{port}
disable_tcp=yes
auto_aliases=no
dns=no
rev_dns=no
mpath="{module_dir()}/"
{_modules("kex", "tm", "sl", "ctl", "pv", "siputils", "rr")}{modules}
modparam("ctl", "binrpc", "unix:{ctl}")
request_route {{
{body}
}}
"""


# the SBC: REGISTER to the dispatcher's first active P-CSCF (algorithm 8, as the rendered list
# means), with a Path header so terminating requests come back through it; a request with a Route
# to it (a P-CSCF following the Path: a preloaded route, which loose_route() consumes without
# reporting it as loose routing) goes on to the UE in its Request-URI
SBC_BODY = """    if ($hdr(Route) != $null) { loose_route(); t_relay(); exit; }
    if (method == "REGISTER") {
        add_path();
        if (!ds_select_dst("1", "8")) { sl_send_reply("503", "No P-CSCF"); exit; }
        t_relay();
        exit;
    }
    sl_send_reply("404", "No");"""


def _pcscf_body(delay_s: int) -> str:
    wait = f"        sleep({delay_s});\n" if delay_s else ""
    return f"""    if (method == "OPTIONS") {{ sl_send_reply("200", "OK"); exit; }}
    if (method == "REGISTER") {{
        if (!t_newtran()) {{ exit; }}
{wait}        save("location");
        exit;
    }}
    if (method == "INVITE" || method == "ACK" || method == "BYE") {{
        if (has_totag()) {{ loose_route(); t_relay(); exit; }}
        if (!lookup("location")) {{ sl_send_reply("404", "Not registered here"); exit; }}
        t_relay();
        exit;
    }}
    sl_send_reply("404", "No");"""


REGISTER_XML = """<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="register">
  <send retrans="500"><![CDATA[
REGISTER sip:{domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:[field0]@{domain}>;tag=[pid]R[call_number]
To: <sip:[field0]@{domain}>
Call-ID: [call_id]
CSeq: 1 REGISTER
Contact: <sip:[field0]@[local_ip]:{uas_port}>
Max-Forwards: 70
Supported: path
Expires: {expires}
Content-Length: 0

]]></send>
  <recv response="100" optional="true"/>
  <recv response="200"/>
</scenario>
"""

CALL_XML = """<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="terminating">
  <send retrans="500"><![CDATA[
INVITE sip:[field0]@{domain} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:core@{domain}>;tag=[pid]C[call_number]
To: <sip:[field0]@{domain}>
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: <sip:core@[local_ip]:[local_port]>
Max-Forwards: 70
Content-Length: 0

]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rrs="true"/>
  <send><![CDATA[
ACK [next_url] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
[routes]
From: <sip:core@{domain}>;tag=[pid]C[call_number]
To: <sip:[field0]@{domain}>[peer_tag_param]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Length: 0

]]></send>
</scenario>
"""


# the UE side of a terminating request: answer the INVITE (the ACK is end-to-end and not waited for)
UAS_XML = """<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="ue">
  <recv request="INVITE"/>
  <send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:];tag=[pid]U[call_number]
[last_Call-ID:]
[last_CSeq:]
Contact: <sip:ue@[local_ip]:[local_port]>
Content-Length: 0

]]></send>
</scenario>
"""


class SipLab(Lab):
    ports: dict[str, int]

    def kam(self, name: str, rpc: str) -> str:
        result = subprocess.run([kamcmd_bin(), "-s", f"unix:{self.root / (name + '.ctl')}", *rpc.split()],
                                capture_output=True, text=True, timeout=10)
        return result.stdout

    def registered(self, name: str) -> int:
        found = re.search(r"registered_users = (\d+)", self.kam(name, "stats.get_statistics registered_users"))
        assert found, self.logs()
        return int(found.group(1))

    def sipp(self, scenario: str, users: list[str], target: str, port: int, source: str, timeout_s: int,
             rate: int = 20) -> subprocess.CompletedProcess[str]:
        xml = self.root / f"{scenario}.xml"
        csv = self.root / f"{scenario}-users.csv"
        csv.write_text("SEQUENTIAL\n" + "".join(f"{u};\n" for u in users))
        return subprocess.run(
            [sipp_bin(), f"{target}:{port}", "-sf", str(xml), "-inf", str(csv), "-m", str(len(users)),
             "-r", str(rate), "-i", source, "-p", str(free_port()), "-timeout", f"{timeout_s}s",
             "-timeout_error", "-nostdin", "-trace_err", "-error_file", str(self.root / f"{scenario}.err")],
            capture_output=True, text=True, timeout=timeout_s + 15, cwd=self.root)


@pytest.fixture(scope="module")
def sip_lab() -> Iterator[SipLab]:
    root = Path(tempfile.mkdtemp(prefix="sd-"))  # short: Kamailio's unix socket path is limited
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin",
           "COLUMNS": "200"}
    ports = {"sbc": free_port(), "pcscf-a": free_port(), "pcscf-b": free_port(), "uas": free_port()}
    dns_port, rndc_port = free_port(), free_port()
    rndc_conf = root / "rndc.conf"
    rndc_conf.write_text(f'key "rndc-key" {{ algorithm hmac-sha256; secret "{RNDC_SECRET}"; }};\n'
                         f'options {{ default-key "rndc-key"; default-server {DNS}; default-port {rndc_port}; }};\n')
    dns_dir = root / "dns"
    inventory = root / "lab.yaml"
    text = _inventory(dns_dir, root / "sbc.ctl", rndc_conf, rndc_port, dns_port, ports)
    text = text.replace("registration_refresh: 600", f"registration_refresh: {REFRESH_S}")
    inventory.write_text(text)
    lab = SipLab(root, inventory, dns_dir, env)
    lab.ports = ports
    try:
        first = lab.sh(f"imsdr render dns {inventory.name} --out {dns_dir}")
        assert first.returncode == 0, first.stderr
        workdir = root / "named"
        workdir.mkdir()
        (workdir / "named.conf").write_text(wrapper_conf(dns_dir, workdir, dns_port, "named/dns-a.conf",
                                                         address=DNS, control_port=rndc_port))
        lab.start("named", [shutil.which("named") or "/usr/sbin/named", "-g", "-4", "-n", "1", "-c",
                            str(workdir / "named.conf")])
        registrar = _modules("usrloc", "registrar", "cfgutils") + 'modparam("registrar", "use_path", 1)\n' \
            'modparam("registrar", "path_mode", 2)\nmodparam("registrar", "min_expires", 1)\n' \
            'modparam("usrloc", "timer_interval", 1)\n'
        for name, address, delay in (("pcscf-a", PCSCF_A, SLOW_REGISTER_S), ("pcscf-b", PCSCF_B, 0)):
            cfg = root / f"{name}.cfg"
            # enough workers that OPTIONS are answered while REGISTERs wait
            cfg.write_text(_cfg(address, ports[name], root / f"{name}.ctl", registrar, _pcscf_body(delay),
                                children=12))
            lab.start(name, [kamailio_bin(), "-DD", "-E", "-f", str(cfg), "-Y", str(root), "-P",
                             str(root / f"{name}.pid"), "-w", str(root)])
        sbc_cfg = root / "sbc.cfg"
        sbc_cfg.write_text(_cfg(
            SBC, ports["sbc"], root / "sbc.ctl",
            _modules("path", "dispatcher")
            + f'modparam("dispatcher", "list_file", "{dns_dir}/kamailio/sbc-a/dispatcher.list")\n'
            f'include_file "{dns_dir}/kamailio/sbc-a/dispatcher-probing.cfg"\n', SBC_BODY, children=4))
        check = subprocess.run([kamailio_bin(), "-c", "-f", str(sbc_cfg)], capture_output=True, text=True,
                               timeout=30)
        assert check.returncode == 0, check.stdout + check.stderr
        lab.start("sbc", [kamailio_bin(), "-DD", "-E", "-f", str(sbc_cfg), "-Y", str(root), "-P",
                          str(root / "sbc.pid"), "-w", str(root)])
        for name, body in (("register", REGISTER_XML.format(domain=DOMAIN, uas_port=ports["uas"],
                                                           expires=REFRESH_S)),
                           ("call", CALL_XML.format(domain=DOMAIN))):
            (root / f"{name}.xml").write_text(body)
        _wait_for(lambda: lab.kam("sbc", "dispatcher.list").count("FLAGS: AP") == 2, 20,
                  "both P-CSCFs up on the SBC", lab)
        yield lab
    finally:
        lab.stop_all()
        shutil.rmtree(root, ignore_errors=True)


def test_registrations_through_the_sbc_survive_a_3s_pcscf(sip_lab: SipLab) -> None:
    """pcscf-a (first in the SBC's list) answers REGISTER after 3 s: no 408 from the SBC."""
    users = [f"ue{i}" for i in range(6)]
    started = time.monotonic()
    result = sip_lab.sipp("register", users, SBC, sip_lab.ports["sbc"], UE, 30)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr + sip_lab.logs()
    assert took >= SLOW_REGISTER_S  # they really waited for the slow P-CSCF
    assert sip_lab.registered("pcscf-a") == len(users) and sip_lab.registered("pcscf-b") == 0
    sys.stderr.write(f"sip: {len(users)} registrations through the SBC to a {SLOW_REGISTER_S} s P-CSCF "
                     f"in {took:.1f} s, none failed\n")


def _refresh_xml(rounds: int, uas_port: int) -> str:
    """REGISTER, then a refresh every half registration lifetime, ``rounds`` times (one UE per call)."""
    sends = []
    for cseq in range(1, rounds + 1):
        sends.append(f"""  <send retrans="500"><![CDATA[
REGISTER sip:{DOMAIN} SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:[field0]@{DOMAIN}>;tag=[pid]F[call_number]
To: <sip:[field0]@{DOMAIN}>
Call-ID: [call_id]
CSeq: {cseq} REGISTER
Contact: <sip:[field0]@[local_ip]:{uas_port}>
Max-Forwards: 70
Supported: path
Expires: {REFRESH_S}
Content-Length: 0

]]></send>
  <recv response="100" optional="true"/>
  <recv response="200"/>
  <pause milliseconds="{REFRESH_S * 1000 // 2}"/>
""")
    return ('<?xml version="1.0" encoding="ISO-8859-1" ?>\n<scenario name="refresh">\n' + "".join(sends)
            + "</scenario>\n")


def _holder(lab: SipLab, user: str) -> str | None:
    """Where the S-CSCF would send a terminating request: the P-CSCF of the user's newest binding
    (pcscf-b once the UE refreshed there, else pcscf-a)."""
    for name in ("pcscf-b", "pcscf-a"):
        if re.search(rf"AoR: {user}(?:@\S+)?\s", lab.kam(name, "ul.dump brief") + "\n"):
            return name
    return None


def test_drain_moves_registered_users_within_the_predicted_period(sip_lab: SipLab) -> None:
    import signal
    import threading

    from test_rehearsal import _run_steps, _section, _steps

    lab = sip_lab
    users = [f"ref{i}" for i in range(6)]
    (lab.root / "refresh.xml").write_text(_refresh_xml(8, lab.ports["uas"]))
    csv = lab.root / "refresh-users.csv"
    csv.write_text("SEQUENTIAL\n" + "".join(f"{u};\n" for u in users))
    lab.start("ues", [sipp_bin(), f"{SBC}:{lab.ports['sbc']}", "-sf", str(lab.root / "refresh.xml"), "-inf",
                      str(csv), "-m", str(len(users)), "-l", str(len(users)), "-r", "100", "-i", UE, "-p",
                      str(free_port()), "-nostdin", "-trace_err", "-error_file",
                      str(lab.root / "refresh.err")])
    (lab.root / "ue.xml").write_text(UAS_XML)
    lab.start("uas", [sipp_bin(), "-sf", str(lab.root / "ue.xml"), "-i", UE, "-p", str(lab.ports["uas"]),
                      "-nostdin"])
    _wait_for(lambda: all(_holder(lab, u) == "pcscf-a" for u in users), 20, "every UE registered on pcscf-a",
              lab)

    # terminating requests to every registered UE, from the core, all through the drain
    failures: list[str] = []
    calls = [0]
    stop = threading.Event()

    def terminate() -> None:
        while not stop.is_set():
            by_pcscf: dict[str, list[str]] = {}
            for user in users:
                holder = _holder(lab, user)
                if holder is None:
                    failures.append(f"{user} registered nowhere")
                    continue
                by_pcscf.setdefault(holder, []).append(user)
            for name, who in by_pcscf.items():
                address = PCSCF_A if name == "pcscf-a" else PCSCF_B
                result = lab.sipp("call", who, address, lab.ports[name], ORIGIN, 15, rate=50)
                calls[0] += len(who)
                if result.returncode != 0:
                    failures.append(f"calls via {name} to {who}: {result.stderr[-1500:]}")
            stop.wait(1.0)

    caller = threading.Thread(target=terminate, daemon=True)
    caller.start()
    try:
        rendered = lab.sh(f"imsdr render runbook {lab.inventory.name} --out {lab.root / 'runbook'}")
        assert rendered.returncode == 0, rendered.stderr
        page = (lab.root / "runbook" / "pcscf.md").read_text()
        steps = _steps(_section(page, "#### Drain pcscf-a"))
        period = steps[-1]
        assert period.title.startswith("Wait for the users registered through pcscf-a") and period.until_s
        predicted = period.until_s
        assert predicted == REFRESH_S + 5  # one refresh + the TTL of the changed SRV/A records
        load = next(i for i, s in enumerate(steps) if s.title.startswith("Load the new dispatcher list on sbc-a"))
        assert _run_steps(lab, steps[: load + 1]) == load + 1
        drained_at = time.monotonic()
        # when the count reaches 0, watched on its own (the page's later steps take their own time)
        reached: list[float] = []

        def watch() -> None:
            while not stop.is_set() and time.monotonic() - drained_at < predicted + 30:
                if lab.registered("pcscf-a") == 0:
                    reached.append(time.monotonic() - drained_at)
                    return
                time.sleep(0.25)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        # new registrations go to the other P-CSCF at once
        fresh = lab.sipp("register", ["fresh0"], SBC, lab.ports["sbc"], UE, 20)
        assert fresh.returncode == 0, fresh.stdout[-2000:]
        assert _holder(lab, "fresh0") == "pcscf-b"
        assert _run_steps(lab, steps[load + 1:]) == len(steps) - load - 1  # verify --drain, ..., the wait
        watcher.join(timeout=predicted + 30)
        assert reached, "the registered count on pcscf-a never reached 0"
        moved = reached[0]
        assert lab.registered("pcscf-a") == 0
        sys.stderr.write(f"sip drain: registered users on pcscf-a reached 0 {moved:.1f} s after the dispatcher "
                         f"reload; the page predicts at most {predicted:g} s; {calls[0]} terminating calls\n")
        assert moved <= predicted
    finally:
        stop.set()
        caller.join(timeout=30)
        for name in ("ues", "uas"):
            proc = lab.processes.pop(name)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=10)
    assert not failures, failures[:2]
    assert calls[0] >= 2 * len(users)
