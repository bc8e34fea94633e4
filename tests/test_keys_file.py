"""`--keys FILE`: the keys file keeps its owner, group and mode, holds only key statements, is never
the inventory, a template or inside the output tree, and its secrets need no BIND tool to make."""

from __future__ import annotations

import grp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imsdr.dns.keys import ensure_keys, key_statement, parse_keys
from imsdr.errors import ImsdrError

ROOT = Path(__file__).resolve().parent.parent
LAB = ROOT / "inventories" / "lab.yaml"
BIND_GID = grp.getgrnam("bind").gr_gid  # bind9 is installed by .ci/test (need_debs)


def imsdr(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imsdr", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={"PATH": "/usr/bin:/bin:/usr/sbin", "COLUMNS": "200"})


def checkconf(keys: Path) -> subprocess.CompletedProcess[str]:
    conf = keys.parent / "check.conf"
    conf.write_text(f'include "{keys}";\n')
    return subprocess.run(["named-checkconf", str(conf)], capture_output=True, text=True, timeout=30)


def test_secrets_come_from_the_standard_library_and_bind_accepts_them(tmp_path: Path) -> None:
    keys = tmp_path / "tsig.keys"
    env_path = os.environ.get("PATH", "")
    os.environ["PATH"] = "/nonexistent"  # no tsig-keygen to be found
    try:
        assert ensure_keys(keys, ["imsdr-a", "imsdr-b", "imsdr-a"]) == ["imsdr-a", "imsdr-b"]
    finally:
        os.environ["PATH"] = env_path
    assert parse_keys(keys.read_text(), str(keys)) == ["imsdr-a", "imsdr-b"]
    assert checkconf(keys).returncode == 0, checkconf(keys).stderr
    secrets_ = [line for line in keys.read_text().splitlines() if line.strip().startswith("secret ")]
    assert len(set(secrets_)) == 2 and all(len(line.split('"')[1]) == 44 for line in secrets_)  # 256 bits


OWNERS = [(0, BIND_GID, 0o640), (0, 0, 0o600), (104, BIND_GID, 0o440), (0, BIND_GID, 0o2640)]


@pytest.mark.parametrize(("uid", "gid", "mode"), OWNERS)
def test_an_existing_file_keeps_owner_group_and_mode(tmp_path: Path, uid: int, gid: int, mode: int) -> None:
    keys = tmp_path / "tsig.keys"
    keys.write_text("// the operator's own comment\n" + key_statement("kept", b"k" * 32))
    os.chown(keys, uid, gid)
    os.chmod(keys, mode)
    inode = keys.stat().st_ino
    assert ensure_keys(keys, ["kept", "imsdr-new"]) == ["imsdr-new"]
    info = keys.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o7777) == (uid, gid, mode)
    assert info.st_ino != inode, "replaced by rename, never rewritten in place"
    assert keys.read_text().startswith("// the operator's own comment\n" + key_statement("kept", b"k" * 32))
    assert [p.name for p in tmp_path.iterdir()] == ["tsig.keys"], "no temporary file left"


def test_a_new_file_is_0640_with_the_directorys_group(tmp_path: Path) -> None:
    etc = tmp_path / "etc-bind"
    etc.mkdir()
    os.chown(etc, 0, BIND_GID)
    ensure_keys(etc / "imsdr-tsig.keys", ["imsdr-x"])
    info = (etc / "imsdr-tsig.keys").stat()
    assert (info.st_gid, info.st_mode & 0o7777) == (BIND_GID, 0o640)


NOT_KEYS = [
    ("inventory", "network:\n  name: Lab\n", "1:1"),
    ("named.conf", 'options { directory "/var/cache/bind"; };\n', "1:1"),
    ("include", 'key "a" { algorithm hmac-sha256; secret "c2VjcmV0"; };\ninclude "/etc/passwd";\n', "2:1"),
    ("missing semicolon", 'key "a" { algorithm hmac-sha256; secret "c2VjcmV0"; }\nkey "b" {};\n', "2:1"),
    ("other clause", 'key "a" {\n  algorithm hmac-sha256;\n  file "x";\n};\n', "3:3"),
    ("truncated", 'key "a" { algorithm hmac-sha256;', "1:"),
    ("stray brace", "};\n", "1:1"),
    ("NUL", 'key "a" { };\x00', "1:13"),
]


