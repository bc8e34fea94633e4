"""Plain data for the runbook's restoration sections (templates/_restoration.md.j2).

Built from the same model and timing functions that simulate uses, so the pages and simulate
never tell two stories about one failure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from imsdr.capacity.timing import access_windows, diameter_detection, h248_detection, periodic_backup
from imsdr.restoration.body import CONTENT_TYPE, response_label, restoration_body, restoration_response
from imsdr.restoration.breakout import enum_outage_breakout
from imsdr.restoration.pco import pcscf_lists

if TYPE_CHECKING:
    from imsdr.model.topology import Topology

# The clauses each page follows (the standard where it differs from the seed study).
CITATIONS: dict[str, list[str]] = {
    "sbc": ["TS 23.380 §5.4 (HSS-based P-CSCF restoration)", "TS 24.229 §5.2.6.3.2A (504 restoration answer)",
            "TS 23.167 §6.2 and TS 24.229 §5.2.10 (emergency sessions)", "RFC 3263 (locating SIP servers)"],
    "pcscf": ["TS 23.380 §4.4.3 and §5.4-§5.5 (S-CSCF and P-CSCF restoration)",
              "TS 24.229 §5.2.6.3.2A and §7.6 (504 with the 3GPP IMS XML body)",
              "TS 24.008 §10.5.6.3 (P-CSCF addresses in the PCO)"],
    "cscf": ["TS 23.380 §4.3-§4.4 (S-CSCF restoration with restoration data)",
             "TS 29.228/29.229 (Cx: SAR, restoration information)"],
    "hss": ["RFC 3539 §3.4.1 (Diameter watchdog, Tw)", "RFC 5880 §6.8.4 (BFD detection time)",
            "RFC 9260 §8.3 (SCTP path heartbeat)", "RFC 6733 §2.8 (Diameter agents: relay, proxy, redirect)",
            "TS 29.229 §6.1.4 (SAR P-CSCF restoration indication)"],
    "enum_dns": ["RFC 6116 (ENUM)", "TS 24.229 §5.4.3.2 and §5.8 (S-CSCF/BGCF routing without an ENUM answer)"],
    "mgcf": ["ITU-T H.248.1 §11.5 (ServiceChange, MGC failover)", "ITU-T H.248.14 (inactivity timer)",
             "TS 29.163 (IMS-CS interworking, MGCF/IM-MGW)", "ITU-T E.520 (Erlang B trunk dimensioning)"],
    "as": ["TS 23.218 (IM call model, AS in the S-CSCF's iFC)", "TS 24.229 §5.4.3 (S-CSCF to AS routing)"],
    "site": ["TS 23.380 (IMS restoration procedures)", "TS 23.167 (IMS emergency sessions)"],
}


def _window_rows(topo: Topology, types: tuple[str, ...]) -> list[dict[str, Any]]:
    from imsdr.capacity.timing import AccessTypes

    rows = []
    access = AccessTypes(topo)  # the SBCs' access types worked out once, not per element
    for t in types:
        for el in sorted(topo.by_type.get(t, []), key=lambda e: e.id):
            for access_type, window in access_windows(topo, el, access).items():
                rows.append({"element": el.id, "access": access_type, "seconds": window.seconds,
                             "formula": window.formula()})
    return rows


def restoration_context(topo: Topology) -> dict[str, Any]:
    net = topo.network
    mode = net.restoration.scscf_restoration_response
    ps_networks = sorted(ln.id for ln in topo.local_networks.values() if ln.access in ("ps", "both"))

    emergency = []
    for ln in sorted(topo.local_networks.values(), key=lambda x: x.id):
        dr = topo.dr_sbc.get(ln.id)
        data = ln.emergency
        emergency.append({
            "local_network": ln.id,
            "access": ln.access,
            "dr_sbc": dr.id if dr else None,
            "pani": data.pani if data else None,
            "phone_context": data.phone_context if data else None,
            "psap_route": f"+{data.psap_route}" if data else None,
        })

    diameter = []
    for t in ("hss", "slf"):
        for el in sorted(topo.by_type.get(t, []), key=lambda e: e.id):
            part = diameter_detection(topo, el)
            diameter.append({"element": el.id, "seconds": part.seconds, "how": part.how,
                             "meets_target": part.seconds <= net.timers.diameter_detection_target})

    backups = []
    split_brain = []
    for group in sorted(topo.groups.values(), key=lambda g: g.id):
        members = [topo.elements[m] for m in group.members if m in topo.elements]
        if not members or members[0].type.value not in ("hss", "slf"):
            continue
        if members[0].type.value in ("hss", "slf"):
            backup = periodic_backup(topo, members[0])
            if backup is not None:
                detection = diameter_detection(topo, members[0]).seconds
                backups.append({"group": group.id, "members": [m.id for m in members],
                                "restore_time": backup.restore_time, "rpo": backup.rpo,
                                "detection": detection,
                                "switchover": detection + (backup.restore_time or 0)})
        if group.kind == "pair" and group.spec.sync == "realtime" and len(members) == 2:
            writer = members[0]
            split_brain.append({"group": group.id, "members": [m.id for m in members],
                                "sites": [m.site for m in members], "mode": group.spec.mode,  # type: ignore[union-attr]
                                "writer": writer.id, "fenced": members[1].id,
                                "type": members[0].type.value})

    imgws = []
    for gw in sorted(topo.by_type.get("imgw", []), key=lambda e: e.id):
        imgws.append({"id": gw.id, "site": gw.site, "circuits": gw.capacity.circuits,
                      "primary": gw.controlled_by[0] if gw.controlled_by else None,
                      "backups": list(gw.controlled_by[1:])})

    route_sets = []
    # the sites holding an MGCF or IM-MGW, found once (not per site: a national network has ~120)
    gateway_sites = {e.site for t in ("mgcf", "imgw") for e in topo.by_type.get(t, [])}
    for site in sorted(topo.sites.values(), key=lambda s: s.id):
        mgcfs = sorted(e.id for e in topo.by_site.get(site.id, []) if e.type.value == "mgcf")
        gws = sorted((e for e in topo.by_site.get(site.id, []) if e.type.value == "imgw"), key=lambda e: e.id)
        if not mgcfs and not gws:
            continue
        others = sorted(gateway_sites - {site.id})
        route_sets.append({"site": site.id, "mgcfs": mgcfs, "imgws": [g.id for g in gws],
                           "circuits": sum(int(g.capacity.circuits or 0) for g in gws),
                           "alternate_sites": others})

    breakout = enum_outage_breakout(topo)
    h248 = h248_detection(topo)
    restoration = net.restoration
    return {
        "pcscf_restoration": restoration.pcscf_restoration,
        "signalling_time": restoration.signalling_time,
        "registration_time": restoration.registration_time,
        "ps_registration_expiry": net.timers.ps_registration_expiry,
        "scscf_response": mode,
        "response_label": response_label(mode),
        "content_type": CONTENT_TYPE,
        "body_xml": restoration_body(),
        "sip_response": restoration_response(mode, asserted=_pcscf_uri(topo)),
        "ps_networks": ps_networks,
        "windows": {"sbc": _window_rows(topo, ("sbc",)), "pcscf": _window_rows(topo, ("pcscf",))},
        "gateways": pcscf_lists(topo),
        "emergency": emergency,
        "diameter_target": net.timers.diameter_detection_target,
        "diameter_watchdog": net.timers.diameter_watchdog,
        "diameter": diameter,
        "backups": backups,
        "split_brain": split_brain,
        "imgws": imgws,
        "h248_detection": {"seconds": h248.seconds, "how": h248.how},
        "route_sets": route_sets,
        "breakout": None if breakout is None else {
            "pstn_erlangs": breakout.pstn_erlangs, "onnet_erlangs": breakout.onnet_erlangs,
            "onnet_share": net.capacity_model.onnet_share,
            "offered_erlangs": breakout.offered_erlangs, "circuits": breakout.circuits,
            "circuits_needed": breakout.circuits_needed, "grade_of_service": breakout.grade_of_service,
            "blocking": breakout.blocking, "carried": breakout.carried,
        },
        "citations": CITATIONS,
    }


def _pcscf_uri(topo: Topology) -> str | None:
    """The URI of the first P-CSCF, as its Path entry names it (the example's P-Asserted-Identity)."""
    for el in topo.by_type.get("pcscf", []):
        return f"sip:{topo.fqdn(el)};lr"
    return None
