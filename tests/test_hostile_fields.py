"""Property: hostile text in ANY string field is refused with a location, or rendered safely.

Every string field of the inventory format is found from the pydantic models themselves (a field
added tomorrow is driven too), and hypothesis writes hostile text into one of them per example:
quotes, ';', braces, newlines, '%', '$', backslashes, NUL, U+0085/U+2028, Rich markup, HTML,
Mermaid directives, zone-file and named.conf syntax, alone or around the field's valid value.

Each example is validated in-process (cheap): either it is refused - InventoryError, which the
CLI turns into exit 2, with every problem located at file:line:col and one of them at the field -
or the accepted value is kept. The accepted values are then rendered together, a few inventories
each carrying many of them, by ``imsdr plan`` (DNS and runbooks), and checked by the programs
that consume them: ``named-checkzone`` (strict), ``named-checkconf -z``, a real ``named`` that
must load and answer, and a CommonMark parser in which each hostile text shows only as text.

``pytest -s tests/test_hostile_fields.py`` prints the example count; the test asserts at least 200.
"""

from __future__ import annotations

import copy
import datetime as dt
import re
import sys
import types
import typing
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from imsdr.errors import InventoryError
from imsdr.inventory.build import load_inventory_text
from imsdr.inventory.loader import format_path
from imsdr.inventory.schema import Inventory

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
from make_bad import BASE  # noqa: E402

EXAMPLES = 240
COMBINED_INVENTORIES = 3
FILE = "inventory.yaml"
KEY = object()  # a path part standing for "the key of this mapping"

# --- every string field, from the models -------------------------------------------------------------


def _unwrap(tp: Any) -> list[Any]:
    """The alternatives of an annotation, without Annotated and None."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [alt for arg in typing.get_args(tp) if arg is not type(None) for alt in _unwrap(arg)]
    return [tp]


def _is_text(tp: Any) -> bool:
    if tp is str or (isinstance(tp, type) and issubclass(tp, Enum) and issubclass(tp, str)):
        return True
    return typing.get_origin(tp) is typing.Literal and all(isinstance(a, str) for a in typing.get_args(tp))


def string_fields(model: type[BaseModel] = Inventory, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every string-valued field (list items as index 0, mapping keys as KEY)."""
    found: list[tuple[Any, ...]] = []

    def walk(tp: Any, where: tuple[Any, ...]) -> None:
        for alt in _unwrap(tp):
            origin = typing.get_origin(alt)
            if isinstance(alt, type) and issubclass(alt, BaseModel):
                found.extend(string_fields(alt, where))
            elif origin is list:
                walk(typing.get_args(alt)[0], (*where, 0))
            elif origin is dict:
                key, value = typing.get_args(alt)
                if any(_is_text(k) for k in _unwrap(key)):
                    found.append((*where, KEY))
                walk(value, (*where, "*"))
            elif _is_text(alt):
                found.append(where)

    for name, info in model.model_fields.items():
        walk(info.annotation, (*path, name))
    return sorted(set(found), key=str)


FIELDS = string_fields()


def test_fields_are_discovered_from_the_models() -> None:
    shown = {format_path(tuple(p if p is not KEY else "KEY" for p in f)) for f in FIELDS}
    for expected in ("network.name", "network.operator_domain", "sites[0].core_subnets[0]", "elements[0].fqdn",
                     "elements[0].addresses[0]", "waivers[0].reason", "rules.KEY", "enum_blocks[0].prefix",
                     "redundancy.pools[0].dns_name", "network.dns.sbc_name"):
        assert expected in shown, sorted(shown)
    assert len(FIELDS) >= 50


# --- putting a value into the base inventory -----------------------------------------------------------

