"""``imsdr verify --drain ID``: check a drained state on every view of every live DNS server.

The drained state comes from :func:`imsdr.dns.drain.drained_state` (the object ``render dns
--drain`` writes and the runbook pages print), so the check asks exactly the answers the drain
changes: every (view, name, type) of its record changes, on every DNS server that is not drained
itself. A server picks the view of a question

* by the view's TSIG key, when a keys file is given (``match-clients { key <view key>; ... }``
  comes first in every rendered view, so a signed query reaches that view from any host: the NOC
  needs no address inside each view's source range);
* else by the source address: the first host of the view's match list, which works only where
  that address is configured (a lab on loopback, or a host inside the view).

Each answer is compared with :func:`imsdr.resolve.verify.compare`, the same comparison as
``imsdr verify``: a drained answer still missing (the old SRV target still served, a server not
reloaded) is drift; nothing is reported when the drained state is fully loaded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dns.exception
import dns.rdatatype
import dns.rrset

from imsdr.dns.drain import dig_port as dig_port  # the one reading of a platform's dig port
from imsdr.errors import ImsdrError
from imsdr.resolve.verify import Drift, Expectation, LiveAnswer, LiveQuerier, compare

if TYPE_CHECKING:
    from imsdr.dns.drain import DrainedState

MAX_KEYS_BYTES = 1 << 20
_KEY = re.compile(r'key\s+"([A-Za-z0-9.-]+)"\s*\{\s*algorithm\s+([a-z0-9-]+)\s*;'
                  r'\s*secret\s+"([A-Za-z0-9+/=]+)"\s*;\s*\}\s*;')


def read_keys(path: Path) -> dict[str, tuple[str, str]]:
    """key name -> (algorithm, secret) of a BIND keys file (``tsig-keygen`` output), read as
    untrusted input: a symlink, a non-regular file or a file above 1 MiB is refused."""
    from imsdr.untrusted import read_untrusted_text

    text = read_untrusted_text(path, MAX_KEYS_BYTES)
    return {name: (algorithm, secret) for name, algorithm, secret in _KEY.findall(text)}


@dataclass(frozen=True)
class DrainServer:
    label: str  # element id, or the --server text
    address: str
    port: int
    area: str = ""  # its service area: asked the views of that area only ('' : every view)


@dataclass(frozen=True)
class DrainQuestion:
    server: DrainServer
    view: str
    key: str | None  # the view's TSIG key name, when the query is signed
    source: str | None  # else the source address inside the view's match list
    expectation: Expectation


def _dns_rrset(rrset: Any) -> dns.rrset.RRset | None:
    if rrset is None or not rrset.rdatas:
        return None
    return dns.rrset.from_text_list(rrset.name + ".", rrset.ttl, "IN", rrset.rdtype,
                                    [rd.to_text() for rd in rrset.rdatas])


def view_source(plan: Any, view: str) -> str | None:
    """The first host of the view's first IPv4 (else IPv6) match prefix."""
    from imsdr.resolve.live import first_host

    return first_host(plan.view(view).match_clients)


def drain_questions(state: DrainedState, servers: Sequence[DrainServer],
                    keys: dict[str, tuple[str, str]] | None, normal: bool = False) -> list[DrainQuestion]:
    """Every changed answer, in every view it changes in, on every server that has the view; the
    drained answer expected, or the normal one (``normal``: after the failback)."""
    import dns.name

    from imsdr.dns.views import area_holds

    plan = state.normal if normal else state.plan
    out: list[DrainQuestion] = []
    for server in servers:
        for view, _zone, qname, rdtype in state.answers():
            if not area_holds(server.area, plan.view(view).area):
                continue  # another service area's view: this server has none
            key = plan.view(view).key_name
            signed = keys is not None and key in keys
            source = None if signed else view_source(plan, view)
            if not signed and source is None:
                raise ImsdrError(f"view {view} has no source address to select it and no key in --keys: "
                                 "give --keys with the views' TSIG keys")
            expected = _dns_rrset(plan.lookup_rrset(view, qname, rdtype))
            exp = Expectation(source, f"{server.label}/{view}", dns.name.from_text(qname + "."),
                              dns.rdatatype.from_text(rdtype), expected)
            out.append(DrainQuestion(server, view, key if signed else None, source, exp))
    return out


class _Signed(LiveQuerier):
    """A querier whose queries carry one view's TSIG key."""

    keyring: Any = None
    keyname: str = ""
    algorithm: str = "hmac-sha256"

    def ask(self, qname: Any, rdtype: Any, source: str | None) -> LiveAnswer:
        import dns.flags
        import dns.message
        import dns.query
        import dns.rcode

        query = dns.message.make_query(qname, rdtype)
        query.flags &= ~dns.flags.RD
        query.use_tsig(self.keyring, keyname=self.keyname, algorithm=self.algorithm)
        for _attempt in range(self.retries + 1):
            try:
                response, used_tcp = dns.query.udp_with_fallback(query, self.server, timeout=self.timeout,
                                                                  port=self.port)
            except dns.exception.Timeout:
                continue
            except (OSError, dns.exception.DNSException) as exc:
                return LiveAnswer("NETWORK-ERROR", error=str(exc))
            rrset = next((a for a in response.answer if a.name == qname and a.rdtype == rdtype), None)
            return LiveAnswer(dns.rcode.to_text(response.rcode()), rrset, used_tcp,
                              bool(response.flags & dns.flags.AA))
        return LiveAnswer("TIMEOUT")


def check_drained(questions: Sequence[DrainQuestion], keys: dict[str, tuple[str, str]] | None,
                  timeout: float = 2.0, retries: int = 2, workers: int = 8) -> list[Drift]:
    """Ask every question; the drift found, in question order."""
    import dns.tsigkeyring

    def one(q: DrainQuestion) -> list[Drift]:
        if q.key is not None and keys is not None:
            algorithm, secret = keys[q.key]
            querier: LiveQuerier = _Signed(q.server.address, q.server.port, timeout, retries)
            querier.keyring = dns.tsigkeyring.from_text({q.key: (algorithm, secret)})  # type: ignore[attr-defined]
            querier.keyname, querier.algorithm = q.key, algorithm  # type: ignore[attr-defined]
        else:
            querier = LiveQuerier(q.server.address, q.server.port, timeout, retries)
        exp = q.expectation
        return compare(exp, querier.ask(exp.qname, exp.rdtype, q.source))

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return [d for found in pool.map(one, questions) for d in found]


