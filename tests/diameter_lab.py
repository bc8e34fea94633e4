"""The Diameter lab the deployed tests share: the sample province with two HSS pairs holding
one subscriber range each (``lab_data``), the real freeDiameterd client with the rendered files
plus the test-only request generator (tests/data/diameter_probe.c), and ``diameter_peer.py``
servers; every process is started and stopped by its PID."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from inventory_factory import element, province_data

HERE = Path(__file__).resolve().parent
NET = "127.27.0."
ADDRESSES = {"cscf-a-1": 20, "cscf-b-1": 21, "hss-a-1": 30, "hss-b-1": 31, "hss-c-1": 32, "hss-d-1": 33,
             "slf-a-1": 40, "slf-b-1": 41}
REALM = "ims.example.net"
USERS = {"8610555000001@ims.example.net": ("hss-a-1", "hss-b-1"),
         "8622666000001@ims.example.net": ("hss-c-1", "hss-d-1")}
TC, PROMOTION = 2, 2


def lab_data(with_slf: bool, net: str = NET) -> dict:
    """The sample province with a second HSS pair, subscriber ranges per pair, loopback addresses
    and short Tc/promotion so the failover is measured in seconds."""
    data = province_data()
    hss = element(data, "hss-a-1")
    data["elements"].append({**hss, "id": "hss-c-1"})
    data["elements"].append({**element(data, "hss-b-1"), "id": "hss-d-1"})
    for el in data["elements"]:
        if el["id"] in ADDRESSES:
            el["addresses"] = [f"{net}{ADDRESSES[el['id']]}"]
    pairs = data["redundancy"]["pairs"]
    hss_pair = next(p for p in pairs if p["id"] == "hss-pair")
    hss_pair.update(user_ranges=["8610"], promotion_time=PROMOTION)
    pairs.append({"id": "hss-pair-2", "members": ["hss-c-1", "hss-d-1"], "mode": "active-standby",
                  "sync": "realtime", "user_ranges": ["8622"], "promotion_time": PROMOTION})
    data["network"]["timers"]["diameter_reconnect"] = TC
    if not with_slf:
        data["elements"] = [e for e in data["elements"] if e["type"] != "slf"]
        data["redundancy"]["pairs"] = [p for p in pairs if p["id"] != "slf-pair"]
    return data



def _build(out: Path) -> Path:
    from imsdr.diameter import extension_source

    out.mkdir(parents=True, exist_ok=True)
    (out / "dict_ims_cxsh.c").write_text(extension_source(), encoding="utf-8")
    sources = (("dict_ims_cxsh", out / "dict_ims_cxsh.c"), ("diameter_probe", HERE / "data" / "diameter_probe.c"))
    for name, source in sources:
        subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", str(out / f"{name}.fdx"), str(source),
                        "-lfdcore", "-lfdproto", "-lpthread"], check=True, capture_output=True)
    return out


class Lab:
    """Servers and clients of one test module, each a process stopped by its PID. ``wrap``: the
    command prefix that runs them (e.g. ``nsenter`` into a network namespace the test made); ``net``:
    the /24 prefix of the servers' addresses."""

    def __init__(self, root: Path, wrap: tuple[str, ...] = (), net: str = NET) -> None:
        self.root = root
        self.net = net
        self.ext = _build(root / "ext")
        self.wrap = list(wrap)
        self.procs: dict[str, subprocess.Popen] = {}

    # --- servers ------------------------------------------------------------------------------
    def start_server(self, name: str, *extra: str) -> None:
        log = self.root / f"{name}.log"
        self.procs[name] = subprocess.Popen(
            [*self.wrap, sys.executable, str(HERE / "diameter_peer.py"), "--identity", f"{name}.{REALM}",
             "--realm", REALM, "--address", f"{self.net}{ADDRESSES[name]}", "--log", str(log), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def log(self, name: str) -> list[list[str]]:
        path = self.root / f"{name}.log"
        return [line.split() for line in path.read_text().splitlines()] if path.exists() else []

    def stop(self, name: str, sig: int = signal.SIGTERM) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    # --- the freeDiameter client ----------------------------------------------------------------
    def start_client(self, name: str, files: dict[str, str], tag: str) -> Path:
        """freeDiameterd with ``name``'s rendered files and the request generator; its answer log."""
        probe = self.root / tag / "probe.log"
        self.start_daemon(name, files, tag, probe=probe)
        return probe

    def start_daemon(self, name: str, files: dict[str, str], tag: str, probe: Path | None = None,
                     wrap: tuple[str, ...] | None = None) -> Path:
        """freeDiameterd with ``name``'s rendered files (a client with ``probe``, or a DRA), run with
        ``wrap`` (default: the lab's); its configuration directory (``fd.log``: its output)."""
        conf_dir = self.root / tag
        (conf_dir / "tls").mkdir(parents=True)
        for file, text in files.items():
            (conf_dir / file).write_text(text, encoding="utf-8")
        _credentials(conf_dir, name)
        if probe is not None:
            (conf_dir / "probe.conf").write_text(
                f"realm {REALM}\ninterval_ms 200\nlog {probe}\n" + "".join(f"user {u}\n" for u in USERS))
            with (conf_dir / "freeDiameter.conf").open("a") as conf:  # the test's request generator
                conf.write('LoadExtension = "diameter_probe.fdx" : "probe.conf";\n')
        env = {**os.environ, "LD_LIBRARY_PATH": str(self.ext)}
        self.procs[tag] = subprocess.Popen(
            [*(self.wrap if wrap is None else wrap), _daemon(), "-c", "freeDiameter.conf"], cwd=conf_dir, env=env,
            stdout=(conf_dir / "fd.log").open("w"), stderr=subprocess.STDOUT)
        return conf_dir

    def close(self) -> None:
        for name in list(self.procs):
            self.stop(name)


def _daemon() -> str:
    path = shutil.which("freeDiameterd")
    assert path, "freeDiameterd is not installed: run bash .ci/test"
    return path


def _credentials(conf_dir: Path, client: str) -> None:
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={client}.{REALM}",
         "-keyout", str(conf_dir / "tls" / f"{client}.key.pem"), "-out", str(conf_dir / "tls" / f"{client}.cert.pem")],
        check=True, capture_output=True)
    shutil.copy(conf_dir / "tls" / f"{client}.cert.pem", conf_dir / "tls" / "ca.pem")


def answers(probe: Path) -> list[tuple[int, str, int, str]]:
    if not probe.exists():
        return []
    out = []
    for line in probe.read_text().splitlines():
        ms, user, rc, host = line.split()
        out.append((int(ms), user, int(rc), host.split(".")[0]))
    return out


def wait_for(check, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def now_ms() -> int:
    return int(time.clock_gettime(time.CLOCK_MONOTONIC) * 1000)


def served_by(probe: Path, user: str, host: str, since: int = 0):  # type: ignore[no-untyped-def]
    return next((a for a in answers(probe) if a[0] >= since and a[1] == user and a[2] == 2001 and a[3] == host), None)


