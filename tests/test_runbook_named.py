"""The runbook's `dig` commands, run against a real `named` serving the zones of the same plan,
return exactly the answers the runbook prints (runbook and DNS never disagree)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import dns.rdataclass
import dns.rdatatype
import dns.rrset
import pytest

from imsdr.plan import write_plan

ROOT = Path(__file__).resolve().parent.parent
CHECK_RE = re.compile(
    r"```sh\n\s*dig @(?P<server>\S+)(?: -b (?P<source>\S+))? (?P<qname>\S+) (?P<rdtype>[A-Z]+) "
    r"\+noall \+answer\n\s*```\n\n\s*Expected answer:\n\n\s*```text\n(?P<expected>.*?)\n\s*```",
    re.S,
)


def loopback_inventory(tmp_path: Path) -> Path:
    """The province with a loopback access resolver per local network, a loopback core prefix per
    site (listed first) and a loopback core side per SBC, so the runbook's `dig -b` sources are
    loopback addresses the test can use."""
    import yaml

    data = yaml.safe_load((ROOT / "inventories" / "province.yaml").read_text())
    n = 2
    for ln in data["local_networks"]:
        ln["resolvers"] = [f"127.0.0.{n}"]
        n += 1
    for site in data["sites"]:
        site["core_subnets"].insert(0, f"127.0.0.{n}/32")
        n += 1
    for el in data["elements"]:
        if el["type"] == "sbc":
            el["core_addresses"] = [f"127.0.0.{n}"]
            n += 1
    path = tmp_path / "province-loopback.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def runbook_checks(runbooks: Path) -> list[dict[str, Any]]:
    found = []
    for page in sorted(runbooks.glob("*.md")):
        for m in CHECK_RE.finditer(page.read_text()):
            found.append({"page": page.name, **m.groupdict(),
                          "expected": [line.strip() for line in m.group("expected").splitlines()]})
    return found


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("runbook-named")
    out = base / "out"
    write_plan(loopback_inventory(base), out)
    return out


def test_every_verification_answer_matches_real_named(planned: Path, start_named: Any) -> None:
    server = start_named(planned / "dns")
    checks = runbook_checks(planned / "runbooks")
    pages = {c["page"] for c in checks}
    assert {"sbc.md", "pcscf.md", "cscf.md", "hss-slf.md", "enum-dns.md", "mgcf-imgw.md", "as.md"} <= pages
    assert len(checks) >= 20
    for c in checks:
        source = c["source"] or "127.0.0.1"
        assert source.startswith("127."), c
        expected = dns.rrset.from_text_list(
            c["qname"] + ".", int(c["expected"][0].split()[1]), dns.rdataclass.IN, c["rdtype"],
            [line.split(f" IN {c['rdtype']} ", 1)[1] for line in c["expected"]])
        for line in c["expected"]:
            assert line.split()[0] == c["qname"] + "."
        answer = server.answer(c["qname"], c["rdtype"], source)
        assert answer is not None, f"{c['page']}: no answer for {c['qname']} {c['rdtype']} from {source}"
        assert answer.ttl == expected.ttl, c
        assert set(answer) == set(expected), (c["page"], c["qname"], source, sorted(map(str, answer)))


def test_sbc_checks_cover_every_local_network_with_local_then_dr(planned: Path) -> None:
    checks = [c for c in runbook_checks(planned / "runbooks") if c["page"] == "sbc.md"]
    assert len(checks) == 6 * 3  # per local network: SRV, the A of sbc (local only), the DR name
    capital = [c for c in checks if c["source"] == "127.0.0.2"]  # first local network: capital
    srv = next(c for c in capital if c["rdtype"] == "SRV")
    priorities = [(int(line.split()[4]), line.split()[7]) for line in srv["expected"]]
    assert priorities == [(10, "sbc-capital.ims.example.net."), (20, "sbc-coast.ims.example.net.")]
    a_only = {c["qname"]: [line.split()[-1] for line in c["expected"]] for c in capital if c["rdtype"] == "A"}
    assert a_only == {"sbc.ims.example.net": ["203.0.113.10"], "sbc-dr.ims.example.net": ["203.0.113.60"]}


def test_a_drifted_server_would_be_caught(planned: Path, start_named: Any) -> None:
    """Guard the comparison: an expectation for the wrong view differs from what named answers."""
    server = start_named(planned / "dns")
    checks = [c for c in runbook_checks(planned / "runbooks") if c["page"] == "sbc.md" and c["rdtype"] == "SRV"]
    capital, harbour = checks[0], checks[1]
    answer = server.answer(capital["qname"], "SRV", harbour["source"])
    assert {str(r) for r in answer} != {line.split(" IN SRV ", 1)[1] for line in capital["expected"]}
