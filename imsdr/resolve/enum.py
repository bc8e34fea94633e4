"""ENUM (RFC 6116) helpers: E.164 number → domain, and NAPTR regexp substitution (RFC 3402)."""

from __future__ import annotations

import re

_E164 = re.compile(r"\+[1-9][0-9]{0,14}")
_BACKREF = re.compile(r"\\(.)")


class EnumError(ValueError):
    """A number or NAPTR regexp that ENUM cannot use."""


def is_e164(text: str) -> bool:
    return bool(_E164.fullmatch(text.replace("-", "").replace(" ", "")))


def normalise_e164(text: str) -> str:
    number = text.replace("-", "").replace(" ", "")
    if not _E164.fullmatch(number):
        raise EnumError(f"invalid E.164 number {text!r}: '+' then 1-15 digits, not starting with 0")
    return number


def enum_domain(number: str, suffix: str = "e164.arpa") -> str:
    """``+8610555001234`` → ``4.3.2.1.0.0.5.5.5.0.1.6.8.e164.arpa.`` (absolute)."""
    digits = normalise_e164(number)[1:]
    suffix = suffix.rstrip(".")
    return ".".join(reversed(digits)) + "." + suffix + "."


def split_regexp(regexp: str) -> tuple[str, str, str]:
    """Split ``<delim>ERE<delim>repl<delim>flags`` into its three parts (RFC 3402 §3.2)."""
    if len(regexp) < 3:
        raise EnumError(f"NAPTR regexp {regexp!r} too short")
    delim = regexp[0]
    if delim.isdigit() or delim == "\\" or delim == "i":
        raise EnumError(f"NAPTR regexp {regexp!r}: invalid delimiter {delim!r}")
    parts: list[str] = []
    current: list[str] = []
    i = 1
    while i < len(regexp):
        ch = regexp[i]
        if ch == "\\" and i + 1 < len(regexp):
            if regexp[i + 1] == delim:
                current.append(delim)
            else:
                current.append(regexp[i : i + 2])
            i += 2
            continue
        if ch == delim and len(parts) < 2:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    if len(parts) != 2:
        raise EnumError(f"NAPTR regexp {regexp!r}: expected {delim}ERE{delim}replacement{delim}flags")
    flags = "".join(current)
    if flags not in ("", "i"):
        raise EnumError(f"NAPTR regexp {regexp!r}: unknown flags {flags!r} (only 'i' is defined)")
    return parts[0], parts[1], flags


def apply_regexp(regexp: str, aus: str) -> str | None:
    """Apply a NAPTR substitution expression to the application-unique string.

    Like ``sed s///`` (first match only): the matched part of ``aus`` is replaced by the
    replacement, in which ``\\1``..``\\9`` are the groups and ``\\\\`` a backslash. ``None`` when
    the expression does not match.
    """
    ere, repl, flags = split_regexp(regexp)
    try:
        pattern = re.compile(ere, re.IGNORECASE if flags == "i" else 0)
    except re.error as exc:
        raise EnumError(f"NAPTR regexp {regexp!r}: invalid expression: {exc}") from None
    match = pattern.search(aus)
    if match is None:
        return None

    def expand(m: re.Match[str]) -> str:
        ch = m.group(1)
        if ch.isdigit():
            index = int(ch)
            if index > (pattern.groups or 0):
                raise EnumError(f"NAPTR regexp {regexp!r}: back-reference \\{index} to a missing group")
            return match.group(index) or ""
        return ch

    return aus[: match.start()] + _BACKREF.sub(expand, repl) + aus[match.end() :]
