"""Text that reaches a terminal: control and escape sequences from data are shown escaped.

A file name, an id or a DNS answer may hold ESC, OSC (``ESC ]``), BEL or C1 controls: written as
they are, they retitle, clear or recolour the operator's terminal (or hide text). The command
line wraps stdout and stderr once (:func:`escaping`): every message and every line of text
output passes through :class:`EscapingStream`, which writes each control character as a Python
escape (``\\x1b``). Line feeds and tabs are kept; so are, when the stream is a terminal, the SGR
colour sequences imsdr's own tables write there (``ESC [ digits ; ... m``, nothing else) — the
only sequence a name can still carry to a terminal, and it can only colour text; to a pipe or a
log, every one is escaped. Rich's spinner moves the
cursor: it writes to the stream beneath (``raw``), with a label escaped by ``one_line``.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

# C0 controls but tab and line feed, DEL, C1 controls; an SGR sequence is matched first (kept on a terminal)
_CONTROL = re.compile(r"(\x1b\[[0-9;]{0,32}m)|[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # one class: a fast scan of large output


def escape_controls(text: str, *, keep_colours: bool = False) -> str:
    """``text`` with every control character but ``\\n`` and ``\\t`` escaped; with
    ``keep_colours``, SGR colour sequences are kept."""
    if text.isprintable() or not _ANY_CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: m[1] if m[1] and keep_colours else m[0].encode("unicode_escape").decode("ascii"),
                        text)


class EscapingStream:
    """A text stream that writes through :func:`escape_controls`; everything else is the stream's."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw
        try:
            self.colours = raw.isatty()  # only then do imsdr's tables write colours
        except (OSError, ValueError, AttributeError):
            self.colours = False

    def write(self, text: str) -> int:
        self.raw.write(escape_controls(text, keep_colours=self.colours))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def escaping(stream: TextIO) -> TextIO:
    """``stream`` wrapped once (a stream already wrapped is returned as it is)."""
    return stream if isinstance(stream, EscapingStream) else EscapingStream(stream)  # type: ignore[return-value]


def raw_stream(stream: TextIO) -> TextIO:
    """The stream beneath an :class:`EscapingStream` (for cursor control only), else ``stream``."""
    return stream.raw if isinstance(stream, EscapingStream) else stream