@pytest.mark.parametrize(("label", "text", "where"), NOT_KEYS, ids=[n[0] for n in NOT_KEYS])
def test_a_file_that_is_not_a_keys_file_is_refused_and_left_alone(tmp_path: Path, label: str, text: str,
                                                                 where: str) -> None:
    keys = tmp_path / "target.conf"
    keys.write_text(text)
    with pytest.raises(ImsdrError) as exc:
        ensure_keys(keys, ["imsdr-a"])
    assert f"{keys}:{where}" in str(exc.value) and "not a keys file" in str(exc.value), str(exc.value)
    assert keys.read_text() == text


def test_not_utf8_symlink_fifo_and_directory_are_refused(tmp_path: Path) -> None:
    binary = tmp_path / "binary.keys"
    binary.write_bytes(b'key "a" {\n\xff\xfe};\n')
    fifo = tmp_path / "fifo.keys"
    os.mkfifo(fifo)
    link = tmp_path / "link.keys"
    link.symlink_to(binary)
    for path, reason in ((binary, f"{binary}:2:1: not UTF-8"), (fifo, "is a FIFO"),
                         (link, "symbolic link"), (tmp_path, "directory")):
        with pytest.raises(ImsdrError) as exc:
            ensure_keys(path, ["imsdr-a"])
        assert reason in str(exc.value), str(exc.value)


def test_the_inventory_a_template_or_the_output_tree_is_refused(tmp_path: Path) -> None:
    shutil.copy(LAB, tmp_path / "lab.yaml")
    before = (tmp_path / "lab.yaml").read_bytes()
    for keys in ("lab.yaml", "./lab.yaml", "out/keys.conf", "out/dns/k"):
        result = imsdr("render", "dns", "lab.yaml", "--out", "out", "--keys", keys, cwd=tmp_path)
        assert result.returncode == 2 and "Traceback" not in result.stderr, (keys, result.stderr)
        assert "refusing to write TSIG secrets" in result.stderr, result.stderr
    assert (tmp_path / "lab.yaml").read_bytes() == before
    named_conf = tmp_path / "named.conf.local"
    named_conf.write_text('zone "example" { type primary; file "db.example"; };\n')
    result = imsdr("render", "dns", "lab.yaml", "--out", "out2", "--keys", "named.conf.local", cwd=tmp_path)
    assert result.returncode == 2 and "named.conf.local:1:1: not a keys file" in result.stderr, result.stderr
    assert not (tmp_path / "out2").exists(), "nothing written"
    templates = tmp_path / "templates"
    templates.mkdir()
    with pytest.raises(ImsdrError, match="templates"):
        ensure_keys(templates / "k.keys", ["imsdr-a"], inputs=(templates, tmp_path / "lab.yaml"))
    with pytest.raises(ImsdrError, match="inventory"):
        ensure_keys(tmp_path / "lab.yaml", ["imsdr-a"], inputs=(tmp_path / "lab.yaml",))


# --- every keys file: hypothesis --------------------------------------------------------------------

NAMES = st.from_regex(r"[a-z0-9][a-z0-9.-]{0,20}", fullmatch=True)
COMMENTS = st.sampled_from(["", "// a comment\n", "# hash\n", "/* block\n comment */\n", "\n\n", "\t"])


@settings(max_examples=60, deadline=None)
@given(names=st.lists(NAMES, min_size=0, max_size=5, unique=True), fills=st.lists(COMMENTS, min_size=6, max_size=6))
def test_any_keys_file_round_trips(names: list[str], fills: list[str]) -> None:
    text = fills[0] + "".join(key_statement(n, n.encode().ljust(32, b"x")[:32]) + fills[i % 5 + 1]
                              for i, n in enumerate(names))
    assert parse_keys(text, "k") == names


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=200))
def test_any_text_parses_or_is_refused_with_its_location(text: str) -> None:
    try:
        parse_keys(text, "k.keys")
    except ImsdrError as exc:
        assert str(exc).startswith("k.keys:") and "not a keys file" in str(exc)
