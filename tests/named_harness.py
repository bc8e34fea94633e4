"""A real BIND ``named`` on loopback for tests: start it on a rendered config, query it, stop it.

Reusable by any test (DNS rendering, resolve/verify, runbooks)::

    server = start_named(out_dir)                   # out_dir holds named.conf.imsdr + zones/
    answer = server.query("sbc.ims.example.net", "SRV", source="127.0.0.2")
    server.stop()                                    # SIGTERM by pid (the fixture does it for you)

``named`` runs in the foreground (``-g``) from its own temporary working directory, listens on
a free high port of 127.0.0.1 only (no IPv6, no recursion, no rndc), and reads zone files
relative to the rendered directory. Only loopback addresses are ever used.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import dns.exception
import dns.message
import dns.query
import dns.rdatatype
import dns.rrset

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A port free for both UDP and TCP on 127.0.0.1 (high range, chosen by the kernel)."""
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            tcp.bind((LOOPBACK, 0))
            port = tcp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                try:
                    udp.bind((LOOPBACK, port))
                except OSError:
                    continue
            if port >= 1024:
                return port
    raise RuntimeError("no free loopback port")


def wrapper_conf(config_dir: Path, workdir: Path, port: int, include: str = "named.conf.imsdr") -> str:
    """A minimal named.conf around a rendered fragment (what an operator's named.conf would add)."""
    return f"""options {{
    directory "{config_dir}";
    pid-file "{workdir}/named.pid";
    managed-keys-directory "{workdir}";
    session-keyfile "{workdir}/session.key";
    listen-on port {port} {{ {LOOPBACK}; }};
    listen-on-v6 {{ none; }};
    recursion no;
    dnssec-validation no;
    notify no;
}};
controls {{ }};
include "{config_dir / include}";
"""


@dataclass
class NamedServer:
    process: subprocess.Popen[bytes]
    port: int
    workdir: Path
    config: Path
    log_path: Path
    address: str = LOOPBACK
    _stopped: bool = field(default=False, repr=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    def query(
        self, qname: str, rdtype: str, source: str = LOOPBACK, timeout: float = 2.0
    ) -> dns.message.Message:
        """Send one query from ``source`` (a loopback address) and return the response."""
        if not source.startswith("127."):
            raise ValueError("tests query from loopback addresses only")
        request = dns.message.make_query(qname, rdtype)
        request.flags &= ~dns.flags.RD  # type: ignore[attr-defined]
        return dns.query.udp(request, self.address, port=self.port, source=source, timeout=timeout)

    def answer(self, qname: str, rdtype: str, source: str = LOOPBACK) -> dns.rrset.RRset | None:
        """The answer rrset for (qname, rdtype) as seen from ``source``, or None."""
        response = self.query(qname, rdtype, source)
        for rrset in response.answer:
            if rrset.rdtype == dns.rdatatype.from_text(rdtype):
                return rrset
        return None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop named by its pid (SIGTERM, then SIGKILL after 5 s) and remove its working dir."""
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        shutil.rmtree(self.workdir, ignore_errors=True)


def start_named(
    config_dir: Path | str,
    include: str = "named.conf.imsdr",
    timeout: float = 15.0,
    probe: tuple[str, str] = (".", "SOA"),
) -> NamedServer:
    """Start named on a free port with ``config_dir/include`` and wait until it answers."""
    named = shutil.which("named") or "/usr/sbin/named"
    if not os.path.exists(named):
        raise FileNotFoundError("BIND 'named' is not installed (Debian package bind9)")
    config_dir = Path(config_dir).resolve()
    workdir = Path(tempfile.mkdtemp(prefix="imsdr-named-"))
    port = free_port()
    config = workdir / "named.conf"
    config.write_text(wrapper_conf(config_dir, workdir, port, include))
    log_path = workdir / "named.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [named, "-g", "-4", "-n", "1", "-c", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    server = NamedServer(process, port, workdir, config, log_path)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            text = server.log()
            server.stop()
            raise RuntimeError(f"named exited with {process.returncode}:\n{text[-4000:]}")
        if "running" in server.log():
            with contextlib.suppress(dns.exception.DNSException, OSError):
                server.query(probe[0], probe[1], timeout=0.5)
                return server
        if time.monotonic() > deadline:
            text = server.log()
            server.stop()
            raise RuntimeError(f"named did not answer within {timeout} s:\n{text[-4000:]}")
        time.sleep(0.05)
