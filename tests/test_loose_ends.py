"""Loose ends of the safety pass: verify's deadline, hostile terminals and full devices, SRV names
in resolve, one set of rule ids, unserved ENUM numbers and over-long zone file names."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dns.flags
import dns.message
import dns.rcode
import pytest
import yaml
from typer.testing import CliRunner, Result

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
PROVINCE = ROOT / "inventories" / "province.yaml"


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), prog_name="imsdr")


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **env})


# --- verify: an overall deadline and a server that goes silent ---------------------------------------

class MuteAfter:
    """A UDP DNS server on loopback that answers (NXDOMAIN) the first ``answers`` queries, each
    after ``delay`` seconds, then stays silent."""

    def __init__(self, answers: int, delay: float = 0.0) -> None:
        self.answers, self.delay, self.queries = answers, delay, 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                wire, addr = self.sock.recvfrom(65535)
            except OSError:
                return
            self.queries += 1
            if self.queries > self.answers:
                continue
            time.sleep(self.delay)
            response = dns.message.make_response(dns.message.from_wire(wire))
            response.flags |= dns.flags.AA
            response.set_rcode(dns.rcode.NXDOMAIN)
            with_error = response.to_wire()
            try:
                self.sock.sendto(with_error, addr)
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def mute_after_probe() -> Iterator[MuteAfter]:
    server = MuteAfter(answers=1)
    yield server
    server.close()


def test_verify_stops_when_the_server_goes_silent(mute_after_probe: MuteAfter) -> None:
    """The server answers the reachability probe, then nothing: without a stop every one of the
    plan's questions would wait for its timeout and retries (an hour at national scale)."""
    result = invoke("verify", str(PROVINCE), "--server", f"127.0.0.1:{mute_after_probe.port}",
                    "--from", "127.0.0.1", "--timeout", "0.1", "--retries", "0", "--workers", "2")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "stopped answering" in result.stderr and "no verdict" in result.stderr
    counts = re.search(r"(\d+) of (\d+) questions asked", result.stderr)
    assert counts, result.stderr
    asked, total = int(counts[1]), int(counts[2])
    assert 20 <= asked < total / 2, result.stderr  # stopped early, not after every question
    assert "Traceback" not in result.stderr


def test_verify_has_an_overall_deadline() -> None:
    server = MuteAfter(answers=10**9, delay=0.3)  # answers everything, slowly (one at a time)
    try:
        result = invoke("verify", str(PROVINCE), "--server", f"127.0.0.1:{server.port}", "--from",
                        "127.0.0.1", "--timeout", "5", "--workers", "1", "--deadline", "1")
    finally:
        server.close()
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "the deadline of 1 s passed" in result.stderr and "--deadline" in result.stderr


# --- hostile terminals and full devices ---------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["resolve", str(LAB), "_sip._udp.ims.lab.example.org", "--from", "192.0.2.10"],  # prints an arrow (U+2192)
    ["check", str(PROVINCE), "--format", "json"],
    ["validate", str(PROVINCE)],
])
def test_an_ascii_only_terminal_gets_escapes_not_a_traceback(args: list[str]) -> None:
    result = run(*args, PYTHONIOENCODING="ascii")
    assert "Traceback" not in result.stderr and "UnicodeEncodeError" not in result.stderr, result.stderr
    assert result.returncode in (0, 1), result.stderr
    if "--format" in args:
        import json

        json.loads(result.stdout)  # backslash escapes keep JSON valid


@pytest.mark.parametrize("args", [["validate", str(LAB)], ["validate", str(LAB), "--format", "json"],
                                  ["example", "province"], ["check", str(LAB)]])
def test_stdout_on_a_full_device_is_a_clean_error(args: list[str]) -> None:
    assert Path("/dev/full").exists()
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "imsdr", *args], stdout=full, stderr=subprocess.PIPE,
                                text=True, timeout=600)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == ["error: cannot write output: No space left on device"]


@pytest.mark.parametrize("args", [["check", str(LAB)], ["plan", str(LAB), "--out", "plan"],
                                  ["example", "province"]])
def test_a_closed_stdout_is_a_clean_error_and_no_file_takes_its_descriptor(args: list[str], tmp_path: Path) -> None:
    def close_stdout() -> None:
        os.close(1)

    result = subprocess.run([sys.executable, "-m", "imsdr", *args], stderr=subprocess.PIPE, text=True,
                            timeout=600, cwd=tmp_path, preexec_fn=close_stdout)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == ["error: cannot write output: standard output is closed"]
    if "plan" in args:  # the tree is whole: no file of it was opened on descriptor 1 and written through
        assert (tmp_path / "plan" / "plan.json").is_file()
        again = subprocess.run([sys.executable, "-m", "imsdr", "plan", str(LAB), "--out", "again"],
                               capture_output=True, timeout=600, cwd=tmp_path)
        assert again.returncode in (0, 1)
        assert subprocess.run(["diff", "-r", "plan", "again"], cwd=tmp_path).returncode == 0


# --- resolve: SRV names as its help says ------------------------------------------------------------------

