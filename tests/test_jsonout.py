"""imsdr's JSON writer writes exactly what json.dumps(indent=2, sort_keys=True, ensure_ascii=False) does."""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imsdr.output import jsonout
from imsdr.output.jsonout import _default, dump, dumps


def reference(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=_default) + "\n"


class Colour(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Plain(enum.Enum):
    ONE = 1.5


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.sampled_from([Colour.RED, Level.HIGH, Plain.ONE, dt.date(2026, 11, 30)])
)
documents = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4)
    | st.lists(children, max_size=3).map(tuple)
    | st.sets(st.integers(), max_size=3)
    | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=30,
)


@given(documents)
@settings(max_examples=400, deadline=None)
def test_any_document_is_written_as_json_dumps_writes_it(data: Any) -> None:
    assert dumps(data) == reference(data)


@pytest.mark.parametrize(
    "data",
    [
        {},
        [],
        "",
        {"b": [], "a": {}, "c": [{}, []]},
        {"é": "ü\u2028\x00\"\\", "z": ["\ud800"]},
        {"events": ["site:a", "é\"\n", ""], "nested": [["x", "y"]], "mixed": ["a", Colour.RED, "b"]},
        [math.nan, math.inf, -math.inf, -0.0, 1e-07, 1e22, 0.1 + 0.2],
        # floats repeat (their texts are remembered): zeros of both signs, NaN, in mappings and lists
        {"a": 0.0, "b": -0.0, "c": {"x": -0.0, "y": 0.0, "z": 0.1}, "d": [0.1, -0.0, 0.0, 0.1],
         "e": {"n": math.nan, "m": math.nan, "i": -math.inf, "k": 0.1, "s": "0.1", "t": True, "u": None}},
        {"x": True, "y": False, "z": None, "n": 10**30, "f": 2.5},
        {"format": Colour.RED, "level": Level.HIGH, "set": {3, 1, 2}, "tuple": (1, "a")},
    ],
)
def test_edge_values(data: Any) -> None:
    assert dumps(data) == reference(data)


@given(st.dictionaries(st.text(max_size=5), documents, max_size=4) | st.lists(documents, max_size=6))
@settings(max_examples=200, deadline=None)
def test_dump_writes_in_pieces_what_dumps_returns(data: Any) -> None:
    pieces: list[str] = []
    old = jsonout.PIECE
    jsonout.PIECE = 3  # a write after nearly every item of a list
    try:
        dump(data, pieces.append)
    finally:
        jsonout.PIECE = old
    assert "".join(pieces) == dumps(data)


def test_dump_writes_a_large_list_in_several_pieces_and_refuses_keys_that_are_not_strings() -> None:
    data = {"rows": [{"n": i, "label": f"row {i}", "parts": [i, [i]]} for i in range(3000)]}
    pieces: list[str] = []
    dump(data, pieces.append)
    assert len(pieces) > 2
    assert "".join(pieces) == dumps(data) == reference(data)
    with pytest.raises(TypeError):
        dump({"a": [{1: "b"}]}, pieces.append)


def test_keys_that_are_not_strings_go_through_json_dumps() -> None:
    data = {1: "a", 3: [{2.5: None, True: 1}], 2: {"k": 0}}
    assert dumps(data) == reference(data)
    with pytest.raises(TypeError):
        dumps({1: "a", "b": 2})  # json.dumps cannot sort mixed keys either
    with pytest.raises(TypeError):
        dumps({"a": object()})


def test_a_real_report_is_written_identically() -> None:
    from imsdr.capacity import capacity_report, capacity_to_dict
    from imsdr.inventory.build import load_inventory
    from imsdr.model.topology import Topology

    root = Path(__file__).resolve().parent.parent
    inventory, source = load_inventory(root / "inventories" / "province.yaml")
    data = capacity_to_dict(capacity_report(Topology(inventory, source)))
    assert dumps(data) == reference(data)
