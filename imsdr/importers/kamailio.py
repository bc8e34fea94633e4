"""Import Kamailio ``dispatcher.list`` files (SBC -> P-CSCF and P-CSCF -> I-CSCF).

A line is ``setid destination flags priority attrs``. Kamailio orders a set by priority, highest
value first, so a source's preference list is its destinations sorted by descending priority (equal
priorities: the order of the file). Flag 8 (probing) on the destinations means the source probes
them with OPTIONS: ``options_probing: active``. The destination (``sip:ADDRESS:PORT`` or
``sip:FQDN[:PORT]``) is the element the ``duid`` attribute names or, without one, the element of
the draft being merged into (``--into``) at that address or with that FQDN. Which element a set
belongs to is not in the line format: imsdr's own lists name it in a comment above the set
(``# set N: SBC <id> ...``); for other lists ``--set N=ID`` says, or the draft does: the one
element of the hop's source type named by the list's file or directory name, or the draft's only
element of that type. The hop itself comes from imsdr's header, ``--hop``, or the draft's types
of the destinations (P-CSCFs: SBC -> P-CSCF; I-CSCFs: P-CSCF -> I-CSCF).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from imsdr.importers.draft import Draft
from imsdr.importers.errors import ImportProblems
from imsdr.inventory.placeholders import placeholder
from imsdr.model.topology import derived_fqdn

MAX_LIST_BYTES = 64 * 1024 * 1024
HOPS = {"sbc-pcscf": ("sbc", "pcscf"), "pcscf-icscf": ("pcscf", "cscf")}
_HEADER = re.compile(r"#\s*Kamailio dispatcher\.list:\s*(SBC -> P-CSCF|P-CSCF -> I-CSCF)\s*")
_SET_COMMENT = re.compile(r"#\s*set (\d+): (?:SBC|P-CSCF) ([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?) ")
_URI = re.compile(r"sips?:(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<v4>[0-9]+(?:\.[0-9]+){3})"
                  r"|(?P<fqdn>[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?))"
                  r"(?::(?P<port>[0-9]{1,5}))?(?:;transport=(?P<transport>udp|tcp|tls))?")
_ID = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_SETID = re.compile(r"[0-9]{1,9}")  # ASCII digits only: '²'.isdigit() is True, int('²') fails
_NUMBER = re.compile(r"-?[0-9]{1,9}")


def set_owner(text: str) -> tuple[int, str]:
    """``SETID=ELEMENT_ID`` (the ``--set`` option) as (set id, element id); ValueError says why not."""
    number, sep, ident = text.partition("=")
    if not sep or not _SETID.fullmatch(number):
        raise ValueError("expected SETID=ELEMENT_ID with a set id of ASCII digits, e.g. 3=sbc-coast")
    if not _ID.fullmatch(ident):
        raise ValueError(f"{ident!r} is not an element id (lowercase letters, digits and '-', at most 63)")
    return int(number), ident


@dataclass(frozen=True)
class _Dest:
    element: str
    address: str  # '' for an FQDN destination
    fqdn: str  # '' for an address destination
    port: int
    transport: str
    flags: int
    priority: int
    line: int


class DraftIndex:
    """The elements of an earlier draft by address and by FQDN: what a line without ``duid`` names."""

    def __init__(self, draft: Draft | None) -> None:
        self.types: dict[str, str] = {}
        self.by_address: dict[str, set[str]] = {}
        self.by_fqdn: dict[str, set[str]] = {}
        if draft is None:
            return
        domains = draft.network.get("home_domains") or []
        primary = domains[0] if domains and isinstance(domains[0], str) else None
        dns = draft.network.get("dns")
        host_zone = dns.get("host_zone") if isinstance(dns, dict) else None
        for ident, el in draft.elements.items():
            kind = el.get("type")
            if isinstance(kind, str):
                self.types[ident] = kind
            for key in ("addresses", "access_addresses", "core_addresses"):
                for address in el.get(key) or []:
                    try:
                        self.by_address.setdefault(str(ipaddress.ip_address(address)), set()).add(ident)
                    except ValueError:
                        continue  # a placeholder
            fqdn = el.get("fqdn") or (derived_fqdn(ident, primary, host_zone) if primary else None)
            if isinstance(fqdn, str):
                self.by_fqdn.setdefault(fqdn.rstrip(".").lower(), set()).add(ident)

    def element(self, address: str, fqdn: str) -> tuple[str | None, str]:
        """(the one element at ``address`` or with ``fqdn``, else None; why not)."""
        found = self.by_address.get(address, set()) if address else self.by_fqdn.get(fqdn.rstrip(".").lower(), set())
        what = address or fqdn
        if len(found) == 1:
            return next(iter(found)), ""
        if found:
            several = ", ".join(sorted(found))
            return None, f"{what} is the address of several elements of the draft ({several}): add duid="
        if not self.types:
            return None, ("the destination has no duid=<element id> attribute naming its element (or give --into "
                          "DRAFT with an element at that address)")
        return None, f"no duid= and no element of the draft at {what}: add duid=<element id>"


def _parse_dest(file: str, lineno: int, words: list[str], problems: ImportProblems,
                known: DraftIndex) -> tuple[int, _Dest] | None:
    if len(words) < 2:
        problems.add(file, lineno, 1, "a destination line needs at least 'setid destination'")
        return None
    setid_text, uri, *rest = words
    if not _SETID.fullmatch(setid_text):
        problems.add(file, lineno, 1, f"set id {setid_text!r} is not a number")
        return None
    column = len(setid_text) + 2
    match = _URI.fullmatch(uri)
    if not match:
        problems.add(file, lineno, column, f"destination {uri!r} is not sip:ADDRESS[:PORT] or sip:FQDN[:PORT] "
                                           "[;transport=...]")
        return None
    address, fqdn = match["v6"] or match["v4"] or "", (match["fqdn"] or "").rstrip(".").lower()
    if address:
        try:
            address = str(ipaddress.ip_address(address))
        except ValueError:
            problems.add(file, lineno, column, f"{address!r} is not an IP address")
            return None
    for index, what in ((0, "flags"), (1, "priority")):
        if len(rest) > index and not _NUMBER.fullmatch(rest[index]):
            problems.add(file, lineno, 1, f"{what} {rest[index]!r} is not a number (ASCII digits)")
            return None
    flags = int(rest[0]) if rest else 0
    priority = int(rest[1]) if len(rest) > 1 else 0
    attrs = dict(part.split("=", 1) for part in (rest[2] if len(rest) > 2 else "").split(";") if "=" in part)
    duid = attrs.get("duid", "")
    if duid and not _ID.fullmatch(duid):
        problems.add(file, lineno, 1, f"duid {duid!r} is not a valid element id")
        return None
    if not duid:
        found, why = known.element(address, fqdn)
        if found is None:
            problems.add(file, lineno, column, why)
            return None
        duid = found
    transport = match["transport"] or ("tls" if uri.startswith("sips:") else "udp")
    port = int(match["port"] or (5061 if transport == "tls" else 5060))
    if not 1 <= port <= 65535:
        problems.add(file, lineno, 1, f"port {port} is out of range")
        return None
    return int(setid_text), _Dest(duid, address, fqdn, port, transport, flags, priority, lineno)


def _hop_from_draft(sets: dict[int, list[_Dest]], known: DraftIndex) -> str | None:
    """The hop the destinations' types in the draft say: all P-CSCFs or all (I-)CSCFs."""
    kinds = {known.types.get(d.element) for dests in sets.values() for d in dests}
    return {frozenset({"pcscf"}): "sbc-pcscf", frozenset({"cscf"}): "pcscf-icscf"}.get(frozenset(kinds))


