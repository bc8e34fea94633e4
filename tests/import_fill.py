"""Test helper: fill a draft's placeholders from the inventory the imported DNS was rendered from.

It stands in for the planner: every ``FILL IN`` value is looked up in the original inventory
(elements, sites and local networks by id; pairs and pools by their DNS name or members; ENUM
blocks by prefix), and a placeholder for a field the original leaves at its default is dropped.
Nothing else in the draft is touched, so whatever the import derived must be right by itself.
"""

from __future__ import annotations

from typing import Any

from imsdr.inventory.placeholders import is_placeholder

_ABSENT = object()


def _groups(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return list((doc.get("redundancy") or {}).get(kind) or [])


def _counterpart(original: dict[str, Any], draft: dict[str, Any], section: str, entry: dict[str, Any]) -> Any:
    if section in ("sites", "local_networks", "elements"):
        return next((e for e in original.get(section) or [] if e["id"] == entry.get("id")), None)
    if section in ("pairs", "pools"):
        candidates = _groups(original, "pairs") + _groups(original, "pools")
        return next((g for g in candidates if (entry.get("dns_name") and g.get("dns_name") == entry["dns_name"])
                     or set(g["members"]) == set(entry.get("members", []))), None)
    if section == "enum_blocks":
        return next((b for b in original.get("enum_blocks") or [] if b["prefix"] == entry["prefix"]), None)
    return None


def _fill_mapping(target: dict[str, Any], source: Any) -> None:
    for key in list(target):
        value = target[key]
        if is_placeholder(value) or (isinstance(value, list) and any(is_placeholder(v) for v in value)):
            if isinstance(source, dict) and key in source:
                target[key] = source[key]
            else:
                del target[key]
        elif isinstance(value, dict):
            _fill_mapping(value, source.get(key, {}) if isinstance(source, dict) else {})
            if not value and isinstance(source, dict) and key not in source:
                del target[key]


def fill_from(draft: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    _fill_mapping(draft["network"], original["network"])
    for section in ("sites", "local_networks", "elements", "enum_blocks"):
        for entry in draft.get(section) or []:
            _fill_mapping(entry, _counterpart(original, draft, section, entry) or {})
    for kind in ("pairs", "pools"):
        for entry in _groups(draft, kind):
            _fill_mapping(entry, _counterpart(original, draft, kind, entry) or {})
    _fill_mapping(draft.get("redundancy", {}), original.get("redundancy", {}))
    return draft
