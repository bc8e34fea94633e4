"""Invalid input is visible to CI formats (INV-001), several files per run, SARIF URIs and helpUri."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from imsdr.cli.app import app

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
BAD = ROOT / "tests" / "corpus" / "bad" / "all-problems-in-one-run.yaml"
runner = CliRunner()


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    """A checkout-like directory: the inventories are given by relative paths, as CI does."""
    shutil.copy(LAB, tmp_path / "lab.yaml")
    shutil.copy(BAD, tmp_path / "bad.yaml")
    old = Path.cwd()
    os.chdir(tmp_path)
    yield tmp_path
    os.chdir(old)


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def test_invalid_inventory_is_findings_in_json(workdir: Path) -> None:
    result = invoke("check", "bad.yaml", "--format", "json")
    assert result.exit_code == 2, "exit code unchanged: invalid input"
    assert "bad.yaml:3:9:" in result.stderr, "the diagnostics stay on stderr"
    report = json.loads(result.stdout)
    assert report["deployment"] == "invalid" and report["passed"] is False
    findings = report["findings"]
    assert len(findings) == 9 and {f["rule"] for f in findings} == {"INV-001"}  # a misspelt required field is one
    first = findings[0]
    assert first["location"] == {"file": "bad.yaml", "line": 3, "column": 9}
    assert "network.name" in first["message"]


def test_invalid_inventory_in_sarif_github_markdown(workdir: Path) -> None:
    from sarif import loader

    sarif = invoke("check", "bad.yaml", "--format", "sarif")
    assert sarif.exit_code == 2
    (workdir / "out.sarif").write_text(sarif.stdout)
    (run,) = loader.load_sarif_file(str(workdir / "out.sarif")).runs
    results = run.get_results()
    assert len(results) == 9 and {r["ruleId"] for r in results} == {"INV-001"}
    location = results[0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "bad.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 3, "startColumn": 9}
    assert run.run_data["tool"]["driver"]["rules"][0]["id"] == "INV-001"

    github = invoke("check", "bad.yaml", "--format", "github")
    assert github.exit_code == 2
    assert github.stdout.startswith("::error file=bad.yaml,line=3,col=9,title=INV-001 error::network.name")
    markdown = invoke("check", "bad.yaml", "--format", "markdown")
    assert markdown.exit_code == 2 and "| INV-001 | `bad.yaml:3` |" in markdown.stdout


def test_unreadable_file_is_a_finding_naming_the_file(workdir: Path) -> None:
    result = invoke("check", "missing.yaml", "--format", "sarif")
    assert result.exit_code == 2
    (result_,) = json.loads(result.stdout)["runs"][0]["results"]
    assert result_["ruleId"] == "INV-001" and "no such file" in result_["message"]["text"]
    assert result_["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "missing.yaml"


def test_table_format_keeps_stdout_empty_for_invalid_input(workdir: Path) -> None:
    result = invoke("check", "bad.yaml")
    assert result.exit_code == 2 and result.stdout == "" and "bad.yaml:3:9:" in result.stderr


def test_several_files(workdir: Path) -> None:
    both = invoke("check", "lab.yaml", "bad.yaml", "--format", "json")
    assert both.exit_code == 2
    data = json.loads(both.stdout)
    assert data["format"] == "imsdr.checks/1" and data["passed"] is False
    assert [r["file"] for r in data["reports"]] == ["lab.yaml", "bad.yaml"]
    assert data["reports"][0]["passed"] is True
    sarif = json.loads(invoke("check", "lab.yaml", "bad.yaml", "--format", "sarif").stdout)
    assert [r["artifacts"][0]["location"]["uri"] for r in sarif["runs"]] == ["lab.yaml", "bad.yaml"]
    shutil.copy("lab.yaml", "lab2.yaml")
    good = invoke("check", "lab.yaml", "lab2.yaml")
    assert good.exit_code == 0 and good.stdout.count("passed (fail on error)") == 2

    validated = invoke("validate", "lab.yaml", "bad.yaml", "--format", "json")
    assert validated.exit_code == 2
    data = json.loads(validated.stdout)
    assert data["valid"] is False and [r["valid"] for r in data["reports"]] == [True, False]
    assert data["reports"][1]["problems"][0]["line"] == 3
    assert invoke("validate", "lab.yaml", "lab2.yaml").exit_code == 0


def test_sarif_uris_are_relative_and_help_uri_points_into_the_docs(workdir: Path) -> None:
    absolute = invoke("check", str(workdir / "lab.yaml"), "--format", "sarif",
                      "--docs-url", "https://docs.example.org/imsdr/")
    run = json.loads(absolute.stdout)["runs"][0]
    assert run["artifacts"][0]["location"] == {"uri": "lab.yaml", "uriBaseId": "%SRCROOT%"}
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["GEO-001"]["helpUri"] == "https://docs.example.org/imsdr/rules.md#geo-001"
    outside = invoke("check", str(LAB), "--format", "sarif")
    uri = json.loads(outside.stdout)["runs"][0]["artifacts"][0]["location"]["uri"]
    assert uri == LAB.as_uri(), "a file outside the working directory keeps an absolute URI"


def _sarif_report(text: str):  # type: ignore[no-untyped-def]
    """The SARIF 2.1.0 schema (models generated from OASIS's sarif-schema-2.1.0.json, unknown keys
    refused) reads the document back; helpUri must be an absolute URI there."""
    from pydantic_sarif.model import StaticAnalysisResultsFormatSarifVersion210JsonSchema as Sarif

    return Sarif.model_validate_json(text)


def test_every_sarif_rule_carries_its_whole_documentation_and_nothing_outside(workdir: Path) -> None:
    from imsdr.rules.registry import all_rules

    result = invoke("check", "lab.yaml", "bad.yaml", "--format", "sarif")
    _sarif_report(result.stdout)
    catalogue = {rule.id: rule for rule in all_rules()}
    lab, bad = json.loads(result.stdout)["runs"]
    assert {r["id"] for r in lab["tool"]["driver"]["rules"]} == set(catalogue)
    assert [r["id"] for r in bad["tool"]["driver"]["rules"]] == ["INV-001"]
    for run in (lab, bad):
        rules = run["tool"]["driver"]["rules"]
        for descriptor in rules:
            rule = catalogue[descriptor["id"]]
            for form in ("text", "markdown"):
                help_text = descriptor["help"][form]
                assert rule.doc.strip() in help_text and rule.summary in help_text
                assert f"`imsdr rules {rule.id}`" in help_text
            assert "helpUri" not in descriptor, "no address is known: none is made up"
    without_schema = result.stdout.replace(json.loads(result.stdout)["$schema"], "")
    assert "://" not in without_schema, "the SARIF cites nothing outside imsdr unless told where its docs are"


def test_with_a_docs_url_every_rule_links_into_the_published_docs(workdir: Path) -> None:
    from imsdr.reference import domain_sections

    result = invoke("check", "lab.yaml", "--format", "sarif", "--docs-url", "https://docs.example.net/imsdr/")
    assert result.exit_code == 0
    _sarif_report(result.stdout)
    rules_doc = (ROOT / "docs" / "rules.md").read_text()
    anchors = set(domain_sections().values())
    for descriptor in json.loads(result.stdout)["runs"][0]["tool"]["driver"]["rules"]:
        rule_id = descriptor["id"]
        assert descriptor["helpUri"] == f"https://docs.example.net/imsdr/rules.md#{rule_id.lower()}"
        assert f"\n### {rule_id}\n" in rules_doc, "the anchor exists in the published catalogue"
        links = re.findall(r"\]\((https://[^)]*)\)", descriptor["help"]["markdown"])
        for link in links:
            page, _, anchor = link.partition("#")
            assert page == "https://docs.example.net/imsdr/domain.md" and anchor in anchors, link
    dep = next(d for d in json.loads(result.stdout)["runs"][0]["tool"]["driver"]["rules"] if d["id"] == "DEP-001")
    assert "https://docs.example.net/imsdr/domain.md#" in dep["help"]["markdown"]


@pytest.mark.parametrize("url", ["docs/", "file:///srv/docs", "https://x.example/docs?v=1", "https://", "https://a b"])
def test_a_docs_url_that_cannot_make_a_help_uri_is_refused(workdir: Path, url: str) -> None:
    result = invoke("check", "lab.yaml", "--format", "sarif", "--docs-url", url)
    assert result.exit_code == 2 and result.stdout == ""
    assert "'--docs-url'" in result.stderr and "is not an absolute http(s) URL" in result.stderr


def test_the_installed_packages_documentation_url_is_the_default(
        workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import email.message
    import importlib.metadata

    declared = email.message.Message()
    declared["Name"] = "imsdr"
    declared["Project-URL"] = "Source, https://git.example.net/imsdr"
    declared["Project-URL"] = "Documentation, https://docs.example.net/imsdr"
    monkeypatch.setattr(importlib.metadata, "metadata", lambda name: declared)
    result = invoke("check", "lab.yaml", "--format", "sarif")
    rules = json.loads(result.stdout)["runs"][0]["tool"]["driver"]["rules"]
    assert {r["helpUri"] for r in rules if r["id"] == "GEO-001"} == {"https://docs.example.net/imsdr/rules.md#geo-001"}


def test_a_plain_table_cell_is_one_line_whatever_it_holds() -> None:
    """cell_text joins a cell's lines and escapes what could break or colour a log line (one_line)."""
    from imsdr.output.plain import cell_text

    assert cell_text("finding  \n\n   its fix") == "finding — its fix"
    assert cell_text("a\u2028b\x85c") == "a — b — c"  # line breaks to str.splitlines: joined
    assert cell_text("red \x1b[31m") == "red \\x1b[31m"  # an escape sequence is shown, not obeyed
    assert cell_text(None) == ""
