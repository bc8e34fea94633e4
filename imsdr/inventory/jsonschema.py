"""JSON Schema export of inventory format v1."""

from __future__ import annotations

from typing import Any

from imsdr.inventory.schema import Inventory


def inventory_json_schema() -> dict[str, Any]:
    schema = Inventory.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://imsdr.example/schema/inventory-v1.json"
    return schema
