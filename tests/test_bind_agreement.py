"""The named.conf reader agrees with BIND: for generated configurations (acls, options, views with
match lists, zones; then broken by a missing ';', a lost '}', a NUL byte, an empty statement, an
unknown statement, a definition repeated), `imsdr import bind` reads the configuration exactly when
`named-checkconf` accepts it — and a refusal names a line of the file. Never an empty reading of
a configuration BIND refuses. A NUL byte in a token is refused wherever it stands (BIND takes
some of them, depending on the token it cuts): there the promise is BIND refuses => imsdr refuses.

The grammar stays inside what imsdr reads (it refuses, as "not understood", the nested match
lists BIND also takes); everything in it is checked against the real named-checkconf.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from imsdr.importers.errors import ImportProblems
from imsdr.importers.namedconf import read_named_conf

ELEMENTS = ["any", "none", "localhost", "localnets", "10.0.0.0/8", "10/8", "172.16/12", "192.0.2.1", "10.0.0.1/8",
            "2001:db8::/32", "2001:db8::1/32", '"a"', "a", "!a", "! 10/8", '"nope"', "nope", "key k", '"any"',
            "300.0.0.0/8"]
ACL_ELEMENTS = [e for e in ELEMENTS if e not in ('"a"', "a", "!a")]


def _list(elements: list[str]) -> str:
    return "{ " + "".join(f"{e}; " for e in elements) + "}"


@st.composite
def configurations(draw: st.DrawFn) -> str:
    parts: list[str] = []
    if draw(st.booleans()):
        parts.append('options {\n    directory ".";\n    recursion no;\n};')
    for name in draw(st.lists(st.sampled_from(["a", "b"]), max_size=2)):
        parts.append(f"acl {name} {_list(draw(st.lists(st.sampled_from(ACL_ELEMENTS), min_size=1, max_size=3)))};")
    zone = 'zone "{name}" {{\n        type primary;\n        file "{name}.db";\n    }};'
    views = draw(st.lists(st.sampled_from(["v1", "v2", "v3"]), max_size=3))
    for view in views:
        body = []
        if draw(st.booleans()):
            body.append(f"match-clients {_list(draw(st.lists(st.sampled_from(ELEMENTS), min_size=1, max_size=3)))};")
        for zname in draw(st.lists(st.sampled_from(["ims.example.net", "example.org"]), max_size=2)):
            body.append(zone.format(name=zname))
        parts.append(f'view "{view}" {{\n    ' + "\n    ".join(body) + "\n};")
    if not views or draw(st.booleans()):
        for zname in draw(st.lists(st.sampled_from(["ims.example.net", "example.org"]), max_size=2, unique=True)):
            parts.append(zone.format(name=zname).replace("\n    ", "\n"))
    text = "\n".join(parts) + "\n"
    mutation = draw(st.sampled_from(["none", "none", "drop ;", "drop }", "nul", "empty statement", "unknown",
                                     "double ;"]))
    if mutation == "drop ;" and ";" in text:
        at = draw(st.sampled_from([i for i, ch in enumerate(text) if ch == ";"]))
        text = text[:at] + text[at + 1:]
    elif mutation == "drop }" and "}" in text:
        at = draw(st.sampled_from([i for i, ch in enumerate(text) if ch == "}"]))
        text = text[:at] + text[at + 1:]
    elif mutation == "nul":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + "\0" + text[at:]
    elif mutation == "empty statement":
        at = draw(st.sampled_from([i + 1 for i, ch in enumerate(text) if ch == "\n"]))
        text = text[:at] + ";\n" + text[at:]
    elif mutation == "unknown":
        text += "bogus-statement yes;\n"
    elif mutation == "double ;" and "};" in text:
        text = text.replace("};", "};;", 1)
    return text


def _nul_in_a_token(text: str) -> bool:
    return "\0" in text  # (the generated configurations have no comments)


def _bind_accepts(path: Path) -> tuple[bool, str]:
    run = subprocess.run(["named-checkconf", str(path)], capture_output=True, text=True, timeout=30)
    return run.returncode == 0, run.stdout + run.stderr


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configurations())
@example('options { directory "/tmp"; }\nview "v" { match-clients { any; }; };\n')  # missing ';' after '}'
@example('\0view "v" { match-clients { any; }; };\n')  # a NUL byte: was read as 0 views, exit 0
@example('view "v" { match-clients { "10.0.0.0/8"; }; };\n')  # a quoted element names an acl
@example('view "v" { match-clients { "nope"; }; };\n')
@example('view "v" { match-clients { 10.0.0.1/8; }; };\n')  # host bits under the mask
@example('acl a { 10/8; };\nview "v" { match-clients { a; }; };\n')  # a short prefix BIND takes
@example('acl a { "nope"; };\n')  # an unused acl's names are not resolved
@example('view "v" { match-clients { a; }; };\nacl a { "nope"; };\n')  # a used one's are, wherever it stands
@example('view "v" { match-clients { any; }; };\n\0\n')
def test_imsdr_reads_a_configuration_exactly_when_named_checkconf_accepts_it(text: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "named.conf"
        path.write_bytes(text.encode())
        bind, said = _bind_accepts(path)
        problems = ImportProblems()
        conf = read_named_conf(path, problems)
        shown = [str(p) for p in problems.problems]
        if _nul_in_a_token(text):
            # what BIND makes of the bytes after a NUL depends on the token it cuts (it takes
            # 'any\0;' and '"v\0"', refuses 'm\0atch-clients'): imsdr refuses every one, so
            # here the promise is one way — BIND refuses => imsdr refuses
            assert shown and "NUL byte" in shown[0], (text, shown)
        else:
            assert bind == (not shown), (text, said, shown)
        for problem in problems.problems:
            assert problem.location is not None and problem.location.file == str(path)
            assert 1 <= problem.location.line <= text.count("\n") + 1
        if not bind:
            assert shown, f"a configuration BIND refuses was read (as {len(conf.views)} views)"
