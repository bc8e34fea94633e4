"""The named.conf reader of `imsdr import bind`: its one-regex tokenizer against a character-by-
character reference, and servers configured alike read once."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from imsdr.importers.errors import ImportProblems
from imsdr.importers.namedconf import _tokens, read_named_conf, read_named_confs


def _reference_tokens(text: str, file: str, problems: ImportProblems) -> list[tuple[str, bool, int, int]]:
    """The tokenizer as first written (one character at a time), lines inside strings counted."""
    out: list[tuple[str, bool, int, int]] = []
    i, line, line_start, n = 0, 1, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
            line_start = i
        elif ch.isspace():
            i += 1
        elif ch == "#" or text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                problems.add(file, line, i - line_start + 1, "unclosed /* comment")
                return out
            line += text.count("\n", i, end)
            if "\n" in text[i:end]:
                line_start = text.rfind("\n", i, end) + 1
            i = end + 2
        elif ch == '"':
            end = i + 1
            while end < n and text[end] != '"':
                if text[end] == "\n":
                    break
                end += 2 if text[end] == "\\" else 1
            if end >= n or text[end] != '"':
                problems.add(file, line, i - line_start + 1, "unclosed string")
                return out
            out.append((text[i + 1:end], True, line, i - line_start + 1))
            if "\n" in text[i:end]:  # an escaped newline
                line += text.count("\n", i, end)
                line_start = text.rfind("\n", i, end) + 1
            i = end + 1
        elif ch in "{};":
            out.append((ch, False, line, i - line_start + 1))
            i += 1
        else:
            end = i
            while end < n and not text[end].isspace() and text[end] not in '{};"#':
                if text.startswith("//", end) or text.startswith("/*", end):
                    break
                end += 1
            out.append((text[i:end], False, line, i - line_start + 1))
            i = end
    return out


_PIECES = st.sampled_from([*'{};"/*#\\\n\t\r\x0b abc.-019', "\u00a0", "\u2028", "\x1c", "\x85", "\u3000",
                           "zone", "view", "//", "/*", "*/", "a" * 40, " " * 40,  # long runs: no backtracking
                           '"x y"', "acl", "include"])


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=60).map("".join))
def test_tokens_are_the_character_by_character_reference(text: str) -> None:
    fast, slow = ImportProblems(), ImportProblems()
    tokens = [(t.text, t.quoted, t.line, t.column) for t in _tokens(text, "f.conf", fast)]
    assert tokens == _reference_tokens(text, "f.conf", slow)
    assert [str(p) for p in fast.problems] == [str(p) for p in slow.problems]


CONF = """// named.conf fragment for {server}
acl "users-a" {{ 198.51.100.0/24; }};
/* a block comment
// that a line comment inside does not end */
view "users-a" {{
    match-clients {{ "users-a"; }};
    zone "ims.example.net" {{
        type {kind};
        file "zones/users-a/ims.example.net.zone";
    }};
}};
"""


def test_servers_configured_alike_are_read_once_each_with_its_own_locations(tmp_path: Path) -> None:
    paths = []
    for server, kind in (("dns-1", "primary"), ("dns-2", "primary"), ("dns-3", "secondary")):
        path = tmp_path / f"{server}.conf"
        path.write_text(CONF.format(server=server, kind=kind))
        paths.append(path)
    problems = ImportProblems()
    confs = read_named_confs(paths, problems)
    assert not problems.problems
    for path, conf in zip(paths, confs, strict=True):
        alone = read_named_conf(path, ImportProblems())
        assert conf == alone  # locations name each file; the secondary's zone type is its own
    assert confs[1].views[0].zones[0].where == f"{paths[1]}:7"
    assert [c.views[0].zones[0].type for c in confs] == ["primary", "primary", "secondary"]
    assert confs[1].acls is confs[0].acls, "the second server's file was not parsed again"
    assert confs[2].acls is not confs[0].acls
