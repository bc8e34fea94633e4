"""Placeholders: facts an import could not learn, written so that `validate` points at each one.

`imsdr import` writes a value it could not derive as the text ``FILL IN: <what to fill>``, never a
guess. Validation reports every placeholder, with its location, as the only problem at its path,
until the planner replaces it with the real value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

PREFIX = "FILL IN: "
_PLACEHOLDER_RE = re.compile(r"FILL IN: [^\x00-\x1f\x7f]{1,200}")

YamlPath = tuple[str | int, ...]


def placeholder(what: str) -> str:
    """The placeholder text for a fact described by ``what`` (one printable line)."""
    text = PREFIX + " ".join(what.split())
    if not _PLACEHOLDER_RE.fullmatch(text):
        raise ValueError(f"not a valid placeholder description: {what!r}")
    return text


def is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and _PLACEHOLDER_RE.fullmatch(value) is not None


def find_placeholders(data: Any, path: YamlPath = ()) -> Iterator[tuple[YamlPath, str]]:
    """Every placeholder in a loaded document, in document order: its path and what it asks for."""
    found: list[tuple[YamlPath, str]] = []
    if is_placeholder(data):
        found.append((path, data[len(PREFIX):]))
    elif isinstance(data, dict | list):
        _collect(data, path, found)
    return iter(found)


def _collect(node: dict[str, Any] | list[Any], path: YamlPath, found: list[tuple[YamlPath, str]]) -> None:
    # a path is built only for containers and placeholders: a national inventory has ~100,000 values
    for key, value in node.items() if isinstance(node, dict) else enumerate(node):
        if isinstance(value, str):
            if value.startswith(PREFIX) and _PLACEHOLDER_RE.fullmatch(value):
                found.append(((*path, key), value[len(PREFIX):]))
        elif isinstance(value, dict | list):
            _collect(value, (*path, key), found)
