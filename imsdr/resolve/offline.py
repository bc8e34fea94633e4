"""``imsdr resolve``: what a client at a source address gets for a name, from the plan alone."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from imsdr.errors import ImsdrError
from imsdr.model.rfc2782 import Arrangement
from imsdr.resolve.rfc3263 import Resolution, ResolveError, Rfc3263Resolver
from imsdr.resolve.source import RecordSource
from imsdr.resolve.views import select_view

if TYPE_CHECKING:
    from imsdr.resolve.planview import ElementIndex


def resolve_in(source: RecordSource, name: str, *, client: str | None = None, rdtype: str = "auto",
               transport: str | None = None, enum_suffix: str = "e164.arpa",
               index: ElementIndex | None = None, arrangement: Arrangement = "random") -> Resolution:
    """Resolve ``name`` as a client at ``client`` would, in the view BIND would pick for it.

    Raises :class:`ImsdrError` for an unusable query (bad address, URI or transport). A name that
    does not resolve is not an error: the result says ``resolved == False`` with a reason.
    """
    if client is not None:
        try:
            client = ipaddress.ip_address(client).compressed
        except ValueError:
            raise ImsdrError(f"--from: {client!r} is not an IP address") from None
    view = select_view(source.views(), client)
    if view is None:
        res = Resolution(query=name, rdtype=rdtype, transport=transport, source=client)
        res.reason = (f"no view matches {client}: BIND refuses the query" if client
                      else "no view matches every client (no 'any' view); give --from")
        return res
    refused = view.name in getattr(source, "refusing", ())  # the query is checked all the same
    resolver = Rfc3263Resolver((lambda q, t: None) if refused else (lambda q, t: source.rrset(view.name, q, t)),
                               enum_suffix=enum_suffix, arrangement=arrangement)
    try:
        res = resolver.resolve(name, rdtype, transport)
    except ResolveError as exc:
        raise ImsdrError(str(exc)) from None
    if refused:
        res.reason = f"view {view.name} refuses every query (network.dns.default_view: refuse)"
    res.view = view.name
    res.source = client
    if index is not None:
        for cand in res.candidates:
            cand.element, cand.site = index.describe(cand.target, cand.addresses)
    return res
