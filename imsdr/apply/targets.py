"""The deployment targets file: where each server's rendered files go and how it loads them.

A YAML file (``docs/apply.md``)::

    version: 1
    root: /srv/imsdr               # every local directory lies inside it
    tsig_keys: /etc/imsdr/tsig.keys  # the views' keys (mode 0600): verify asks every view with its key
    targets:
      dns-a-1: {kind: bind, directory: dns-a-1, dns: {address: 10.0.0.53, port: 53},
                rndc: {address: 10.0.0.53, port: 953, key_file: /etc/imsdr/rndc-a.key}}
      sbc-a:   {kind: kamailio, directory: sbc-a, rpc: {kamcmd: /run/kamailio/kamailio_ctl}}
      cscf-1:  {kind: diameter, transfer: [scp, -q, "{source}", "cscf-1:/etc/freeDiameter/{path}"],
                reload: [systemctl, reload, freediameter]}

Nothing here is ever given to a shell: ``transfer`` and ``reload`` are argument lists run as they
are, with the named placeholders ``{source}`` (the local file), ``{path}`` (its path inside the
target) and ``{target}`` (the target's id) replaced. An argument holding a shell metacharacter is
refused all the same (``ssh`` hands its arguments to a remote shell). Key files must be regular
files of mode 0600 (or stricter); their contents are never read into output, logs or state.
Every refusal is ``FILE:LINE: field: reason`` (exit 2) before anything is run.
"""

from __future__ import annotations

import ipaddress
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from imsdr.errors import ImsdrError
from imsdr.untrusted import UntrustedFile, open_untrusted, read_untrusted_text

TARGETS_LIMIT = 4 << 20
KINDS = ("bind", "kamailio", "diameter")
PLACEHOLDERS = ("source", "path", "target")
# what a shell (local, or remote behind ssh) would read as more than a word
SHELL_META = re.compile(r"[;&|`$<>(){}\[\]*?!~#'\"\\\n\r\t ]")
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


class TargetsError(ImsdrError):
    """The targets file is refused: ``FILE:LINE: field: reason``."""


@dataclass(frozen=True)
class Rndc:
    address: str
    port: int
    key_file: str

    def argv(self, *command: str) -> tuple[str, ...]:
        return ("rndc", "-s", self.address, "-p", str(self.port), "-k", self.key_file, *command)


@dataclass(frozen=True)
class KamailioRpc:
    kamcmd: str = ""  # the binrpc socket (unix:PATH, or a PATH)
    jsonrpc: str = ""  # http://HOST:PORT/PATH of jsonrpcs over xhttp

    def argv(self, *command: str) -> tuple[str, ...]:
        socket = self.kamcmd if ":" in self.kamcmd else f"unix:{self.kamcmd}"
        return ("kamcmd", "-s", socket, *command)


@dataclass(frozen=True)
class Target:
    id: str
    kind: str
    line: int
    directory: Path | None = None  # local delivery
    transfer: tuple[str, ...] = ()  # or a transfer command (placeholders kept)
    rndc: Rndc | None = None
    dns: tuple[str, int] | None = None  # where verify asks (bind)
    rpc: KamailioRpc | None = None
    reload: tuple[str, ...] = ()  # diameter
    verify: tuple[str, ...] = ()  # diameter: a command that exits 0 when the client is up

    def transfer_argv(self, source: str, path: str) -> tuple[str, ...]:
        values = {"source": source, "path": path, "target": self.id}
        return tuple(PLACEHOLDER.sub(lambda m: values[m.group(1)], arg) for arg in self.transfer)


