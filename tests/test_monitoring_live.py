"""Monitoring end to end, on loopback, with real software once per module: the rehearsal lab
(``named`` serving the rendered views, a Kamailio SBC loading the rendered dispatcher list and
probing include, two Kamailio P-CSCF stand-ins), ``imsdr exporter`` checking both, and a real
``prometheus`` scraping the exporter every second and evaluating the rules ``render monitoring``
wrote.

* ``verify --kamailio`` reads the SBC's live dispatcher state (``kamcmd dispatcher.list``): both
  planned destinations active, no drift; with pcscf-a frozen (SIGSTOP: probes time out), after the
  detection time the plan predicts, pcscf-a is reported inactive (exit 1).
* The same freeze makes ``ImsdrDispatcherDestinationDown{source="sbc-a", element="pcscf-a"}``
  active in Prometheus's ``/api/v1/alerts`` within detection time + exporter interval + scrape and
  evaluation; unfreezing resolves it.
* One served record changed by hand (and reloaded with rndc) makes ``ImsdrDnsDrift`` for that view
  active; restoring it resolves the alert.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from named_harness import free_port, stop_process
from test_rehearsal import Lab, running_lab

SCRAPE_S = 1  # scrape and evaluation interval of the test Prometheus
EXPORTER_INTERVAL_S = 1
DETECTION_S = 3  # the lab's timers: OPTIONS every 1 s, 2 failures, 1 s timeout
SLACK_S = 8  # process start-up, the exporter's DNS run, Kamailio's whole-second timers


def _imsdr() -> str:
    return str(Path(sys.executable).parent / "imsdr")


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback only
        return json.loads(response.read())


class Stack:
    def __init__(self, lab: Lab, root: Path) -> None:
        self.lab, self.root = lab, root
        self.procs: list[subprocess.Popen[bytes]] = []
        self.prom_port = self.blackbox_port = 0

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=self.root, env=self.lab.env)
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.procs:
            stop_process(proc, timeout=15, group=True)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.root.glob("*.log"))) + self.lab.logs()

    def active(self, alertname: str, **labels: str) -> list[dict[str, Any]]:
        data = _get(f"http://127.0.0.1:{self.prom_port}/api/v1/alerts")["data"]["alerts"]
        return [a for a in data if a["labels"].get("alertname") == alertname and a["state"] == "firing"
                and all(a["labels"].get(k) == v for k, v in labels.items())]

    def wait(self, predicate: Any, timeout: float, what: str) -> float:
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if predicate():
                return time.monotonic() - start
            time.sleep(0.25)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{self.logs()}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    assert shutil.which("prometheus"), "prometheus is missing: run bash .ci/test"
    root = tmp_path_factory.mktemp("monitoring-live")
    with running_lab() as lab:
        s = Stack(lab, root)
        try:
            rendered = lab.sh(f"imsdr render monitoring {lab.inventory.name} --out {root / 'monitoring'}")
            assert rendered.returncode == 0, rendered.stderr
            exporter_port, s.prom_port = free_port(), free_port()
            s.start("exporter", [_imsdr(), "exporter", str(lab.inventory), "--listen", f"127.0.0.1:{exporter_port}",
                                 "--interval", str(EXPORTER_INTERVAL_S), "--timeout", "0.5", "--retries", "1",
                                 "--enum-sample", "2", "--kamailio", f"sbc-a=unix:{lab.root / 'sbc.ctl'}"])
            config = {"global": {"scrape_interval": f"{SCRAPE_S}s", "evaluation_interval": f"{SCRAPE_S}s",
                                 "scrape_timeout": f"{SCRAPE_S}s"},
                      "rule_files": [str(root / "monitoring" / "dns.rules.yml"),
                                     str(root / "monitoring" / "sip.rules.yml")],
                      "scrape_configs": [{"job_name": "imsdr",
                                          "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}]}]}
            (root / "prometheus.yml").write_text(yaml.safe_dump(config))
            checked = subprocess.run(["promtool", "check", "config", str(root / "prometheus.yml")],
                                     capture_output=True, text=True, timeout=60)
            assert checked.returncode == 0, checked.stdout + checked.stderr
            s.start("prometheus", [shutil.which("prometheus") or "prometheus",
                                   f"--config.file={root / 'prometheus.yml'}",
                                   f"--storage.tsdb.path={root / 'tsdb'}",
                                   f"--web.listen-address=127.0.0.1:{s.prom_port}"])

            def scraped() -> bool:
                try:
                    result = _get(f"http://127.0.0.1:{s.prom_port}/api/v1/query?query=imsdr_dns_drift")
                except OSError:
                    return False
                return len(result["data"]["result"]) > 0

            s.blackbox_port = free_port()
            s.start("blackbox", [shutil.which("prometheus-blackbox-exporter") or "blackbox_exporter",
                                 f"--config.file={root / 'monitoring' / 'blackbox.yml'}",
                                 f"--web.listen-address=127.0.0.1:{s.blackbox_port}"])
            s.wait(scraped, 60, "Prometheus to scrape the exporter's DNS metrics")
            yield s
        finally:
            s.stop()


def _verify_kamailio(stack: Stack) -> tuple[int, dict[str, Any]]:
    lab = stack.lab
    done = lab.sh(f"imsdr verify {lab.inventory.name} --kamailio sbc-a=unix:{lab.root / 'sbc.ctl'} --format json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_verify_kamailio_compares_the_live_dispatcher_state(stack: Stack) -> None:
    code, report = _verify_kamailio(stack)
    assert code == 0 and report["dispatcher_drift"] == [], report
    states = {(d["element"], d["state"]) for d in report["kamailio"][0]["destinations"]}
    assert states == {("pcscf-a", "AP"), ("pcscf-b", "AP")}
    stack.lab.signal("pcscf-a", signal.SIGSTOP)
    try:
        time.sleep(DETECTION_S + 1)
        stack.wait(lambda: _verify_kamailio(stack)[0] == 1, SLACK_S, "pcscf-a reported inactive")
        _, report = _verify_kamailio(stack)
        assert [(d["element"], d["kind"]) for d in report["dispatcher_drift"]] == [("pcscf-a", "state")]
        assert "is IP, the plan expects it active" in report["dispatcher_drift"][0]["detail"]
    finally:
        stack.lab.signal("pcscf-a", signal.SIGCONT)
    stack.wait(lambda: _verify_kamailio(stack)[0] == 0, SLACK_S, "pcscf-a active again")


def test_a_frozen_pcscf_fires_its_alert_and_resolves(stack: Stack) -> None:
    labels = {"source": "sbc-a", "element": "pcscf-a"}
    quiet_since: list[float | None] = [None]

    def settled() -> bool:
        """No dispatcher alert for a whole detection time: the previous test's freeze is over, its
        late probe timeouts included (one instant without the alert is not enough)."""
        if stack.active("ImsdrDispatcherDestinationDown"):
            quiet_since[0] = None
            return False
        quiet_since[0] = quiet_since[0] or time.monotonic()
        return time.monotonic() - quiet_since[0] >= DETECTION_S + 1

    stack.wait(settled, SLACK_S + 2 * DETECTION_S,
               "no dispatcher alert before the freeze (the previous test's one resolved)")
    stack.lab.signal("pcscf-a", signal.SIGSTOP)
    try:
        took = stack.wait(lambda: stack.active("ImsdrDispatcherDestinationDown", **labels), DETECTION_S + SLACK_S,
                          "ImsdrDispatcherDestinationDown for pcscf-a")
        assert took >= DETECTION_S - 1  # Kamailio's detection, not something faster
        alert = stack.active("ImsdrDispatcherDestinationDown", **labels)[0]
        assert alert["annotations"]["runbook_url"] == "../runbooks/pcscf.md#declare"
        assert alert["labels"]["severity"] == "error" and alert["labels"]["state"] == "IP"
        assert stack.active("ImsdrDispatcherDestinationDown", source="sbc-a", element="pcscf-b") == []
    finally:
        stack.lab.signal("pcscf-a", signal.SIGCONT)
    stack.wait(lambda: not stack.active("ImsdrDispatcherDestinationDown", **labels), SLACK_S + DETECTION_S,
               "the alert to resolve")


def _rewrite(zone: Path, old: str, new: str, serial_step: int) -> None:
    lines = []
    for line in zone.read_text().splitlines():
        tokens = line.split()
        if len(tokens) >= 7 and tokens[0] == "@" and tokens[3] == "SOA":
            tokens[6] = str(int(tokens[6]) + serial_step)
            line = " ".join(tokens)
        lines.append(line.replace(old, new))
    zone.write_text("\n".join(lines) + "\n")


def test_a_changed_record_fires_dns_drift_and_restoring_it_resolves(stack: Stack) -> None:
    lab = stack.lab
    zone = lab.dns_dir / "zones" / "users-town" / "ims.rehearsal.example.org.zone"
    original = zone.read_text()
    assert "127.0.10.5" in original  # the SBC's A record, served to the town's users
    stack.wait(lambda: not stack.active("ImsdrDnsDrift"), SLACK_S, "no DNS drift before the change")
    rndc = f"rndc -c {lab.root / 'rndc.conf'}"
    try:
        _rewrite(zone, "127.0.10.5", "127.0.10.99", 1)
        assert lab.sh(f"{rndc} reload ims.rehearsal.example.org IN users-town").returncode == 0
        stack.wait(lambda: stack.active("ImsdrDnsDrift", server="dns-a", view="users-town"), SLACK_S + 4,
                   "ImsdrDnsDrift for users-town")
        alert = stack.active("ImsdrDnsDrift", server="dns-a", view="users-town")[0]
        assert alert["annotations"]["runbook_url"] == "../runbooks/enum-dns.md#declare"
        assert [a["labels"]["view"] for a in stack.active("ImsdrDnsDrift")] == ["users-town"]
    finally:
        zone.write_text(original)
        _rewrite(zone, "", "", 2)  # the served serial only moves forward
        lab.sh(f"{rndc} reload ims.rehearsal.example.org IN users-town")
    stack.wait(lambda: not stack.active("ImsdrDnsDrift"), SLACK_S + 4, "ImsdrDnsDrift to resolve")


def test_the_rendered_blackbox_modules_probe_each_view_from_inside_it(stack: Stack) -> None:
    """Each view's module sends from the first host of the view's match list (every loopback address
    is this host's), so each probe lands in its own view: SOA answered in the served views, REFUSED
    (the planned answer) in the default view."""
    lab = stack.lab
    modules = yaml.safe_load((stack.root / "monitoring" / "blackbox.yml").read_text())["modules"]
    assert modules["imsdr_dns_users-town"]["dns"]["source_ip_address"] == "127.0.30.1"
    assert modules["imsdr_dns_default"]["dns"]["valid_rcodes"] == ["REFUSED"]
    dig = re.search(r'dig -p (\d+)', lab.inventory.read_text())
    assert dig, "the lab's platform names the DNS port"
    target = f"127.0.0.1:{dig.group(1)}"
    for module in sorted(modules):
        def probed(module: str = module) -> bool:
            url = f"http://127.0.0.1:{stack.blackbox_port}/probe?module={module}&target={target}"
            try:
                with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback only
                    body = response.read().decode()
            except OSError:
                return False
            return "\nprobe_success 1" in body
        stack.wait(probed, 20, f"probe {module} to succeed")