def _owner_from_draft(path: Path, source_type: str, known: DraftIndex) -> str | None:
    """The element of ``source_type`` the list belongs to, when the draft tells: the one such
    element whose id the file or directory name holds, else the draft's only one."""
    candidates = sorted(i for i, kind in known.types.items() if kind == source_type)
    words = f"{path.parent.name} {path.stem}"
    named = [i for i in candidates if re.search(rf"(?<![a-z0-9-]){re.escape(i)}(?![a-z0-9-])", words)]
    if len(named) == 1:
        return named[0]
    return candidates[0] if len(candidates) == 1 else None


def import_dispatcher(path: Path, problems: ImportProblems, hop: str | None = None,
                      owners: dict[int, str] | None = None, into: Draft | None = None) -> Draft:
    """The facts one dispatcher list states, as a draft (``into``: the draft it will be merged
    into, which names the destinations without ``duid`` and may tell the hop and the owners)."""
    draft = Draft()
    known = DraftIndex(into)
    file = str(path)
    from imsdr.untrusted import UntrustedFile, read_untrusted_text

    try:  # a list over the limit is refused, never cut
        text = read_untrusted_text(path, MAX_LIST_BYTES)
    except UntrustedFile as exc:
        where, _, rest = exc.file.partition(f"{file}:")
        line, _, column = rest.partition(":")
        problems.add(file, int(line) if not where and line.isdigit() else 1,
                     int(column) if not where and column.isdigit() else 1, exc.reason)
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
        parsed = _parse_dest(file, lineno, line.split(), problems, known)
        if parsed:
            sets.setdefault(parsed[0], []).append(parsed[1])
    if hop is None:
        hop = _hop_from_draft(sets, known)
    if hop is None:
        problems.add(file, 1, 1, "which hop is this list for? give --hop sbc-pcscf or --hop pcscf-icscf")
        return draft
    source_type, target_type = HOPS[hop]
    unnamed = [setid for setid in sets if setid not in named]
    default_owner = _owner_from_draft(path, source_type, known) if len(unnamed) == 1 else None
    for setid, dests in sets.items():
        owner = named.get(setid) or default_owner
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
        if d.address:
            draft.state(file, f"elements[{d.element}].addresses", target, "addresses", [d.address], conflicts)
        elif "addresses" not in target:  # an FQDN: its addresses are in DNS, not in the list
            draft.state(file, f"elements[{d.element}].fqdn", target, "fqdn", d.fqdn, conflicts)
            target["addresses"] = [placeholder(f"the signalling addresses of {d.element} ({d.fqdn})")]
