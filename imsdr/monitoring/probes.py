"""The scrape and probe configuration the rules need: ``prometheus.yml`` and ``blackbox.yml``.

``prometheus.yml`` is a complete Prometheus configuration (``promtool check config`` reads it)
to merge into an existing one: the rule files, the ``imsdr exporter`` job, and one blackbox DNS
probe job per view, with a target for each server holding the view (a province's views only on
that province's servers). ``blackbox.yml`` has one DNS module per view: an SOA query for the view's home
zone from a source address inside the view (its match list's first host; the default view: no
source, REFUSED expected). A blackbox exporter can only send from addresses its host has, so a
prober covers the views its host is inside; the exporter covers every view with the views' TSIG
keys (docs/monitoring.md says which covers which).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from imsdr.monitoring.ruletext import quoted
from imsdr.resolve.live import first_host

if TYPE_CHECKING:
    from imsdr.dns.plan import DnsPlan, ViewPlan
    from imsdr.model.topology import Topology

PROMETHEUS_FILE, BLACKBOX_FILE = "prometheus.yml", "blackbox.yml"
EXPORTER_ADDRESS = "127.0.0.1:9533"  # imsdr exporter's default --listen
BLACKBOX_ADDRESS = "127.0.0.1:9115"  # the blackbox exporter's default


def _views(topology: Topology, plan: DnsPlan | None) -> list[ViewPlan]:
    """The views of the DNS plan (``plan``: the run's, when it has one; its views, match lists and
    areas are all that is read)."""
    if plan is None:
        from imsdr.dns.plan import build_dns_plan

        plan = build_dns_plan(topology, lazy=True)  # views and match lists only: no view is materialised
    return list(plan.views)


def view_probes(topology: Topology, plan: DnsPlan | None = None) -> list[tuple[str, str | None, bool]]:
    """(view, source address inside it or None, refusing) for every view of the DNS plan."""
    return [(v.name, None if v.kind == "default" else first_host(v.match_clients), v.side == "none")
            for v in _views(topology, plan)]


def _module(view: str) -> str:
    return f"imsdr_dns_{view}"


def blackbox_config(topology: Topology, plan: DnsPlan | None = None) -> str:
    zone = topology.network.primary_domain
    lines = ["# imsdr: blackbox exporter DNS modules, one per view (docs/monitoring.md).", "modules:"]
    for view, source, refusing in view_probes(topology, plan):
        lines += [f"  {_module(view)}:", "    prober: dns", "    timeout: 5s", "    dns:",
                  f"      query_name: {quoted(zone)}", "      query_type: SOA", "      transport_protocol: udp",
                  "      preferred_ip_protocol: ip4", "      recursion_desired: false",
                  f"      valid_rcodes: [{'REFUSED' if refusing else 'NOERROR'}]"]
        if source is not None:
            lines.append(f"      source_ip_address: {quoted(source)}")
    return "\n".join(lines) + "\n"


def prometheus_config(topology: Topology, rule_files: list[str], plan: DnsPlan | None = None) -> str:
    from imsdr.dns.drain import platform_of
    from imsdr.dns.views import server_layout
    from imsdr.resolve.drain_verify import dig_port

    servers = [(s, dig_port(platform_of(topology, topology.elements[s.id]).dig))
               for s in server_layout(topology).servers]
    lines = ["# imsdr: scrape and probe configuration for the rules beside it (merge into your prometheus.yml).",
             "global:", "  scrape_interval: 30s", "  evaluation_interval: 30s", "rule_files:",
             *(f"  - {name}" for name in rule_files), "scrape_configs:",
             "  - job_name: imsdr-exporter", "    static_configs:", f"      - targets: [{quoted(EXPORTER_ADDRESS)}]"]
    for view in _views(topology, plan):
        lines += [f"  - job_name: {quoted('imsdr-dns-probe-' + view.name)}", "    metrics_path: /probe",
                  f"    params: {{module: [{quoted(_module(view.name))}]}}", "    static_configs:"]
        for server, port in servers:
            if not server.holds(view):  # (a province's views are on its own servers only)
                continue
            address = server.address
            target = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
            lines.append(f"      - targets: [{quoted(target)}]")
            lines.append(f"        labels: {{server: {quoted(server.id)}, view: {quoted(view.name)}, "
                         "imsdr_probe: \"dns\"}")
        lines += ["    relabel_configs:",
                  "      - {source_labels: [__address__], target_label: __param_target}",
                  "      - {source_labels: [__param_target], target_label: instance}",
                  f"      - {{target_label: __address__, replacement: {quoted(BLACKBOX_ADDRESS)}}}"]
    return "\n".join(lines) + "\n"
