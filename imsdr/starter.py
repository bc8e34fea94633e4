"""`imsdr init`: the files a new project starts from (an inventory to edit, hooks, a CI example).

Pure functions from the options to file texts; the CLI writes them. The inventory is small,
commented and valid, and `imsdr check` passes it with no findings: every choice that a rule
would question is made explicitly, with a comment saying why.
"""

from __future__ import annotations

from dataclasses import dataclass

INVENTORY = "inventory.yaml"
SCHEMA = "inventory.schema.json"
PRE_COMMIT = ".pre-commit-config.yaml"
CI = ".github/workflows/imsdr.yml"
MAX_SITES = 8


@dataclass(frozen=True)
class StarterFile:
    path: str  # relative to the project directory
    text: str


def starter_files(sites: int = 2, lab: bool = False, schema: str = "") -> list[StarterFile]:
    """Every file of a new project, in the order they are written."""
    return [
        StarterFile(INVENTORY, inventory_yaml(sites, lab)),
        StarterFile(SCHEMA, schema),
        StarterFile(PRE_COMMIT, PRE_COMMIT_CONFIG),
        StarterFile(CI, CI_WORKFLOW),
    ]


def inventory_yaml(sites: int = 2, lab: bool = False) -> str:
    if lab:
        sites = 1
    if not 1 <= sites <= MAX_SITES or (not lab and sites < 2):
        raise ValueError(f"--sites must be between 2 and {MAX_SITES} (a lab has one site)")
    site_ids = [f"site-{chr(ord('a') + i)}" for i in range(sites)]
    region = {s: ("lab" if lab else ("region-1" if i % 2 == 0 else "region-2")) for i, s in enumerate(site_ids)}
    ln_ids = [f"city-{chr(ord('a') + i)}" for i in range(sites)]
    out = [
        f"# yaml-language-server: $schema={SCHEMA}",
        "# Your IMS core, as imsdr sees it. Replace the example names, addresses and sizes with yours,",
        "# then run: imsdr validate inventory.yaml && imsdr check inventory.yaml",
        "# Reference: `imsdr schema` (every field), `imsdr rules` (what `check` looks for).",
        "version: 1",
        "",
        "network:",
        f"  name: {'Lab IMS' if lab else 'My IMS core'}",
        "  operator_domain: example.net          # your operator domain",
        "  home_domains: [ims.example.net]       # the IMS home domain(s) UEs register to",
        '  country_code: "86"                    # E.164 country code of your numbers',
        f"  deployment: {'lab                      # one site, no cross-region failover' if lab else 'production'}",
        "  timers:",
        "    options_interval: 10                # SIP OPTIONS probe every 10 s ...",
        "    options_failure_threshold: 3        # ... down after 3 misses",
        "    diameter_watchdog: 8                # Tw between 6 and 10 s (RFC 3539)",
        "    registration_refresh: 1800          # 600-3600 s for fixed access",
        "    diameter_transport: {bfd: {interval_ms: 300, multiplier: 3}}  # HSS link loss seen in 1 s",
        "",
        "# Sites: members of a pair or pool must sit in sites with independent power and transmission.",
        "sites:",
    ]
    for i, s in enumerate(site_ids):
        out += [
            f"  - id: {s}",
            f"    name: Data centre {chr(ord('A') + i)}",
            _commented(f"    region: {region[s]}",
                       "production: two regions, each carries all traffic" if i == 0 and not lab else ""),
            f"    power: [grid-{i + 1}]",
            f"    transmission: [ring-{i + 1}]",
            f"    core_subnets: [10.{i}.0.0/24]",
            _commented(f"    lat: {30 + i}.0", "coordinates: sites of a pair must be far apart" if i == 0 else ""),
            "    lon: 110.0",
        ]
    out += [
        "",
        "# Local networks: your users, by source address range, and the site that homes them.",
        "local_networks:",
    ]
    for i, (ln, s) in enumerate(zip(ln_ids, site_ids, strict=True)):
        out.append(f"  - {{id: {ln}, name: City {chr(ord('A') + i)}, prefixes: [100.64.{i}.0/24], home_sites: [{s}], "
                   "subscribers: 100000, busy_hour_erlangs: 2000,")
        out.append(f'     emergency: {{pani: "IEEE-802.3; dsl-location={ln}", phone_context: "+86-{10 + i}", '
                   f'psap_route: "+86{10 + i}110"}}}}' + ("   # what a DR SBC emits for its emergency calls"
                                                       if i == 0 else ""))
    out += ["", "elements:"]
    out += _elements(site_ids, ln_ids, lab)
    out += ["", "redundancy:"]
    out += _redundancy(site_ids, ln_ids, lab)
    out += [
        "",
        "# ENUM: which E.164 numbers resolve to which home domain.",
        "enum_blocks:",
        '  - {id: my-numbers, prefix: "+8610555", style: wildcard, domain: ims.example.net}',
        "",
    ]
    return "\n".join(out)


