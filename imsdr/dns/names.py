"""DNS names as imsdr handles them: lower-case, absolute, written without the trailing dot.

Also ENUM (RFC 6116) digit reversal and the canonical right-to-left sort order used to keep
related names together in zone files (``_sip._udp.pcscf.X`` sorts right after ``pcscf.X``).
"""

from __future__ import annotations

import re

# Always fullmatch: with match() and '$', "sbc\n" would pass as a label.
_HOST_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_SERVICE_LABEL = re.compile(r"_[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_DIGITS = re.compile(r"[0-9]+")


def label_problem(label: str) -> str | None:
    """Why ``label`` cannot appear in a name imsdr writes (None when it can)."""
    if label == "*" or _HOST_LABEL.fullmatch(label) or _SERVICE_LABEL.fullmatch(label):
        return None
    if not label:
        return "empty label"
    if len(label) > 63:
        return f"label {label[:20]!r}... is longer than 63 characters"
    return (
        f"label {label!r} is not a host label (lowercase letters, digits and '-'), "
        "a service label ('_sip') or '*'"
    )


def name_problems(name: str) -> list[str]:
    """Every reason ``name`` (absolute, without trailing dot) is not a name imsdr may write."""
    if len(name) <= 253 and _GOOD_NAME.fullmatch(name):  # (one match; the label walk words the reasons)
        return []
    return list(_name_problems(name))


# a name every label of which passes label_problem, '*' only leftmost: what _name_problems accepts
_GOOD_NAME = re.compile(rf"(?:\*|{_HOST_LABEL.pattern}|{_SERVICE_LABEL.pattern})"
                        rf"(?:\.(?:{_HOST_LABEL.pattern}|{_SERVICE_LABEL.pattern}))*")


def _name_problems(name: str) -> tuple[str, ...]:
    if name != name.lower():
        return (f"name {name!r} must be lower-case",)
    if name.endswith("."):
        return (f"name {name!r} must be written without the trailing dot",)
    if not name:
        return ("empty name",)
    if len(name) > 253:
        return (f"name {name[:40]!r}... is longer than 253 characters",)
    problems = []
    labels = name.split(".")
    for i, label in enumerate(labels):
        why = label_problem(label)
        if why:
            problems.append(f"name {name!r}: {why}")
        elif label == "*" and i != 0:
            problems.append(f"name {name!r}: '*' is only allowed as the leftmost label")
    return tuple(problems)


def is_subdomain(name: str, origin: str) -> bool:
    """True when ``name`` is ``origin`` or below it."""
    return name == origin or name.endswith("." + origin)


def relative(name: str, origin: str) -> str:
    """``name`` written relative to ``origin`` ('@' for the apex); absolute with a dot otherwise."""
    if name == origin:
        return "@"
    if name.endswith("." + origin):
        return name[: -len(origin) - 1]
    return name + "."


def sort_key(name: str) -> tuple[str, ...]:
    """Right-to-left label order: a parent sorts before its children, siblings alphabetically."""
    return tuple(reversed(name.split(".")))


def reverse_digits(digits: str) -> str:
    """'8610' -> '0.1.6.8' (each digit one label, least significant first)."""
    if not _DIGITS.fullmatch(digits):
        raise ValueError(f"not a digit string: {digits!r}")
    return ".".join(reversed(digits))


def enum_name(number: str, suffix: str = "e164.arpa") -> str:
    """RFC 6116: the ENUM owner name of an E.164 number ('+861055500123' or digits)."""
    digits = number.lstrip("+")
    return f"{reverse_digits(digits)}.{suffix}"


def enum_digits(name: str, suffix: str = "e164.arpa") -> str | None:
    """The E.164 digits an ENUM name stands for, or None when ``name`` is not a digits-only ENUM name."""
    if not name.endswith("." + suffix):
        return None
    labels = name[: -len(suffix) - 1].split(".")
    if not all(len(label) == 1 and label in "0123456789" for label in labels):
        return None
    return "".join(reversed(labels))
