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


def _properties(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, node in _nodes(schema):
        if isinstance(node, dict) and isinstance(node.get("properties"), dict):
            for name, prop in node["properties"].items():
                yield f"{path}/properties/{name}", prop


def test_every_property_says_what_it_means() -> None:
    """What an editor shows on hover: every property of the whole schema has a description of a
    few words (not its own name), a duration says its unit, and a plain default is shown."""
    schema = inventory_json_schema()
    found = list(_properties(schema))
    assert len(found) > 150
    for path, prop in found:
        description = prop.get("description", "")
        name = path.rsplit("/", 1)[1]
        assert len(description.split()) >= 3 and description.lower() != name.replace("_", " "), path
        if prop.get("type") == "integer" and prop.get("maximum") in (86400, 2_147_483_647):
            assert "second" in description, f"{path}: a duration names its unit: {description!r}"
        if isinstance(prop.get("default"), bool | int | float | str):
            assert "default" in description, f"{path}: the default is shown: {description!r}"

