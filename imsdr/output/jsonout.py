"""Stable JSON output: sorted keys, two-space indent, trailing newline."""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring
from typing import Any


def dumps(data: Any) -> str:
    """``json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)`` plus a newline, byte for byte.

    The standard library writes indented JSON with its pure-Python encoder (its C encoder knows no
    indent), one nested generator per level; the national capacity and scenarios reports are
    several megabytes of it. :class:`_Writer` writes the same text with one list of chunks; a
    document it does not handle the same way (a key that is not a string) goes to ``json.dumps``."""
    try:
        return _Writer().text(data)
    except _NotPlain:
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=_default) + "\n"


def dump(data: Any, write: Callable[[str], object]) -> None:
    """:func:`dumps` of ``data`` passed to ``write`` in pieces (each after an item of a list, once
    about :data:`PIECE` chunks are pending): a report of many megabytes is never held as one
    string, nor as its chunks, nor encoded at once. Keys must be strings (:func:`dumps` falls back
    to json.dumps otherwise, which writes nothing before the end)."""
    writer = _Writer(write)
    try:
        writer.value(data, "\n")
    except _NotPlain:
        raise TypeError("dump() writes documents whose keys are strings; dumps() writes the others") from None
    writer.out.append("\n")
    writer.flush()


PIECE = 4096  # chunks of text (a few hundred kilobytes) per write of dump()


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


class _NotPlain(Exception):
    """The document has a dict key that is not a string: json.dumps writes it."""


_FLOAT_SPECIAL = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}  # json's allow_nan spellings
_SCALARS = frozenset({str, int, float, bool, type(None)})
_STR = frozenset({str})
#: the mappings flat() writes: with a float, the loop in object() is cheaper (its texts remembered)
_FLAT_MAPPING = _SCALARS - {float}


def _float_text(value: float) -> str:
    text = float.__repr__(value)
    return _FLOAT_SPECIAL.get(text, text)


class _Writer:
    """json's ``_make_iterencode`` with indent "  ", separators (",", ": "), sorted keys and no
    ASCII escaping, writing into one list: the same dispatch order (str, None, True, False, int,
    float, list/tuple, dict, else ``_default``), the same text for every value."""

    def __init__(self, sink: Callable[[str], object] | None = None) -> None:
        self.out: list[str] = []
        self.flat_encoders: dict[str, Callable[[Any, int], list[str]]] = {}
        #: float → its text: a report repeats a few thousand values (a cut set's probability in
        #: every service of its network) many times, and repr() of a float is the dearest part
        self.floats: dict[float, str] = {}
        self.sink = sink  # dump(): where pending text goes (dumps(): none, one string at the end)

    def flush(self) -> None:
        if self.sink is not None:
            self.sink("".join(self.out))
            self.out.clear()

    def flat(self, container: Any, opening: str, inner: str, newline: str) -> bool:
        """Write a list or dict of scalars only with json's C encoder (when there is one): with
        ",\n" + indent between items it writes the very items json's indented encoder writes;
        only the breaks after the opening and before the closing bracket are added here."""
        if c_make_encoder is None:
            return False
        encoder = self.flat_encoders.get(inner)
        if encoder is None:
            encoder = self.flat_encoders[inner] = c_make_encoder(
                None, _default, encode_basestring, None, ": ", "," + inner, True, False, True
            )
        text = "".join(encoder(container, 0))
        self.out.append(opening + inner + text[1:-1] + newline + text[-1])
        return True

    def number(self, value: float) -> str:
        text = self.floats.get(value)
        if text is None:
            text = _float_text(value)
            if value:  # 0.0 and -0.0 are one key, with two texts: not remembered
                self.floats[value] = text
        return text

    def text(self, data: Any) -> str:
        self.value(data, "\n")
        self.out.append("\n")
        return "".join(self.out)

    def value(self, value: Any, newline: str) -> None:
        """Write ``value`` whose first line is already indented; ``newline`` = "\\n" + its indent."""
        out = self.out
        while True:
            if isinstance(value, str):
                out.append(encode_basestring(value))
            elif value is None:
                out.append("null")
            elif value is True:
                out.append("true")
            elif value is False:
                out.append("false")
            elif isinstance(value, int):
                out.append(int.__repr__(value))
            elif isinstance(value, float):
                out.append(self.number(value))
            elif isinstance(value, (list, tuple)):
                self.array(value, newline)
            elif isinstance(value, dict):
                self.object(value, newline)
            else:
                value = _default(value)
                continue
            return

    def array(self, items: list[Any] | tuple[Any, ...], newline: str) -> None:
        out = self.out
        if not items:
            out.append("[]")
            return
        inner = newline + "  "
        if _STR.issuperset(map(type, items)):  # as flat() writes them, without the C encoder's set-up
            out.append("[" + inner + ("," + inner).join(map(encode_basestring, items)) + newline + "]")
            return
        if _SCALARS.issuperset(map(type, items)) and self.flat(items, "[", inner, newline):
            return
        lead = "[" + inner
        separator = "," + inner
        for item in items:
            self.entry(lead, item, inner)
            lead = separator
            if self.sink is not None and len(out) >= PIECE:
                self.flush()
        out.append(newline + "]")

    def object(self, mapping: dict[Any, Any], newline: str) -> None:
        out = self.out
        if not mapping:
            out.append("{}")
            return
        inner = newline + "  "
        lead = "{" + inner
        separator = "," + inner
        if not _STR.issuperset(map(type, mapping)):
            raise _NotPlain
        if _FLAT_MAPPING.issuperset(map(type, mapping.values())) and self.flat(mapping, "{", inner, newline):
            return
        for key, item in sorted(mapping.items()):
            head = lead + encode_basestring(key) + ": "
            kind = type(item)
            if kind is float:  # the commonest values written here as entry() writes them, a call less each
                out.append(head + (self.floats.get(item) or self.number(item)))
            elif kind is str:
                out.append(head + encode_basestring(item))
            else:
                self.entry(head, item, inner)
            lead = separator
        out.append(newline + "}")

    def entry(self, head: str, item: Any, inner: str) -> None:
        """Write ``head`` (the break and indent, and a mapping's key) then ``item``: the common
        scalars as one chunk, anything else by its writer."""
        kind = type(item)
        if kind is str:
            self.out.append(head + encode_basestring(item))
        elif kind is float:
            self.out.append(head + self.number(item))
        elif kind is int:
            self.out.append(head + int.__repr__(item))
        elif item is None:
            self.out.append(head + "null")
        else:
            self.out.append(head)
            if kind is dict:
                self.object(item, inner)
            elif kind is list:
                self.array(item, inner)
            else:
                self.value(item, inner)
