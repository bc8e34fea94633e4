"""A real BIND ``named`` on loopback for tests: start it on a rendered config, query it, stop it.

Reusable by any test (DNS rendering, resolve/verify, runbooks)::

    server = start_named(out_dir)                   # out_dir holds named/<server>.conf + zones/
    answer = server.query("sbc.ims.example.net", "SRV", source="127.0.0.2")
    server.stop()                                    # SIGTERM by pid (the fixture does it for you)

``named`` runs in the foreground (``-g``) from its own temporary working directory, listens on
a free high port of 127.0.0.1 (or the given loopback ``address``/``port``; no IPv6, no
recursion), and reads zone files relative to the rendered directory. The TSIG keys the fragment
names are generated into the working directory (imsdr's own ``ensure_keys``)
unless a keys file is given; ``rndc=True`` opens a control channel (``server.rndc("reload")``).
Only loopback addresses are ever used.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import dns.exception
import dns.flags
import dns.message
import dns.query
import dns.rdatatype
import dns.rrset

LOOPBACK = "127.0.0.1"


_HANDED_OUT: set[int] = set()  # this test process's ports so far: never the same one twice


def free_port() -> int:
    """A port free for both UDP and TCP on 127.0.0.1 (high range, chosen by the kernel), and not
    handed out before in this process: the kernel may offer a port again as soon as its probe
    socket is closed, and a named given one port for DNS and for rndc answers rndc on its DNS
    listener now and then ("recv failed: connection reset")."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp:
            tcp.bind((LOOPBACK, 0))
            port = tcp.getsockname()[1]
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                try:
                    udp.bind((LOOPBACK, port))
                except OSError:
                    continue
            if port >= 1024 and port not in _HANDED_OUT:
                _HANDED_OUT.add(port)
                return port
    raise RuntimeError("no free loopback port")


def default_include(config_dir: Path) -> str:
    """The first server's fragment of a rendered directory (named/<server>.conf)."""
    confs = sorted((Path(config_dir) / "named").glob("*.conf"))
    if not confs:
        raise FileNotFoundError(f"no named/<server>.conf under {config_dir}")
    return f"named/{confs[0].name}"


def key_names(fragment: Path) -> list[str]:
    """Every TSIG key name a rendered fragment uses."""
    return sorted(set(re.findall(r'key "([a-z0-9.-]+)"', fragment.read_text())))


def wrapper_conf(config_dir: Path, workdir: Path, port: int, include: str, keys: Path | None = None,
                 address: str = LOOPBACK, control_port: int | None = None, extra_options: str = "") -> str:
    """A minimal named.conf around a rendered fragment (what an operator's named.conf would add).

    The TSIG keys the fragment names come from ``keys``; without it they are generated into
    ``workdir/tsig.keys`` (an operator's keys file, never part of the rendered tree).
    """
    if keys is None:
        from imsdr.dns.keys import ensure_keys

        keys = workdir / "tsig.keys"
        ensure_keys(keys, key_names(config_dir / include))
    options_file = Path(config_dir) / "named-options.conf"  # what the operator includes inside options
    if options_file.is_file():
        extra_options = f'    include "{options_file}";\n' + extra_options
    controls = "controls { };"
    if control_port is not None:
        controls = (f'key "rndc-key" {{ algorithm hmac-sha256; secret "{RNDC_SECRET}"; }};\n'
                    f"controls {{ inet {address} port {control_port} allow {{ {address}; }} "
                    f'keys {{ "rndc-key"; }}; }};')
    return f"""options {{
    directory "{config_dir}";
    pid-file "{workdir}/named.pid";
    managed-keys-directory "{workdir}";
    session-keyfile "{workdir}/session.key";
    listen-on port {port} {{ {address}; }};
    listen-on-v6 {{ none; }};
    recursion no;
    dnssec-validation no;
    notify no;
{extra_options}}};
{controls}
{f'include "{keys}";' if keys else ''}
include "{config_dir / include}";
"""


RNDC_SECRET = "aW1zZHItdGVzdC1ybmRjLWtleS1vbmx5LWxvb3BiYWNrIQ=="


