"""A small validator for the Mermaid flowchart subset imsdr writes (topology, runbooks).

No Mermaid renderer is available offline, so this checks what breaks rendering in practice:
the header, balanced ``subgraph``/``end``, node ids (plain identifiers, never the reserved
``end``), node shapes with matching brackets, label quoting (quoted labels without inner
``"``; unquoted labels without brackets, pipes, quotes or ``;``), edge operators and edge
labels, ``&`` node lists, ``classDef``/``class``/``style``/``linkStyle``/``direction`` lines,
and that ``class`` names a defined ``classDef``. ``require_declared=True`` also insists that
every node used in an edge was declared with a label somewhere (catches id typos).

Use ``mermaid_errors(text)`` (a list, empty when valid), ``check_mermaid(text)`` (raises
ValueError) and ``mermaid_blocks(markdown)`` to pull the fenced ``mermaid`` blocks out of a
Markdown document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADER = re.compile(r"(flowchart|graph)(\s+(TB|TD|BT|RL|LR))?\s*;?")
_ID = re.compile(r"[A-Za-z0-9_]+")
_RESERVED = {"end", "subgraph", "graph", "flowchart", "classdef", "class", "style", "linkstyle", "click",
             "direction", "default"}
# Openers longest first; each with the closers that end it.
_SHAPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("(((", (")))",)), ("((", ("))",)), ("([", ("])",)), ("[[", ("]]",)), ("[(", (")]",)),
    ("[/", ("/]", "\\]")), ("[\\", ("\\]", "/]")), ("{{", ("}}",)), ("(", (")",)), ("[", ("]",)),
    ("{", ("}",)), (">", ("]",)),
)
_LINK = re.compile(r"(?:<|o|x)?(?:-{2,}|={2,}|-\.+-|~{3,})(?:>|o|x)?")
_INLINE_LABEL_LINK = re.compile(
    r"(?P<start><?(?:--|==|-\.))\s+(?P<text>[^|\"]+?|\"[^\"]*\")\s+(?P<end>-{2,}>|-{3,}|\.-+>|\.-+|={2,}>|={3,})"
)
_UNQUOTED_BAD = set('[](){}|"<>;')
_ENTITY = re.compile(r"#(?:[A-Za-z]+|[0-9]+);")


@dataclass(frozen=True, slots=True)
class MermaidError:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class _Statement:
    """Parses one statement line: node (& node)* (link node (& node)*)*."""

    def __init__(self, text: str, line: int, errors: list[MermaidError]) -> None:
        self.text = text
        self.pos = 0
        self.line = line
        self.errors = errors
        self.declared: list[str] = []
        self.used: list[str] = []

    def error(self, message: str) -> None:
        self.errors.append(MermaidError(self.line, message))

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def parse(self) -> None:
        if not self.nodes():
            return
        while True:
            self.skip()
            if self.pos >= len(self.text) or self.text[self.pos] == ";":
                rest = self.text[self.pos + 1:].strip() if self.pos < len(self.text) else ""
                if rest:
                    self.error(f"unexpected text after ';': {rest!r}")
                return
            if not self.link():
                return
            self.skip()
            if not self.nodes():
                return

    def nodes(self) -> bool:
        while True:
            self.skip()
            if not self.node():
                return False
            self.skip()
            if self.text.startswith("&", self.pos):
                self.pos += 1
                continue
            return True

    def node(self) -> bool:
        m = _ID.match(self.text, self.pos)
        if not m:
            near = self.text[self.pos:self.pos + 20]
            self.error(f"expected a node id at column {self.pos + 1}, found {near!r}" if near else
                       "expected a node id at the end of the line")
            return False
        ident = m.group(0)
        if ident.lower() in _RESERVED:
            self.error(f"node id {ident!r} is a reserved word (it breaks the flowchart parser)")
        self.pos = m.end()
        for opener, closers in _SHAPES:
            if self.text.startswith(opener, self.pos):
                self.pos += len(opener)
                if not self.label(closers, f"node {ident}"):
                    return False
                self.declared.append(ident)
                break
        self.used.append(ident)
        return True

    def label(self, closers: tuple[str, ...], what: str) -> bool:
        text = self.text
        if text.startswith('"', self.pos):
            end = text.find('"', self.pos + 1)
            if end < 0:
                self.error(f"{what}: unterminated quoted label")
                return False
            self.check_text(text[self.pos + 1:end], what, quoted=True)
            self.pos = end + 1
            closer = next((c for c in closers if text.startswith(c, self.pos)), None)
            if closer is None:
                self.error(f"{what}: quoted label must be followed by {' or '.join(closers)} "
                           f"(a '\"' inside a label must be written #quot;)")
                return False
            self.pos += len(closer)
            return True
        ends = [(text.find(c, self.pos), c) for c in closers]
        found = [(i, c) for i, c in ends if i >= 0]
        if not found:
            self.error(f"{what}: missing closing {' or '.join(closers)}")
            return False
        i, closer = min(found)
        self.check_text(text[self.pos:i], what, quoted=False)
        self.pos = i + len(closer)
        return True

    def check_text(self, value: str, what: str, *, quoted: bool) -> None:
        if not value.strip():
            self.error(f"{what}: empty label")
        if not quoted:
            bad = sorted(set(value) & _UNQUOTED_BAD)
            if bad:
                self.error(f"{what}: unquoted label {value!r} contains {''.join(bad)!r}; quote the label")
        stripped = _ENTITY.sub("", value)
        if "#" in stripped and not quoted:
            self.error(f"{what}: '#' in a label starts an entity code; write #35; or quote the label")

    def link(self) -> bool:
        m = _INLINE_LABEL_LINK.match(self.text, self.pos)
        if m:
            value = m.group("text")
            if value.startswith('"'):
                self.check_text(value[1:-1], "edge label", quoted=True)
            else:
                self.check_text(value, "edge label", quoted=False)
            self.pos = m.end()
            return True
        m = _LINK.match(self.text, self.pos)
        if not m:
            near = self.text[self.pos:self.pos + 20]
            self.error(f"expected an edge operator (e.g. -->, ---, -.->, ==>) at column {self.pos + 1}, "
                       f"found {near!r}")
            return False
        self.pos = m.end()
        if self.text.startswith("|", self.pos):
            end = self.text.find("|", self.pos + 1)
            if end < 0:
                self.error("edge label: missing closing '|'")
                return False
            value = self.text[self.pos + 1:end]
            if value.startswith('"') and value.endswith('"') and len(value) >= 2:
                if '"' in value[1:-1]:
                    self.error("edge label: '\"' inside a quoted label")
                self.check_text(value[1:-1], "edge label", quoted=True)
            else:
                if '"' in value:
                    self.error(f"edge label {value!r}: unbalanced '\"'")
                stripped = _ENTITY.sub("", value)
                if not value.strip():
                    self.error("edge label: empty label between pipes")
                elif set(stripped) & set("[]{}();"):
                    self.error(f"edge label {value!r} contains brackets or ';'; quote it")
            self.pos = end + 1
        return True


def mermaid_errors(text: str, *, require_declared: bool = False) -> list[MermaidError]:
    """Every syntax problem found in a Mermaid flowchart (empty list: valid)."""
    errors: list[MermaidError] = []
    stack: list[tuple[str, int]] = []
    subgraphs: dict[str, int] = {}
    declared: dict[str, int] = {}
    used: list[tuple[str, int]] = []
    class_defs: set[str] = set()
    class_uses: list[tuple[str, int]] = []
    header_seen = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("%%"):
            continue
        if not header_seen:
            if not _HEADER.fullmatch(line):
                errors.append(MermaidError(
                    number, f"expected 'flowchart LR' (or TB/TD/BT/RL) first, found {line!r}"))
            header_seen = True
            continue
        word = line.split(None, 1)[0]
        rest = line[len(word):].strip()
        if word == "subgraph":
            m = _ID.match(rest)
            if rest.startswith('"'):
                if rest.count('"') != 2 or not rest.endswith('"'):
                    errors.append(MermaidError(number, "subgraph title must be one quoted string"))
                stack.append((rest, number))
                continue
            if not m:
                errors.append(MermaidError(number, "subgraph needs an id"))
                stack.append(("?", number))
                continue
            ident = m.group(0)
            if ident.lower() in _RESERVED:
                errors.append(MermaidError(number, f"subgraph id {ident!r} is a reserved word"))
            if ident in subgraphs:
                errors.append(MermaidError(
                    number, f"subgraph {ident!r} already defined at line {subgraphs[ident]}"))
            subgraphs.setdefault(ident, number)
            tail = rest[m.end():].strip()
            if tail:
                st = _Statement(tail, number, errors)
                st.pos = 1
                if tail.startswith("[") and st.label(("]",), f"subgraph {ident}"):
                    if tail[st.pos:].strip():
                        errors.append(MermaidError(
                            number, f"unexpected text after subgraph title: {tail[st.pos:]!r}"))
                elif not tail.startswith("["):
                    errors.append(MermaidError(number, f"subgraph {ident}: title must be written [\"...\"]"))
            stack.append((ident, number))
        elif line == "end" or line == "end;":
            if not stack:
                errors.append(MermaidError(number, "'end' without an open subgraph"))
            else:
                stack.pop()
        elif word == "direction":
            if rest not in ("TB", "TD", "BT", "RL", "LR"):
                errors.append(MermaidError(number, f"direction must be TB, TD, BT, RL or LR, not {rest!r}"))
        elif word == "classDef":
            parts = rest.split(None, 1)
            if len(parts) != 2 or not _ID.fullmatch(parts[0]):
                errors.append(MermaidError(
                    number, "classDef needs a name and styles (classDef name fill:#fff)"))
            else:
                class_defs.add(parts[0])
        elif word == "class":
            parts = rest.split()
            if len(parts) != 2 or not all(_ID.fullmatch(x) for x in parts[0].split(",")):
                errors.append(MermaidError(number, "class needs node ids (comma separated) and a class name"))
            else:
                class_uses.append((parts[1].rstrip(";"), number))
                used.extend((x, number) for x in parts[0].split(","))
        elif word in ("style", "linkStyle", "click"):
            if not rest:
                errors.append(MermaidError(number, f"{word} needs arguments"))
        else:
            st = _Statement(line, number, errors)
            st.parse()
            for ident in st.declared:
                declared.setdefault(ident, number)
            used.extend((ident, number) for ident in st.used)
    if not header_seen:
        errors.append(MermaidError(1, "empty diagram: expected 'flowchart LR'"))
    for ident, number in stack:
        errors.append(MermaidError(number, f"subgraph {ident} is never closed with 'end'"))
    for ident, number in declared.items():
        if ident in subgraphs:
            errors.append(MermaidError(number, f"{ident!r} is both a subgraph and a node"))
    for name, number in class_uses:
        if name not in class_defs:
            errors.append(MermaidError(number, f"class {name!r} has no classDef"))
    if require_declared:
        for ident, number in used:
            if ident not in declared and ident not in subgraphs:
                errors.append(MermaidError(number, f"node {ident!r} is used but never declared with a label"))
    return sorted(errors, key=lambda e: e.line)


# What GitHub's (and mermaid.js's default) renderer accepts: beyond these a diagram is not drawn
# ("Maximum text size in diagram exceeded" / "Too many edges").
MAX_EDGES = 500
MAX_TEXT_SIZE = 50_000
_QUOTED = re.compile(r'"[^"\n]*"|\|[^|\n]*\|')
_LINK = re.compile(r"<?(?:-\.+-?>|-{2,}[>ox]?|={2,}[>ox]?|~{3})")


def count_edges(text: str) -> int:
    """Links in a flowchart (``a --> b --> c`` is two), labels and quoted text not counted."""
    return sum(len(_LINK.findall(_QUOTED.sub('""', line))) for line in text.splitlines()
               if line.strip() and not line.strip().startswith("%%"))


def mermaid_limit_problems(text: str) -> list[str]:
    """Why a renderer with mermaid.js's default limits would refuse the diagram (empty: fine)."""
    problems = []
    if len(text) > MAX_TEXT_SIZE:
        problems.append(f"{len(text):,} characters, above Mermaid's limit of {MAX_TEXT_SIZE:,}")
    edges = count_edges(text)
    if edges > MAX_EDGES:
        problems.append(f"{edges:,} edges, above Mermaid's limit of {MAX_EDGES}")
    return problems


def check_mermaid(text: str, *, require_declared: bool = False) -> None:
    """Raise ValueError listing every problem, if any."""
    errors = mermaid_errors(text, require_declared=require_declared)
    if errors:
        raise ValueError("invalid Mermaid flowchart:\n" + "\n".join(str(e) for e in errors))


def mermaid_blocks(markdown: str) -> list[tuple[int, str]]:
    """The fenced ```mermaid blocks of a Markdown text, as (line of the fence, body)."""
    blocks: list[tuple[int, str]] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("```") and stripped[3:].strip() == "mermaid":
            start = i + 1
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            blocks.append((start, "\n".join(body) + "\n"))
        i += 1
    return blocks
