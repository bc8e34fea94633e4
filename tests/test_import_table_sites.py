"""`imsdr import table`: the sites and local networks the rows name become entries; cell errors
use the loader's wording (what was got, what is expected, "did you mean")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from imsdr.inventory.placeholders import is_placeholder


def imsdr(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_table_creates_the_sites_and_local_networks_it_names(tmp_path: Path) -> None:
    table = tmp_path / "elements.csv"
    table.write_text("id,type,site,vendor,addresses,serves\n"
                     "sbc-1,sbc,dc-north,acme,198.51.100.10,metro\n"
                     "hss-1,hss,dc-south,acme,10.2.0.20,\n"
                     "hss-2,hss,dc-north,acme,10.1.0.20,\n")
    out = tmp_path / "draft.yaml"
    result = imsdr("import", "table", table, "--out", out)
    assert result.returncode == 0, result.stderr
    doc = yaml.safe_load(out.read_text())
    assert [s["id"] for s in doc["sites"]] == ["dc-north", "dc-south"]
    assert all(is_placeholder(s["name"]) and is_placeholder(s["region"]) for s in doc["sites"])
    assert [n["id"] for n in doc["local_networks"]] == ["metro"]
    check = imsdr("validate", out)
    problems = [line for line in check.stdout.splitlines() + check.stderr.splitlines() if f"{out}:" in line]
    assert problems and all("placeholder to fill in" in line for line in problems), problems  # no unknown site


def test_table_cell_errors_read_like_the_loader(tmp_path: Path) -> None:
    table = tmp_path / "elements.csv"
    table.write_text("id,type,site,vendor,addresses,options_probing\nx-1,hsss,dc,v,10.0.0.1,activ\n")
    result = imsdr("import", "table", table, "--out", tmp_path / "d.yaml")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{table}:2:2: type: got the text 'hsss', expected " in result.stderr
    assert "did you mean 'hss'?" in result.stderr
    assert f"{table}:2:6: options_probing: got the text 'activ', expected " in result.stderr
    assert "did you mean 'active'?" in result.stderr