# What the corpus base leaves out, so that EVERY string field has a valid value to vary around
# (test_every_field_has_a_valid_base_value fails when a new field has none: add it here).
COMPLETION = {
    "network": {"deployment": "production", "enum_suffix": "e164.arpa",
                "dns": {"publish": ["home_domains"], "transports": ["udp", "tcp"], "hostmaster": "hostmaster",
                        "sbc_dr_name": "sbc-dr", "default_view": "refuse",
                        "secondary_directory": "/var/cache/bind/imsdr",
                        "kept_records": [{"zone": "ims.example.net",
                                          "records": ['note.ims.example.net. 3600 IN TXT "kept"']}]},
                "restoration": {"pcscf_restoration": "hss", "scscf_restoration_response": "504-3gpp"},
                "availability_targets": {"registration": 99.999}},
    "local_networks": {0: {"resolvers": ["203.0.113.53"], "access": "both",
                           "packet_gateway": {"id": "pgw-a", "kind": "pgw", "apn": "ims"},
                           "emergency": {"pani": "IEEE-802.3; dsl-location=town-a", "phone_context": "+86-10",
                                         "psap_route": "+8610110"}}},
    "sites": {0: {"core_subnets": ["192.0.2.0/25"], "province": "province-a"}},
    "redundancy": {"enum_dns": {"load_sharing": "regional", "sync": "master-slave", "primaries": ["dns-a"]},
                   "pairs": {0: {"dns_name": "dns-pair", "mode": "active-active", "sync": "realtime",
                                 "promotion": "automatic"}},
                   "pools": {0: {"selection": "dns", "sync": "realtime"}}},
    "contacts": [{"role": "noc", "name": "Network Operations", "phone": "+86 10 5555 0100",
                  "services": ["sbc"], "escalate_to": "dr-manager", "escalate_after": 600},
                 {"role": "dr-manager", "name": "DR Manager", "phone": "+86 10 5555 0199"}],
    "recovery_targets": {"sbc": {"rto": 300}},
    "platforms": {"dns-bind": {"kind": "bind", "control": "rndc -s 192.0.2.53", "dig": "dig -p 53",
                               "directory": "/etc/imsdr/dns"}},
    "availability": {"types": {"sbc": {"mtbf_hours": 50000, "mttr_hours": 4}},
                     "platforms": {"dns-bind": {"mtbf_hours": 80000, "mttr_hours": 2}},
                     "groups": {"hss-pair": {"mtbf_hours": 60000, "mttr_hours": 4}},
                     "elements": {"sbc-a": {"mtbf_hours": 40000, "mttr_hours": 4}},
                     "shared_risks": {"power": {"rate_per_year": 0.1, "duration_hours": 4}}},
}
# DNS service areas: checked to have valid base values, but not rendered by the property (their
# national stub zones need a query source the test's named cannot bind)
AREAS = [{"id": "national", "level": "national", "nameservers": ["dns-b"], "zones": ["example.net"]},
         {"id": "province-a", "level": "province", "nameservers": ["dns-a"], "provinces": ["province-a"],
          "home_domains": ["ims.example.net"], "enum_blocks": ["block-a", "block-b"]}]
EXTRA_ELEMENTS = [
    {"id": "dns-a", "platform": "dns-bind"},
    {"id": "hss-a", "diameter": {"transport": "tcp", "security": "none"}},
    {"id": "sbc-a", "features": ["virtual_sbc"], "transports": ["udp", "tcp"],
     "access_addresses": ["203.0.113.11"], "core_addresses": ["192.0.2.11"],
     "options_probing": "active", "platform": "vendor"},
    {"id": "imgw-a", "type": "imgw", "site": "site-a", "vendor": "vendor-y", "addresses": ["192.0.2.41"],
     "controlled_by": ["mgcf-a"]},
]


def _merge(into: Any, extra: Any) -> None:
    for key, value in extra.items() if isinstance(extra, dict) else enumerate(extra):
        if isinstance(value, dict) and isinstance(into, (dict, list)) and key in (
                into if isinstance(into, dict) else range(len(into))):
            _merge(into[key], value)
        else:
            into[key] = value


def base_data() -> dict[str, Any]:
    data = yaml.safe_load(BASE)
    data["rules"] = {"GEO-001": "warning"}
    _merge(data, COMPLETION)
    by_id = {el["id"]: el for el in data["elements"]}
    for extra in EXTRA_ELEMENTS:
        if extra["id"] in by_id:
            by_id[extra["id"]].update(extra)
        else:
            data["elements"].append(dict(extra))
    return data


