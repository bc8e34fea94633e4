"""The line reader of `imsdr import bind` gives exactly the rrsets dnspython gives, or gives up.

Home zone files in the form `imsdr render dns` writes are read line by line (a distinct line
once per import); everything else goes to dnspython. These tests hold the two readers to the same
answer: on zones imsdr rendered, on generated zone content in that form, and on that content
mutated by hostile edits (where the line reader must either agree with dnspython or give up).
"""

from __future__ import annotations

import ipaddress
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imsdr.importers.errors import ImportProblems
from imsdr.importers.zonedata import (
    RRset,
    _dnspython_rrsets,
    _grouped_rrsets,
    _line_rrsets,
    imsdr_form_rrsets,
    load_home_zone,
)

ROOT = Path(__file__).resolve().parent.parent
ORIGIN = "ims.example.net"


def _by_dnspython(text: str, origin: str = ORIGIN) -> tuple[list[RRset] | None, ImportProblems]:
    problems = ImportProblems()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "db.zone"
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        try:
            return _dnspython_rrsets(path.read_bytes(), path, origin, problems), problems
        except OSError as exc:  # an edit wrote $INCLUDE of a file that is not there
            problems.add(str(path), 1, 1, str(exc))
            return None, problems


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rendered")
    national = out / "national.yaml"
    national.write_text(_imsdr("example", "national", "--provinces", "2", "--enum-numbers", "100"))
    for inventory in (ROOT / "inventories" / "lab.yaml", ROOT / "inventories" / "province.yaml", national):
        _imsdr("render", "dns", inventory, "--out", out / inventory.stem)
    return out


def _imsdr(*args: str | Path) -> str:
    result = subprocess.run([sys.executable, "-m", "imsdr", *map(str, args)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _home_zones(rendered: Path) -> list[tuple[Path, str]]:
    zones = [(p, p.name.removesuffix(".zone")) for p in sorted(rendered.glob("*/zones/*/*.zone"))
             if p.parent.name != "enum"]
    assert len(zones) > 40 and {p.parent.name.split("-")[0] for p, _ in zones} >= {"users", "core"}
    return zones


def test_every_home_zone_imsdr_renders_takes_the_line_reader_and_reads_as_dnspython_does(rendered: Path) -> None:
    memo: dict[str, object] = {}
    zones = _home_zones(rendered)
    for i, (path, origin) in enumerate(zones):
        fast = imsdr_form_rrsets(path.read_bytes(), origin, memo)
        assert fast is not None, f"{path} fell back to dnspython"
        if i % 3 and "national" in path.parts:
            continue  # dnspython takes 0.1 s a zone: a third of the national's per-view copies
        slow, problems = _by_dnspython(path.read_text(), origin)
        assert not problems.problems
        assert fast == slow, path
        assert imsdr_form_rrsets(path.read_bytes(), origin, {}) == fast  # the memo changes nothing


def test_every_home_zone_imsdr_renders_takes_the_grouped_reader_and_reads_as_the_line_reader_does(
        rendered: Path) -> None:
    memo: dict[object, object] = {}
    for path, origin in _home_zones(rendered):
        text = path.read_text()
        grouped = _grouped_rrsets(text, origin, memo)
        assert grouped is not None, f"{path} fell back to the line reader"
        assert grouped == _line_rrsets(text, origin, {}), path


# --- generated zone content in the form imsdr writes -------------------------------------------

_labels = st.sampled_from(["sbc", "dns-01", "pcscf-a-1", "_sip._udp", "_sip._tcp.sbc", "_sips._tcp", "x", "0",
                           "a.b.c", "in", "ns", "60"])
_targets = st.sampled_from(["dns-01.ims.example.net.", "sbc-01.ims.other.example.", "x.", "_sip._udp.ims.example.net.",
                            "a-b_c.d0."])
_u16 = st.integers(0, 65535)
_ipv4 = st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t)))
_ipv6 = st.lists(st.integers(0, 0xFFFF), min_size=8, max_size=8).flatmap(
    lambda words: st.sampled_from([
        ":".join(f"{w:x}" for w in words), ":".join(f"{w:04X}" for w in words),
        ":".join(f"{w:x}" for w in words[:2]) + "::" + ":".join(f"{w:x}" for w in words[5:]),
        "2001:db8::" + f"{words[0]:x}", "::ffff:192.0.2.1", "::1"]))
