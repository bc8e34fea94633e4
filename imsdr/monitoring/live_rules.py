"""Rule files that watch the live network against the plan: DNS answers and serials, dispatcher
destination state, Diameter peers.

* ``dns.rules.yml`` reads what ``imsdr verify --format prometheus`` and ``imsdr exporter`` publish
  (imsdr.resolve.metrics): per DNS server of the plan, ``ImsdrDnsDrift`` when a view answers
  differently from the plan; ``ImsdrDnsSerialsDiffer`` when a zone's SOA serial is not the same on
  every server for longer than the plan expects a transfer to take (SOA refresh + retry: a
  secondary that missed the NOTIFY polls after refresh, and once more after retry when that poll
  failed); ``ImsdrDnsViewNotMonitored`` for a view the exporter cannot ask; ``ImsdrVerifyFailed``.
* ``sip.rules.yml``: per planned dispatcher destination of every SBC and P-CSCF,
  ``ImsdrDispatcherDestinationDown`` when Kamailio no longer holds it in service (inactive or
  disabled: Kamailio takes it out after the OPTIONS detection time the runbook predicts, interval
  × threshold + timeout, so the alert fires at that time); ``ImsdrDispatcherStateUnknown`` when a
  source's state is not scraped.
* ``diameter.rules.yml``: per Diameter client (and DRA) and per peer the plan expects OPEN (the
  active member of an active-standby pair; every other peer of its peering, imsdr.diameter),
  ``ImsdrDiameterPeerNotOpen`` after 2 × Tw without the peer open (RFC 3539 §3.4.1: the watchdog
  declares a silent peer failed after 2 × Tw). Input ``imsdr_diameter_peer_open{client, peer}``
  (the metric contract of docs/monitoring.md; peer is the element id).

Each alert's severity is the rule catalogue's level of the rule that judges the same assumption
at plan time (label ``rule``), and its ``runbook_url`` is the Declare step of the page of the
element that failed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from imsdr.monitoring.ruletext import Pages, alert_rule, group, selector
from imsdr.runbook import alerts

if TYPE_CHECKING:
    from imsdr.inventory.schema import Element
    from imsdr.model.topology import Topology

DNS_FILE, SIP_FILE, DIAMETER_FILE = "dns.rules.yml", "sip.rules.yml", "diameter.rules.yml"
DNS_RULE, SERIAL_RULE, DISPATCHER_RULE, DIAMETER_RULE = "DNS-005", "DNS-003", "PAIR-001", "HSS-001"
UNKNOWN_FOR = "5m"  # an exporter or RPC that fails for a few scrapes is not yet a blind spot
DECLARE = "#declare"
Severity = Callable[[str], str]


def _dns_servers(topology: Topology) -> list[Element]:
    from imsdr.dns.views import server_layout

    return [topology.elements[s.id] for s in server_layout(topology).servers if s.id in topology.elements]


def transfer_seconds() -> int:
    """SOA refresh + retry of the rendered zones (every zone carries the same SOA timers)."""
    from imsdr.dns.records import SOA

    soa = SOA("", "", 0)  # the timers every rendered zone's SOA carries (imsdr.dns.plan)
    return soa.refresh + soa.retry


def dns_rules(topology: Topology, base: str, severity: Severity) -> tuple[str, int]:
    pages = Pages(topology)
    rules: list[str] = []
    servers = _dns_servers(topology)
    page = pages.of(servers[0]) if servers else "enum-dns.md"
    for server in servers:
        rules += alert_rule(
            alerts.DNS_SERVER_DOWN, selector("imsdr_dns_server_up", server=server.id) + " == 0", "0s",
            {"severity": severity(SERIAL_RULE), "rule": SERIAL_RULE, "server": server.id, "element_type": "enum_dns"},
            f"{server.id} does not answer DNS",
            f"{server.id} did not answer the exporter's SOA probe after every retry; resolvers use the other "
            "name servers of its zones.", f"{base}{pages.of(server)}{DECLARE}")
        rules += alert_rule(
            alerts.DNS_DRIFT, selector("imsdr_dns_drift", server=server.id) + " > 0", "0s",
            {"severity": severity(DNS_RULE), "rule": DNS_RULE, "server": server.id, "element_type": "enum_dns"},
            "{{ $labels.server }} view {{ $labels.view }}: {{ $value }} answer(s) differ from the plan",
            f"{server.id} answers names of view {{{{ $labels.view }}}} differently from the plan imsdr rendered "
            "(a record edited by hand, a zone not reloaded, a view serving what it must refuse); "
            "imsdr verify lists each difference.", f"{base}{pages.of(server)}{DECLARE}")
    seconds = transfer_seconds()
    rules += alert_rule(
        alerts.DNS_SERIALS_DIFFER,
        "max by (view, zone) (imsdr_dns_soa_serial) != min by (view, zone) (imsdr_dns_soa_serial)", f"{seconds}s",
        {"severity": severity(SERIAL_RULE), "rule": SERIAL_RULE, "element_type": "enum_dns"},
        "zone {{ $labels.zone }} in view {{ $labels.view }}: SOA serials differ across its servers",
        f"the servers of zone {{{{ $labels.zone }}}} have answered different SOA serials for longer than "
        f"{seconds} s, the SOA refresh + retry within which the plan expects every server to have "
        "transferred (or loaded) the zone; a secondary is not transferring or a primary was not reloaded.",
        f"{base}{page}{DECLARE}")
    rules += alert_rule(
        alerts.DNS_PROBE_FAILED, 'probe_success{imsdr_probe="dns"} == 0', "0s",
        {"severity": severity(SERIAL_RULE), "rule": SERIAL_RULE, "element_type": "enum_dns"},
        "{{ $labels.server }} does not answer the SOA probe from inside view {{ $labels.view }}",
        "the blackbox exporter's DNS probe (blackbox.yml, module of the view) got no answer or an answer "
        "code the plan does not give in this view.", f"{base}{page}{DECLARE}")
    rules += alert_rule(
        alerts.DNS_VIEW_UNMONITORED, "imsdr_dns_view_checked == 0", UNKNOWN_FOR,
        {"severity": "info", "rule": DNS_RULE, "element_type": "enum_dns"},
        "view {{ $labels.view }} is not checked by the exporter",
        "the exporter has no source address inside this view and no TSIG key for it: give it the views' "
        "keys file (--keys) or run a prober inside the view.", f"{base}{page}{DECLARE}")
    rules += alert_rule(
        alerts.VERIFY_FAILED, "imsdr_verify_success == 0", UNKNOWN_FOR,
        {"severity": "warning", "rule": DNS_RULE, "element_type": "enum_dns"},
        "imsdr could not check the DNS against the plan",
        "a DNS server did not answer the exporter at all, or the check ran out of time: no verdict.",
        f"{base}{page}{DECLARE}")
    count = sum(1 for line in rules if line.startswith("      - alert: "))
    return group("imsdr-dns", rules, [
        "imsdr: live DNS against the plan (input: imsdr verify --format prometheus / imsdr exporter).",
        "Metric contract: docs/monitoring.md."]), count


def sip_rules(topology: Topology, base: str, severity: Severity) -> tuple[str, int]:
    """One alert per (runbook page, detection time) of the planned destinations, joining the live
    state with the plan's expectation series (imsdr.monitoring.expected)."""
    from imsdr.monitoring.expected import planned_destinations

    rules: list[str] = []
    groups: dict[tuple[str, str], list[Any]] = {}
    for d in planned_destinations(topology):
        groups.setdefault((d.page, d.detection_s), []).append(d)
    for (page, detection), members in groups.items():
        planned = selector("imsdr_dispatcher_destination_planned", page=page, detection_s=detection)
        types = sorted({topology.elements[d.element].type.value for d in members})
        rules += alert_rule(
            alerts.DISPATCHER_DOWN,
            f"(imsdr_dispatcher_destination_up == 0) * on (source, element) group_left (page, detection_s) {planned}",
            "0s", {"severity": severity(DISPATCHER_RULE), "rule": DISPATCHER_RULE, "element_type": ",".join(types),
                   "page": page, "detection_s": detection},
            "{{ $labels.source }} took {{ $labels.element }} out of service ({{ $labels.state }})",
            "Kamailio on {{ $labels.source }} no longer routes to {{ $labels.element }} "
            "({{ $labels.destination }}, set {{ $labels.setid }}); the plan expects it active. Kamailio marks a "
            f"destination inactive after the OPTIONS detection time the runbook predicts, {members[0].formula}, so "
            "this alert fires that long after the failure.", f"{base}{page}{DECLARE}")
    sources = list(dict.fromkeys(d.source for groups_ in groups.values() for d in groups_))
    if sources:
        pages = Pages(topology)
        source_pages = sorted({pages.of(topology.elements[s]) for s in sources})
        rules += alert_rule(
            alerts.DISPATCHER_UNKNOWN,
            "imsdr_dispatcher_source_planned unless on (source) (imsdr_dispatcher_scrape_ok == 1)", UNKNOWN_FOR,
            {"severity": "warning", "rule": DISPATCHER_RULE, "element_type": "sbc,pcscf"},
            "the dispatcher state of {{ $labels.source }} is not known",
            "the exporter does not read {{ $labels.source }}'s dispatcher.list (no --kamailio SOURCE=ADDRESS, or "
            "the RPC fails): its destinations are not watched.", f"{base}{source_pages[0]}{DECLARE}")
    count = sum(1 for line in rules if line.startswith("      - alert: "))
    return group("imsdr-sip", rules, [
        "imsdr: dispatcher destinations of every SBC and P-CSCF against the plan's sets.",
        "Input: imsdr_dispatcher_destination_up and imsdr_dispatcher_destination_planned (imsdr exporter);",
        "docs/monitoring.md."]), count