def placed(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """``path`` with the element it is tried on: the entry that already has the field, else the
    first SBC (the type with the most fields), so the value is tried where it belongs. A DNS area's
    field likewise goes to the area that has it (a national area's fields differ from a province's)."""
    if path[:1] == ("elements",) and len(path) > 2:
        return ("elements", _element_index(BASE_DATA["elements"], path[2]), *path[2:])
    areas = ("network", "dns", "areas")
    if path[:3] == areas and len(path) > 4:
        listed = AREAS
        index = next((i for i, area in enumerate(listed) if path[4] in area), path[3])
        return (*areas, index, *path[4:])
    return path


def _container(data: Any, path: tuple[Any, ...]) -> tuple[Any, Any]:
    """(parent, last part) for ``path`` in ``data``, creating what is missing on the way."""
    node = data
    for i, part in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(part, int):
            while len(node) <= part:
                node.append({} if isinstance(nxt, str) and nxt != "*" else [])
            if node[part] is None:
                node[part] = {}
            node = node[part]
        else:
            if part == "*":  # any key of a mapping; an empty one gets a key of its own
                part = next(iter(node), "hostile")
            if node.get(part) is None:
                node[part] = [] if isinstance(nxt, int) else {}
            node = node[part]
    return node, path[-1]


def _element_index(elements: list[dict[str, Any]], field: Any) -> int:
    for i, el in enumerate(elements):
        if field in el:
            return i
    return next(i for i, el in enumerate(elements) if el["type"] == "sbc")


def put(data: dict[str, Any], path: tuple[Any, ...], value: str) -> dict[str, Any]:
    data = copy.deepcopy(data)
    parent, last = _container(data, path)
    if last is KEY:
        first = next(iter(parent), None)
        setting = parent.pop(first) if first is not None else "warning"
        parent[value] = setting
    elif last == "*":
        parent[next(iter(parent))] = value
    elif isinstance(last, int):
        if parent:
            parent[0] = value
        else:
            parent.append(value)
    else:
        parent[last] = value
    return data


def current(data: dict[str, Any], path: tuple[Any, ...]) -> str:
    """The field's value in the base inventory (or a placeholder where it has none)."""
    try:
        parent, last = _container(copy.deepcopy(data), path)
        if last is KEY:
            return str(next(iter(parent)))
        if last == "*":
            return str(parent[next(iter(parent))])
        value = parent[last] if not isinstance(last, int) or parent else None
    except (KeyError, IndexError, StopIteration, TypeError):
        value = None
    return value if isinstance(value, str) else "x"


class _QuotedDumper(yaml.SafeDumper):
    """Every string double-quoted: the hostile text reaches the loader exactly (escapes for NUL,
    U+0085, U+2028), never re-read as a number, date or boolean."""


_QuotedDumper.add_representer(str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style='"'))


def to_yaml(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_QuotedDumper, sort_keys=False, allow_unicode=False, width=10_000)


# --- hostile text ------------------------------------------------------------------------------------

FRAGMENTS = [
    '"', "'", ";", "{", "}", "\n", "\r\n", "%", "%1", "%eth0", "$", "$ORIGIN evil.", "$INCLUDE /etc/passwd",
    "\\", "\\n", "\x00", "\x85", "\u2028", "\t", " ", "[/x]", "[bold]", "[link=http://example.invalid]",
    "<img src=x onerror=alert(1)>", "<!--", "&lt;", '%%{init: {"theme": "dark"}}%%', "%%", "`", "|", "*",
    "#", "_", "~~", "..", "/", "@", "(", ")", " IN A 192.0.2.1", '}; view "evil" { match-clients { any; }; };',
    ":bomb:", "{{ x }}", "-", "+", "=", "1. ", "\u202e", "\u200b", "é", "Ａ",
]
# What some fields accept (free text takes quotes, braces, '%', backslashes, brackets): drawn half
# of the time, so that many examples get through validation and the rendering half is exercised.
MILD = ['"', "'", "{", "}", "%", '%%{init: {"theme": "dark"}}%%', "%%{init: {'securityLevel': 'loose'}}%%",
        "\\", "[/x]", "[bold]", "[link=http://example.invalid]", "*", "#", "_", "|", "&", "&amp", "~~", "(",
        ")", " ", "-", ".", ":bomb:", "{{ x }}", "1. ", "@", "/", "![i](x)", "[a](http://example.invalid)", "==",
        "+", "!", "?", ",", "=", "^"]
hostile = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS) | st.text(st.characters(codec="utf-8"), min_size=1, max_size=3),
             min_size=1, max_size=4).map("".join),
    st.lists(st.sampled_from(MILD), min_size=1, max_size=5).map("".join),
)


@dataclass(frozen=True)
class Case:
    path: tuple[Any, ...]
    value: str


def accepts(path: tuple[Any, ...], value: str, base: dict[str, Any] | None = None) -> bool:
    try:
        load_inventory_text(to_yaml(put(BASE_DATA if base is None else base, path, value)), FILE)
    except InventoryError:
        return False
    return True


def free_text_fields() -> list[tuple[Any, ...]]:
    """The fields that take free text (names, reasons, vendors): found by trying, not listed."""
    return [path for path in map(placed, FIELDS) if accepts(path, "Free Text 1")]