_strings = st.text(st.sampled_from(list("sSuUaP+:!^$.*ab0 ;()-")), max_size=12)
_rdata = st.one_of(
    st.tuples(st.just("A"), _ipv4),
    st.tuples(st.just("AAAA"), _ipv6),
    st.tuples(st.just("NS"), _targets),
    st.tuples(st.just("SRV"), st.tuples(_u16, _u16, _u16, _targets).map(lambda t: " ".join(map(str, t)))),
    st.tuples(st.just("NAPTR"), st.tuples(_u16, _u16, _strings, _strings, _strings, _targets).map(
        lambda t: f'{t[0]} {t[1]} "{t[2]}" "{t[3]}" "{t[4]}" {t[5]}')),
)
_comments = st.text(st.characters(codec="ascii", exclude_characters="\n\r"), max_size=20)
_ttls = st.sampled_from([0, 60, 300, 3600, 86400, 2**31 - 1])


@st.composite
def imsdr_form_zones(draw: st.DrawFn) -> str:
    """A zone as imsdr writes it: header comments, $ORIGIN and $TTL, then one rrset after another
    (SOA and NS at the apex first), owners relative, padded into columns, the odd comment."""
    rrsets: dict[tuple[str, str], tuple[int, list[str]]] = {}
    soa_ttl = draw(_ttls)
    rrsets[("@", "SOA")] = (soa_ttl, [f"dns-01.{ORIGIN}. hostmaster.example.net. {draw(st.integers(1, 2**32 - 1))} "
                                      f"{draw(_ttls)} {draw(_ttls)} {draw(_ttls)} {draw(_ttls)}"])
    rrsets[("@", "NS")] = (draw(_ttls), draw(st.lists(_targets, min_size=1, max_size=3, unique=True)))
    same = {("@", "NS", target) for target in rrsets[("@", "NS")][1]}  # what dnspython takes for one record
    for owner, (kind, text) in draw(st.lists(st.tuples(st.one_of(st.just("@"), _labels), _rdata), max_size=25)):
        _ttl, texts = rrsets.setdefault((owner, kind), (draw(_ttls), []))
        if (owner, kind, _identity(kind, text)) not in same:
            same.add((owner, kind, _identity(kind, text)))
            texts.append(text)
    width = max(len(owner) for owner, _ in rrsets)
    lines = [f"; zone {ORIGIN}", "; written by imsdr render dns", f"$ORIGIN {ORIGIN}.", f"$TTL {draw(_ttls)}"]
    for (owner, kind), (ttl, texts) in rrsets.items():
        if draw(st.booleans()):
            lines.append("; " + draw(_comments))
        gap = draw(st.sampled_from([" ", "\t", "  "]))
        lines += [f"{owner:<{width}}{gap}{ttl:<6} IN {kind:<5} {text}" for text in texts]
    return "\n".join(lines) + "\n"


def _identity(kind: str, text: str) -> object:
    """A/AAAA spelled two ways are one record; two NAPTR that differ only in flags or regexp are
    two records the line reader does not tell apart (it gives such a zone to dnspython)."""
    if kind in ("A", "AAAA"):
        return ipaddress.ip_address(text)
    if kind == "NAPTR":
        parts = text.split('"')
        return (parts[0], parts[3], parts[-1])
    return text


def _same_as_dnspython(text: str) -> list[RRset] | None:
    fast = imsdr_form_rrsets(text.encode("utf-8", "surrogateescape"), ORIGIN, {})
    slow, problems = _by_dnspython(text)
    if fast is not None:
        assert not problems.problems, problems.problems
        assert fast == slow
    return fast


