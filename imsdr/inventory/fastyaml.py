"""The fast way in for the common inventory: rapidyaml parses, its JSON emitter hands the data over.

libyaml (through PyYAML) builds a Python object for each of the ~175,000 events of a national
inventory before we even see a value; rapidyaml (a C++ parser) parses the same 1.5 MB in tens of
milliseconds and emits the tree as JSON, which the C JSON decoder turns into Python values. That
is fast, but JSON says less than YAML: ``"460"`` and ``460`` both arrive as the number or both as
text, dates arrive as text, and rapidyaml rewrites some number spellings (``-.5`` → ``-0.5``).

So the fast path answers only when the answer is certain to be the one the libyaml path
(:mod:`imsdr.inventory.loader`) would give, value for value, and otherwise returns None so that
the caller takes the libyaml path, which also produces every message with its exact location:

* the text is printable ASCII lines without tabs, backslashes, anchors, aliases, tags, block
  scalars, complex keys, directives or document markers, and rapidyaml parses it without error;
* every number is a plain decimal both YAML versions read alike (``5060``, ``-3``, ``0.85``),
  and every token of the text that starts like a number is one, or is text for both (an
  address, a prefix) — so no spelling rapidyaml could have rewritten is there at all;
* every text value that YAML would read as something else if it were unquoted (``"460"``,
  ``"01"``, ``"2026-01-01"``, ``"Null"``) appears in the text only inside quotes;
* no mapping repeats a key, nothing is nested deeper than the loader allows, and the root is a
  mapping.

The document returned has no locations: they are read (by the libyaml path, from the same text)
the first time something asks where a value was written — a finding or a problem. A valid
inventory whose checks find nothing is never parsed twice.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

# Characters whose YAML meaning the fast path does not reproduce: escapes, anchors, aliases, tags,
# block scalars, complex keys, reserved indicators (and, below: tabs, control characters,
# non-ASCII, and single quotes outside comments and double-quoted text).
_UNSUPPORTED = "\\&*!|>?@`"
_BOUNDARY = " [{,:"  # what may stand before a scalar on its line (after the indentation)
# what stands around every plain scalar (and inside some: more tokens than scalars, never fewer)
_SPACES = str.maketrans("[]{},:", "      ")
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
# "a:b" is one plain scalar for rapidyaml (YAML 1.2) everywhere; libyaml refuses it in flow style
_GLUED_COLON = re.compile(r":[^ \n]")
# after a quoted scalar or a flow collection only a separator may follow (rapidyaml skips a stray
# "- x" there; libyaml refuses it)
_AFTER_FLOW = re.compile(r'(?:""|[\]}]) *[^ ,\]}:\n]')
_INNERMOST_PAIR = re.compile(r"\[\]|\{\}")
_DECIMAL_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
_NUMBER_START = frozenset("+-.0123456789")


class _NotCertain(Exception):
    """The fast path cannot be sure of the libyaml path's answer."""


