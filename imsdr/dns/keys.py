"""TSIG keys for the views: names in the plan, secrets only in a file the operator keeps.

``ensure_keys(path, names, out)`` adds a ``key`` statement (hmac-sha256, a 256-bit secret from
:mod:`secrets`, the form BIND's ``tsig-keygen`` prints) for every view key missing from ``path``,
keeping the keys already there (so a re-render never rotates secrets behind the secondaries'
back). The keys file is untrusted input and a file other programs rely on:

* it is read through :mod:`imsdr.untrusted` (no link followed, regular file only, bounded) and
  must hold nothing but ``key`` statements and comments — anything else (an inventory, a
  ``named.conf``) is refused with its ``FILE:LINE:COL``, so a slip of ``--keys`` never appends
  secrets to another file;
* it may not be the inventory, lie in a templates directory or inside the output tree (which
  imsdr replaces whole and reviewers read);
* it is replaced atomically (a new file beside it, renamed over it) and keeps its owner, group
  and mode; a new file is created 0640 with the group of its directory (on Debian ``/etc/bind`` is
  ``root:bind``, so ``named -u bind`` can read it).
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from imsdr.errors import RenderError

MAX_KEYS_BYTES = 4 << 20
NEW_FILE_MODE = 0o640
ALGORITHM = "hmac-sha256"
HEADER = "// TSIG keys of the imsdr DNS views: keep secret (readable by named only)\n"

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|\#[^\n]*|/\*.*?\*/)
  | (?P<string>"[^"\\\n]*")
  | (?P<word>[A-Za-z0-9._:+/=-]+)
  | (?P<punct>[{};])
""", re.X | re.S)


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    line: int
    column: int


def _tokens(text: str, file: str) -> list[_Token]:
    found: list[_Token] = []
    pos, line, line_start = 0, 1, 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise RenderError(f"{file}:{line}:{pos - line_start + 1}: not a keys file: unexpected "
                              f"{text[pos]!r}; it may hold only key statements and comments")
        kind = match.lastgroup or ""
        if kind not in ("space", "comment"):
            found.append(_Token(kind, match.group(), line, pos - line_start + 1))
        chunk = match.group()
        newlines = chunk.count("\n")
        if newlines:
            line += newlines
            line_start = pos + chunk.rindex("\n") + 1
        pos = match.end()
    return found


def parse_keys(text: str, file: str) -> list[str]:
    """The key names of a keys file, in order; anything but ``key NAME { algorithm A; secret "S"; };``
    statements and comments is refused with its ``FILE:LINE:COL``."""
    tokens = _tokens(text, file)
    names: list[str] = []
    i = 0

    def expect(kinds: tuple[str, ...], texts: tuple[str, ...] = (), what: str = "") -> _Token:
        nonlocal i
        if i >= len(tokens):
            last = tokens[-1] if tokens else _Token("", "", 1, 1)
            raise RenderError(f"{file}:{last.line}:{last.column}: not a keys file: it ends inside a key "
                              f"statement (expected {what})")
        token = tokens[i]
        if token.kind not in kinds or (texts and token.text not in texts):
            raise RenderError(f"{file}:{token.line}:{token.column}: not a keys file: expected {what}, found "
                              f"{token.text[:40]!r}; it may hold only key statements and comments")
        i += 1
        return token

    while i < len(tokens):
        expect(("word",), ("key",), "'key'")
        name = expect(("string", "word"), (), "a key name")
        names.append(name.text.strip('"'))
        expect(("punct",), ("{",), "'{'")
        while i < len(tokens) and tokens[i].text != "}":
            clause = expect(("word",), ("algorithm", "secret"), "'algorithm', 'secret' or '}'")
            expect(("word",) if clause.text == "algorithm" else ("string",), (), f"the {clause.text}")
            expect(("punct",), (";",), "';'")
        expect(("punct",), ("}",), "'}'")
        expect(("punct",), (";",), "';' after '}'")
    return names


