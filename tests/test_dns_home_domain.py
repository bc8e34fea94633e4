"""home_domain_of (where a pool's dns_name is published) finds the most specific home domain every
member's FQDN is under from the first member's suffixes; the same answer as trying every domain."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from imsdr.dns.names import is_subdomain
from imsdr.dns.plan import home_domain_of

_LABELS = st.sampled_from(["a", "b", "ims", "x", "example", "net", "3gppnetwork", "org"])
_NAMES = st.lists(_LABELS, min_size=1, max_size=4).map(".".join)


def _every_domain(fqdns: list[str], home_domains: list[str], primary: str) -> str:
    best = None
    for domain in home_domains:
        if all(is_subdomain(f, domain) for f in fqdns) and (best is None or len(domain) > len(best)):
            best = domain
    return best if best is not None and fqdns else primary


@settings(max_examples=500, deadline=None)
@given(st.lists(_NAMES, max_size=5), st.lists(_NAMES, min_size=1, max_size=6))
def test_same_answer_as_trying_every_domain(fqdns: list[str], home_domains: list[str]) -> None:
    topo = SimpleNamespace(fqdn=lambda e: e, network=SimpleNamespace(primary_domain="primary.example"))
    assert home_domain_of(topo, home_domains, fqdns) == _every_domain(fqdns, home_domains, "primary.example")  # type: ignore[arg-type]
