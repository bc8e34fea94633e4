"""`imsdr verify --drain` and the per-server reload scripts, against a real `named`.

One named serves dns-a-1's rendered configuration of the province sample (provisioning sync:
every server is a primary). Draining dns-b-1 changes the home zones' NS/glue and the ENUM zones'
apex NS. The test checks that

* against the normal state, `verify --drain dns-b-1` reports drift (exit 1), selecting every view
  with its TSIG key (no source address inside the views is needed);
* `render dns --drain` refuses a fresh directory (the serials would go backwards) and writes one
  reload script per server, `DRAIN.md` naming the scripts and every changed zone, ENUM included;
* with all but one changed zone reloaded, exactly that view's answers are drift;
* after `sh reload/dns-a-1.sh` (the script the runbook step runs, checking each command's output)
  the ENUM NS no longer names the drained server and `verify --drain` finds no drift (exit 0).
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from named_harness import start_named
from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = ROOT / "inventories" / "province.yaml"
runner = CliRunner()


def _invoke(*args: str) -> Any:
    return runner.invoke(app, [*args])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("verify-drain")
    out = tmp / "dns"
    assert _invoke("render", "dns", str(PROVINCE), "--out", str(out)).exit_code == 0
    server = start_named(out, "named/dns-a-1.conf", probe=("ims.example.net", "SOA"), rndc=True)
    try:
        server.rndc("status")  # writes the rndc.conf of the control channel
        raw = yaml.safe_load(PROVINCE.read_text())
        raw.setdefault("platforms", {})["test-bind"] = {
            "kind": "bind", "control": f"rndc -c {server.workdir / 'rndc.conf'}", "dig": f"dig -p {server.port}"}
        for el in raw["elements"]:
            if el["type"] == "enum_dns":
                el["platform"] = "test-bind"
        inventory = tmp / "province.yaml"
        inventory.write_text(yaml.safe_dump(raw, sort_keys=False))
        yield {"out": out, "server": server, "inventory": inventory, "tmp": tmp}
    finally:
        server.stop()


def _verify(lab: dict[str, Any]) -> Any:
    server = lab["server"]
    return _invoke("verify", str(lab["inventory"]), "--drain", "dns-b-1", "--server",
                   f"127.0.0.1:{server.port}", "--keys", str(server.keys), "--format", "json")


def test_drain_verified_on_every_view_by_key_and_loaded_by_the_script(lab: dict[str, Any]) -> None:
    out, server, inventory = lab["out"], lab["server"], lab["inventory"]
    before = _verify(lab)
    assert before.exit_code == 1, before.output
    report = json.loads(before.stdout)
    assert report["signed"] == report["checked"] > 20  # every view selected by its key
    assert any("dns-b-1" in (d["live"] or "") and d["kind"] == "extra" for d in report["drift"])

    fresh = _invoke("render", "dns", str(inventory), "--out", str(lab["tmp"] / "fresh"), "--drain", "dns-b-1")
    assert fresh.exit_code == 2 and "serial" in fresh.stderr and not (lab["tmp"] / "fresh").exists()

    drained = _invoke("render", "dns", str(inventory), "--out", str(out), "--drain", "dns-b-1")
    assert drained.exit_code == 0, drained.output
    note = (out / "DRAIN.md").read_text()
    assert "`sh reload/dns-a-1.sh`" in note and "Down (drained themselves), skipped: dns-b-1" in note
    assert "`6.8.e164.arpa`" in note  # the ENUM zones change (their NS) and are listed
    assert not (out / "reload" / "dns-b-1.sh").exists()  # drained: skipped
    script = (out / "reload" / "dns-a-1.sh").read_text()
    assert "reload 6.8.e164.arpa IN core-site-a" in script

    # all but one changed zone loaded: exactly that view's answers are drift
    commands = re.findall(r"^out=\$\((.*) 2>&1\)", script, re.M)
    skipped = next(c for c in commands if c.endswith("reload ims.example.net IN core-site-b"))
    for command in commands:
        if command != skipped:
            subprocess.run(["bash", "-c", command], check=True, capture_output=True, timeout=30)
    partial = _verify(lab)
    assert partial.exit_code == 1, partial.output
    views = {d["view"] for d in json.loads(partial.stdout)["drift"]}
    assert views == {"127.0.0.1:" + str(server.port) + "/core-site-b"}, views

    ran = subprocess.run(["sh", str(out / "reload" / "dns-a-1.sh")], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == f"dns-a-1: {len(commands)} command(s), every output as expected"
    # the ENUM NS no longer names the drained server, in the view that serves ENUM
    key = next(k for k in re.findall(r'key "([a-z0-9.-]+)"', server.keys.read_text()) if "core-site-a" in k)
    ns = server.answer_as(key, "6.8.e164.arpa", "NS")
    assert ns is not None and [rd.to_text() for rd in ns] == ["dns-a-1.ims.example.net."]
    after = _verify(lab)
    assert after.exit_code == 0, after.output
    assert json.loads(after.stdout)["drift"] == []
    table = _invoke("verify", str(inventory), "--drain", "dns-b-1", "--server", f"127.0.0.1:{server.port}",
                    "--keys", str(server.keys))
    assert table.exit_code == 0 and "no drift: every server answers the drained state" in table.stdout


def test_keys_file_is_read_as_untrusted_input(tmp_path: Path) -> None:
    real = tmp_path / "real.keys"
    real.write_text('key "view-a" { algorithm hmac-sha256; secret "c2VjcmV0"; };\n')
    link = tmp_path / "link.keys"
    link.symlink_to(real)
    result = _invoke("verify", str(PROVINCE), "--drain", "dns-b-1", "--keys", str(link), "--server", "127.0.0.1:9")
    assert result.exit_code == 2 and "link.keys" in result.stderr and "Traceback" not in result.output
    from imsdr.resolve.drain_verify import read_keys

    assert read_keys(real) == {"view-a": ("hmac-sha256", "c2VjcmV0")}
