"""An rrset of more than 100 records (a national SRV set, a big pool) loads in a real named.

BIND 9.18.28 and later refuse to load or transfer a zone holding an rrset larger than
``max-records-per-type`` (100 by default), and ``named-checkzone`` does not notice. The rendered
zone statement raises the limit for the zones that need it, and only for them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from named_harness import key_names, start_named
from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
MEMBERS = 102  # lab-as-1 and 101 more: one over BIND's default limit of 100 records per type


def big_pool_inventory(path: Path) -> Path:
    data = yaml.safe_load((ROOT / "inventories" / "lab.yaml").read_text())
    data["sites"][0]["core_subnets"].append("198.18.0.0/16")
    ids = [f"lab-as-{i}" for i in range(2, MEMBERS + 1)]
    for i, eid in enumerate(ids):
        data["elements"].append({"id": eid, "type": "as", "site": "lab", "vendor": "opensource",
                                 "addresses": [f"198.18.{i // 200}.{i % 200 + 1}"],
                                 "capacity": {"sessions": 500}, "options_probing": "active"})
    data["redundancy"]["pools"].append({"id": "mmtel-pool", "members": ["lab-as-1", *ids], "spare": 1,
                                        "selection": "dns", "dns_name": "mmtel"})
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def ask_named(out: Path, conf: Path, key: str, qname: str) -> tuple[Any, str]:
    """Start a real named with the rendered ``conf``, ask ``qname`` SRV of the view of ``key``."""
    server = start_named(out, include=f"named/{conf.name}", probe=("ims.lab.example.org", "SOA"))
    try:
        return server.answer_as(key, qname, "SRV"), server.log()
    finally:
        server.stop()


def test_a_zone_with_a_large_rrset_loads_in_named_and_answers_every_record(tmp_path: Path) -> None:
    inventory = big_pool_inventory(tmp_path / "big.yaml")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", "dns", str(inventory), "--out", str(out)])
    assert result.exit_code == 0, result.output
    [conf] = sorted((out / "named").glob("*.conf"))
    text = conf.read_text()
    # only the core home zone holds the pool's SRV sets: one raised limit, the largest set's size
    assert re.findall(r"max-records-per-type (\d+);", text) == [str(MEMBERS)]
    core_key = next(k for k in key_names(conf) if k.startswith("imsdr-core-"))
    qname = "_sip._udp.mmtel.ims.lab.example.org"

    answer, log = ask_named(out, conf, core_key, qname)
    assert answer is not None and len(answer) == MEMBERS, log[-2000:]
    assert "too many records" not in log

    # without the raised limit the same zone is refused by this named: the option is what loads it
    conf.write_text(re.sub(r"\s*max-records-per-type \d+;", "", text))
    refused, log = ask_named(out, conf, core_key, qname)
    assert refused is None and "too many records" in log, log[-2000:]