def fast_data(text: str, *, max_nodes: int, max_depth: int, max_int_digits: int,
              plain_reading: Callable[[str], str], number_problem: Callable[[str], str | None],
              typed_starts: frozenset[str] | None = None) -> Any:
    """The data of ``text`` as the libyaml path reads it, or None when that is not certain.

    ``plain_reading(text)`` is the YAML tag the loader gives a plain scalar ``text``;
    ``number_problem(text)`` the loader's check of plain scalars that look like numbers;
    ``typed_starts``, when known, the characters a plain scalar must start with for
    ``plain_reading`` to read it as anything but text."""
    if not text.isascii() or not text.replace("\n", "").isprintable() or any(ch in text for ch in _UNSUPPORTED) \
            or text.startswith(("%", "---", "...")) or "\n%" in text or "\n---" in text or "\n..." in text:
        return None  # (the last ones: directives and document markers)
    try:
        import ryml
    except ImportError:  # pragma: no cover - a declared dependency; the libyaml path still works
        return None
    try:
        # rapidyaml reports parse and emit errors (too deep) on stderr itself; the libyaml path words them
        with _quiet_stderr():
            tree = ryml.parse_in_arena(text.encode("ascii"))
            if tree.size() > max_nodes:
                return None
            emitted = ryml.emit_json(tree)
        data = json.loads(emitted, object_pairs_hook=_mapping, parse_int=_integer(max_int_digits),
                          parse_float=_decimal, parse_constant=_refuse)
        if not isinstance(data, dict) or not _certain(text, emitted, max_depth, plain_reading, number_problem,
                                                       typed_starts):
            return None
    except (_NotCertain, ValueError, RecursionError, ryml.ExceptionBasic):
        return None
    except Exception:  # noqa: BLE001 - any other surprise of the C++ parser: take the libyaml path
        return None
    return data


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _mapping(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _NotCertain("duplicate key")  # the libyaml path reports it, with both lines
    return result


def _integer(max_digits: int) -> Callable[[str], int]:
    def parse(token: str) -> int:
        if len(token) > max_digits or not _DECIMAL_INT.fullmatch(token):
            raise _NotCertain(token)
        return int(token)

    return parse


def _decimal(token: str) -> float:
    if not _DECIMAL.fullmatch(token):
        raise _NotCertain(token)
    value = float(token)
    if not math.isfinite(value):
        raise _NotCertain(token)
    return value


def _refuse(token: str) -> Any:
    raise _NotCertain(token)


def _certain(text: str, emitted: str, max_depth: int, plain_reading: Callable[[str], str],
             number_problem: Callable[[str], str | None], typed_starts: frozenset[str] | None) -> bool:
    """Whether the data of ``emitted`` (rapidyaml's JSON of ``text``) is what the libyaml path reads."""
    unquoted = _plain_parts(text)
    if unquoted is None or "'" in unquoted or not _balanced(unquoted) or _GLUED_COLON.search(unquoted) \
            or _AFTER_FLOW.search(unquoted):
        return False  # (a single quote left: single-quoted text, or an apostrophe in plain text)
    # The JSON has no escapes (the text has no backslash, and a quote inside a scalar was refused
    # by _plain_parts), so its strings are exactly the runs between double quotes.
    parts = emitted.split('"')
    strings = set(parts[1::2])
    if _depth_over(_NOT_BRACKET.sub("", "".join(parts[0::2])), max_depth):
        return False
    tokens = set(unquoted.translate(_SPACES).split())
    # numbers: every token that starts like a number is a plain decimal, or text either way, so
    # no spelling that rapidyaml rewrites (or reads unlike YAML 1.1) is in the text
    for token in tokens:
        if token[:1] in _NUMBER_START and not _DECIMAL.fullmatch(token) and (
                plain_reading(token) != "str" or number_problem(token)):
            return False
    # text that YAML would read as something else unquoted must be quoted wherever it is written
    # a value that cannot start anything but text (most ids and names) needs no closer look
    may_be_typed = None if typed_starts is None else typed_starts | _NUMBER_START | {""}
    for value in strings:
        if may_be_typed is not None and value[:1] not in may_be_typed:
            continue
        if plain_reading(value) == "str" and not (value[:1] in _NUMBER_START and number_problem(value)):
            continue
        if not value or any(ch.isspace() for ch in value):
            return False
        if value in tokens or (value.translate(_SPACES) != value and _plain_somewhere(unquoted, value)):
            return False
    return True


def _depth_over(brackets: str, max_depth: int) -> bool:
    """Whether the balanced flow brackets ``brackets`` nest deeper than ``max_depth``: each pass
    removes the innermost pairs (the scan does not revisit what a removal joins), so the number
    of passes that empty the string is the depth."""
    for _ in range(max_depth):
        if not brackets:
            return False
        brackets = _INNERMOST_PAIR.sub("", brackets)
    return bool(brackets)


def _plain_parts(text: str) -> str | None:
    """``text`` without its double-quoted scalars (each left as ``""``) and comments; None when a
    quote does not open or close a scalar on its line (a quote inside a plain scalar, a scalar
    quoted over several lines): then which parts are plain is not certain."""
    lines = []
    for line in text.split("\n"):
        if '"' in line:
            parts = line.split('"')
            if len(parts) % 2 == 0:
                return None
            for i in range(0, len(parts) - 1, 2):
                before, after = parts[i], parts[i + 2]
                opens = before[-1:] in _BOUNDARY if before else i == 0  # at the line start, or after " [{,:"
                if not opens or after[:1] not in ("", " ", ",", "]", "}", ":"):
                    return None
            line = '""'.join(parts[0::2])
        cut = line.find("#")
        while cut >= 0:
            if cut == 0 or line[cut - 1] == " ":
                line = line[:cut]
                break
            cut = line.find("#", cut + 1)
        lines.append(line)
    return "\n".join(lines)


def _balanced(unquoted: str) -> bool:
    """Flow brackets outside quoted scalars and comments pair up (rapidyaml reads a stray ``}`` or
    ``]`` as the start of a plain scalar; libyaml refuses it)."""
    brackets = _NOT_BRACKET.sub("", unquoted)
    while brackets:
        shorter = brackets.replace("[]", "").replace("{}", "")
        if shorter == brackets:
            return False
        brackets = shorter
    return True


def _plain_somewhere(unquoted: str, value: str) -> bool:
    """True if ``value`` stands as a token in ``unquoted`` (the text without quoted scalars and
    comments): written without quotes somewhere, or possibly so."""
    start = unquoted.find(value)
    while start >= 0:
        end = start + len(value)
        before = unquoted[start - 1] if start else "\n"
        after = unquoted[end] if end < len(unquoted) else "\n"
        if before in " \n[{,:" and after in " \n,]}:":
            return True
        start = unquoted.find(value, start + 1)
    return False