@settings(max_examples=150, deadline=None)
@given(imsdr_form_zones())
def test_generated_zones_in_imsdr_form_take_the_line_reader_and_read_as_dnspython_does(text: str) -> None:
    assert _same_as_dnspython(text) is not None


_EDITS = [" ", "\t", ";", '"', "(", ")", "\\", "$", "@", ".", "*", "A", "Z", "x", "0", "9", ":", "-", "_", "\n",
          "\r", "\x00", "\xe9", "IN ", "CNAME ", "$INCLUDE x", "$ORIGIN other.example.", "$TTL 1h",
          "$GENERATE 1-2 a A 1.2.3.4"]


@st.composite
def edited(draw: st.DrawFn, base: st.SearchStrategy[str]) -> str:
    lines = draw(base).split("\n")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["insert", "delete", "duplicate", "move", "upper"]))
        if action == "insert":
            at = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:at] + draw(st.sampled_from(_EDITS)) + lines[i][at:]
        elif action == "delete" and lines[i]:
            at = draw(st.integers(0, len(lines[i]) - 1))
            lines[i] = lines[i][:at] + lines[i][at + draw(st.integers(1, 8)):]
        elif action == "duplicate":
            lines.insert(draw(st.integers(0, len(lines))), lines[i])
        elif action == "move":
            lines.insert(draw(st.integers(0, len(lines))), lines.pop(i))
        else:
            lines[i] = lines[i].upper()
    return "\n".join(lines)


@settings(max_examples=200, deadline=None)
@given(edited(imsdr_form_zones()))
def test_edited_zones_are_read_as_dnspython_reads_them_or_left_to_it(text: str) -> None:
    _same_as_dnspython(text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_edited_rendered_zones_are_read_as_dnspython_reads_them_or_left_to_it(rendered: Path,
                                                                                data: st.DataObject) -> None:
    path, origin = data.draw(st.sampled_from(_home_zones(rendered)))
    text = data.draw(edited(st.just(path.read_text())))
    fast = imsdr_form_rrsets(text.encode("utf-8", "surrogateescape"), origin, {})
    slow, problems = _by_dnspython(text, origin)
    if fast is not None:
        assert not problems.problems and fast == slow


@settings(max_examples=300, deadline=None)
@given(st.one_of(imsdr_form_zones(), edited(imsdr_form_zones())))
def test_the_grouped_reader_reads_as_the_line_reader_does_or_leaves_it_to_it(text: str) -> None:
    """Groups of an owner's lines are parsed once per import; whatever they give, the line reader
    gives too (comments inside an owner's records, an owner in two places: the line reader's call)."""
    if not text.isascii() or "\r" in text:
        return  # imsdr_form_rrsets gives such a file to dnspython before either reader
    memo: dict[object, object] = {}
    grouped = _grouped_rrsets(text, ORIGIN, memo)
    if grouped is not None:
        assert grouped == _line_rrsets(text, ORIGIN, {})
        assert _grouped_rrsets(text, ORIGIN, memo) == grouped  # the memo changes nothing


def test_a_bad_line_in_a_rendered_zone_is_reported_at_its_line(rendered: Path, tmp_path: Path) -> None:
    path, origin = next((p, o) for p, o in _home_zones(rendered) if p.parent.name.startswith("users-"))
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if " IN A " in line)
    lines[at] = lines[at].replace(" IN A ", " IN A 192.0.2.999 ; ", 1)
    broken = tmp_path / "db.zone"
    broken.write_text("".join(lines))
    problems = ImportProblems()
    assert load_home_zone(broken, origin, problems, "named.conf:1", {}) is None
    [problem] = problems.problems
    assert (problem.location.file, problem.location.line) == (str(broken), at + 1)
    assert "does not parse" in problem.message