USERS_PER_CITY = 100_000


def _commented(line: str, comment: str) -> str:
    return f"{line:<39} # {comment}" if comment else line


def _addr(site: int, host: int) -> str:
    return f"10.{site}.0.{host}"


def _elements(site_ids: list[str], ln_ids: list[str], lab: bool) -> list[str]:
    n = len(site_ids)
    users = USERS_PER_CITY * n  # every pooled element can carry all users: any one site may fail
    # sized to stay within max_utilisation (85%) after a failure: users × 1.25 (a CSCF with
    # restoration data does up to 10% more work per user, domain.md §4.4: × 1.4); sessions for
    # 0.02 E per user, registrations/s and Diameter/s for the re-registration storm
    sessions = users // 40
    rate = users // 100
    out = ["  # ENUM/DNS: two sets at different sites, sharing load"]
    for i in range(min(2, n) if not lab else 1):
        out.append(f"  - {{id: dns-{i + 1}, type: enum_dns, site: {site_ids[i]}, vendor: vendor-a, "
                   f"addresses: [{_addr(i, 53)}], capacity: {{queries_per_second: {rate}}}}}")
    out.append("  # SBCs: one per local network; each can host the next one's users as a virtual SBC (DR ring)")
    for i, (ln, s) in enumerate(zip(ln_ids, site_ids, strict=True)):
        pcscfs = f"pcscf-{i + 1}" if n == 1 else f"pcscf-{i + 1}, pcscf-{(i + 1) % n + 1}"
        feats = "" if lab else ", features: [virtual_sbc]"
        out.append(f"  - {{id: sbc-{ln}, type: sbc, site: {s}, vendor: vendor-b, "
                   f"addresses: [203.0.113.{10 * (i + 1)}], "
                   f"serves: [{ln}], pcscfs: [{pcscfs}], capacity: {{registered_users: 250000, sessions: 6250, "
                   f"registrations_per_second: {max(rate, 1000)}}}{feats}, "
                   "options_probing: active}")
    if not lab and n % 2 and n > 1:
        # regions alternate around the ring, except where it closes (an odd number of sites): the
        # first local network also gets an SBC in the other region, so losing its region loses none
        ln = ln_ids[0]
        out.append(f"  - {{id: sbc-{ln}-2, type: sbc, site: {site_ids[1]}, vendor: vendor-b, "
                   f"addresses: [203.0.113.{10 * n + 10}], serves: [{ln}], pcscfs: [pcscf-2, pcscf-1], "
                   f"capacity: {{registered_users: 250000, sessions: 6250, registrations_per_second: "
                   f"{max(rate, 1000)}}}, features: [virtual_sbc], options_probing: active}}")
    out.append("  # P-CSCF, combined I/S/E-CSCF/BGCF, HSS, MGCF/IM-MGW and AS: one of each per site")
    for i, s in enumerate(site_ids):
        k = i + 1
        out += [
            f"  - {{id: pcscf-{k}, type: pcscf, site: {s}, vendor: vendor-c, addresses: [{_addr(i, 10)}], "
            f"capacity: {{registered_users: {users * 5 // 4}, registrations_per_second: {rate}}}, "
            "options_probing: passive}",
            f"  - {{id: cscf-{k}, type: cscf, roles: [icscf, scscf, ecscf, bgcf], site: {s}, vendor: vendor-c, "
            f"addresses: [{_addr(i, 20)}], capacity: {{registered_users: {users * 7 // 5}, sessions: {sessions}, "
            f"registrations_per_second: {rate}}}, features: [restoration_data], options_probing: passive}}",
        ]
        if k <= 2:
            out += [
                f"  - {{id: hss-{k}, type: hss, site: {s}, vendor: vendor-d, addresses: [{_addr(i, 30)}], "
                f"capacity: {{subscribers: {5 * users // 2}, transactions_per_second: {2 * rate}}}, "
                "features: [passthrough]}",
                f"  - {{id: mgcf-{k}, type: mgcf, site: {s}, vendor: vendor-c, addresses: [{_addr(i, 40)}], "
                "capacity: {circuits: 600}, options_probing: active}",
            ]
        out.append(f"  - {{id: as-{k}, type: as, site: {s}, vendor: vendor-e, addresses: [{_addr(i, 50)}], "
                   f"capacity: {{sessions: {sessions}}}, options_probing: active}}")
    if lab:  # a lab still pools its CSCF: a second one in the same room
        out.append(f"  - {{id: cscf-2, type: cscf, roles: [icscf, scscf, ecscf, bgcf], site: {site_ids[0]}, "
                   f"vendor: vendor-c, addresses: [{_addr(0, 21)}], capacity: {{registered_users: {users * 7 // 5}, "
                   f"sessions: {sessions}, registrations_per_second: {rate}}}, features: [restoration_data], "
                   "options_probing: passive}")
    return out