@st.composite
def cases(draw: st.DrawFn, free_text: list[tuple[Any, ...]] = ()) -> Case:  # type: ignore[assignment]
    """A field (every field; free-text fields, which accept the most, twice as often) and a value."""
    path = placed(draw(st.sampled_from(FIELDS) | st.sampled_from(list(free_text) or FIELDS)))
    noise = draw(hostile)
    valid = current(BASE_DATA, path)
    how = draw(st.sampled_from(["alone", "before", "after", "inside"]))
    if how == "alone":
        value = noise
    elif how == "before":
        value = noise + valid
    elif how == "after":
        value = valid + noise
    else:
        cut = draw(st.integers(0, len(valid)))
        value = valid[:cut] + noise + valid[cut:]
    return Case(path, value)


BASE_DATA = base_data()


def field_prefix(path: tuple[Any, ...]) -> str:
    """The located path a refusal of ``path`` must point into: up to its last named field."""
    parts: list[Any] = []
    for part in path:
        if part is KEY or part == "*":
            break
        parts.append(part)
    while parts and isinstance(parts[-1], int):
        parts.pop()
    return format_path(tuple(parts))


def refused_properly(case: Case, error: InventoryError) -> None:
    assert error.problems, f"{case}: refused without a problem"
    for problem in error.problems:
        assert problem.location is not None and problem.location.file == FILE, f"{case}: {problem} is not located"
        assert problem.location.line >= 1 and problem.location.column >= 1, str(problem)
        assert "\n" not in str(problem), f"{case}: a problem spans lines: {problem!r}"
    prefix = field_prefix(case.path)
    assert any(p.path.startswith(prefix) or not prefix for p in error.problems), (
        f"{case}: no problem points at {prefix}: {[str(p) for p in error.problems]}")


def test_every_field_has_a_valid_base_value() -> None:
    """Hostile text is put before, after and inside a field's valid value: every field needs one in
    the base, or the property only ever sees refusals there (add a new field's value to COMPLETION)."""
    with_areas = copy.deepcopy(BASE_DATA)
    with_areas["network"]["dns"]["areas"] = copy.deepcopy(AREAS)
    without = [format_path(tuple("KEY" if p is KEY else p for p in placed(f))) for f in FIELDS
               if not accepts(placed(f), current(with_areas, placed(f)), with_areas)]
    assert without == []


# --- the property --------------------------------------------------------------------------------------

def test_hostile_text_in_every_string_field(tmp_path: Path) -> None:
    from rendered_checks import have_bind, runbook_problems

    from imsdr.output.markdown import markdown_text

    assert have_bind(), "BIND tools are not installed: run bash .ci/test, which installs bind9"
    accepted: dict[tuple[Any, ...], list[str]] = {}
    ran, refused = [0], [0]

    free_text = free_text_fields()
    assert len(free_text) >= 5, free_text

    @settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(cases(free_text))
    def validate_one(case: Case) -> None:
        ran[0] += 1
        text = to_yaml(put(BASE_DATA, case.path, case.value))
        try:
            inventory, _ = load_inventory_text(text, FILE)
        except InventoryError as error:
            refused_properly(case, error)
            refused[0] += 1
            return
        assert isinstance(inventory, Inventory)
        # every accepted value through the Markdown escaping every writer uses (cheap, so all of
        # them); a few inventories carrying them are rendered and checked for real below
        page = f"# {markdown_text(case.value)}\n\n| a | b |\n|---|---|\n| {markdown_text(case.value)} | x |\n"
        assert runbook_problems({"page": page}, [case.value]) == [], page
        values = accepted.setdefault(case.path, [])
        if case.value not in values:
            values.append(case.value)

    validate_one()
    kept = sum(len(v) for v in accepted.values())
    print(f"\nhostile fields: {ran[0]} examples over {len(FIELDS)} string fields; {refused[0]} refused "
          f"with a location; {ran[0] - refused[0]} accepted ({kept} distinct values in {len(accepted)} fields), "
          "rendered and checked")
    assert ran[0] >= 200, f"only {ran[0]} examples ran"
    assert accepted, "no hostile value was accepted: the rendering half of the property never ran"
    render_and_check_accepted(accepted, tmp_path)


