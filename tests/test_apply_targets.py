"""The deployment targets file is hostile input: every refusal names FILE:LINE and the field,
exits 2 with no traceback, and nothing is run or written (no state directory, no transfer).

Hypothesis generates the hostile cases: arguments with shell metacharacters or unknown
placeholders, directories escaping the target root, key files readable by group or others.
"""

from __future__ import annotations

import os
import re
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from imsdr.apply.targets import SHELL_META, TargetsError, parse_targets
from imsdr.cli.app import app

runner = CliRunner()
META = ";&|`$<>()[]*?!~#'\"\\ \n\t"


def _key(tmp: Path, mode: int = 0o600) -> Path:
    key = tmp / f"rndc-{mode:o}.key"
    if not key.exists():
        key.write_text('key "rndc-key" { algorithm hmac-sha256; secret "c2VjcmV0"; };\n')
    key.chmod(mode)
    return key


def _text(tmp: Path, *, transfer: str = '[cp, "{source}", "/srv/x/{path}"]', directory: str | None = None,
          key_mode: int = 0o600) -> str:
    delivery = f"directory: {directory}" if directory is not None else f"transfer: {transfer}"
    return (f"version: 1\nroot: {tmp / 'srv'}\ntargets:\n"
            f"  dns-a-1:\n    kind: bind\n    {delivery}\n    dns: {{address: 127.0.0.1}}\n"
            f"    rndc: {{address: 127.0.0.1, port: 953, key_file: {_key(tmp, key_mode)}}}\n")


def _refused(text: str, tmp: Path) -> str:
    with pytest.raises(TargetsError) as refused:
        parse_targets(text, "targets.yaml")
    message = str(refused.value)
    assert re.match(r"targets\.yaml:\d+: targets\.dns-a-1\.", message), message
    return message


def test_a_good_file_is_read(tmp_path: Path) -> None:
    targets = parse_targets(_text(tmp_path, directory="dns-a-1"), "targets.yaml")
    target = targets.targets["dns-a-1"]
    assert target.directory == tmp_path / "srv" / "dns-a-1" and target.rndc is not None
    assert target.rndc.argv("status")[-1] == "status" and "c2VjcmV0" not in " ".join(target.rndc.argv("status"))
    transfer = parse_targets(_text(tmp_path), "targets.yaml").targets["dns-a-1"]
    assert transfer.transfer_argv("/tmp/stage/zones/a.zone", "zones/a.zone") == (
        "cp", "/tmp/stage/zones/a.zone", "/srv/x/zones/a.zone")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=string.ascii_letters + META, min_size=1, max_size=12).filter(lambda t: SHELL_META.search(t)))
@example("; rm -rf /")
@example("$(id)")
@example("`id`")
def test_shell_metacharacters_in_arguments_are_refused(tmp_path: Path, hostile: str) -> None:
    quoted = '"' + hostile.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'
    message = _refused(_text(tmp_path, transfer=f'[scp, "{{source}}", {quoted}]'), tmp_path)
    assert "targets.dns-a-1.transfer[2]" in message and ":6:" in message


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=10).filter(
    lambda n: n not in ("source", "path", "target")))
def test_unknown_placeholders_are_refused(tmp_path: Path, name: str) -> None:
    message = _refused(_text(tmp_path, transfer=f'[scp, "{{source}}", "host:/x/{{{name}}}"]'), tmp_path)
    assert f"unknown placeholder {{{name}}}" in message


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["..", "a", "b", "."]), min_size=1, max_size=6).filter(
    lambda parts: os.path.normpath("/r/" + "/".join(parts)) in ("/", "/r") or
    not os.path.normpath("/r/" + "/".join(parts)).startswith("/r/")))
@example(["..", "..", "etc"])
def test_directories_escaping_the_root_are_refused(tmp_path: Path, parts: list[str]) -> None:
    message = _refused(_text(tmp_path, directory="/".join(parts)), tmp_path)
    assert "targets.dns-a-1.directory" in message and "not inside root" in message


def test_absolute_directory_elsewhere_and_a_link_out_are_refused(tmp_path: Path) -> None:
    assert "not inside root" in _refused(_text(tmp_path, directory="/etc/bind"), tmp_path)
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "out").symlink_to("/etc")
    assert "through a link" in _refused(_text(tmp_path, directory="out"), tmp_path)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.integers(min_value=0, max_value=0o777).filter(lambda m: m & 0o077))
def test_keys_readable_by_others_are_refused(tmp_path: Path, mode: int) -> None:
    message = _refused(_text(tmp_path, directory="dns-a-1", key_mode=mode | 0o400), tmp_path)
    assert "targets.dns-a-1.rndc.key_file" in message and "chmod 600" in message and ":8:" in message


def test_a_shell_string_is_not_an_argument_list(tmp_path: Path) -> None:
    message = _refused(_text(tmp_path, transfer='"scp {source} host:/x"'), tmp_path)
    assert "list of arguments (never a shell string)" in message


def test_cli_refuses_with_exit_2_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    targets = tmp_path / "targets.yaml"
    targets.write_text(_text(tmp_path, transfer=f'[touch, "{marker}", "{{source}};id"]'))
    plan = tmp_path / "plan"
    plan.mkdir()
    state = tmp_path / "state"
    result = runner.invoke(app, ["apply", str(plan), "--targets", str(targets), "--state", str(state)])
    assert result.exit_code == 2, result.output
    assert re.search(rf"{re.escape(str(targets))}:6: targets\.dns-a-1\.transfer\[2\]: holds a shell metacharacter",
                     result.stderr)
    assert "Traceback" not in result.output + result.stderr
    assert not marker.exists() and not state.exists()


def test_the_targets_file_is_read_as_untrusted_input(tmp_path: Path) -> None:
    link = tmp_path / "targets.yaml"
    link.symlink_to(tmp_path / "elsewhere.yaml")
    (tmp_path / "elsewhere.yaml").write_text(_text(tmp_path, directory="dns-a-1"))
    result = runner.invoke(app, ["apply", "--status", "--targets", str(link), "--state", str(tmp_path / "s")])
    assert result.exit_code == 2 and "symbolic link" in result.stderr
