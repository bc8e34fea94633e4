"""Talking to the servers of a target: BIND over rndc and DNS, Kamailio over its RPC, Diameter
clients through their reload command. Every command is an argument list (no shell).

Verification of a BIND target asks, in every view of its fragment and signed with that view's TSIG
key (the key selects the view from any host), the SOA of each zone and every RRset of the zone file
that was delivered: the live answer must be the file's. A Kamailio target's ``dispatcher.list`` RPC
must hold exactly the (set, URI) pairs of the delivered list.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.tsigkeyring
import dns.zone

from imsdr.apply.targets import Target
from imsdr.dns.catalog import CATALOG_DIRECTORY, CATALOG_SUFFIX
from imsdr.errors import ImsdrError
from imsdr.untrusted import read_untrusted_text

COMMAND_TIMEOUT_S = 30.0
OUTPUT_KEPT = 2000  # characters of a command's output kept in the journal
RRSETS_VERIFIED = 500  # per zone file; the SOA of every zone is always asked
RNDC_OK = ("zone reload queued", "zone reload up-to-date")
KAMCMD_RELOAD_OK = "Ok. Dispatcher successfully reloaded."
KEYS_LIMIT = 4 << 20


@dataclass(frozen=True)
class ZoneRef:
    view: str
    key: str | None  # the view's TSIG key
    zone: str
    kind: str  # primary | secondary
    file: str


def queryable(ref: ZoneRef) -> bool:
    """Whether anyone but the set's own servers may ask for the zone: not a catalog zone (RFC 9432:
    its primary answers it only to the secondaries it feeds, with the view's key)."""
    return not ref.zone.endswith("." + CATALOG_SUFFIX)


def catalog_members(refs: list[ZoneRef], tree: dict[str, bytes]) -> list[ZoneRef]:
    """The member zones a secondary's catalogs bring into each view (read from the catalog zone
    files of the plan): they are what its convergence is checked on."""
    out: list[ZoneRef] = []
    for ref in refs:
        if ref.kind != "secondary" or queryable(ref):
            continue
        data = tree.get(f"dns/{CATALOG_DIRECTORY}/{ref.zone}.zone")  # named after its zone, as every zone file
        if data is None:
            continue
        parsed = dns.zone.from_text(data.decode("utf-8"), origin=ref.zone, relativize=False, check_origin=False)
        members = sorted({rdata.target.to_text(omit_final_dot=True) for _name, _ttl, rdata
                          in parsed.iterate_rdatas("PTR")})
        out += [ZoneRef(ref.view, ref.key, member, "secondary", "") for member in members]
    return out


_VIEW = re.compile(r'^view "([^"]+)" \{')
_MATCH_KEY = re.compile(r'match-clients \{ key "([^"]+)";')
_ZONE = re.compile(r'^\s*zone "([^"]+)" \{')
_TYPE_FILE = re.compile(r'type (primary|secondary);.*?file "([^"]+)";')


def zone_refs(fragment: str) -> list[ZoneRef]:
    """Every (view, zone, file) of a rendered ``named/<server>.conf`` fragment, in order."""
    refs: list[ZoneRef] = []
    view = key = zone = None
    for line in fragment.splitlines():
        if m := _VIEW.match(line):
            view, key, zone = m.group(1), None, None
        elif view and (m := _MATCH_KEY.search(line)):
            key = m.group(1)
        elif view and (m := _ZONE.match(line)):
            zone = m.group(1)
        if view and zone and (m := _TYPE_FILE.search(line)):
            refs.append(ZoneRef(view, key, zone, m.group(1), m.group(2)))
            zone = None
    return refs


def read_keyring(path: str) -> dict[str, str]:
    """name -> secret of a TSIG keys file (hmac-sha256, as ``imsdr render dns --keys`` writes it)."""
    text = read_untrusted_text(path, KEYS_LIMIT)
    return dict(re.findall(r'key "([A-Za-z0-9.-]+)" \{\s*algorithm hmac-sha256;\s*secret "([^"]+)";', text))


@dataclass(frozen=True)
class Outcome:
    ok: bool
    output: str
    duration_s: float


