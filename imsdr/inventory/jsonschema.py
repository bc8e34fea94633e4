"""JSON Schema export of inventory format v1."""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from imsdr.inventory.schema import Inventory


class _EditorSchema(GenerateJsonSchema):
    """The schema editors (yaml-language-server) check an inventory with. An optional field is one
    that may be left out: it is written as its own type, not ``anyOf: [type, null]`` (an editor
    then reports a wrong enum value as "not one of the choices", not as "does not match anyOf"),
    and a ``null`` default is not shown (leaving the field out is the default)."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        json_schema = super().default_schema(schema)
        if json_schema.get("default", ...) is None:
            del json_schema["default"]
        return json_schema


def _show_default(field: dict[str, Any]) -> None:
    """Editors show a field's description on hover, not always its ``default``: a plain default
    (a number, text, true/false) is added to the description, from the model's own default."""
    default = field.get("default")
    description = field.get("description")
    if description and isinstance(default, bool | int | float | str) and "default" not in description:
        shown = str(default).lower() if isinstance(default, bool) else default
        field["description"] = f"{description} (default: {shown})"


def inventory_json_schema() -> dict[str, Any]:
    schema = Inventory.model_json_schema(mode="validation", schema_generator=_EditorSchema)
    for model in (schema, *schema.get("$defs", {}).values()):
        for field in model.get("properties", {}).values():
            _show_default(field)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "urn:imsdr:schema:inventory:1"  # a name, not an address: imsdr publishes none
    return schema
