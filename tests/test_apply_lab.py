"""`imsdr apply` against real servers: two named (primary and secondary, views with TSIG keys,
rndc on each) and two Kamailio SBCs loading the delivered dispatcher lists.

Everything runs in a network namespace this test creates (``unshare --net``: its own loopback,
with the servers' addresses added), so port 53 and 5060 are ours and the host is never touched.
The servers start once for the module; the scenarios run in order on the same lab:

* a fresh apply (state empty, servers running the same files) delivers, reloads and verifies every
  target, canary first; ``--status`` shows no difference; applying again has nothing to do;
* an inventory change reloads only the zones whose files changed, and the secondary converges;
* the canary ``named`` refuses the new zones (its ``max-zone-ttl`` is below the new NS TTL): the other
  targets are never touched and the canary is back on its previous files, verified;
* a second apply while one holds the lock is refused with the lock's message;
* SIGKILL of an apply in the middle of its waves; the next apply finds the state, rolls the
  interrupted targets back, and finishes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PRIMARY, SECONDARY, SBC_1, SBC_2 = "127.0.0.10", "127.0.0.11", "127.0.0.20", "127.0.0.21"
SBCS = ("sbc-capital", "sbc-harbour")
IN_NETNS = os.environ.get("IMSDR_APPLY_NETNS") == "1"
DRAIN_REFRESH_S = 10
MAX_TTL = 86400  # the province's largest TTL (NS): the canary primary refuses anything above


def test_apply_in_a_network_namespace() -> None:
    """Run the scenarios below inside a fresh network namespace and check they passed."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip") or "/usr/sbin/ip"
    assert unshare, "util-linux 'unshare' is needed for the network namespace"
    adds = " && ".join(f"{ip} addr add {a}/32 dev lo" for a in (PRIMARY, SECONDARY, SBC_1, SBC_2))
    setup = (f"{ip} link set lo up && {adds} && exec {sys.executable} -m pytest -q -s -p no:cacheprovider "
             f"-p no:randomly -p no:xdist -s {Path(__file__).resolve()} -k 'not in_a_network_namespace'")
    env = {**os.environ, "IMSDR_APPLY_NETNS": "1"}
    result = subprocess.run([unshare, "--net", "sh", "-c", setup], capture_output=True, text=True, env=env,
                            timeout=900, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-3000:]
    assert re.search(r"\b8 passed\b", result.stdout), result.stdout[-3000:]
    print("\n" + "\n".join(re.findall(r"^(?:apply lab|second-wave failure): .*$", result.stdout + result.stderr, re.M)))


def _inventory(path: Path, secondary_dir: Path, change: int = 0) -> Path:
    data = yaml.safe_load((ROOT / "inventories" / "province.yaml").read_text())
    for el in data["elements"]:
        if el["id"] == "dns-a-1":
            el["addresses"] = [PRIMARY]
        if el["id"] == "dns-b-1":
            el["addresses"] = [SECONDARY]
        if change >= 1 and el["id"] == "cscf-a-1":
            el["addresses"] = ["192.0.2.99"]  # an address change: a few zones, no dispatcher list
        if change == 3 and el["id"] == "pcscf-a-1":
            el["addresses"] = ["192.0.2.98"]  # zones and both SBCs' dispatcher lists
    data["network"]["timers"]["registration_refresh"] = DRAIN_REFRESH_S  # a short drain period
    data["network"]["ttl"].update({"a": 5, "aaaa": 5, "srv": 5, "naptr": 5})
    data["redundancy"]["enum_dns"] = {"sync": "master-slave", "primaries": ["dns-a-1"], "load_sharing": "regional"}
    data["network"]["dns"]["secondary_directory"] = str(secondary_dir)
    if change == 2:
        data["network"]["ttl"]["ns"] = MAX_TTL * 2  # above the canary's max-zone-ttl
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


