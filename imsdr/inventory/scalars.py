"""Plain YAML scalars that look like numbers but are not plain decimal numbers.

YAML 1.1 (PyYAML, many older tools) and YAML 1.2 (most newer ones, JSON Schema editors) read
some unquoted numbers differently: ``05060`` is the octal 2608 in YAML 1.1 and 5060 in 1.2,
``1e3`` is text in 1.1 and 1000.0 in 1.2, ``1:30`` is 90 (base 60) in 1.1 and text in 1.2,
``1_000`` is 1000 in 1.1 and text in 1.2, ``0o17`` the reverse. An inventory means one thing
whichever tool reads it, so such a scalar is refused with the decimal spelling to use instead.

``number_problem(text)`` is called by the loader on every *plain* (unquoted) scalar, whatever
parser produced it, before the value is converted; quoted text is never a number.
"""

from __future__ import annotations

import re

# Both YAML versions read these the same way: decimal integers without leading zeros, and
# decimals with a '.' (and an exponent, if any, with its sign).
_AGREED = re.compile(
    r"[-+]?(?:0|[1-9][0-9]*)"
    r"|[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?"
    r"|\.[0-9]+(?:[eE][-+][0-9]+)?"
)
# Everything either version reads as a number (YAML 1.1 as PyYAML resolves it, and the YAML 1.2
# core schema); .inf and .nan are left to the loader, which refuses them for their own reason.
_YAML11_INT = re.compile(
    r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+"
)
_YAML11_FLOAT = re.compile(
    r"[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*"
)
_YAML12_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_YAML12_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
NUMBER_START = frozenset("0123456789+-.")
# No spelling above, and no implicit type of PyYAML's resolver (a timestamp has one '.' and digits
# after each ':'), has two dots or a colon not followed by a digit: an address (10.0.0.1,
# 2001:db8::1) is text for every reader. Tried first: a national inventory has ~11,000 of them.
NEVER_TYPED = re.compile(r"\..*\.|:(?![0-9])", re.S)


def _yaml11(text: str) -> int | float | None:
    """What YAML 1.1 reads ``text`` as (None: text, or a number spelling with no digits: '._')."""
    try:
        return _yaml11_number(text)
    except ValueError:
        return None


def _yaml11_number(text: str) -> int | float | None:
    if _YAML11_INT.fullmatch(text):
        body = text.replace("_", "")
        sign = -1 if body.startswith("-") else 1
        body = body.lstrip("+-")
        if ":" in body:
            value = 0
            for part in body.split(":"):
                value = value * 60 + int(part)
            return sign * value
        if body.startswith("0b"):
            return sign * int(body[2:], 2)
        if body.startswith("0x"):
            return sign * int(body[2:], 16)
        if len(body) > 1 and body.startswith("0"):
            return sign * int(body, 8)
        return sign * int(body)
    if _YAML11_FLOAT.fullmatch(text):
        body = text.replace("_", "")
        if ":" in body:
            sign = -1.0 if body.startswith("-") else 1.0
            whole, _, fraction = body.lstrip("+-").rpartition(":")
            value = 0.0
            for part in whole.split(":"):
                value = value * 60 + int(part)
            return sign * (value * 60 + float(fraction))
        return float(body)
    return None


def _yaml12(text: str) -> int | float | None:
    """What the YAML 1.2 core schema reads ``text`` as (None: text)."""
    if _YAML12_INT.fullmatch(text):
        if text.startswith("0o"):
            return int(text[2:], 8)
        if text.startswith("0x"):
            return int(text[2:], 16)
        return int(text)
    if _YAML12_FLOAT.fullmatch(text):
        return float(text)
    return None


def _decimal(value: int | float) -> str:
    """The spelling both YAML versions read as ``value``."""
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        return str(int(value))
    text = repr(value)
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    if text.startswith(("-.", ".")):
        text = text.replace(".", "0.", 1)
    return text


def _reading(value: int | float | None) -> str:
    return "text" if value is None else f"the number {_decimal(value)}"


def decimal_spelling(text: str) -> str | None:
    """How to write ``text`` as a number both YAML versions read alike (None: not a number)."""
    if _AGREED.fullmatch(text):
        return text
    old, new = _yaml11(text), _yaml12(text)
    meant = new if new is not None else old
    return None if meant is None else _decimal(meant)


def number_problem(text: str) -> str | None:
    """Why the plain scalar ``text`` is refused (None when it is fine).

    Fine: anything that is not a number in either YAML version, and decimal numbers both read
    alike. Refused: every number spelling they read differently, or that only one reads as a
    number, and hexadecimal (a number of the inventory is written in decimal).
    """
    if not text or text[0] not in NUMBER_START or _AGREED.fullmatch(text) or NEVER_TYPED.search(text):
        return None
    old, new = _yaml11(text), _yaml12(text)
    if old is None and new is None:
        return None
    meant = new if new is not None else old
    assert meant is not None
    spelling = _decimal(meant)
    if old != new:
        why = f"YAML 1.1 reads {text} as {_reading(old)}, YAML 1.2 as {_reading(new)}"
    elif "x" in text.lower():
        why = f"{text} is the number {spelling} in hexadecimal (numbers are written in decimal)"
    else:
        why = f"{text} is the number {spelling} with a leading zero (an octal number in YAML 1.1)"
    return f"{why}; write {spelling} for a number, or \"{text}\" in quotes if it is text"