@dataclass(frozen=True)
class Targets:
    path: str
    root: Path
    tsig_keys: str | None
    targets: dict[str, Target] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[Target]:
        return [t for t in self.targets.values() if t.kind == kind]


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, node: yaml.Node | None, where: str, reason: str) -> TargetsError:
        line = node.start_mark.line + 1 if node is not None else 1
        return TargetsError(f"{self.path}:{line}: {where}: {reason}")

    def mapping(self, node: yaml.Node, where: str, allowed: tuple[str, ...]) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, where, "must be a mapping")
        out: dict[str, yaml.Node] = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                raise self.fail(key, where, "keys must be plain words")
            name = str(key.value)
            if name in out:
                raise self.fail(key, f"{where}.{name}", "given twice")
            if allowed and name not in allowed:
                raise self.fail(key, f"{where}.{name}", f"unknown field (known: {', '.join(allowed)})")
            out[name] = value
        return out

    def scalar(self, node: yaml.Node, where: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag.endswith((":null", ":map", ":seq")):
            raise self.fail(node, where, "must be a single value")
        text = str(node.value)
        if not text or "\x00" in text or len(text) > 4096:
            raise self.fail(node, where, "must be a non-empty value of at most 4096 characters")
        return text

    def integer(self, node: yaml.Node, where: str, low: int, high: int) -> int:
        text = self.scalar(node, where)
        if not re.fullmatch(r"[0-9]{1,6}", text) or not low <= int(text) <= high:
            raise self.fail(node, where, f"must be a whole number from {low} to {high}")
        return int(text)

    def address(self, node: yaml.Node, where: str) -> str:
        text = self.scalar(node, where)
        try:
            return str(ipaddress.ip_address(text))
        except ValueError:
            raise self.fail(node, where, "must be an IP address") from None

    def argv(self, node: yaml.Node, where: str, placeholders: tuple[str, ...]) -> tuple[str, ...]:
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            raise self.fail(node, where, "must be a non-empty list of arguments (never a shell string)")
        out = []
        for i, item in enumerate(node.value):
            arg = self.scalar(item, f"{where}[{i}]")
            names = PLACEHOLDER.findall(arg)
            for name in names:
                if name not in placeholders:
                    raise self.fail(item, f"{where}[{i}]", f"unknown placeholder {{{name}}} "
                                    f"(known: {', '.join('{' + p + '}' for p in placeholders) or 'none'})")
            bare = PLACEHOLDER.sub("", arg)
            if SHELL_META.search(bare):
                raise self.fail(item, f"{where}[{i}]", "holds a shell metacharacter or a space; arguments "
                                "are passed as they are, one per list item")
            if i == 0 and (names or bare.startswith("-")):
                raise self.fail(item, f"{where}[0]", "the program must be a plain name or path")
            out.append(arg)
        return tuple(out)

    def key_file(self, node: yaml.Node, where: str) -> str:
        """A secret's file: a regular file (no link) of mode 0600 or stricter; never read here."""
        path = self.scalar(node, where)
        if not os.path.isabs(path):
            raise self.fail(node, where, "must be an absolute path")
        try:
            fd, info = open_untrusted(path)
        except UntrustedFile as exc:
            raise self.fail(node, where, exc.reason) from None
        os.close(fd)
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise self.fail(node, where, f"{path} has mode {stat.S_IMODE(info.st_mode):04o}; a key file must "
                            "be readable by its owner only (chmod 600)")
        return path


def _inside(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def parse_targets(text: str, path: str) -> Targets:
    r = _Reader(path)
    try:
        doc = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        raise TargetsError(f"{path}:{line}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if doc is None:
        raise TargetsError(f"{path}:1: the file is empty")
    top = r.mapping(doc, "targets file", ("version", "root", "tsig_keys", "targets"))
    if "version" not in top or r.scalar(top["version"], "version") != "1":
        raise r.fail(top.get("version", doc), "version", "must be 1")
    if "root" not in top or "targets" not in top:
        raise r.fail(doc, "targets file", "needs 'root' and 'targets'")
    root_text = r.scalar(top["root"], "root")
    if not os.path.isabs(root_text):
        raise r.fail(top["root"], "root", "must be an absolute path")
    root = Path(os.path.normpath(root_text))
    keys = r.key_file(top["tsig_keys"], "tsig_keys") if "tsig_keys" in top else None
    entries = r.mapping(top["targets"], "targets", ())
    targets: dict[str, Target] = {}
    for target_id, node in entries.items():
        where = f"targets.{target_id}"
        if not ID.fullmatch(target_id):
            raise r.fail(node, where, "a target id is an element id (lower-case letters, digits, . _ -)")
        fields = r.mapping(node, where, ("kind", "directory", "transfer", "rndc", "dns", "rpc", "reload",
                                         "verify"))
        if "kind" not in fields or r.scalar(fields["kind"], f"{where}.kind") not in KINDS:
            raise r.fail(fields.get("kind", node), f"{where}.kind", f"must be one of {', '.join(KINDS)}")
        kind = r.scalar(fields["kind"], f"{where}.kind")
        if ("directory" in fields) == ("transfer" in fields):
            raise r.fail(node, where, "give exactly one of 'directory' (local) and 'transfer' (a command)")
        directory = None
        if "directory" in fields:
            raw = r.scalar(fields["directory"], f"{where}.directory")
            resolved = Path(os.path.normpath(root / raw))
            if not _inside(root, resolved) or resolved == root:
                raise r.fail(fields["directory"], f"{where}.directory", f"{raw} is not inside root {root}")
            real_root = Path(os.path.realpath(root))
            if os.path.lexists(resolved) and not _inside(real_root, Path(os.path.realpath(resolved))):
                raise r.fail(fields["directory"], f"{where}.directory", f"{raw} leads out of root {root} "
                             "through a link")
            directory = resolved
        transfer = r.argv(fields["transfer"], f"{where}.transfer", PLACEHOLDERS) if "transfer" in fields else ()
        if transfer and not {"{source}"} & {a for arg in transfer for a in re.findall(r"\{source\}", arg)}:
            raise r.fail(fields["transfer"], f"{where}.transfer", "must name the file to send as {source}")
        rndc = dns_at = rpc = None
        reload: tuple[str, ...] = ()
        verify: tuple[str, ...] = ()
        if kind == "bind":
            if "rndc" not in fields or "dns" not in fields:
                raise r.fail(node, where, "a bind target needs 'rndc' and 'dns'")
            c = r.mapping(fields["rndc"], f"{where}.rndc", ("address", "port", "key_file"))
            if set(c) != {"address", "port", "key_file"}:
                raise r.fail(fields["rndc"], f"{where}.rndc", "needs address, port and key_file")
            rndc = Rndc(r.address(c["address"], f"{where}.rndc.address"),
                        r.integer(c["port"], f"{where}.rndc.port", 1, 65535),
                        r.key_file(c["key_file"], f"{where}.rndc.key_file"))
            d = r.mapping(fields["dns"], f"{where}.dns", ("address", "port"))
            if "address" not in d:
                raise r.fail(fields["dns"], f"{where}.dns", "needs address")
            dns_at = (r.address(d["address"], f"{where}.dns.address"),
                      r.integer(d["port"], f"{where}.dns.port", 1, 65535) if "port" in d else 53)
        elif kind == "kamailio":
            if "rpc" not in fields:
                raise r.fail(node, where, "a kamailio target needs 'rpc' (kamcmd or jsonrpc)")
            c = r.mapping(fields["rpc"], f"{where}.rpc", ("kamcmd", "jsonrpc"))
            if len(c) != 1:
                raise r.fail(fields["rpc"], f"{where}.rpc", "give exactly one of kamcmd and jsonrpc")
            if "kamcmd" in c:
                sock = r.scalar(c["kamcmd"], f"{where}.rpc.kamcmd")
                if SHELL_META.search(sock) or sock.startswith("-"):
                    raise r.fail(c["kamcmd"], f"{where}.rpc.kamcmd", "must be a socket path or unix:PATH")
                rpc = KamailioRpc(kamcmd=sock)
            else:
                url = r.scalar(c["jsonrpc"], f"{where}.rpc.jsonrpc")
                if not re.fullmatch(r"http://[A-Za-z0-9.:\[\]-]+(/[A-Za-z0-9._/-]*)?", url):
                    raise r.fail(c["jsonrpc"], f"{where}.rpc.jsonrpc", "must be http://HOST:PORT/PATH")
                rpc = KamailioRpc(jsonrpc=url)
        else:
            if "reload" not in fields:
                raise r.fail(node, where, "a diameter target needs 'reload' (an argument list)")
            reload = r.argv(fields["reload"], f"{where}.reload", ("target",))
            if "verify" in fields:
                verify = r.argv(fields["verify"], f"{where}.verify", ("target",))
        extra = {"bind": ("rpc", "reload", "verify"), "kamailio": ("rndc", "dns", "reload", "verify"),
                 "diameter": ("rndc", "dns", "rpc")}[kind]
        for name in extra:
            if name in fields:
                raise r.fail(fields[name], f"{where}.{name}", f"not a field of a {kind} target")
        targets[target_id] = Target(target_id, kind, node.start_mark.line + 1, directory, transfer, rndc,
                                    dns_at, rpc, reload, verify)
    if not targets:
        raise r.fail(top["targets"], "targets", "lists no target")
    return Targets(path, root, keys, targets)


def load_targets(path: str | os.PathLike[str]) -> Targets:
    text = read_untrusted_text(path, TARGETS_LIMIT)
    return parse_targets(text, os.fspath(path))


def describe(target: Target) -> dict[str, Any]:
    """What ``--status`` and the journal show of a target: never a secret, only where it lives."""
    return {"id": target.id, "kind": target.kind,
            "delivery": str(target.directory) if target.directory else " ".join(target.transfer)}
