"""The rule catalogue: explicit registry, self-describing rules, docs/rules.md in sync, `imsdr rules`."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import imsdr.rules
from imsdr.cli.app import app
from imsdr.diagnostics import Severity
from imsdr.output.findings import rules_markdown
from imsdr.rules.registry import FAMILIES, all_rules, get_rule, suggest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "rules.md"
runner = CliRunner()
DESIGN = [r for r in all_rules() if not r.id.startswith("CAP-")]


def lint(text: str) -> list[str]:
    from pymarkdown.api import PyMarkdownApi

    result = PyMarkdownApi().disable_rule_by_identifier("md013").scan_string(text)
    return [f"{f.line_number}: {f.rule_id} {f.rule_description}" for f in result.scan_failures]


def test_ids_unique_and_well_formed() -> None:
    ids = [r.id for r in all_rules()]
    assert len(ids) == len(set(ids))
    for rule in all_rules():
        assert re.fullmatch(r"[A-Z]{2,6}-[0-9]{3}", rule.id), rule.id
        assert isinstance(rule.severity, Severity)
        assert rule.summary and rule.doc and callable(rule.check)


@pytest.mark.parametrize("rule", DESIGN, ids=[r.id for r in DESIGN])
def test_rule_documents_reason_and_examples(rule) -> None:
    doc = rule.doc
    reason, _, rest = doc.partition("Fails:")
    assert len(reason.split()) >= 12, "the reason (from docs/domain.md) comes first"
    assert "```yaml" in rest and "Passes:" in rest
    failing, _, passing = rest.partition("Passes:")
    assert "```yaml" in failing and "```yaml" in passing


def test_registry_lists_every_rule_module() -> None:
    """Explicit registry: every imsdr.rules module exporting RULES is in FAMILIES (none forgotten)."""
    listed = {id(family) for family in FAMILIES}
    for info in pkgutil.iter_modules(imsdr.rules.__path__):
        module = importlib.import_module(f"imsdr.rules.{info.name}")
        if hasattr(module, "RULES"):
            assert id(module.RULES) in listed, f"imsdr.rules.{info.name}.RULES is not in the registry"


def test_capacity_rules_are_registered() -> None:
    assert any(r.id.startswith("CAP-") for r in all_rules())


def test_lookup_and_suggestion() -> None:
    assert get_rule("geo-001") is get_rule("GEO-001") is not None
    assert get_rule("GEO-999") is None
    assert suggest("GEO-01") == "GEO-001"


def test_docs_rules_md_is_in_sync() -> None:
    expected = rules_markdown(all_rules())
    assert DOCS.read_text(encoding="utf-8") == expected, (
        "docs/rules.md is out of date: run `imsdr rules --format markdown > docs/rules.md`")
    result = runner.invoke(app, ["rules", "--format", "markdown"])
    assert result.exit_code == 0 and result.stdout == expected


def test_docs_rules_md_lints_clean_and_links_resolve() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert lint(text) == []
    for rule in all_rules():
        assert f"](#{rule.id.lower()})" in text and f"\n### {rule.id}\n" in text
    assert "`passed`" in text and "`findings[].location`" in text  # JSON keys documented


def test_rules_table_lists_every_rule() -> None:
    result = runner.invoke(app, ["rules"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for rule in all_rules():
        assert rule.id in result.stdout


def test_rules_id_explains_one_rule() -> None:
    result = runner.invoke(app, ["rules", "sbc-005"])
    assert result.exit_code == 0
    assert result.stdout.startswith("# SBC-005")
    assert "virtual SBC" in result.stdout and "Fails:" in result.stdout and "Passes:" in result.stdout
    data = json.loads(runner.invoke(app, ["rules", "TIMER-001", "--format", "json"]).stdout)
    assert data["id"] == "TIMER-001" and data["severity"] == "error" and "RFC 3539" in data["doc"]


def test_rules_unknown_id_exits_2_with_suggestion() -> None:
    result = runner.invoke(app, ["rules", "TIMER-01"])
    assert result.exit_code == 2
    assert "unknown rule id 'TIMER-01'" in result.stderr and "TIMER-001" in result.stderr
    assert result.stdout == ""


def test_rules_json_catalogue() -> None:
    data = json.loads(runner.invoke(app, ["rules", "--format", "json"]).stdout)
    assert [r["id"] for r in data["rules"]] == [r.id for r in all_rules()]
    assert {"id", "severity", "summary", "production_only", "doc"} <= set(data["rules"][0])
