"""Text from the inventory (names, reasons, file names, messages) written into Markdown literally.

Every Markdown writer of imsdr - runbooks, the DNS README, check and capacity reports - goes
through these functions, and every Mermaid writer (runbook diagrams, ``imsdr graph``) through
``mermaid_text``, so a name can never become a link, an image, raw HTML, a heading, a table cell
boundary or a Mermaid directive: it shows as the text it is.
"""

from __future__ import annotations

import re
from typing import Any

from imsdr.diagnostics import one_line

# Characters CommonMark/GFM give a meaning anywhere in a line: emphasis, code, links and images,
# raw HTML and entities ('&'), table cells, strikethrough, math ('$' on GitHub), closing '#' of a
# heading. All are ASCII punctuation, so a backslash makes each literal (CommonMark 2.4). '%%' is
# broken up too, so no Mermaid directive ('%%{init: ...}%%') is ever written from a name.
_MD_SPECIAL = re.compile(r"[\\`*_\[\]<>|&~$#]")  # each gets a backslash before it
_DOUBLE_PERCENT = re.compile(r"%(?=%)")
# What GitHub's extended autolinks start from (GFM 6.9): 'www.', a scheme's '://' and an e-mail's
# '@'; a backslash before the '.', the ':' or the '@' leaves no trigger, and shows the same text.
_AUTOLINK = re.compile(r"(?i)(\bwww)(\.)|(?<=[a-z0-9])(:)(?=//)|@")
_MD_LINE_START = re.compile(r"[-+=]|[0-9]{1,9}(?=[.)](?:\s|$))")  # list items, setext underlines


def markdown_text(value: Any) -> str:
    """Free text (names, reasons, messages) as literal Markdown: every character Markdown could
    read as syntax is backslash-escaped, line breaks and other non-printable characters become
    spaces. Raw HTML ('<img ...>') and entities ('&lt;') show as the text they are."""
    text = "" if value is None else str(value)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = text.strip()
    if _MD_SPECIAL.search(text):  # (most names have nothing to escape: no substitution then)
        text = _MD_SPECIAL.sub(r"\\\g<0>", text)
    if "%%" in text:
        text = _DOUBLE_PERCENT.sub(r"%\\", text)
    # GitHub would make a link of it: its trigger is escaped. (The substring tests first: each
    # trigger holds one of them, and they cost far less than the pattern over a long line.)
    if ("@" in text or "://" in text or "www." in text.lower()) and _AUTOLINK.search(text):
        text = _AUTOLINK.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[0]}", text)
    start = _MD_LINE_START.match(text)
    if start:  # the value may open a line (a list item or heading when it starts with '-' or '1.')
        end = start.end()
        text = text[:end] + "\\" + text[end:] if text[:1].isdigit() else "\\" + text
    return text


def markdown_code(value: Any) -> str:
    """Text as an inline code span (a file name, a command): fenced with more backticks than it
    holds in a row, non-printable characters escaped, so it can never end the span early."""
    text = one_line("" if value is None else str(value))
    longest = current = 0
    for ch in text:
        current = current + 1 if ch == "`" else 0
        longest = max(longest, current)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# Mermaid turns '#name;' into '&name;' and '#35;' into '&#35;', shown as the character itself.
# In a quoted label: '"' ends it, '#' starts an entity, '%' may start a directive ('%%{init}%%'),
# '<' '>' '&' are HTML, '`' starts a Markdown string, '|' ends an edge label. Unquoted label text
# also ends at brackets and ';'.
_MERMAID_QUOTED = {"#": "#35;", '"': "#quot;", "%": "#37;", "<": "#lt;", ">": "#gt;", "&": "#amp;",
                   "`": "#96;", "|": "#124;"}
_MERMAID_UNQUOTED = {**_MERMAID_QUOTED, "[": "#91;", "]": "#93;", "{": "#123;", "}": "#125;", "(": "#40;",
                     ")": "#41;", ";": "#59;"}
_MERMAID_QUOTED_TABLE = str.maketrans(_MERMAID_QUOTED)
_MERMAID_UNQUOTED_TABLE = str.maketrans(_MERMAID_UNQUOTED)


def mermaid_text(value: Any, *, quoted: bool = True) -> str:
    """Free text as literal Mermaid label text (to be put between quotes unless ``quoted`` is
    False): syntax characters and non-printable ones (line breaks...) as entity codes."""
    text = str(value)
    if text.isprintable():  # (nearly every label: one translate, not a generator over its characters)
        return text.translate(_MERMAID_QUOTED_TABLE if quoted else _MERMAID_UNQUOTED_TABLE)
    entities = _MERMAID_QUOTED if quoted else _MERMAID_UNQUOTED
    return "".join(entities.get(ch, ch) if ch.isprintable() else f"#{ord(ch)};" for ch in text)