if IN_NETNS:
    from named_harness import RNDC_SECRET, start_named, stop_process
    from test_dns_kamailio import kamailio_bin
    from test_rehearsal import _kamailio_cfg

    from imsdr.apply.executor import _plan_tree, target_files
    from imsdr.apply.servers import zone_refs
    from imsdr.apply.targets import load_targets

    def imsdr(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True,
                              timeout=timeout, check=False, cwd=ROOT)

    class Lab:
        def __init__(self, root: Path) -> None:
            self.root = root
            self.plan = root / "plan"
            self.state = root / "state"
            self.targets = root / "targets.yaml"
            self.processes: list[subprocess.Popen[bytes]] = []
            self.named: dict[str, Any] = {}

        def render(self, change: int, *drain: str) -> Path:
            inv = _inventory(self.root / "province.yaml", self.root / "secondary-zones", change)
            drains = [arg for element in drain for arg in ("--drain", element)]
            done = imsdr("plan", str(inv), "--out", str(self.plan), "--fail-on", "never", "-q", *drains)
            assert done.returncode == 0, done.stderr
            return inv

        def apply(self, *extra: str, plan: bool = True) -> subprocess.CompletedProcess[str]:
            args = ["apply", *([str(self.plan)] if plan else []), "--targets", str(self.targets),
                    "--state", str(self.state), "--converge-timeout", "30", *extra]
            return imsdr(*args)

        def journal(self) -> list[dict[str, Any]]:
            latest = max((self.state / "journal").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
            return [json.loads(line) for line in latest.read_text().splitlines()]

        def stop(self) -> None:
            for server in self.named.values():
                server.stop()
            for proc in self.processes:
                stop_process(proc)

        def timed_apply(self, what: str) -> list[dict[str, Any]]:
            """Apply the plan (exit 0 expected), print how long it took, return its journal."""
            started = time.monotonic()
            done = self.apply()
            took = time.monotonic() - started
            assert done.returncode == 0, done.stdout + done.stderr
            entries = self.journal()
            sys.stderr.write(f"apply lab: {what}, {len(entries)} steps, {took:.1f} s\n")
            return entries

    def _targets_text(root: Path, keys: Path, rndc_key: Path, ports: dict[str, int]) -> str:
        return f"""version: 1
root: {root / 'srv'}
tsig_keys: {keys}
targets:
  dns-a-1:
    kind: bind
    directory: dns-a-1
    dns: {{address: {PRIMARY}, port: 53}}
    rndc: {{address: {PRIMARY}, port: {ports['dns-a-1']}, key_file: {rndc_key}}}
  dns-b-1:
    kind: bind
    directory: dns-b-1
    dns: {{address: {SECONDARY}, port: 53}}
    rndc: {{address: {SECONDARY}, port: {ports['dns-b-1']}, key_file: {rndc_key}}}
  {SBCS[0]}:
    kind: kamailio
    directory: {SBCS[0]}
    rpc: {{kamcmd: {root / (SBCS[0] + '.ctl')}}}
  {SBCS[1]}:
    kind: kamailio
    directory: {SBCS[1]}
    rpc: {{kamcmd: {root / (SBCS[1] + '.ctl')}}}
"""

    @pytest.fixture(scope="module")
    def lab() -> Iterator[Lab]:
        root = Path(tempfile.mkdtemp(prefix="ap-"))  # short: Kamailio's unix socket path is limited
        lab = Lab(root)
        try:
            (root / "secondary-zones").mkdir()
            lab.render(0)
            from imsdr.dns.keys import ensure_keys

            keys = root / "keys" / "tsig.keys"
            names = sorted({n for conf in (lab.plan / "dns" / "named").glob("*.conf")
                            for n in re.findall(r'key "([a-z0-9.-]+)"', conf.read_text())})
            ensure_keys(keys, names)
            keys.chmod(0o600)
            rndc_key = root / "rndc.key"
            rndc_key.write_text(f'key "rndc-key" {{ algorithm hmac-sha256; secret "{RNDC_SECRET}"; }};\n')
            rndc_key.chmod(0o600)
            # the servers run the rendered files already (delivered by hand before imsdr apply)
            placeholder = _targets_text(root, keys, rndc_key, {"dns-a-1": 953, "dns-b-1": 953})
            lab.targets.write_text(placeholder)
            tree = _plan_tree(lab.plan)
            for target in load_targets(lab.targets).targets.values():
                for rel, data in target_files(tree, target).files.items():
                    (target.directory / rel).parent.mkdir(parents=True, exist_ok=True)
                    (target.directory / rel).write_bytes(data)
            srv = root / "srv"
            lab.named["dns-a-1"] = start_named(srv / "dns-a-1", include="named/dns-a-1.conf", keys=keys,
                                               address=PRIMARY, port=53, rndc=True, probe=("ims.example.net", "SOA"),
                                               extra_options=f"    max-zone-ttl {MAX_TTL};\n")
            lab.named["dns-b-1"] = start_named(srv / "dns-b-1", include="named/dns-b-1.conf", keys=keys,
                                               address=SECONDARY, port=53, rndc=True,
                                               probe=("ims.example.net", "SOA"))
            ports = {tid: server.control_port for tid, server in lab.named.items()}
            lab.targets.write_text(_targets_text(root, keys, rndc_key, ports))
            for sbc, address in zip(SBCS, (SBC_1, SBC_2), strict=True):
                directory = srv / sbc
                extra = (f'loadmodule "dispatcher.so"\n'
                         f'modparam("dispatcher", "list_file", "{directory}/dispatcher.list")\n'
                         f'include_file "{directory}/dispatcher-probing.cfg"\n')
                cfg = root / f"{sbc}.cfg"
                cfg.write_text(_kamailio_cfg(address, 5060, root / f"{sbc}.ctl", '    sl_send_reply("404", "No");',
                                             extra))
                log = open(root / f"{sbc}.log", "wb")  # noqa: SIM115 - closed with the process
                lab.processes.append(subprocess.Popen(
                    [kamailio_bin(), "-DD", "-E", "-f", str(cfg), "-Y", str(root), "-w", str(root)],
                    stdout=log, stderr=subprocess.STDOUT))
            deadline = time.monotonic() + 20
            while not all((root / f"{sbc}.ctl").exists() for sbc in SBCS):
                assert time.monotonic() < deadline, "\n".join((root / f"{s}.log").read_text() for s in SBCS)
                time.sleep(0.1)
            yield lab
        finally:
            lab.stop()
            shutil.rmtree(root, ignore_errors=True)

    def _reloaded(entries: list[dict[str, Any]], phase: str = "") -> list[str]:
        return [e["step"] for e in entries if e["step"].startswith("Reload zone") and phase in e["phase"]]

    def test_fresh_apply_canary_first_then_status_clean(lab: Lab) -> None:
        dry = lab.apply("--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert "$ rndc -s 127.0.0.10" in dry.stdout and "expect lines: zone reload queued" in dry.stdout
        entries = lab.timed_apply("fresh apply of 4 targets")
        touched = [e["target"] for e in entries if e["phase"] != "pre-flight"]
        assert touched[0] == "dns-a-1" and SBCS[0] in touched[: touched.index("dns-b-1")]
        assert all(e["result"] == "ok" for e in entries), [e for e in entries if e["result"] != "ok"]
        assert any(e["step"].startswith("Verify dns-a-1") for e in entries if e["phase"] == "canary")
        status = lab.apply("--status", "--format", "json")
        assert status.returncode == 0, status.stdout + status.stderr
        rows = json.loads(status.stdout)["targets"]
        assert {r["id"] for r in rows} == {"dns-a-1", "dns-b-1", *SBCS} and all(r["differs"] == [] for r in rows)
        again = lab.apply()
        assert again.returncode == 0 and "nothing to do" in again.stdout
        secret = RNDC_SECRET
        everything = "".join(p.read_text(errors="replace") for p in lab.state.rglob("*") if p.is_file()
                             and "objects" not in p.parts)
        assert secret not in everything + json.dumps(entries) + dry.stdout

    def test_inventory_change_reloads_only_changed_zones_and_secondary_converges(lab: Lab) -> None:
        before = {rel: data for rel, data in _plan_tree(lab.plan).items()}
        lab.render(1)
        after = _plan_tree(lab.plan)
        changed_zones = {rel for rel, data in after.items() if rel.endswith(".zone") and before.get(rel) != data}
        all_zones = {rel for rel in after if rel.endswith(".zone")}
        assert changed_zones and changed_zones != all_zones
        entries = lab.timed_apply("inventory change")
        reloads = [e for e in entries if e["step"].startswith("Reload zone")]
        assert reloads and all(e["target"] == "dns-a-1" for e in reloads)
        refs = zone_refs((lab.plan / "dns" / "named" / "dns-a-1.conf").read_text())
        file_of = {(ref.zone, ref.view): f"dns/{ref.file}" for ref in refs if ref.kind == "primary"}
        reloaded = {file_of[(e["command"].split()[-3], e["command"].split()[-1])] for e in reloads}
        assert reloaded == changed_zones & set(file_of.values())  # exactly the changed zone files
        assert len(reloads) < len(file_of)
        converge = [e for e in entries if e["target"] == "dns-b-1" and e["step"].startswith("Wait for dns-b-1")]
        assert converge and converge[0]["result"] == "ok"
        assert not any(e["target"] in SBCS for e in entries)  # the lists did not change
        status = lab.apply("--status", "--format", "json")
        assert status.returncode == 0 and all(r["differs"] == [] for r in json.loads(status.stdout)["targets"])

    def test_canary_refuses_the_reload_others_untouched_canary_back(lab: Lab) -> None:
        rows = json.loads(lab.apply("--status", "--format", "json").stdout)["targets"]
        deployed = {r["id"]: r["deployed"] for r in rows}
        lab.render(2)
        done = lab.apply()
        assert done.returncode == 1, done.stdout + done.stderr
        sys.stderr.write(f"canary failure: {done.stderr}")
        assert "rolled back" in done.stderr
        entries = lab.journal()
        assert not any(e["target"] in ("dns-b-1", SBCS[1]) for e in entries if e["phase"] != "pre-flight")
        failed = [e for e in entries if e["result"] == "failed"]
        assert failed[0]["target"] == "dns-a-1" and failed[0]["phase"] == "canary"
        back = [e for e in entries if e["phase"] == "rollback"]
        assert back and all(e["result"] == "ok" for e in back)
        assert any(e["step"].startswith("Verify dns-a-1") for e in back)
        status = lab.apply("--status", "--format", "json")
        assert status.returncode == 1  # the plan on disk (change 2) is not deployed
        rows = json.loads(status.stdout)["targets"]
        assert {r["id"]: r["deployed"] for r in rows} == deployed  # every target still on the previous apply
        assert [r["id"] for r in rows if r["differs"]] == ["dns-a-1"]  # the secondary's own files are the same

    def _journal_of(lab: Lab, earlier: set[Path]) -> list[dict[str, Any]]:
        journals = set((lab.state / "journal").glob("*.jsonl")) - earlier
        if not journals:
            return []
        return [json.loads(line) for line in next(iter(journals)).read_text().splitlines() if line.endswith("}")]

    def test_second_wave_failure_rolls_every_target_back(lab: Lab) -> None:
        """The secondary stops answering after the canary wave (SIGSTOP): its convergence fails in
        wave 1; the canary primary and SBC go back, the secondary is transferred the old zones again."""
        deployed = {p.stem: p.read_text() for p in (lab.state / "targets").glob("*.json")}
        lab.render(3)
        earlier = set((lab.state / "journal").glob("*.jsonl"))
        secondary = lab.named["dns-b-1"]
        proc = subprocess.Popen([sys.executable, "-m", "imsdr", "apply", str(lab.plan), "--targets", str(lab.targets),
                                 "--state", str(lab.state), "--converge-timeout", "4"], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stopped = resumed = False
        try:
            deadline = time.monotonic() + 240
            while proc.poll() is None and time.monotonic() < deadline:
                entries = _journal_of(lab, earlier)
                if not stopped and any(e["phase"] == "canary" and e["step"].startswith(f"Verify {SBCS[0]}")
                                       for e in entries):
                    os.kill(secondary.pid, signal.SIGSTOP)
                    stopped = True
                if stopped and not resumed and any(e["result"] == "failed" for e in entries):
                    os.kill(secondary.pid, signal.SIGCONT)
                    resumed = True
                time.sleep(0.02)
            out, err = proc.communicate(timeout=60)
        finally:
            os.kill(secondary.pid, signal.SIGCONT)
        assert stopped and resumed
        assert proc.returncode == 1, out + err
        entries = _journal_of(lab, earlier)
        failed = next(e for e in entries if e["result"] == "failed")
        assert failed["phase"] == "wave 1" and failed["target"] == "dns-b-1"
        back = [e for e in entries if e["phase"] == "rollback"]
        assert {e["target"] for e in back} == {"dns-a-1", "dns-b-1", SBCS[0]}
        assert all(e["result"] == "ok" for e in back), [e for e in back if e["result"] != "ok"]
        assert any(e["step"].startswith(f"Verify {SBCS[0]}") for e in back)
        assert any(e["step"].startswith("Verify dns-a-1") for e in back)
        assert any(e["step"].startswith("Transfer dns-b-1") for e in back)
        assert not any(e["target"] == SBCS[1] for e in entries if e["phase"] != "pre-flight")
        assert {p.stem: p.read_text() for p in (lab.state / "targets").glob("*.json")} == deployed
        sys.stderr.write(f"second-wave failure: {len(entries)} journal steps, {len(back)} of them the rollback\n")

    def test_concurrent_apply_refused_with_the_lock_message(lab: Lab) -> None:
        import fcntl

        lab.state.mkdir(exist_ok=True)
        fd = os.open(lab.state / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.pwrite(fd, b"pid 4242, started now\n", 0)
            refused = lab.apply()
            assert refused.returncode == 2
            assert "another imsdr apply is running (pid 4242" in refused.stderr
        finally:
            os.close(fd)

    def test_sigkill_mid_wave_then_apply_recovers_and_finishes(lab: Lab) -> None:
        lab.render(0)  # back to the first inventory: the zones change again
        earlier = set((lab.state / "journal").glob("*.jsonl"))
        proc = subprocess.Popen([sys.executable, "-m", "imsdr", "apply", str(lab.plan), "--targets",
                                 str(lab.targets), "--state", str(lab.state)], cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        killed = False
        while time.monotonic() < deadline and proc.poll() is None:
            journals = set((lab.state / "journal").glob("*.jsonl")) - earlier
            lines = next(iter(journals)).read_text().splitlines() if journals else []
            if any('"Reload zone' in line and '"canary"' in line for line in lines):
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                break
            time.sleep(0.02)
        proc.wait(timeout=30)
        assert killed, "the apply ended before it could be killed mid-wave"
        assert (lab.state / "pending.json").exists()
        done = lab.apply()
        assert done.returncode == 0, done.stdout + done.stderr
        assert "recovered from an interrupted apply" in done.stdout
        entries = lab.journal()
        assert any(e["phase"] == "recovery" for e in entries)
        assert all(e["result"] == "ok" for e in entries), [e for e in entries if e["result"] != "ok"]
        assert not (lab.state / "pending.json").exists()
        status = lab.apply("--status", "--format", "json")
        assert status.returncode == 0, status.stdout

    def test_rollback_returns_to_the_previous_apply(lab: Lab) -> None:
        def records(kind: str) -> dict[str, str]:
            return {p.stem: json.loads(p.read_text())["plan_digest"] for p in (lab.state / kind).glob("*.json")}

        previous, current = records("previous"), records("targets")
        assert previous != current
        done = lab.apply("--rollback", plan=False)
        assert done.returncode == 0, done.stdout + done.stderr
        assert records("targets") == {**current, **previous}
        entries = lab.journal()
        verified = {e["target"] for e in entries
                    if e["step"].startswith(("Verify", "Transfer")) and e["result"] == "ok"}
        assert {"dns-a-1", "dns-b-1"} <= verified
        assert all(e["result"] == "ok" for e in entries)

    def test_drain_then_failback_with_apply(lab: Lab) -> None:
        """`plan --drain pcscf-a-1` applied: every live DNS server answers the drained state and
        neither SBC's dispatcher holds pcscf-a-1; the failback brings both back (as `verify` says)."""
        inventory = _inventory(lab.root / "province.yaml", lab.root / "secondary-zones", 1)
        address = next(el["addresses"][0] for el in yaml.safe_load(inventory.read_text())["elements"]
                       if el["id"] == "pcscf-a-1")
        keys = str(lab.root / "keys" / "tsig.keys")

        def listed(sbc: str) -> str:
            return subprocess.run(["kamcmd", "-s", f"unix:{lab.root / (sbc + '.ctl')}", "dispatcher.list"],
                                  capture_output=True, text=True, timeout=30, check=True).stdout

        assert all(address in listed(sbc) for sbc in SBCS)
        drained = lab.apply("--drain", "pcscf-a-1", "--inventory", str(inventory))
        assert drained.returncode == 0, drained.stdout + drained.stderr
        waited = [e for e in lab.journal() if e["phase"] == "drain period"]
        assert [(e["target"], e["result"]) for e in waited] == [("pcscf-a-1", "ok")]
        assert f"drain period {DRAIN_REFRESH_S + 5} s" in waited[0]["step"]  # refresh + TTL, as the page says
        check = imsdr("verify", str(inventory), "--drain", "pcscf-a-1", "--keys", keys)
        assert check.returncode == 0, check.stdout + check.stderr
        assert not any(address in listed(sbc) for sbc in SBCS)
        back = lab.apply("--failback", "--inventory", str(inventory))
        assert back.returncode == 0, back.stdout + back.stderr
        check = imsdr("verify", str(inventory), "--drain", "pcscf-a-1", "--failback", "--keys", keys)
        assert check.returncode == 0, check.stdout + check.stderr
        assert all(address in listed(sbc) for sbc in SBCS)
