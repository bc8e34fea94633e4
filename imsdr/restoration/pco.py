"""P-CSCF lists the P-GW/SMF hands PS UEs (PCO, TS 24.008 §10.5.6.3; TS 24.229 §B.2.2.1), per gateway.

A VoLTE UE learns its P-CSCF addresses from the packet gateway, not from DNS. The list for each
local network is the same order the SBC DNS views give its fixed users — the local SBC(s) first,
then the DR SBC — so both access types fail over to the same place (the seed study: "the GGSN
updates the SBC list").
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from imsdr.model.topology import Topology


def pcscf_lists(topology: Topology) -> list[dict[str, Any]]:
    """One entry per packet gateway (sorted by id): the PS local networks it serves and, for each,
    the P-CSCF addresses in preference order (IPv4 and IPv6 containers separately)."""
    gateways: dict[str, dict[str, Any]] = {}
    for ln in sorted(topology.local_networks.values(), key=lambda x: x.id):
        gw = ln.packet_gateway
        if gw is None or ln.access == "fixed":
            continue
        entry = gateways.setdefault(gw.id, {"id": gw.id, "kind": gw.kind, "apns": [], "local_networks": []})
        if gw.apn not in entry["apns"]:
            entry["apns"].append(gw.apn)
        answer = topology.sbc_answer(ln.id)
        dr = topology.dr_sbc.get(ln.id)
        rows = []
        for position, sbc in enumerate(answer, start=1):
            rows.append({
                "position": position,
                "role": "DR" if dr is not None and sbc.id == dr.id else ("primary" if position == 1 else "secondary"),
                "sbc": sbc.id,
                "site": sbc.site,
                "ipv4": [a for a in sbc.addresses if ipaddress.ip_address(a).version == 4],
                "ipv6": [a for a in sbc.addresses if ipaddress.ip_address(a).version == 6],
            })
        entry["local_networks"].append({
            "id": ln.id,
            "apn": gw.apn,
            "prefixes": list(ln.prefixes),
            "pcscfs": rows,
            "ipv4": [a for r in rows for a in r["ipv4"]],
            "ipv6": [a for r in rows for a in r["ipv6"]],
        })
    return [gateways[k] for k in sorted(gateways)]