def _redundancy(site_ids: list[str], ln_ids: list[str], lab: bool) -> list[str]:
    n = len(site_ids)
    cscfs = ", ".join(f"cscf-{k + 1}" for k in range(max(n, 2)))
    out = []
    if not lab:
        pcscfs = ", ".join(f"pcscf-{k + 1}" for k in range(n))
        mgcfs = ", ".join(f"mgcf-{k + 1}" for k in range(min(n, 2)))
        ases = ", ".join(f"as-{k + 1}" for k in range(n))
        out += [
            "  pairs:",
            "    - {id: dns-pair, members: [dns-1, dns-2], mode: active-active, sync: realtime}",
            "    - {id: hss-pair, members: [hss-1, hss-2], mode: active-standby, sync: realtime}",
            "  pools:",
            f"    - {{id: pcscf-pool, members: [{pcscfs}], spare: 1, selection: dns, dns_name: pcscf}}",
            f"    - {{id: cscf-pool, members: [{cscfs}], spare: 1, selection: capabilities, role: scscf, "
            "dns_name: scscf}",
            f"    - {{id: mgcf-pool, members: [{mgcfs}], spare: 1, selection: dns, busy_hour_erlangs: 300}}",
            f"    - {{id: as-pool, members: [{ases}], spare: 1, selection: dns, dns_name: mmtel}}",
            "  sbc_dr:",
            "    layout: ring                        # each local network backs up the next one",
            f"    order: [{', '.join(ln_ids)}]",
        ]
    else:
        out += [
            "  pools:",
            f"    - {{id: cscf-pool, members: [{cscfs}], spare: 1, selection: dns, role: scscf, dns_name: scscf}}",
        ]
    out += [
        "  enum_dns:",
        "    sync: provisioning                  # your provisioning system writes both ENUM/DNS sets",
        "    load_sharing: rtt                   # resolvers pick the closer set",
    ]
    return out


PRE_COMMIT_CONFIG = """\
# pre-commit (https://pre-commit.com): `pre-commit install`, then every commit that touches an
# inventory is validated and checked. Remove the hooks you do not want.
# `language: system` runs the imsdr found on PATH when you commit: install it with pipx, or
# activate the virtual environment that has it before `git commit` (else: "Executable `imsdr`
# not found").
repos:
  - repo: local
    hooks:
      - id: imsdr-validate
        name: imsdr validate
        entry: imsdr validate
        language: system
        files: ^inventory\\.yaml$
      - id: imsdr-check
        name: imsdr check
        entry: imsdr check
        language: system
        files: ^inventory\\.yaml$
"""

INSTALL_STEP = "Install imsdr"

CI_WORKFLOW = """\
# GitHub Actions: check the design on every pull request, upload the findings to code scanning,
# and show what the change does to the rendered plan. Adapt the paths to your repository.
#
# imsdr is not published on PyPI. Set the repository variable IMSDR_PACKAGE (Settings, Secrets and
# variables, Actions, Variables) to what pip should install imsdr from: the git URL of the imsdr
# repository you use, at a tag or commit (git+https://YOUR-GIT-SERVER/imsdr.git@TAG), or the path
# of an imsdr wheel committed to this repository (tools/imsdr-VERSION-py3-none-any.whl, built with
# `python -m build --wheel` in an imsdr checkout).
name: imsdr
on: [pull_request]
jobs:
  check:
    runs-on: ubuntu-latest
    permissions: {contents: read, security-events: write}
    env:
      IMSDR_PACKAGE: ${{ vars.IMSDR_PACKAGE }}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with: {python-version: "3.12"}
      - name: Install imsdr
        run: |
          if [ -z "$IMSDR_PACKAGE" ]; then
            echo "::error::set the repository variable IMSDR_PACKAGE (see .github/workflows/imsdr.yml)"
            exit 1
          fi
          python -m pip install "$IMSDR_PACKAGE"
          imsdr --version
      - run: imsdr validate inventory.yaml
      - run: imsdr check inventory.yaml --format sarif > imsdr.sarif || true
      - uses: github/codeql-action/upload-sarif@v3
        with: {sarif_file: imsdr.sarif}
      - run: imsdr check inventory.yaml --format github
      - run: imsdr plan inventory.yaml --out plan --check --format markdown >> "$GITHUB_STEP_SUMMARY"
"""