def combined_inventories(accepted: dict[tuple[Any, ...], list[str]]) -> list[tuple[dict[str, Any], list[str]]]:
    """A few inventories, each carrying one accepted value of every field that accepted some."""
    out = []
    for k in range(COMBINED_INVENTORIES):
        data, texts = BASE_DATA, []
        for path, values in sorted(accepted.items(), key=lambda item: str(item[0])):
            value = values[k % len(values)]
            trial = put(data, path, value)
            try:
                load_inventory_text(to_yaml(trial), FILE)
            except InventoryError:
                continue  # two values that are fine alone may clash (the same name twice, say)
            data = trial
            texts.append(value)
        out.append((data, texts))
    return out


def kept_texts(data: dict[str, Any]) -> set[str]:
    return {record for kept in data["network"].get("dns", {}).get("kept_records", []) for record in kept["records"]}


def render_and_check_accepted(accepted: dict[tuple[Any, ...], list[str]], tmp_path: Path) -> None:
    import named_harness
    from rendered_checks import named_checkconf, named_checkzone, runbook_problems
    from typer.testing import CliRunner

    from imsdr.cli.app import app

    for k, (data, texts) in enumerate(combined_inventories(accepted)):
        work = tmp_path / f"combined-{k}"
        work.mkdir()
        inventory = work / FILE
        inventory.write_text(to_yaml(data))
        out = work / "out"
        result = CliRunner().invoke(app, ["plan", str(inventory), "--out", str(out)])
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert result.exit_code in (0, 1), result.output[-3000:]
        pages = {str(p.relative_to(out)): p.read_text() for p in out.rglob("*.md") if "dns" not in p.parts}
        assert pages, "plan wrote no runbook"
        # a kept record is zone data, not shown by the runbook: it is written back unchanged into its
        # zone's file (checked there); every other accepted text shows in a page as itself
        kept = [text for text in texts if text in kept_texts(data)]
        assert runbook_problems(pages, [text for text in texts if text not in kept]) == []
        dns_dir = out / "dns"
        zones = sorted(dns_dir.rglob("*.zone"))
        assert zones, "plan wrote no zone"
        zone_text = "\n".join(zone.read_text() for zone in zones)
        assert [text for text in kept if f"\n{text}\n" not in zone_text] == []
        for zone in zones:
            why = named_checkzone(zone.name[: -len(".zone")], zone)
            assert why is None, f"{zone}: {why}"
        configs = sorted(dns_dir.glob("named.conf*")) + sorted(dns_dir.glob("named/*.conf"))
        assert configs, "plan wrote no named configuration"
        for config in configs:
            include = str(config.relative_to(dns_dir))
            wrapper = work / f"check-{config.name}"
            wrapper.write_text(named_harness.wrapper_conf(dns_dir.resolve(), work, named_harness.free_port(), include))
            why = named_checkconf(wrapper)
            assert why is None, f"{config}: {why}"
            text = config.read_text()
            state = re.search(r'new-zones-directory "([^"]+)";', text)  # a secondary's catalog state
            if state is not None and not Path(state.group(1)).is_dir():
                # named refuses to start without it (the operator makes secondary_directory, see
                # docs/dns.md); checkconf read the path as rendered: run from a copy using a fresh one
                own = work / "secondary-state"
                own.mkdir(exist_ok=True)
                include = f"named/started-{config.name}"
                (dns_dir / include).write_text(text.replace(f'"{state.group(1)}"', f'"{own}"'))
            server = named_harness.start_named(dns_dir, include=include, probe=("ims.example.net", "SOA"))
            try:  # a primary's view answers (asked with its key), and nothing failed to load (a
                # secondary has no primary to transfer from here: it only has to load)
                view_key = next(k for k in named_harness.key_names(config) if k != "imsdr-view-keys")
                if "type secondary" not in config.read_text():
                    assert server.answer_as(view_key, "ims.example.net", "SOA"), "zones loaded but no answer"
                log = server.log()
            finally:
                server.stop()
            assert "not loaded due to errors" not in log and "loading configuration: failure" not in log, log[-3000:]


def test_yaml_carries_hostile_text_exactly() -> None:
    """The dump/load round trip the property relies on: what hypothesis drew is what imsdr reads."""
    from imsdr.inventory.loader import load_yaml_text

    value = "".join(f for f in FRAGMENTS if f != "\x00") + "\x00"
    text = to_yaml(put(BASE_DATA, ("network", "name"), value))
    assert load_yaml_text(text, FILE).data["network"]["name"] == value


@pytest.mark.parametrize("when", [dt.date(2030, 1, 1)])
def test_base_inventory_passes_as_is(when: dt.date) -> None:
    data = base_data()
    assert data["waivers"][0]["expires"] == when
    load_inventory_text(to_yaml(data), FILE)
