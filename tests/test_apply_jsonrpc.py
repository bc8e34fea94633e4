"""A Kamailio target reached over JSON-RPC (jsonrpcs over xhttp) instead of kamcmd: `imsdr apply`
pings it, reloads the delivered dispatcher list and verifies the live sets through HTTP only.

One Kamailio on 127.0.0.1 (free ports), started once for the module and stopped by pid.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from named_harness import free_port, stop_process
from test_dns_kamailio import kamailio_bin, module_dir

from imsdr.apply import servers
from imsdr.apply.journal import Journal
from imsdr.apply.state import StateDir, sha256
from imsdr.apply.steps import Context, TargetPlan, run_actions, transition
from imsdr.apply.targets import parse_targets

LIST_A = "1 sip:127.0.0.1:5071 0 0\n1 sip:127.0.0.1:5072 0 0\n"
LIST_B = "1 sip:127.0.0.1:5071 0 0\n2 sip:127.0.0.1:5073 0 0\n"


@pytest.fixture(scope="module")
def kamailio() -> Iterator[dict[str, object]]:
    root = Path(tempfile.mkdtemp(prefix="aj-"))
    directory = root / "srv" / "sbc-1"
    directory.mkdir(parents=True)
    (directory / "dispatcher.list").write_text(LIST_A)
    sip, http = free_port(), free_port()
    cfg = root / "kamailio.cfg"
    cfg.write_text(f"""#!KAMAILIO
debug=1
log_stderror=yes
children=1
tcp_children=1
listen=udp:127.0.0.1:{sip}
listen=tcp:127.0.0.1:{http}
tcp_accept_no_cl=yes
auto_aliases=no
dns=no
rev_dns=no
mpath="{module_dir()}/"
loadmodule "kex.so"
loadmodule "tm.so"
loadmodule "sl.so"
loadmodule "xhttp.so"
loadmodule "jsonrpcs.so"
loadmodule "dispatcher.so"
modparam("jsonrpcs", "transport", 1)
modparam("dispatcher", "list_file", "{directory}/dispatcher.list")
request_route {{ sl_send_reply("404", "No"); }}
event_route[xhttp:request] {{ jsonrpc_dispatch(); }}
""")
    log = open(root / "kamailio.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([kamailio_bin(), "-DD", "-E", "-f", str(cfg), "-Y", str(root), "-w", str(root)],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{http}/RPC"
    try:
        deadline = time.monotonic() + 15
        while True:
            assert proc.poll() is None, (root / "kamailio.log").read_text()
            try:
                body = b'{"jsonrpc": "2.0", "method": "core.uptime", "id": 1}'
                with urllib.request.urlopen(urllib.request.Request(url, body), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, (root / "kamailio.log").read_text()
                time.sleep(0.1)
        yield {"root": root, "directory": directory, "url": url}
    finally:
        stop_process(proc)
        log.close()


def test_reload_and_verify_over_jsonrpc(kamailio: dict[str, object], tmp_path: Path) -> None:
    root = Path(str(kamailio["root"]))
    targets = parse_targets(f"version: 1\nroot: {root / 'srv'}\ntargets:\n  sbc-1:\n    kind: kamailio\n"
                            f"    directory: sbc-1\n    rpc: {{jsonrpc: {kamailio['url']}}}\n", "targets.yaml")
    target = targets.targets["sbc-1"]
    ping = servers.rpc(target, "core.uptime")
    assert ping.ok and "uptime" in ping.output
    live = servers.live_dispatcher(servers.rpc(target, "dispatcher.list").output)
    assert live == servers.dispatcher_entries(LIST_A)
    ctx = Context(targets, StateDir(tmp_path / "state"), tmp_path / "stage", {}, 5.0)
    tp = TargetPlan(target, {"dispatcher.list": LIST_B.encode()})
    actions = transition(ctx, tp, {"dispatcher.list": sha256(LIST_A.encode())}, tp.files, "canary")
    assert [a.step.title.split(" ")[0] for a in actions] == ["Deliver", "Reload", "Verify"]
    assert actions[1].step.commands[0].startswith(f"POST {kamailio['url']}")
    run_actions(actions, Journal(tmp_path / "journal", "test"))  # raises on a failed step
    assert servers.live_dispatcher(servers.rpc(target, "dispatcher.list").output) == {
        (1, "sip:127.0.0.1:5071"), (2, "sip:127.0.0.1:5073")}
    # drift is seen over JSON-RPC too: the list on disk changes behind imsdr's back, then reloaded
    (Path(str(kamailio["directory"])) / "dispatcher.list").write_text(LIST_A)
    assert "Ongoing reload" in servers.rpc(target, "dispatcher.reload").output  # within reload_delta (5 s)
    reload_again = transition(ctx, TargetPlan(target, {"dispatcher.list": LIST_A.encode()}),
                              {"dispatcher.list": "0" * 64}, {"dispatcher.list": LIST_A.encode()}, "rollback")[1]
    assert reload_again.perform()[0]  # waits out reload_delta
    ok, output = actions[2].perform()
    assert not ok and "5073" in output
