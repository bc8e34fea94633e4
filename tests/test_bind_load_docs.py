"""The rendered README's "Load into BIND 9" works as written, with a real `named -u bind`.

The test takes the steps from the README imsdr writes (the `install -d` command, the render
command with `--keys`, the named.conf snippet, `named-checkconf -z`), changes only the paths
(`/etc/bind` and `/var/cache/bind` become directories of the test with Debian's owners and modes,
`INVENTORY` the lab, `<this server>` its name server) and adds to the snippet's `options` only
what keeps a test server on a free loopback port. named then runs as the unprivileged `bind`
user, reads the keys file imsdr created and answers a TSIG-signed query; rendered again over the
same directory it starts again; a keys file only root can read makes it refuse to start.
"""

from __future__ import annotations

import grp
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import dns.message
import dns.query
import dns.rcode
import dns.tsigkeyring
import pytest
from named_harness import free_port

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
SERVER = "lab-dns-1"
BIND_GID = grp.getgrnam("bind").gr_gid  # the bind9 package's user (need_debs in .ci/test)


def section(readme: str) -> str:
    start = readme.index("## Load into BIND 9")
    end = readme.index("\n## ", start + 1)
    return readme[start:end]


@pytest.fixture(scope="module")
def machine() -> Iterator[dict[str, Path]]:
    """Stand-ins for /etc/bind (root:bind 2755) and /var/cache/bind (root:bind 0775), in a
    directory the bind user can traverse (pytest's own temporary directories are 0700)."""
    base = Path(tempfile.mkdtemp(prefix="imsdr-bind-docs-"))
    os.chmod(base, 0o755)
    etc, cache = base / "etc-bind", base / "var-cache-bind"
    etc.mkdir()
    cache.mkdir()
    os.chown(etc, 0, BIND_GID)
    os.chmod(etc, 0o2755)
    os.chown(cache, 0, BIND_GID)
    os.chmod(cache, 0o775)
    shutil.copy(LAB, base / "lab.yaml")
    yield {"base": base, "etc": etc, "cache": cache}
    shutil.rmtree(base, ignore_errors=True)


def localise(text: str, where: dict[str, Path]) -> str:
    return (text.replace("/etc/bind", str(where["etc"])).replace("/var/cache/bind", str(where["cache"]))
            .replace("<this server>", SERVER).replace("INVENTORY", str(where["base"] / "lab.yaml")))


def documented_steps() -> tuple[str, str, str, str]:
    """(install command, render command, named.conf snippet, check command) from a fresh render."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "imsdr", "render", "dns", str(LAB), "--out", f"{tmp}/dns"],
                       check=True, capture_output=True, timeout=120)
        text = section(Path(tmp, "dns", "README.md").read_text())
    install = re.search(r"`(install -d [^`]+)`", text)
    render = re.search(r"`(imsdr render dns [^`]+)`", text)
    check = re.search(r"`(named-checkconf -z [^`]+)`", text)
    snippet = "\n".join(line[7:] for line in text.splitlines() if line.startswith("       "))
    assert install and render and check and "options {" in snippet, text
    return install.group(1), render.group(1), snippet + "\n", check.group(1)


def start(conf: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as fh:
        return subprocess.Popen(["named", "-u", "bind", "-g", "-c", str(conf)], stdout=fh,
                                stderr=subprocess.STDOUT)


def keyring(keys: Path) -> dict[dns.name.Name, dns.tsig.Key]:
    found = dict(re.findall(r'key "([^"]+)" \{\s*algorithm hmac-sha256;\s*secret "([^"]+)";', keys.read_text()))
    return dns.tsigkeyring.from_text({name: ("hmac-sha256", secret) for name, secret in found.items()})


def signed_soa(port: int, keys: Path, timeout: float = 20.0) -> str:
    """The rcode of a SOA query signed with the core view's key, once named answers."""
    ring = keyring(keys)
    name = dns.name.from_text("imsdr-core-lab")
    deadline = time.monotonic() + timeout
    while True:
        query = dns.message.make_query("ims.lab.example.org", "SOA")
        query.use_tsig(ring, keyname=name, algorithm="hmac-sha256")
        try:
            response = dns.query.udp(query, "127.0.0.1", port=port, timeout=1.0)
            return dns.rcode.to_text(response.rcode())
        except (dns.exception.Timeout, ConnectionRefusedError, OSError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()  # by its PID
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def test_the_documented_steps_load_into_named_running_as_bind(machine: dict[str, Path]) -> None:
    install, render, snippet, check = documented_steps()
    etc, cache, base = machine["etc"], machine["cache"], machine["base"]
    subprocess.run(shlex.split(localise(install, machine)), check=True, timeout=30)
    tree = etc / "imsdr"
    assert (tree.stat().st_gid, tree.stat().st_mode & 0o777) == (BIND_GID, 0o775)
    argv = shlex.split(localise(render, machine))
    assert argv[:3] == ["imsdr", "render", "dns"]

    def render_it() -> None:
        result = subprocess.run([sys.executable, "-m", "imsdr", *argv[1:]], capture_output=True, text=True,
                                timeout=120, cwd=base)
        assert result.returncode == 0, result.stderr

    render_it()
    keys = etc / "imsdr-tsig.keys"
    info = keys.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (0, BIND_GID, 0o640)
    assert (tree.stat().st_gid, tree.stat().st_mode & 0o777) == (BIND_GID, 0o775), "kept over the swap"
    port = free_port()
    test_only = (f'    listen-on port {port} {{ 127.0.0.1; }};\n    listen-on-v6 {{ none; }};\n'
                 f'    pid-file "{cache}/named.pid";\n    session-keyfile "{cache}/session.key";\n')
    conf_text = localise(snippet, machine).replace("options {\n", "options {\n" + test_only, 1)
    conf = etc / "named.conf"
    conf.write_text(conf_text)
    checked = subprocess.run(shlex.split(localise(check, machine)), capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    for attempt in ("first", "rendered again"):
        named = start(conf, base / f"named-{attempt}.log")
        try:
            assert signed_soa(port, keys) == "NOERROR", (base / f"named-{attempt}.log").read_text()[-2000:]
        finally:
            stop(named)
        assert not [p.name for p in tree.iterdir() if p.name.endswith((".mkeys", ".jnl", ".mkeys.jnl"))], \
            "named's own files stay out of the tree imsdr replaces"
        render_it()  # over the directory named loads: imsdr replaces it (no files of named's inside)

    secret_only = etc / "root-only.keys"
    shutil.copy(keys, secret_only)
    os.chmod(secret_only, 0o600)
    conf.write_text(conf_text.replace(str(keys), str(secret_only)))
    refused = start(conf, base / "named-root-only.log")
    try:
        assert refused.wait(timeout=30) != 0, "named as bind cannot read a root-only keys file"
    finally:
        stop(refused)
    assert "permission denied" in (base / "named-root-only.log").read_text()