@dataclass
class NamedServer:
    process: subprocess.Popen[bytes]
    port: int
    workdir: Path
    config: Path
    log_path: Path
    address: str = LOOPBACK
    keys: Path | None = None
    control_port: int | None = None
    _stopped: bool = field(default=False, repr=False)

    def rndc(self, *command: str) -> str:
        """Run ``rndc`` against this server's control channel (started with ``rndc=True``)."""
        assert self.control_port is not None, "start_named(..., rndc=True) for a control channel"
        conf = self.workdir / "rndc.conf"
        conf.write_text(f'key "rndc-key" {{ algorithm hmac-sha256; secret "{RNDC_SECRET}"; }};\n'
                        f'options {{ default-key "rndc-key"; default-server {self.address}; '
                        f"default-port {self.control_port}; }};\n")
        rndc = shutil.which("rndc") or "/usr/sbin/rndc"
        result = subprocess.run([rndc, "-c", str(conf), *command], capture_output=True, text=True,
                                timeout=20, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"rndc {' '.join(command)} failed: {result.stderr}{result.stdout}")
        return result.stdout

    def answer_as(self, key_name: str, qname: str, rdtype: str) -> dns.rrset.RRset | None:
        """The answer of the view whose TSIG key is ``key_name`` (a signed query reaches that view
        from any source): proves a view's zones are loaded whatever its match list."""
        import dns.tsigkeyring

        assert self.keys is not None
        found = dict(re.findall(r'key "([a-z0-9.-]+)" \{\s*algorithm hmac-sha256;\s*secret "([^"]+)";',
                                self.keys.read_text()))
        request = dns.message.make_query(qname, rdtype)
        request.use_tsig(dns.tsigkeyring.from_text({key_name: ("hmac-sha256", found[key_name])}),
                         keyname=key_name, algorithm="hmac-sha256")
        response = dns.query.udp(request, self.address, port=self.port, timeout=2.0)
        if response.flags & dns.flags.TC:  # too large for UDP: ask again over TCP, as a client would
            response = dns.query.tcp(request, self.address, port=self.port, timeout=5.0)
        for rrset in response.answer:
            if rrset.rdtype == dns.rdatatype.from_text(rdtype):
                return rrset
        return None

    def tcp_query(self, request: dns.message.Message, source: str = LOOPBACK,
                  timeout: float = 5.0) -> dns.message.Message:
        return dns.query.tcp(request, self.address, port=self.port, source=source, timeout=timeout)

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
        if self.address != LOOPBACK and source == LOOPBACK:
            source = self.address
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
    include: str | None = None,
    timeout: float = 15.0,
    probe: tuple[str, str] = (".", "SOA"),
    keys: Path | None = None,
    address: str = LOOPBACK,
    port: int | None = None,
    rndc: bool = False,
    extra_options: str = "",
) -> NamedServer:
    """Start named with ``config_dir/include`` (default: the first server's fragment) and wait
    until it answers on ``address``:``port`` (default 127.0.0.1, a free high port)."""
    named = shutil.which("named") or "/usr/sbin/named"
    if not os.path.exists(named):
        raise FileNotFoundError("BIND 'named' is not installed (Debian package bind9)")
    if not address.startswith("127."):
        raise ValueError("tests run named on loopback addresses only")
    config_dir = Path(config_dir).resolve()
    include = include or default_include(config_dir)
    workdir = Path(tempfile.mkdtemp(prefix="imsdr-named-"))
    port = port or free_port()
    control_port = free_port() if rndc else None
    config = workdir / "named.conf"
    config.write_text(wrapper_conf(config_dir, workdir, port, include, keys, address, control_port,
                                   extra_options))
    keys = keys or workdir / "tsig.keys"
    log_path = workdir / "named.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [named, "-g", "-4", "-n", "1", "-c", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
        )
    server = NamedServer(process, port, workdir, config, log_path, address, keys, control_port)
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


NETNS_ENV = "IMSDR_TEST_NETNS"  # set inside the namespace: the scenario collects only there


def run_in_netns(test_file: str, test_name: str, addresses: tuple[str, ...], summary: str,
                 timeout: float = 400) -> str:
    """Run ``test_file::test_name`` in a fresh network namespace (``unshare --net``: its own
    loopback, with ``addresses`` added, so named can listen on port 53 of each), check it passed
    and return the line of its output that starts with ``summary``. The host's network is never
    touched."""
    import sys

    unshare, ip = shutil.which("unshare"), shutil.which("ip") or "/usr/sbin/ip"
    assert unshare, "util-linux 'unshare' is needed for the network namespace"
    added = "".join(f" && {ip} addr add {a}/32 dev lo" for a in addresses)
    setup = (f"{ip} link set lo up{added} && exec {sys.executable} -m pytest -q -s -p no:cacheprovider "
             f"-p no:randomly -p no:xdist {Path(test_file).resolve()}::{test_name}")
    result = subprocess.run([unshare, "--net", "sh", "-c", setup], capture_output=True, text=True,
                            env={**os.environ, NETNS_ENV: "1"}, timeout=timeout, check=False,
                            cwd=Path(test_file).resolve().parent.parent)
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout
    found = re.search(rf"{re.escape(summary)}.*", result.stdout)
    assert found, result.stdout[-3000:]
    return found.group(0)


def stop_process(process: subprocess.Popen[bytes], timeout: float = 10.0, group: bool = False) -> None:
    """Stop a server process a test started, by its pid: SIGTERM, then SIGKILL after ``timeout``.
    ``group``: the process leads its own session (``start_new_session``): its whole group is
    signalled, woken first in case a test froze it (SIGSTOP)."""
    if process.poll() is not None:
        return
    kill = os.killpg if group else os.kill
    try:
        if group:
            kill(process.pid, signal.SIGCONT)
        kill(process.pid, signal.SIGTERM)
        process.wait(timeout=timeout)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            kill(process.pid, signal.SIGKILL)
        process.wait(timeout=timeout)
