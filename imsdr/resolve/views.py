"""Which BIND view answers a client: the first view whose ``match-clients`` matches.

BIND evaluates a view's ``match-clients`` address-match list element by element; the first
element that matches the client decides (a negated element ``!x`` that matches rejects the
client for that view). A client no element matches does not match the view. The first view that
matches answers; when no view matches, BIND refuses the query.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IpAddr = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True, slots=True)
class ViewSpec:
    """A view's name and its ``match-clients`` elements, in order.

    Elements are prefixes or addresses (``198.51.100.0/27``, ``2001:db8::1``), ``any``, ``none``,
    the name of an ACL in ``acls``, ``key <name>`` (matches signed requests only, so never the
    unsigned queries modelled here), or any of these negated with a leading ``!``.
    """

    name: str
    match_clients: tuple[str, ...]
    acls: Mapping[str, Sequence[str]] = field(default_factory=dict)


def _match(element: str, address: IpAddr, acls: Mapping[str, Sequence[str]], depth: int = 0) -> bool | None:
    """True: matched and accepted; False: matched a negated element; None: no match."""
    element = element.strip()
    negated = element.startswith("!")
    if negated:
        element = element[1:].strip()
    if len(element) > 1 and element[0] == element[-1] == '"':
        element = element[1:-1]  # a quoted ACL name, as named.conf writes it
    if depth > 16:
        raise ValueError("ACL nesting too deep (loop?)")
    if element == "any":
        hit: bool | None = True
    elif element.startswith("key ") or element.startswith('key"'):
        hit = None  # a TSIG key: never matches the unsigned queries resolve and verify send
    elif element == "none":
        hit = None
    elif element in acls:
        hit = _match_list(acls[element], address, acls, depth + 1)
        if hit is None:
            return None
        # a negated ACL whose inner list rejected the client counts as no match in BIND's rules
        if hit is False:
            return None if negated else False
    else:
        try:
            network = ipaddress.ip_network(element, strict=False)
        except ValueError:
            raise ValueError(f"unsupported match-clients element {element!r}") from None
        hit = True if address.version == network.version and address in network else None
    if hit is None:
        return None
    return not negated


def _match_list(elements: Sequence[str], address: IpAddr, acls: Mapping[str, Sequence[str]],
                depth: int = 0) -> bool | None:
    for element in elements:
        result = _match(element, address, acls, depth)
        if result is not None:
            return result
    return None


def view_matches(view: ViewSpec, source: str) -> bool:
    address = ipaddress.ip_address(source)
    return _match_list(view.match_clients, address, view.acls) is True


def select_view(views: Sequence[ViewSpec], source: str | None) -> ViewSpec | None:
    """The view BIND answers ``source`` from; ``None`` source means a client matching only ``any``."""
    if source is None:
        for view in views:
            if any(el.strip() == "any" for el in view.match_clients):
                return view
        return None
    for view in views:
        if view_matches(view, source):
            return view
    return None
