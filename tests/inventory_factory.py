"""Build test inventories from the samples: parse, mutate as plain data, write, load.

    data = province_data()
    element(data, "hss-b-1")["site"] = "site-a"
    inv, source = load_from_data(data, tmp_path)

Written files use block-style YAML (one field per line), so ``line_of(path, lineno)`` shows
exactly the field a finding points at. Generic on purpose: any test may reuse it.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from imsdr.inventory.build import SourceMap
    from imsdr.inventory.schema import Inventory
    from imsdr.model.topology import Topology

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = ROOT / "inventories"
PROVINCE = INVENTORIES / "province.yaml"
LAB = INVENTORIES / "lab.yaml"


@cache
def _parsed(name: str) -> dict[str, Any]:
    return yaml.safe_load((INVENTORIES / f"{name}.yaml").read_text(encoding="utf-8"))


def sample_data(name: str) -> dict[str, Any]:
    """A fresh, mutable copy of ``inventories/<name>.yaml`` as plain data."""
    return copy.deepcopy(_parsed(name))


def province_data() -> dict[str, Any]:
    return sample_data("province")


def lab_data() -> dict[str, Any]:
    return sample_data("lab")


def write_inventory(data: dict[str, Any], tmp_path: Path, name: str = "inventory.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True),
                    encoding="utf-8")
    return path


def load_from_data(data: dict[str, Any], tmp_path: Path,
                   name: str = "inventory.yaml") -> tuple[Inventory, SourceMap]:
    """Write ``data`` as YAML under ``tmp_path`` and load it the one real way (validated)."""
    from imsdr.inventory.build import load_inventory

    return load_inventory(write_inventory(data, tmp_path, name))


def topology_from_data(data: dict[str, Any], tmp_path: Path, name: str = "inventory.yaml") -> Topology:
    from imsdr.model.topology import Topology

    inv, source = load_from_data(data, tmp_path, name)
    return Topology(inv, source)


def _find(items: list[dict[str, Any]], ident: str, what: str) -> dict[str, Any]:
    for item in items:
        if item.get("id") == ident:
            return item
    raise KeyError(f"no {what} {ident!r}")


def element(data: dict[str, Any], ident: str) -> dict[str, Any]:
    return _find(data["elements"], ident, "element")


def site(data: dict[str, Any], ident: str) -> dict[str, Any]:
    return _find(data["sites"], ident, "site")


def local_network(data: dict[str, Any], ident: str) -> dict[str, Any]:
    return _find(data["local_networks"], ident, "local network")


def group(data: dict[str, Any], ident: str) -> dict[str, Any]:
    red = data.setdefault("redundancy", {})
    return _find([*red.get("pairs", []), *red.get("pools", [])], ident, "pair or pool")


def remove_group(data: dict[str, Any], ident: str) -> None:
    red = data["redundancy"]
    for kind in ("pairs", "pools"):
        red[kind] = [g for g in red.get(kind, []) if g["id"] != ident]


def path_of(data: dict[str, Any], ident: str, *fields: str | int) -> tuple[str | int, ...]:
    """The YAML path of the object with id ``ident`` (element, site, local network, group)."""
    for key in ("elements", "sites", "local_networks"):
        for i, item in enumerate(data.get(key, [])):
            if item.get("id") == ident:
                return (key, i, *fields)
    for kind in ("pairs", "pools"):
        for i, item in enumerate(data.get("redundancy", {}).get(kind, [])):
            if item.get("id") == ident:
                return ("redundancy", kind, i, *fields)
    raise KeyError(ident)


def line_of(path: Path, lineno: int) -> str:
    """Text of line ``lineno`` (1-based) of a file."""
    return path.read_text(encoding="utf-8").splitlines()[lineno - 1]


def with_dras(data: dict[str, Any], tps: int = 20000) -> dict[str, Any]:
    """``data`` (the province sample) with a DRA pair (one at site-a, one at site-b) of ``tps``
    Diameter transactions per second, and the HSS pair holding the range 8610."""
    data["elements"] += [
        {"id": "dra-a-1", "type": "dra", "site": "site-a", "vendor": "vendor-z",
         "addresses": ["192.0.2.32", "2001:db8:a::32"], "capacity": {"transactions_per_second": tps}},
        {"id": "dra-b-1", "type": "dra", "site": "site-b", "vendor": "vendor-z",
         "addresses": ["192.0.2.96", "2001:db8:b::32"], "capacity": {"transactions_per_second": tps}},
    ]
    data["redundancy"]["pairs"].append({"id": "dra-pair", "members": ["dra-a-1", "dra-b-1"]})
    next(p for p in data["redundancy"]["pairs"] if p["id"] == "hss-pair")["user_ranges"] = ["8610"]
    return data
