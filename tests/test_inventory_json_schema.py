"""The inventory's JSON Schema as editors use it (yaml-language-server): what hovering a field
shows, and what a wrong value is reported as."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema

from imsdr.inventory.jsonschema import inventory_json_schema


def _nodes(node: Any, path: str = "#") -> Iterator[tuple[str, Any]]:
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _nodes(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _nodes(value, f"{path}/{i}")


def test_optional_fields_are_their_own_type_without_null() -> None:
    """No ``anyOf: [X, {type: null}]`` and no ``default: null`` anywhere: an optional enum is
    just the enum, so an editor says "not one of ..." instead of "does not match anyOf"."""
    schema = inventory_json_schema()
    for path, node in _nodes(schema):
        if isinstance(node, dict):
            assert node.get("type") != "null", path
            assert not ("default" in node and node["default"] is None), path
            for key in ("anyOf", "oneOf"):
                assert not any(option == {"type": "null"} for option in node.get(key, [])), path


def test_a_wrong_optional_enum_value_names_the_choices() -> None:
    """``options_probing`` is optional (unset: the type's recommended probing): a wrong value is
    reported against the choices, as a required enum would be."""
    schema = inventory_json_schema()
    element = {"$defs": schema["$defs"], "$ref": "#/$defs/Element"}
    errors = list(jsonschema.Draft202012Validator(element).iter_errors({"options_probing": "sometimes"}))
    (probing,) = [e for e in errors if list(e.absolute_path) == ["options_probing"]]
    assert probing.message.startswith("'sometimes' is not one of ['active'"), probing.message