def test_resolve_reads_an_srv_name_as_srv() -> None:
    core = "192.0.2.10"  # in the lab's core subnet: the core view serves the home domain and ENUM
    result = invoke("resolve", str(LAB), "_sip._udp.ims.lab.example.org", "--from", core, "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    import json

    data = json.loads(result.stdout)
    assert data["srv_name"] == "_sip._udp.ims.lab.example.org"
    assert data["steps"][0] == {**data["steps"][0], "qname": "_sip._udp.ims.lab.example.org", "type": "SRV"}
    assert {c["transport"] for c in data["candidates"]} == {"udp"} and data["resolved"]
    # a transport that contradicts the name is a usage error, not a silent mismatch
    result = invoke("resolve", str(LAB), "_sip._udp.ims.lab.example.org", "--from", core, "--transport", "tcp")
    assert result.exit_code == 2 and "SRV name for udp" in result.stderr


# --- one set of rule ids --------------------------------------------------------------------------------

def test_validate_refuses_the_rule_ids_plan_refuses(tmp_path: Path) -> None:
    data = yaml.safe_load(LAB.read_text())
    data["waivers"] = [{"rule": "GEO-999", "reason": "no such rule", "expires": "2099-01-01"}]
    data["rules"] = {"SBC-998": "off"}
    path = tmp_path / "lab.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    validated = invoke("validate", str(path))
    planned = invoke("plan", str(path), "--out", str(tmp_path / "out"))
    assert validated.exit_code == planned.exit_code == 2, validated.stdout + validated.stderr
    for result in (validated, planned):
        assert "unknown rule id 'GEO-999' in a waiver" in result.stderr
        assert "unknown rule id 'SBC-998'" in result.stderr
        assert f"{path}:" in result.stderr
    assert not (tmp_path / "out").exists()


def test_every_rule_id_plan_knows_validates(tmp_path: Path) -> None:
    from imsdr.rules.registry import all_rules

    data = yaml.safe_load(LAB.read_text())
    data["rules"] = {rule.id: "info" for rule in all_rules()}
    path = tmp_path / "lab.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert invoke("validate", str(path)).exit_code == 0


# --- nested ENUM blocks ---------------------------------------------------------------------------------

def nested_lab(tmp_path: Path, inner: str) -> Path:
    """The lab with a wildcard block +86105 around its numbers block +8610555 (0000-0099)."""
    text = LAB.read_text()
    old = '  - {id: lab-numbers, prefix: "+8610555", length: 11, style: numbers, domain: ims.lab.example.org, ' \
          'first: "+86105550000", last: "+86105550099"}'
    assert old in text
    wide = '  - {id: lab-wide, prefix: "+86105", style: wildcard, domain: ims.lab.example.org}\n'
    path = tmp_path / "nested.yaml"
    path.write_text(text.replace(old, wide + inner))
    return path


def test_nested_enum_blocks_that_hide_numbers_are_a_finding_naming_the_gap(tmp_path: Path) -> None:
    path = nested_lab(tmp_path, '  - {id: lab-numbers, prefix: "+8610555", length: 11, style: numbers, '
                                'domain: ims.lab.example.org, first: "+86105550000", last: "+86105550099"}')
    result = invoke("check", str(path), "--format", "json")
    assert result.exit_code == 1, result.stderr
    import json

    found = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "DNS-004"]
    assert len(found) == 1, found
    assert "9,900 numbers get no ENUM record: +86105550100…+86105559999" in found[0]["message"]
    assert found[0]["subjects"] == ["lab-numbers", "lab-wide"]
    assert found[0]["location"]["line"] == path.read_text().splitlines().index(
        next(line for line in path.read_text().splitlines() if "id: lab-numbers" in line)) + 1
    # the finding tells the truth: the plan resolves the listed numbers and the wildcard's, not the gap
    for number, resolved in (("+86105550050", 0), ("+86105560000", 0), ("+86105550100", 1), ("+86105559999", 1)):
        assert invoke("resolve", str(path), number, "--from", "192.0.2.10").exit_code == resolved, number


@pytest.mark.parametrize("inner", [
    '  - {id: lab-numbers, prefix: "+8610555", style: wildcard, domain: ims.lab.example.org}',
    '  - {id: lab-numbers, prefix: "+8610555", length: 11, style: numbers, domain: ims.lab.example.org}',
])
def test_nested_blocks_that_serve_everything_below_are_fine(inner: str, tmp_path: Path) -> None:
    result = invoke("check", str(nested_lab(tmp_path, inner)), "--format", "json")
    import json

    assert not [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "DNS-004"]


# --- zone file names ----------------------------------------------------------------------------------

def test_a_zone_file_name_over_255_bytes_is_refused_with_the_inventory_line(tmp_path: Path) -> None:
    """A valid zone name of 251 characters makes a 256-byte file name: refused before writing, at the
    ENUM block it comes from (it used to end in 'cannot write output: File name too long')."""
    suffix = ".".join(["a" * 60] * 3) + "." + "b" * 44 + ".e164.arpa"
    text = LAB.read_text().replace("  operator_domain: lab.example.org",
                                   f"  operator_domain: lab.example.org\n  enum_suffix: {suffix}")
    path = tmp_path / "long.yaml"
    path.write_text(text)
    assert invoke("validate", str(path)).exit_code == 0
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "id: lab-numbers" in t)
    for command in (["render", "dns"], ["plan"]):
        result = invoke(*command, str(path), "--out", str(tmp_path / "out"))
        assert result.exit_code == 2, result.stdout + result.stderr
        assert f"{path}:{line}:" in result.stderr and "enum_blocks[0].prefix" in result.stderr
        assert "would be 256 bytes, over the 255" in result.stderr
        assert not (tmp_path / "out").exists()