def diameter_rules(topology: Topology, base: str, severity: Severity) -> tuple[str, int]:
    """One alert per (peer's runbook page, 2 × Tw): the expected peers not seen open."""
    from imsdr.monitoring.expected import expected_peers

    rules: list[str] = []
    groups: dict[tuple[str, int], list[Any]] = {}
    for p in expected_peers(topology):
        groups.setdefault((p.page, p.for_s), []).append(p)
    for (page, seconds), members in groups.items():
        expected = selector("imsdr_diameter_peer_expected", page=page, for_s=str(seconds))
        types = sorted({topology.elements[p.peer].type.value for p in members})
        rules += alert_rule(
            alerts.DIAMETER_PEER_NOT_OPEN, f"{expected} unless on (client, peer) (imsdr_diameter_peer_open == 1)",
            f"{seconds}s", {"severity": severity(DIAMETER_RULE), "rule": DIAMETER_RULE,
                            "element_type": ",".join(types), "page": page, "for_s": str(seconds)},
            "{{ $labels.client }} has no open Diameter connection to {{ $labels.peer }}",
            "the plan expects {{ $labels.client }} to keep {{ $labels.peer }} OPEN; it has not been open for "
            f"2 × Tw = 2 × {members[0].tw} s, the time the Diameter watchdog takes to declare a silent peer failed "
            "(RFC 3539 §3.4.1).", f"{base}{page}{DECLARE}")
    count = sum(1 for line in rules if line.startswith("      - alert: "))
    return group("imsdr-diameter", rules, [
        "imsdr: Diameter peers each client keeps open, from the plan's peering.",
        "Input: imsdr_diameter_peer_open{client, peer} (the operator's mapping) and imsdr_diameter_peer_expected",
        "(imsdr exporter); docs/monitoring.md."]), count
