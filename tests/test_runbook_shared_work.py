"""The runbook's shared work gives what the plain computation gives: the province split divided in
one pass, the verification queries' memo, the observers of a failure, the built-in environment's
dict reads and the escaping memo (the national plan is fast because of them; none may change a
page)."""

from __future__ import annotations

from typing import Any

import jinja2
import pytest

from imsdr.output.markdown import markdown_text, mermaid_text


@pytest.fixture(scope="module")
def small_national(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A national network of three provinces, analysed as the plan does."""
    from imsdr.example.national import NationalParams, write_yaml
    from imsdr.plan import analyse

    path = tmp_path_factory.mktemp("shared") / "national.yaml"
    with path.open("w") as fh:
        write_yaml(NationalParams(provinces=3, local_networks_per_province=3, enum_numbers=0), fh)
    return analyse(path)


def test_province_sections_hold_each_province_s_elements_and_groups(small_national: Any) -> None:
    from imsdr.runbook.context import TYPE_PAGES, build_context, province_sections
    from imsdr.runbook.split import _owners, provinces_of

    topo, analyses = small_national.topology, small_national.analyses
    context = build_context(topo, analyses)
    province_of = provinces_of(topo)
    owner = _owners(topo, province_of)
    provinces = sorted(set(province_of.values()))
    assert len(provinces) == 3
    divided = province_sections(topo, analyses, context["elements"], context["groups"], owner, provinces)
    for prov in provinces:
        for page in TYPE_PAGES:
            section = divided[prov][page.key]
            # what filtering the whole network for this province gives
            els = [e for e in context["types"][page.key]["elements"] if owner.get(e["id"]) == prov]
            groups = [g for g in context["groups"] if set(g["types"]) & set(page.types)
                      and any(owner.get(m) == prov for m in g["members"])]
            assert [e["id"] for e in section["elements"]] == [e["id"] for e in els]
            assert [g["id"] for g in section["groups"]] == [g["id"] for g in groups]
            assert section["failures"] == [f for f in context["types"][page.key]["failures"]
                                           if owner.get(f["element"]) == prov]
    assert any(divided[p]["pcscf"]["groups"] for p in provinces)


def test_province_capacity_rows_are_divided_by_their_subject(small_national: Any) -> None:
    from imsdr.runbook.context import build_context
    from imsdr.runbook.split import _capacity, _owners, _row_province, provinces_of

    topo = small_national.topology
    appendix = build_context(topo, small_national.analyses)["capacity_appendix"]
    owner = _owners(topo, provinces_of(topo))
    provinces = sorted(set(provinces_of(topo).values()))
    divided = _capacity(appendix, owner, provinces)
    assert appendix["available"]
    for prov in [*provinces, None]:
        for section, whole in zip(divided[prov]["sections"], appendix["sections"], strict=True):
            assert section["rows"] == [r for r in whole["rows"] if _row_province(r, owner) == prov]
    assert sum(len(s["rows"]) for p in provinces for s in divided[p]["sections"]) > 0


def test_every_verification_query_expects_what_the_plan_answers_in_its_view(small_national: Any) -> None:
    from imsdr.dns.zonefile import RdataTexts, rdata_texts

    plan = small_national.dns_plan
    checks = small_national.analyses.dns_checks
    seen_site_views = set()
    for items in checks.values():
        for check in items:
            rrset = plan.lookup_rrset(plan.view(check["view"]), check["qname"], check["rdtype"])
            assert rrset is not None, check["command"]
            head = f"{rrset.name}. {rrset.ttl} IN {rrset.rdtype} "
            assert check["expected"] == [head + t for t in rdata_texts(rrset.rdatas, RdataTexts())], check["command"]
            if check["view_kind"] == "site":
                seen_site_views.add(check["view"])
    assert plan.areas and len(seen_site_views) > 1  # the delegated answers, asked of several site views


def test_observers_are_one_at_another_site_then_one_at_its_own(small_national: Any) -> None:
    from imsdr.runbook.actions import DIAMETER_SERVERS, ActionBuilder

    pipe = small_national
    topo = pipe.topology
    builder = ActionBuilder(topo, pipe.dns_plan, pipe.analyses.dns_checks, "national.yaml",
                            pipe.analyses.element_failures)

    def plain(el: Any) -> list[Any]:  # the rule, over the whole candidate list
        t = el.type.value
        if t == "sbc":
            cands = [topo.elements[p] for p in el.pcscfs if p in topo.elements] or list(topo.by_type["pcscf"])
        elif t in DIAMETER_SERVERS:
            cands = [e for e in topo.by_type.get("cscf", []) if any(r.value in ("icscf", "scscf") for r in e.roles)]
        elif t in ("as", "mgcf"):
            cands = list(topo.with_role("scscf") or topo.by_type.get("cscf", []))
        else:
            cands = []
        cands = [c for c in cands if c.id != el.id]
        other = [c for c in cands if c.site != el.site]
        return (other[:1] + [c for c in cands if c.site == el.site][:1]) if other else cands[:2]

    pairs = 0
    for el in topo.elements.values():
        found = builder.observers(el)
        assert found == plain(el), el.id
        pairs += len(found) == 2 and found[0].site != el.site == found[1].site
    assert pairs > 50  # HSS, AS and MGCF observers among thousands of CSCFs, and the SBCs' P-CSCFs


def _default_environment() -> jinja2.Environment:
    return jinja2.Environment(undefined=jinja2.StrictUndefined)


@pytest.mark.parametrize("source", [
    "{{ row.name }}",  # a key
    "{{ row.keys() | list | join(',') }}",  # a dict method, not the key 'keys'
    "{{ row.get('name') }}",
    "{{ row['items'] }}",
    "{{ (row.items() | list)[0][0] }}",
    "{{ row.missing is defined }}",
])
def test_the_built_in_environment_reads_a_dict_as_jinja_does(source: str) -> None:
    from imsdr.runbook.render import Renderer

    row = {"name": "a|b", "keys": "not the method", "items": 3}
    ours = Renderer().env.from_string(source).render(row=row)
    assert ours == _default_environment().from_string(source).render(row=row)


def test_a_missing_key_is_still_an_undefined_variable() -> None:
    from imsdr.runbook.render import Renderer

    with pytest.raises(jinja2.UndefinedError):
        Renderer().env.from_string("{{ row.missing }}").render(row={"name": "x"})


def test_the_md_filters_escape_each_value_as_markdown_text() -> None:
    from imsdr.runbook.render import Renderer

    env = Renderer().env
    values: list[Any] = ["a_b", "1. list", None, 3, "", "www.example.com", "x@y", "a\nb", "a_b"]
    for value in values * 2:  # the second time from the memo
        assert env.filters["md"](value) == markdown_text(value)
        assert env.filters["md_cell"](value) == (markdown_text(value) or "—")
    assert env.filters["md"](3) == env.filters["md"]("3")


def test_autolink_triggers_are_escaped_whatever_their_case() -> None:
    assert markdown_text("see WWW.example.com") == "see WWW\\.example.com"
    assert markdown_text("http://x") == "http\\://x"
    assert markdown_text("a@b") == "a\\@b"
    assert markdown_text("www example") == "www example"


def _mermaid_reference(value: Any, quoted: bool) -> str:
    from imsdr.output.markdown import _MERMAID_QUOTED, _MERMAID_UNQUOTED

    entities = _MERMAID_QUOTED if quoted else _MERMAID_UNQUOTED
    return "".join(entities.get(ch, ch) if ch.isprintable() else f"#{ord(ch)};" for ch in str(value))


@pytest.mark.parametrize("text", ['a#b"c%d<e>f&g`h|i[j]k{l}m(n)o;p', "line\nbreak", "", "plain-1.x", "é 中 ü", 42])
def test_mermaid_text_is_each_character_s_entity(text: Any) -> None:
    for quoted in (True, False):
        assert mermaid_text(text, quoted=quoted) == _mermaid_reference(text, quoted)


def test_the_built_in_templates_render_with_the_collector_paused() -> None:
    """A full collection walks the whole model; the built-in pages pause it and restore it."""
    import gc

    from imsdr.runbook.render import Page, render_pages

    class Probe:
        seen: list[bool] = []

        def __str__(self) -> str:
            self.seen.append(gc.isenabled())
            return "Probe"

    assert gc.isenabled()
    index = {"title": Probe(), "what": "elements", "rows": []}
    pages = render_pages([Page("i.md", "province-index.md.j2", "t", {"index": index})], {"toc": []})
    assert pages["i.md"].startswith("# Probe\n")
    assert Probe.seen == [False] and gc.isenabled()
