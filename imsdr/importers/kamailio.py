"""Import Kamailio ``dispatcher.list`` files (SBC -> P-CSCF and P-CSCF -> I-CSCF).

A line is ``setid destination flags priority attrs``. Kamailio orders a set by priority, highest
value first, so a source's preference list is its destinations sorted by descending priority (equal
priorities: the order of the file). Flag 8 (probing) on the destinations means the source probes
them with OPTIONS: ``options_probing: active``. The destination's element id comes from the
``duid`` attribute. Which element a set belongs to is not in the line format: imsdr's own lists
name it in a comment above the set (``# set N: SBC <id> ...``); for other lists ``--set N=ID`` says.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from imsdr.importers.draft import Draft
from imsdr.importers.errors import ImportProblems

MAX_LIST_BYTES = 64 * 1024 * 1024
HOPS = {"sbc-pcscf": ("sbc", "pcscf"), "pcscf-icscf": ("pcscf", "cscf")}
_HEADER = re.compile(r"#\s*Kamailio dispatcher\.list:\s*(SBC -> P-CSCF|P-CSCF -> I-CSCF)\s*")
_SET_COMMENT = re.compile(r"#\s*set (\d+): (?:SBC|P-CSCF) ([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?) ")
_URI = re.compile(r"sips?:(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<v4>[0-9.]+)):(?P<port>[0-9]{1,5})"
                  r"(?:;transport=(?P<transport>udp|tcp|tls))?")
_ID = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


@dataclass(frozen=True)
class _Dest:
    element: str
    address: str
    port: int
    transport: str
    flags: int
    priority: int
    line: int


def _parse_dest(file: str, lineno: int, words: list[str], problems: ImportProblems) -> tuple[int, _Dest] | None:
    if len(words) < 2:
        problems.add(file, lineno, 1, "a destination line needs at least 'setid destination'")
        return None
    setid_text, uri, *rest = words
    if not setid_text.isdigit():
        problems.add(file, lineno, 1, f"set id {setid_text!r} is not a number")
        return None
    match = _URI.fullmatch(uri)
    if not match:
        problems.add(file, lineno, len(setid_text) + 2, f"destination {uri!r} is not sip:ADDRESS:PORT[;transport=...]")
        return None
    address = match["v6"] or match["v4"]
    try:
        address = str(ipaddress.ip_address(address))
    except ValueError:
        problems.add(file, lineno, len(setid_text) + 2, f"{address!r} is not an IP address")
        return None
    flags = int(rest[0]) if rest and rest[0].isdigit() else 0
    priority = int(rest[1]) if len(rest) > 1 and rest[1].lstrip("-").isdigit() else 0
    attrs = dict(part.split("=", 1) for part in (rest[2] if len(rest) > 2 else "").split(";") if "=" in part)
    duid = attrs.get("duid", "")
    if not _ID.fullmatch(duid):
        problems.add(file, lineno, 1, "the destination has no duid=<element id> attribute naming its element"
                     if not duid else f"duid {duid!r} is not a valid element id")
        return None
    transport = match["transport"] or ("tls" if uri.startswith("sips:") else "udp")
    port = int(match["port"])
    if not 1 <= port <= 65535:
        problems.add(file, lineno, 1, f"port {port} is out of range")
        return None
    return int(setid_text), _Dest(duid, address, port, transport, flags, priority, lineno)


def import_dispatcher(path: Path, problems: ImportProblems, hop: str | None = None,
                      owners: dict[int, str] | None = None) -> Draft:
    """The facts one dispatcher list states, as a draft."""
    draft = Draft()
    file = str(path)
    from imsdr.untrusted import UntrustedFile, read_untrusted

    try:
        data = read_untrusted(path, MAX_LIST_BYTES)
        text = data.decode("utf-8")
    except UntrustedFile as exc:
        problems.add(file, 1, 1, f"cannot read: {exc.reason}")
        return draft
    except UnicodeDecodeError as exc:
        problems.add(file, 1, 1, f"cannot read: {exc}")
        return draft
    sets: dict[int, list[_Dest]] = {}
    named: dict[int, str] = dict(owners or {})
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            header = _HEADER.fullmatch(line)
            if header and hop is None:
                hop = "sbc-pcscf" if header[1].startswith("SBC") else "pcscf-icscf"
            comment = _SET_COMMENT.match(line)
            if comment:
                named.setdefault(int(comment[1]), comment[2])
            continue
        parsed = _parse_dest(file, lineno, line.split(), problems)
        if parsed:
            sets.setdefault(parsed[0], []).append(parsed[1])
    if hop is None:
        problems.add(file, 1, 1, "which hop is this list for? give --hop sbc-pcscf or --hop pcscf-icscf")
        return draft
    source_type, target_type = HOPS[hop]
    for setid, dests in sets.items():
        owner = named.get(setid)
        if owner is None:
            problems.add(file, dests[0].line, 1, f"set {setid}: which {source_type} uses it? name it with "
                                                 f"--set {setid}=ELEMENT_ID")
            continue
        _record(draft, file, owner, source_type, target_type, dests)
        draft.order[owner] = setid
    draft.sources.append(f"{file}: {len(sets)} {hop} dispatcher sets")
    return draft


def _record(draft: Draft, file: str, owner: str, source_type: str, target_type: str,
            dests: list[_Dest]) -> None:
    conflicts: list = []  # one source cannot contradict itself, except by listing an element twice
    source = draft.entity("elements", owner)
    draft.state(file, f"elements[{owner}].type", source, "type", source_type, conflicts)
    ordered = sorted(dests, key=lambda d: -d.priority)  # stable: equal priorities keep file order
    if source_type == "sbc":
        draft.state(file, f"elements[{owner}].pcscfs", source, "pcscfs", [d.element for d in ordered], conflicts)
    if all(d.flags & 8 for d in dests):
        draft.state(file, f"elements[{owner}].options_probing", source, "options_probing", "active", conflicts)
    for d in ordered:
        target = draft.entity("elements", d.element)
        draft.state(file, f"elements[{d.element}].type", target, "type", target_type, conflicts)
        if target_type == "cscf":
            draft.state(file, f"elements[{d.element}].roles", target, "roles", ["icscf"], conflicts)
        key, default = ("tls_port", 5061) if d.transport == "tls" else ("port", 5060)
        if d.port != default:
            draft.state(file, f"elements[{d.element}].{key}", target, key, d.port, conflicts)
        draft.state(file, f"elements[{d.element}].addresses", target, "addresses", [d.address], conflicts)
