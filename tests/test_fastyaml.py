"""The fast YAML path answers only when its answer is the libyaml path's, value for value.

Differential tests: whatever text the fast path accepts, the libyaml path reads without a
problem and to the same data (same types: 1, 1.0 and true are three different values); texts
with any difference must be declined. Texts are generated in the shape of inventories, with
scalars written plain or quoted whatever they mean, and as mutations of a real inventory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imsdr.errors import InventoryError
from imsdr.inventory import loader

ROOT = Path(__file__).resolve().parent.parent
PROVINCE = (ROOT / "inventories" / "province.yaml").read_text(encoding="utf-8")


def fast(text: str) -> Any:
    return loader.read_fast(text)


def same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _nested(depth: int) -> str:
    """A document nesting flow lists and mappings alternately ``depth`` deep under its root."""
    opening = "".join("[" if i % 2 == 0 else "{k: " for i in range(depth))
    closing = "".join("]" if i % 2 == 0 else "}" for i in reversed(range(depth)))
    return f"a: {opening}1{closing}\n"


def agrees(text: str) -> Any:
    """Assert the fast path declines ``text`` or reads it as the libyaml path does; return its data."""
    data = fast(text)
    if data is None:
        return None
    try:
        slow = loader._load_with_locations(text, "t.yaml", tolerant=True)
    except InventoryError as exc:
        raise AssertionError(f"fast path accepted what libyaml refuses: {exc.problems or exc}\n{text}") from None
    assert slow.problems == [], f"{slow.problems}\n{text}"
    assert same(data, slow.data), f"{data!r} != {slow.data!r}\n{text}"
    return data


# scalars whose reading depends on how they are written
TRICKY = ["01", "460", "0", "-0", "5060", "05060", "1e3", "1E3", "-.5", ".5", "+1", "1.", "1.0", "0.85",
          "1_000", "0x1F", "0o17", "12:30", "1:30:00", "2026-01-01", "2026-01-01 10:00:00", "true", "True",
          "TRUE", "false", "yes", "no", "on", "off", "null", "Null", "~", "", "-", ".", ".inf", "-.inf",
          ".nan", "NaN", "=", "<<", "a b", "x#y", "x # y", "a: b", "a:b", "sbc-a-1", "192.0.2.1",
          "2001:db8::1", "198.18.0.0/24", "+86105", "86", "e164.arpa", "[x]", "{x}", "a,b", "1,000",
          "12345678901234567890123456789012", "1" * 400 + ".5"]
scalars = st.sampled_from(TRICKY) | st.text(alphabet="ab01.-+:e_ #,", max_size=8)
keys = st.sampled_from(["id", "type", "port", "mcc", "01", "true", "null", "1", "a b", "x"]) | \
    st.text(alphabet="abc01-_", min_size=1, max_size=5)


def written(value: str, style: str) -> str:
    return f'"{value}"' if style == "quoted" and '"' not in value else value


@st.composite
def documents(draw: st.DrawFn) -> str:
    """An inventory-shaped document: block mappings and lists with flow collections inside."""
    lines = ["version: 1"]
    for _ in range(draw(st.integers(1, 4))):
        key = draw(keys)
        form = draw(st.sampled_from(["scalar", "flow-map", "flow-list", "block-list", "block-map"]))
        style = lambda: draw(st.sampled_from(["plain", "quoted"]))  # noqa: E731
        if form == "scalar":
            lines.append(f"{written(key, style())}: {written(draw(scalars), style())}")
        elif form == "flow-map":
            items = ", ".join(f"{written(draw(keys), style())}: {written(draw(scalars), style())}"
                              for _ in range(draw(st.integers(0, 3))))
            lines.append(f"{written(key, style())}: {{{items}}}")
        elif form == "flow-list":
            items = ", ".join(written(draw(scalars), style()) for _ in range(draw(st.integers(0, 3))))
            lines.append(f"{written(key, style())}: [{items}]")
        elif form == "block-list":
            lines.append(f"{written(key, style())}:")
            lines += [f"  - {written(draw(scalars), style())}" for _ in range(draw(st.integers(1, 3)))]
        else:
            lines.append(f"{written(key, style())}:")
            lines += [f"  {written(draw(keys), style())}: {written(draw(scalars), style())}"
                      for _ in range(draw(st.integers(1, 3)))]
        if draw(st.booleans()):
            lines.append(f"# {draw(scalars)}")
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_generated_documents_read_alike(text: str) -> None:
    agrees(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_inventories_read_alike(data: st.DataObject) -> None:
    text = PROVINCE
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text) - 1))
        cut = data.draw(st.integers(0, 3))
        insert = data.draw(st.text(alphabet=' :-\n#"0[]{},x1.\'', max_size=3))
        text = text[:at] + insert + text[at + cut:]
    agrees(text)


@pytest.mark.parametrize("text", [
    'a: "1"\nb: 1\n',                   # quoted and plain of one spelling
    "mnc: 01\n",                       # YAML 1.1 octal
    'mnc: "01"\nx: [01]\n',            # quoted here, plain there
    "a: -.5\nb: -0.5\n",               # rapidyaml writes -.5 as -0.5
    "a: 1\na: 2\n",                    # duplicate key
    "a: {b: 1, b: 2}\n",
    "a: 1e3\n", "a: +1\n", "a: 1.\n", "a: 1_000\n", "a: 12:30\n", "a: 0x1F\n",
    "a: 2026-01-01\n", "a: Null\n", "a: ~\n", "a: True\n", "a: yes\n", "1: x\n", "<<: {a: 1}\n",
    'a: "x"y\n', 'a: x"y\n', 'a: "multi\n  line"\n', "a: b: c\n", "- a\nb: 1\n", "a:\n  b: 1\n c: 2\n",
    "a: [1, 2\n", "---\na: 1\n---\nb: 2\n", "a: 1\n...\n", "%YAML 1.2\n---\na: 1\n",
    "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  text\n", "a: 'x'\n", "a:\tb\n", "a: \u00e9\n",
    "a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
    "a: 123456789012345678901234567890123\n",
    # found by the fuzzing above: rapidyaml reads these, libyaml refuses them
    "}a: 1\n", "]a: 1\n", "id: [:0]\n", "a: [2001:db8::1]\n", "a:\n  - {id: x} -\n", 'a: "x" -\n',
    "a: ._\n", "a: -0x_\n",
    # single quotes: declined, except in comments and double-quoted text
    "a: 'x #y', b: 0123\n", "a: {b: 'x #y', c: 0123}\n", "a: O'Brien\n", "a: 1 # the UE's\n", 'a: "it\'s"\n',
])
def test_hard_cases_are_declined_or_read_alike(text: str) -> None:
    agrees(text)


def test_the_common_inventory_takes_the_fast_path() -> None:
    """The samples and a generated national inventory are read fast (and alike)."""
    assert agrees(PROVINCE) is not None
    assert agrees((ROOT / "inventories" / "lab.yaml").read_text(encoding="utf-8")) is not None
    made = subprocess.run([sys.executable, "-m", "imsdr", "example", "national", "--provinces", "3"],
                          capture_output=True, text=True, check=True)
    assert agrees(made.stdout) is not None


def test_declined_texts_still_load_with_every_location(tmp_path: Path) -> None:
    """A text the fast path declines is read by the libyaml path, locations and all."""
    text = PROVINCE.replace("version: 1", "version: 1\nnote: 'single quotes'", 1)
    assert fast(text) is None
    doc = loader.load_yaml_text(text, "p.yaml", tolerant=True)
    assert doc.data["note"] == "single quotes" and doc.locate(("note",)).line == \
        text.splitlines().index("note: 'single quotes'") + 1


def test_locations_are_read_only_when_asked_for() -> None:
    doc = loader.load_yaml_text(PROVINCE, "p.yaml")
    later = doc.locations._later  # type: ignore[attr-defined]
    assert later._doc is None  # a valid inventory: nothing asked where anything was written
    line = next(i for i, text in enumerate(PROVINCE.splitlines(), 1) if text.startswith("sites:"))
    assert doc.locate(("sites",)).line == line + 1  # the list starts on the next line
    assert later._doc is not None and later._text is None


@pytest.mark.parametrize(("text", "message"), [
    ("version: 1\nnetwork: [1, 2\n", "YAML syntax error"),
    ("version: 1\n" + _nested(loader.MAX_DEPTH), "nesting deeper than"),  # rapidyaml's emitter refuses it
])
def test_parse_and_emit_errors_print_nothing(tmp_path: Path, text: str, message: str) -> None:
    """rapidyaml reports its own errors on stderr; imsdr shows only its own message."""
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "imsdr", "validate", str(path)], capture_output=True, text=True)
    assert run.returncode == 2
    assert "ERROR" not in run.stderr and "parse_engine" not in run.stderr and ".hpp" not in run.stderr
    assert run.stderr.startswith(f"{path}:") and message in run.stderr


@pytest.mark.parametrize(("brackets", "depth"), [("", 0), ("[]", 1), ("[{}]", 2), ("{[]}[[{}]]", 3), ("[][]{}", 1)])
def test_bracket_depth(brackets: str, depth: int) -> None:
    from imsdr.inventory.fastyaml import _depth_over

    assert not _depth_over(brackets, depth) and (depth == 0 or _depth_over(brackets, depth - 1))


def test_emitted_json_strings_have_no_escapes() -> None:
    """What _certain relies on: for the texts it accepts, rapidyaml's JSON strings are verbatim."""
    import ryml

    text = 'a: "x/y, z: [1]"\nb: [c, "d e"]\nf: {g: "1"}\n'
    assert fast(text) == {"a": "x/y, z: [1]", "b": ["c", "d e"], "f": {"g": "1"}}
    assert "\\" not in ryml.emit_json(ryml.parse_in_arena(text.encode()))
    assert json.loads(ryml.emit_json(ryml.parse_in_arena(text.encode()))) == fast(text)


@pytest.mark.parametrize("depth", [loader.MAX_DEPTH - 2, loader.MAX_DEPTH - 1, loader.MAX_DEPTH, loader.MAX_DEPTH + 1])
def test_nesting_at_the_depth_limit_is_read_alike_or_declined(depth: int) -> None:
    agrees(_nested(depth))


def test_a_text_of_the_same_spelling_quoted_here_and_typed_there_is_declined() -> None:
    """The shortcut for values that can only be text must not skip one that starts like a type."""
    assert fast('a: "true"\nb: [true]\n') is None and fast('a: "~"\nb: ~\n') is None
    assert fast('a: "2026-01-01"\nb: 2026-01-01\n') is None and fast('a: "null"\nb: null\n') is None
    assert fast('a: "site-a"\nb: site-a\n') == {"a": "site-a", "b": "site-a"}
