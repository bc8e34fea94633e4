"""`verify` compares rcodes exactly: where the plan refuses a name (the view serves no zone for it),
REFUSED is the only answer without drift; NXDOMAIN, an empty answer, records or a CNAME are drift.
A CNAME the plan does not have is drift whatever was asked.

Table-driven over every (planned, live) pair of answers, then proven against a live ``named``
whose default view — refusing everything in the plan — was edited to serve a zone with one CNAME:
``verify`` must report drift for every name of that zone and never say "no drift".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dns.name
import dns.rdatatype
import dns.rrset
import pytest
from test_verify_named import DEFAULT_SOURCE, make_inventory, render
from typer.testing import CliRunner

from imsdr.cli.app import app
from imsdr.resolve.verify import Expectation, LiveAnswer, compare

N = dns.name.from_text
NAME = N("sbc.ims.example.net.")
PLANNED = dns.rrset.from_text(NAME, 60, "IN", "A", "192.0.2.1")
SERVED = dns.rrset.from_text(NAME, 60, "IN", "A", "192.0.2.1")
CNAME = dns.rrset.from_text(NAME, 60, "IN", "CNAME", "elsewhere.example.org.")

PLANS = {
    "refused": dict(expected=None, unserved=True),
    "records": dict(expected=PLANNED),
    "nothing": dict(expected=None),
    "a cname": dict(expected=None, planned_cname=True),
}
LIVE = {
    "REFUSED": LiveAnswer("REFUSED"),
    "NXDOMAIN": LiveAnswer("NXDOMAIN"),
    "no data": LiveAnswer("NOERROR"),
    "the records": LiveAnswer("NOERROR", SERVED),
    "a CNAME": LiveAnswer("NOERROR", cname=CNAME),
    "SERVFAIL": LiveAnswer("SERVFAIL"),
}
# (plan, live) -> the drift kinds; every pair not listed is asserted too (the table is complete)
VERDICT = {
    ("refused", "REFUSED"): [],
    ("refused", "NXDOMAIN"): ["rcode"],
    ("refused", "no data"): ["rcode"],
    ("refused", "the records"): ["rcode"],
    ("refused", "a CNAME"): ["rcode"],
    ("refused", "SERVFAIL"): ["rcode"],
    ("records", "REFUSED"): ["rcode"],
    ("records", "NXDOMAIN"): ["missing"],
    ("records", "no data"): ["missing"],
    ("records", "the records"): [],
    ("records", "a CNAME"): ["extra", "missing"],
    ("records", "SERVFAIL"): ["rcode"],
    ("nothing", "REFUSED"): ["rcode"],
    ("nothing", "NXDOMAIN"): [],
    ("nothing", "no data"): [],
    ("nothing", "the records"): ["extra"],
    ("nothing", "a CNAME"): ["extra"],
    ("nothing", "SERVFAIL"): ["rcode"],
    ("a cname", "REFUSED"): ["rcode"],
    ("a cname", "NXDOMAIN"): [],
    ("a cname", "no data"): [],
    ("a cname", "the records"): ["extra"],
    ("a cname", "a CNAME"): [],
    ("a cname", "SERVFAIL"): ["rcode"],
}


def test_the_table_covers_every_pair() -> None:
    assert set(VERDICT) == {(p, live) for p in PLANS for live in LIVE}


@pytest.mark.parametrize(("plan", "live"), sorted(VERDICT))
def test_rcodes_are_compared_exactly(plan: str, live: str) -> None:
    exp = Expectation("127.0.0.1", "v", NAME, dns.rdatatype.A, **PLANS[plan])  # type: ignore[arg-type]
    drift = compare(exp, LIVE[live])
    assert sorted(d.kind for d in drift) == VERDICT[plan, live], [d.detail for d in drift]
    if plan == "refused" and drift:
        assert drift[0].expected == "REFUSED" and drift[0].live == LIVE[live].rcode
        if live == "a CNAME":
            assert "CNAME elsewhere.example.org." in drift[0].detail


# --- against live named ---------------------------------------------------------------------------

DRIFT_ZONE = """$TTL 60
@ IN SOA ns.ims.example.net. hostmaster.ims.example.net. 1 3600 600 86400 60
@ IN NS ns.ims.example.net.
ns IN A 127.0.0.1
sbc IN CNAME elsewhere.example.org.
"""


class Served:
    def __init__(self, inventory: Path, server: Any) -> None:
        self.inventory, self.server = inventory, server


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The rendered loopback province with its default view made to answer ims.example.net."""
    import named_harness

    tmp = tmp_path_factory.mktemp("verify-rcodes")
    inventory = make_inventory(tmp)
    out = tmp / "dns"
    render(inventory, out)
    fragment = out / named_harness.default_include(out)
    zone = tmp / "drift.zone"
    zone.write_text(DRIFT_ZONE)
    text = fragment.read_text()
    start = text.index('view "default" {')
    end = text.index("};", text.index("recursion no;", start)) + 2
    fragment.write_text(text[:start] + 'view "default" {\n    match-clients { any; };\n    recursion no;\n'
                        f'    zone "ims.example.net" {{ type primary; file "{zone}"; }};\n}};' + text[end:])
    server = named_harness.start_named(out, probe=("ims.example.net", "SOA"))
    try:
        yield Served(inventory, server)
    finally:
        server.stop()


def test_a_refusing_view_that_answers_is_drift_at_every_name(served: Served) -> None:
    assert served.server.query("nosuch.ims.example.net", "A", source=DEFAULT_SOURCE).rcode() == dns.rcode.NXDOMAIN
    result = CliRunner().invoke(app, ["verify", str(served.inventory), "--server",
                                      f"127.0.0.1:{served.server.port}", "--from", DEFAULT_SOURCE,
                                      "--format", "json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert not report["ok"]
    drift = {(d["name"], d["type"]): d for d in report["drift"]}
    home = [d for (name, _), d in drift.items() if name.endswith("ims.example.net")]
    assert home and all(d["kind"] == "rcode" and d["expected"] == "REFUSED" for d in home)
    assert {d["live"] for d in home} == {"NXDOMAIN", "NOERROR"}
    cnamed = [d for (name, _), d in drift.items() if name == "sbc.ims.example.net"]
    assert cnamed and all("CNAME elsewhere.example.org." in d["detail"] for d in cnamed)
    # the names of zones the edited view still does not serve (ENUM) stay refused, as planned
    assert not any(name.endswith("e164.arpa") for name, _ in drift)
    table = CliRunner().invoke(app, ["verify", str(served.inventory), "--server",
                                     f"127.0.0.1:{served.server.port}", "--from", DEFAULT_SOURCE,
                                     "--names", "sbc.ims.example.net"])
    assert table.exit_code == 1 and "no drift" not in table.stdout, table.stdout
