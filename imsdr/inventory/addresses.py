"""IPv6 address text as ``ipaddress`` writes it, by the C formatter where the two agree.

The inventory keeps ``str()`` of every parsed address and the zone files write AAAA records the
same way; ``ipaddress``'s formatter costs ~20 µs an address and a national plan has thousands.
"""

from __future__ import annotations

import ipaddress
import socket

_TEN_ZEROS = bytes(10)


def ipv6_text(packed: bytes) -> str:
    """``str(ipaddress.IPv6Address(packed))``. The C formatter writes an IPv4 tail for ::/96 and
    ::ffff:0:0/96, which ipaddress does not; those go to ipaddress (property tests hold the two
    together)."""
    if packed[:10] != _TEN_ZEROS or packed[10:12] not in (b"\0\0", b"\xff\xff"):
        return socket.inet_ntop(socket.AF_INET6, packed)
    return str(ipaddress.IPv6Address(packed))
