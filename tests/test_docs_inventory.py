"""docs/inventory.md stays true: its annotated example validates and it names every field."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from imsdr.inventory.build import load_inventory_text
from imsdr.inventory.schema import Inventory

DOC = Path(__file__).resolve().parent.parent / "docs" / "inventory.md"


def example() -> str:
    text = DOC.read_text(encoding="utf-8")
    match = re.search(r"```yaml\n(version: 1\n.*?)```\n", text, re.S)
    assert match, "docs/inventory.md lost its annotated example"
    return match.group(1)


def test_annotated_example_is_a_valid_inventory() -> None:
    inv, _ = load_inventory_text(example(), "docs/inventory.md")
    assert inv.rules["GEO-004"].value == "off"
    assert [w.rule for w in inv.waivers] == ["HSS-004"]


def field_names(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[str]:
    names: set[str] = set()
    if model in seen:
        return names
    seen.add(model)
    for name, info in model.model_fields.items():
        names.add(name)
        for sub in re.findall(r"imsdr\.inventory\.schema\.(\w+)", repr(info.annotation)):
            candidate = getattr(__import__("imsdr.inventory.schema", fromlist=[sub]), sub)
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                names |= field_names(candidate, seen)
    return names


def test_every_field_of_the_format_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = sorted(n for n in field_names(Inventory, set()) if not re.search(rf"\b{n}\b", text))
    assert missing == []
