"""Round trip, as a property: for generated networks whose element addresses lie inside and
outside the views' match lists, with the rendered views renamed arbitrarily, render -> import ->
fill placeholders -> render gives the very same files.

What the import derives must not depend on the views' names (they are classified by what they
match and serve), nor on the elements' addresses lying in a view's match list (the records a view
serves tell a site's view from a local network's). The planner's part, done here by the test: the
draft names sites and local networks after the views it found (renamed back to the inventory's ids,
matched by their core subnets and prefixes), and fills the placeholders from the inventory.
Examples are few: each renders and imports a province (the machine is shared).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from import_fill import fill_from
from inventory_factory import province_data, write_inventory
from test_import import same_tree

from imsdr.inventory.placeholders import find_placeholders

MOVABLE = ("pcscf", "cscf", "hss", "mgcf", "imgw", "as")  # not the SBCs (access side) nor the name servers


def imsdr(*args: str | Path) -> None:
    result = subprocess.run([sys.executable, "-m", "imsdr", *map(str, args)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr


def move_outside(data: dict[str, Any], chosen: list[bool]) -> None:
    """The chosen elements get addresses no view matches (10.99/16, 2001:db8:ffff::/48)."""
    movable = [e for e in data["elements"] if e["type"] in MOVABLE]
    for n, (el, move) in enumerate(zip(movable, chosen, strict=False)):
        if move:
            el["addresses"] = [f"10.99.0.{n + 1}" if ":" not in a else f"2001:db8:ffff::{n + 1:x}"
                               for a in el["addresses"]]


def rename_views(named: Path, names: dict[str, str]) -> None:
    for conf in named.glob("*.conf"):
        text = conf.read_text()
        for old, new in names.items():
            text = text.replace(f'view "{old}"', f'view "{new}"').replace(f'in-view "{old}"', f'in-view "{new}"')
        conf.write_text(text)


def back_to_inventory_ids(draft: dict[str, Any], original: dict[str, Any]) -> None:
    """The planner renames the draft's sites and local networks (named after the views) to the
    inventory's ids: a site by its core subnets, a local network by its prefixes."""
    renames: dict[str, str] = {}
    for section, key in (("sites", "core_subnets"), ("local_networks", "prefixes")):
        for entry in draft[section]:
            matches = [o["id"] for o in original[section] if sorted(o.get(key, [])) == sorted(entry.get(key, []))]
            assert len(matches) == 1, (section, entry["id"], entry.get(key))
            renames[entry["id"]] = matches[0]
            entry["id"] = matches[0]
    for el in draft["elements"]:
        if isinstance(el.get("site"), str) and el["site"] in renames:
            el["site"] = renames[el["site"]]
        if "serves" in el:
            el["serves"] = [renames.get(s, s) for s in el["serves"]]
    dr = draft["redundancy"].get("sbc_dr") or {}
    if "order" in dr:
        dr["order"] = [renames.get(s, s) for s in dr["order"]]


_VIEW_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,14}", fullmatch=True)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                HealthCheck.too_slow])
@given(chosen=st.lists(st.booleans(), min_size=14, max_size=14),
       names=st.lists(_VIEW_NAME, min_size=9, max_size=9, unique_by=str.lower))
def test_render_import_fill_render_is_identical(tmp_path_factory: Any, chosen: list[bool], names: list[str]) -> None:
    tmp_path = tmp_path_factory.mktemp("roundtrip")
    data = province_data()
    move_outside(data, chosen)
    (tmp_path / "orig").mkdir()
    inventory = write_inventory(data, tmp_path / "orig", "province.yaml")
    orig = tmp_path / "orig" / "dns"
    imsdr("render", "dns", inventory, "--out", orig, "--serial", "7")
    # the configuration as an operator may have named its views
    imported = tmp_path / "imported"
    imported.mkdir()
    views = [f"core-{s['id']}" for s in data["sites"]] + [f"users-{n['id']}" for n in data["local_networks"]]
    assert len(views) == len(names)
    named = tmp_path / "named"
    named.mkdir()
    for conf in (orig / "named").glob("*.conf"):
        (named / conf.name).write_text(conf.read_text())
    rename_views(named, dict(zip(views, names, strict=True)))
    draft = imported / "draft.yaml"
    imsdr("import", "bind", *sorted(named.glob("*.conf")), "--zones-dir", orig, "--out", draft)
    imsdr("import", "kamailio", *sorted((orig / "kamailio").glob("*/dispatcher.list")), "--into", draft,
          "--out", draft)
    doc = yaml.safe_load(draft.read_text())
    original = yaml.safe_load(inventory.read_text())
    # every view found for what it is, whatever its name
    assert (len(doc["sites"]), len(doc["local_networks"])) == (len(data["sites"]), len(data["local_networks"]))
    back_to_inventory_ids(doc, original)
    filled = fill_from(doc, original)
    assert not list(find_placeholders(filled))
    again = tmp_path / "again"
    again.mkdir()
    (again / "province.yaml").write_text(yaml.safe_dump(filled, sort_keys=False))
    imsdr("render", "dns", again / "province.yaml", "--out", again / "dns", "--serial", "7")
    assert same_tree(orig, again / "dns") == []
