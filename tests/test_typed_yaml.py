"""Typed YAML: an explicit tag (``!!int``, ``!!float``, ``!!bool`` ...) never changes what a value
means, and YAML 1.1 line breaks (U+0085, U+2028, U+2029) are read as YAML 1.2 reads them.

A tag passes only when the text means the same without it (the tag is redundant) and that text
passes the YAML 1.1/1.2 number guard plain scalars go through; every other tagged scalar is
refused at its location. ``port: !!int "05060"`` used to publish SRV port 2608 (YAML 1.1 octal).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_loader import MINIMAL

from imsdr.errors import InventoryError
from imsdr.inventory.loader import load_yaml_text

TAGS = ["!!int", "!!float", "!!bool", "!!null", "!!str", "!!timestamp", "!!binary", "!!python/int",
        "!<tag:yaml.org,2002:int>", "!<tag:yaml.org,2002:float>", "!local", "!"]
NUMBERISH = st.one_of(
    st.sampled_from(["05060", "5060", "0", "-0", "+5", "0o17", "0x1F", "0b101", "1_000", "1:30", "1e3", "1.0e+3",
                     ".5", "-.5", "0.85", "1.", ".inf", ".nan", "yes", "no", "on", "off", "true", "True", "FALSE",
                     "null", "~", "", "2026-01-01", "12:30:00", "1 2", "abc", "00", "09", "0.0.1"]),
    st.text(st.sampled_from("0123456789+-._:eExob"), min_size=1, max_size=8))


def _value(text: str) -> tuple[bool, object]:
    """(accepted, value) of ``x: text`` as the inventory loader reads it."""
    try:
        doc = load_yaml_text(f"version: 1\nx: {text}\n", "inv.yaml", tolerant=True)
    except InventoryError:
        return False, None
    if doc.problems:
        return False, None
    return True, doc.data["x"]


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@settings(max_examples=600, deadline=None)
@given(tag=st.sampled_from(TAGS), text=NUMBERISH, quoted=st.booleans())
def test_a_tag_never_changes_a_value(tag: str, text: str, quoted: bool) -> None:
    scalar = _quoted(text) if quoted else text
    accepted, value = _value(f"{tag} {scalar}")
    if not accepted:
        return
    if tag in ("!!str", "!"):  # the non-specific tag ! is text too (PyYAML alone reads ! "05060" as 2608)
        assert value == text
        return
    plain_ok, plain_value = _value(text)
    assert plain_ok and plain_value == value and type(plain_value) is type(value), (tag, text, value, plain_value)


@pytest.mark.parametrize(("field", "tagged", "fragment"), [
    ("port", '!!int "05060"', "YAML 1.1 reads 05060 as the number 2608, YAML 1.2 as the number 5060"),
    ("port", "!!int 05060", "YAML 1.1 reads 05060 as the number 2608"),
    ("port", '!!int "0x13C4"', "hexadecimal"),
    ("port", '!!float "5060"', "without the tag YAML reads it as an integer"),
    ("options_probing", '!!bool "yes"', "without the tag YAML reads it as text"),
    ("vendor", '!!int "1_000"', "YAML 1.1 reads 1_000 as the number 1000, YAML 1.2 as text"),
])
def test_tagged_fields_of_an_inventory_are_refused_at_their_location(field: str, tagged: str, fragment: str) -> None:
    element = "vendor: v, addresses: [192.0.2.1]}"
    text = MINIMAL.replace(element, f"vendor: v, addresses: [192.0.2.1], {field}: {tagged}}}")
    if field == "vendor":
        text = MINIMAL.replace("vendor: v, addresses: [192.0.2.1]}", f"addresses: [192.0.2.1], vendor: {tagged}}}")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if tagged in row)
    column = text.splitlines()[line - 1].index(tagged) + 1
    with pytest.raises(InventoryError) as info:
        load_yaml_text(text, "inv.yaml")
    shown = [str(p) for p in info.value.problems]
    assert any(p.startswith(f"inv.yaml:{line}:{column}:") and fragment in p for p in shown), shown


def test_the_srv_port_reproducer_exits_2_and_renders_nothing(tmp_path: Path) -> None:
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(MINIMAL.replace("vendor: v, addresses: [192.0.2.1]}",
                                         'vendor: v, addresses: [192.0.2.1], port: !!int "05060"}'))
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "imsdr", "render", "dns", str(inventory), "--out", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert f"{inventory}:" in run.stderr and "05060" in run.stderr and "Traceback" not in run.stderr
    assert not out.exists()


BREAKS = ["\x85", "\u2028", "\u2029"]


@settings(max_examples=60, deadline=None)
@given(char=st.sampled_from(BREAKS), line=st.integers(0, MINIMAL.count("\n") - 1), inline=st.booleans())
def test_yaml_1_1_line_breaks_in_comments_are_characters_as_in_yaml_1_2(char: str, line: int, inline: bool) -> None:
    """A comment holding U+0085/U+2028/U+2029 (a comment line of its own, or after a value) reads
    as the inventory without it; a problem after it keeps its line (the character ends no line)."""
    lines = MINIMAL.splitlines()
    comment = f"# note {char} still the comment {char}"
    if inline and lines[line].strip():
        lines[line] = f"{lines[line]}  {comment}"
    else:
        lines.insert(line, comment)
    text = "\n".join(lines) + "\nextra_key: 1\n"
    with pytest.raises(InventoryError) as info:
        from imsdr.inventory.build import load_inventory_text

        load_inventory_text(text, "inv.yaml")
    last = text.count("\n")
    shown = [str(p) for p in info.value.problems]
    assert any(p.startswith(f"inv.yaml:{last}:1:") and "extra_key" in p for p in shown), shown
    assert not any("syntax error" in p for p in shown), shown


@pytest.mark.parametrize("char", BREAKS)
def test_yaml_1_1_line_breaks_in_values_are_refused_at_the_value(char: str) -> None:
    text = MINIMAL.replace("name: Test", f'name: "Te{char}st"')
    with pytest.raises(InventoryError) as info:
        load_yaml_text(text, "inv.yaml")
    shown = [str(p) for p in info.value.problems]
    assert shown == [f"inv.yaml:3:9: network.name: character U+{ord(char):04X} in a value: YAML 1.1 reads it as a "
                     "line break, YAML 1.2 as a character; remove it"], shown


def test_the_comment_reproducer_validates(tmp_path: Path) -> None:
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(textwrap.dedent(MINIMAL).replace("sites:\n", "# site list \x85 \u2028 end\nsites:\n"))
    run = subprocess.run([sys.executable, "-m", "imsdr", "validate", str(inventory)], capture_output=True, text=True,
                         timeout=120)
    assert "syntax error" not in run.stderr, run.stderr
    assert run.returncode in (0, 1), run.stderr