def key_statement(name: str, secret: bytes | None = None) -> str:
    """A ``key`` statement as ``tsig-keygen -a hmac-sha256 NAME`` prints it (256-bit secret)."""
    encoded = base64.b64encode(secret if secret is not None else secrets.token_bytes(32)).decode("ascii")
    return f'key "{name}" {{\n\talgorithm {ALGORITHM};\n\tsecret "{encoded}";\n}};\n'


def existing_keys(path: Path) -> set[str]:
    """The key names already in the keys file at ``path`` (none when it does not exist)."""
    text, _info = _read(Path(path))
    return set(parse_keys(text, str(path))) if text is not None else set()


def _read(path: Path) -> tuple[str | None, os.stat_result | None]:
    from imsdr.untrusted import open_untrusted, read_untrusted_text

    if not os.path.lexists(path):
        return None, None
    fd, info = open_untrusted(path)
    os.close(fd)
    return read_untrusted_text(path, MAX_KEYS_BYTES), info


def _inside(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
        return True
    except (ValueError, OSError):
        return False


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return a.resolve() == b.resolve()


def refuse_path(path: Path, out: Path | None = None, inputs: tuple[Path, ...] = ()) -> None:
    """Refuse (RenderError, exit 2) a keys path inside ``out``, that is an input file (the
    inventory) or lies in an input directory (``--templates``)."""
    if out is not None and _inside(path, Path(out)):
        raise RenderError(f"refusing to write TSIG secrets to {path}: it is inside the output directory "
                          f"{out}, which is replaced on every render and meant for review; choose a path "
                          "outside it (e.g. /etc/bind/imsdr-tsig.keys)")
    for item in inputs:
        item = Path(item)
        if item.is_dir() and _inside(path, item):
            raise RenderError(f"refusing to write TSIG secrets to {path}: it is inside {item}, which imsdr "
                              "reads (templates)")
        if not item.is_dir() and _same_file(path, item):
            raise RenderError(f"refusing to write TSIG secrets to {path}: it is the inventory imsdr reads")


def ensure_keys(path: Path, names: list[str], out: Path | None = None,
                inputs: tuple[Path, ...] = ()) -> list[str]:
    """Add a generated key for each of ``names`` missing from ``path``; return the names added."""
    path = Path(path)
    refuse_path(path, out, inputs)
    text, info = _read(path)
    have = set(parse_keys(text, str(path))) if text is not None else set()
    missing = [n for n in dict.fromkeys(names) if n not in have]
    if not missing:
        return []
    parts = [text.rstrip("\n") + "\n"] if text else [HEADER]
    parts += [key_statement(name) for name in missing]
    _replace(path, "".join(parts), info)
    return missing


def _replace(path: Path, text: str, previous: os.stat_result | None) -> None:
    """Write ``text`` to a new file beside ``path`` with ``previous``'s owner, group and mode (a new
    file: 0640, the directory's group), flush it to disk and rename it over ``path``."""
    from imsdr.output.atomic import sync_directory

    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        directory = os.stat(parent)
    except OSError as exc:
        raise RenderError(f"{path}: cannot create its directory: {exc.strerror or exc}") from None
    if previous is not None:
        uid, gid, mode = previous.st_uid, previous.st_gid, stat.S_IMODE(previous.st_mode)
    else:
        uid, gid, mode = -1, directory.st_gid, NEW_FILE_MODE
    tmp = parent / f".{path.name}.imsdr-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise RenderError(f"{path}: cannot write beside it: {exc.strerror or exc}") from None
    try:
        try:
            os.fchown(fd, uid, gid)
        except PermissionError:
            if previous is not None and (uid, gid) != (os.geteuid(), os.getegid()):
                raise RenderError(f"refusing to rewrite {path}: it belongs to uid {uid}, gid {gid}, which this "
                                  "user cannot give the new file; run as its owner (or root)") from None
        os.fchmod(fd, mode)
        view = memoryview(text.encode("utf-8"))
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
        sync_directory(parent)
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise RenderError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
