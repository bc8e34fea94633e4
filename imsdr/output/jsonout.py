"""Stable JSON output: sorted keys, two-space indent, trailing newline."""

from __future__ import annotations

import json
from typing import Any


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=_default) + "\n"


def _default(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "value"):
        return value.value
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


ENVELOPE_KEYS = ("format", "imsdr", "inventory")


def envelope(kind: str, payload: dict[str, Any], inventory: Any = None, version: int = 1) -> dict[str, Any]:
    """The one JSON contract of every command's ``--format json`` (docs/json.md): ``format``
    (``imsdr.KIND/VERSION``; a payload that names its own format keeps it), the ``imsdr`` version,
    the ``inventory`` as given on the command line (``null`` when the command reads none), then the
    command's own keys beside them."""
    from imsdr import __version__

    return {"format": payload.get("format", f"imsdr.{kind}/{version}"), "imsdr": __version__,
            "inventory": inventory,
            **{k: v for k, v in payload.items() if k not in ENVELOPE_KEYS}}
