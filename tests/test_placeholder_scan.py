"""Validation skips the walk for `imsdr import` placeholders only where the text cannot hold one;
a placeholder written any way YAML allows is still the one problem at its path."""

from __future__ import annotations

from pathlib import Path

import pytest

from imsdr.errors import InventoryError
from imsdr.inventory.build import load_inventory_text
from imsdr.inventory.loader import load_yaml_text, may_hold_placeholders

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = (ROOT / "inventories" / "province.yaml").read_text(encoding="utf-8")


def test_text_without_fill_or_backslash_holds_none() -> None:
    assert not may_hold_placeholders(PROVINCE)
    assert not load_yaml_text(PROVINCE, "p.yaml", tolerant=True).placeholders_possible
    assert may_hold_placeholders("a: FILL IN: x\n")
    assert may_hold_placeholders('a: "\\x46ILL IN: x"\n')


@pytest.mark.parametrize("written", [
    "'FILL IN: the network''s name'",                  # as `imsdr import` writes it
    '"\\x46ILL IN: the network\'s name"',              # an escape: no "FILL" in the text
    '"\\u0046ILL IN: the network\'s name"',
    "'FILL IN:\n  the network''s name'",              # folded over two lines
])
def test_every_spelling_of_a_placeholder_is_reported(written: str) -> None:
    lines = PROVINCE.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("  name: Example Province IMS"))
    lines[at] = f"  name: {written.replace(chr(10), chr(10) + '  ')}\n"
    with pytest.raises(InventoryError) as caught:
        load_inventory_text("".join(lines), "p.yaml")
    assert any("placeholder to fill in: the network's name" in p.message for p in caught.value.problems)
