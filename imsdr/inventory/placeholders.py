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
    """Every placeholder in a loaded document: its path and what it asks for."""
    if is_placeholder(data):
        yield path, data[len(PREFIX):]
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from find_placeholders(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from find_placeholders(value, (*path, index))