def run(argv: tuple[str, ...], timeout: float = COMMAND_TIMEOUT_S) -> Outcome:
    """Run an argument list (never a shell); its output (stdout then stderr) and exit status."""
    program = shutil.which(argv[0]) or (f"/usr/sbin/{argv[0]}" if "/" not in argv[0] else argv[0])
    start = time.monotonic()
    try:
        done = subprocess.run([program, *argv[1:]], capture_output=True, text=True, timeout=timeout,
                              check=False, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return Outcome(False, f"{argv[0]}: not found", time.monotonic() - start)
    except subprocess.TimeoutExpired:
        return Outcome(False, f"{argv[0]}: no answer within {timeout:.0f} s", time.monotonic() - start)
    output = (done.stdout + done.stderr).strip()
    return Outcome(done.returncode == 0, output[:OUTPUT_KEPT], time.monotonic() - start)


def rpc(target: Target, method: str, *params: str, timeout: float = COMMAND_TIMEOUT_S) -> Outcome:
    """One Kamailio RPC: kamcmd over the binrpc socket, or JSON-RPC over HTTP."""
    assert target.rpc is not None
    if target.rpc.kamcmd:
        return run(target.rpc.argv(method, *params), timeout)
    start = time.monotonic()
    body = json.dumps({"jsonrpc": "2.0", "method": method, "params": list(params), "id": 1}).encode()
    request = urllib.request.Request(target.rpc.jsonrpc, body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - http:// checked
            answer = json.loads(response.read(1 << 20))
    except (OSError, ValueError) as exc:
        return Outcome(False, f"JSON-RPC {method}: {exc}", time.monotonic() - start)
    if "error" in answer:
        return Outcome(False, json.dumps(answer["error"])[:OUTPUT_KEPT], time.monotonic() - start)
    result = answer.get("result")
    text = result if isinstance(result, str) else json.dumps(result, indent=1)
    return Outcome(True, text[:OUTPUT_KEPT], time.monotonic() - start)


def rpc_display(target: Target, method: str, *params: str) -> str:
    assert target.rpc is not None
    if target.rpc.kamcmd:
        return " ".join(target.rpc.argv(method, *params))
    return f"POST {target.rpc.jsonrpc} {json.dumps({'jsonrpc': '2.0', 'method': method, 'params': list(params)})}"


def _ask(target: Target, qname: str, rdtype: str, key: str | None, ring: dict[str, str],
         timeout: float = 2.0) -> dns.message.Message:
    assert target.dns is not None
    request = dns.message.make_query(qname, rdtype)
    request.flags &= ~dns.flags.RD
    if key:
        if key not in ring:
            raise ImsdrError(f"the TSIG keys file has no key {key!r} (view of {target.id})")
        request.use_tsig(dns.tsigkeyring.from_text({key: ("hmac-sha256", ring[key])}), keyname=key,
                         algorithm="hmac-sha256")
    address, port = target.dns
    for attempt in range(3):
        try:
            response = dns.query.udp(request, address, port=port, timeout=timeout)
            if response.flags & dns.flags.TC:
                response = dns.query.tcp(request, address, port=port, timeout=timeout * 2)
            return response
        except (dns.exception.Timeout, OSError):
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def served_serial(target: Target, ref: ZoneRef, ring: dict[str, str]) -> int | None:
    """The SOA serial ``target`` serves for ``ref``'s zone in ``ref``'s view (None: none)."""
    try:
        response = _ask(target, ref.zone, "SOA", ref.key, ring, timeout=1.0)
    except (dns.exception.DNSException, OSError):
        return None
    for rrset in response.answer:
        if rrset.rdtype == dns.rdatatype.SOA:
            return int(rrset[0].serial)
    return None


def zone_serial(zone_text: str, zone: str) -> int:
    parsed = dns.zone.from_text(zone_text, origin=zone, relativize=False, check_origin=False)
    soa = parsed.get_rdataset(parsed.origin, dns.rdatatype.SOA)
    return int(soa[0].serial) if soa else 0


def verify_zone(target: Target, ref: ZoneRef, zone_text: str, ring: dict[str, str]) -> list[str]:
    """Drift between the delivered zone file and what ``target`` answers in ``ref``'s view."""
    drift: list[str] = []
    parsed = dns.zone.from_text(zone_text, origin=ref.zone, relativize=False, check_origin=False)
    origin = parsed.origin
    checked = 0
    for name, node in sorted(parsed.nodes.items()):
        for rdataset in node.rdatasets:
            if rdataset.rdtype == dns.rdatatype.RRSIG:
                continue
            if checked >= RRSETS_VERIFIED and rdataset.rdtype != dns.rdatatype.SOA:
                continue
            checked += 1
            rdtype = dns.rdatatype.to_text(rdataset.rdtype)
            where = f"{ref.view}: {name} {rdtype}"
            # a delegation below the apex is answered as a referral: skip its NS and glue here
            if name != origin and rdataset.rdtype == dns.rdatatype.NS:
                continue
            try:
                response = _ask(target, name.to_text(), rdtype, ref.key, ring)
            except (dns.exception.DNSException, OSError) as exc:
                drift.append(f"{where}: no answer ({exc.__class__.__name__})")
                continue
            if response.rcode() != dns.rcode.NOERROR:
                drift.append(f"{where}: {dns.rcode.to_text(response.rcode())}")
                continue
            live = next((r for r in response.answer if r.rdtype == rdataset.rdtype and r.name == name), None)
            if live is None:
                if response.authority and name != origin:
                    continue  # below a delegation cut: the referral is the right answer
                drift.append(f"{where}: missing")
                continue
            want = sorted(r.to_text() for r in rdataset)
            got = sorted(r.to_text() for r in live)
            if want != got:
                drift.append(f"{where}: answers {'; '.join(got)} instead of {'; '.join(want)}")
            elif live.ttl != rdataset.ttl:
                drift.append(f"{where}: TTL {live.ttl} instead of {rdataset.ttl}")
    return drift


def dispatcher_entries(list_text: str) -> set[tuple[int, str]]:
    """(set id, URI) of every destination of a Kamailio dispatcher list file."""
    entries = set()
    for number, line in enumerate(list_text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) < 2 or not fields[0].isdigit() or not fields[1].startswith(("sip:", "sips:")):
            raise ImsdrError(f"dispatcher.list:{number}: not 'SETID sip:URI ...': {line[:80]!r}")
        entries.add((int(fields[0]), fields[1]))
    return entries


def live_dispatcher(listing: str) -> set[tuple[int, str]]:
    """(set id, URI) pairs of ``dispatcher.list`` RPC output (kamcmd text or JSON-RPC result)."""
    entries = set()
    setid = None
    for line in listing.splitlines():
        if m := re.search(r'"?ID"?:\s*(\d+)', line):
            setid = int(m.group(1))
        elif (m := re.search(r'"?URI"?:\s*"?(sips?:[^"\s,]+)', line)) and setid is not None:
            entries.add((setid, m.group(1)))
    return entries
