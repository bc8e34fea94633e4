"""The capacity formulas of docs/domain.md §4.5-§4.7 as pure functions over exact fractions.

Every input is turned into a :class:`fractions.Fraction` through its decimal text (``0.08`` is
2/25, not the nearest binary float), so the worked example of domain.md §4.6 comes out exactly:
``(1 + 8%) + (500k / 1,000k) × (180% − 100%) = 148%``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

Number = int | float | Fraction


def exact(value: Number) -> Fraction:
    """A Fraction equal to the decimal a person wrote (floats go through their shortest repr)."""
    kind = type(value)  # exact types first: isinstance(x, Fraction) goes through the ABC machinery
    if kind is Fraction:
        return value  # type: ignore[return-value]
    if kind is int:
        return Fraction(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    return Fraction(repr(float(value)))


def fmt(value: Number, digits: int = 2) -> str:
    """A human number: thousands separators, at most ``digits`` decimals, no trailing zeros."""
    kind = type(value)
    if kind is float:
        v = value
    elif kind is Fraction:
        v = value.numerator / value.denominator  # type: ignore[union-attr]  # what float(Fraction) computes
    else:
        v = float(value)
    whole = int(v)
    if v == whole and -1e15 < v < 1e15:
        return f"{whole:,}"
    text = f"{v:,.{digits}f}".rstrip("0").rstrip(".")
    return text


def pct(value: Number, digits: int = 1) -> str:
    """``value`` as a percentage: ``fmt`` of the float nearest to value × 100 exactly.

    A float × 100 in floats is that very float (IEEE multiplication rounds the exact product
    once, as converting the exact product does), and so is a Fraction's numerator × 100 over its
    denominator (Python's int division is correctly rounded): no Fraction needs to be built."""
    kind = type(value)
    if kind is float or kind is int:
        scaled: Number = value * 100
    elif kind is Fraction:
        scaled = value.numerator * 100 / value.denominator  # type: ignore[union-attr]
    else:
        scaled = Fraction(value) * 100
    return f"{fmt(scaled, digits)}%"


# --- N+K pools ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolResult:
    """The outcome of an N+K check. ``spare_needed``/``headroom`` are per member (equal members)."""

    n: int
    k: int
    load: Fraction
    total_capacity: Fraction
    surviving_capacity: Fraction
    equal: bool
    share: Fraction | None  # per member, equal members
    spare_needed: Fraction | None
    headroom: Fraction | None
    utilisation_normal: Fraction | None
    utilisation_after: Fraction | None
    ok: bool
    formula: tuple[str, ...]


def spare_needed_equal(share: Number, n: int, k: int = 1) -> Fraction:
    """Spare each of N equal members keeps on top of its share to survive K losses.

    After K losses the N−K survivors carry N·s, i.e. s·N/(N−K) each: s·K/(N−K) more than now.
    For K = 1 this is domain.md §4.5's A/(N−1) with A the member's share.
    """
    if n - k <= 0:
        raise ValueError("a pool needs more members than the losses it must survive")
    return exact(share) * k / (n - k)


def n_plus_k(
    load: Number, capacities: Sequence[Number], k: int = 1, max_utilisation: Number = 1
) -> PoolResult:
    """Check an N+K pool: after losing the K largest members the rest carry ``load``.

    Equal members: share s = L/N, spare needed s·K/(N−K), headroom A − s.
    Unequal members (load shared in proportion to capacity): survivors = ΣA − (K largest A).
    Either way the verdict is L ≤ max_utilisation × surviving capacity.
    """
    load_f = exact(load)
    caps = [exact(c) for c in capacities]
    u = exact(max_utilisation)
    n = len(caps)
    total = sum(caps, Fraction(0))
    lost = sum(sorted(caps, reverse=True)[:k], Fraction(0)) if k > 0 else Fraction(0)
    surviving = total - lost
    equal = n > 0 and all(c == caps[0] for c in caps)
    util_normal = load_f / total if total else None
    util_after = load_f / surviving if surviving else None
    ok = surviving > 0 and load_f <= u * surviving
    lines: list[str] = []
    share = spare = headroom = None
    if equal and n - k > 0:
        a = caps[0]
        share = load_f / n
        spare = spare_needed_equal(share, n, k)
        headroom = a - share
        lines.append(f"share s = L/N = {fmt(load_f)}/{n} = {fmt(share)}")
        lines.append(f"spare needed = s×K/(N−K) = {fmt(share)}×{k}/({n}−{k}) = {fmt(spare)}")
        lines.append(f"headroom = A − s = {fmt(a)} − {fmt(share)} = {fmt(headroom)}")
        cap_txt = f"{fmt(a)}" if u == 1 else f"{fmt(u)}×{fmt(a)} = {fmt(u * a)}"
        lines.append(
            f"after losing {k}: s + spare = {fmt(share + spare)} per member vs {cap_txt}"
            f" → {'ok' if ok else 'SHORT'}"
        )
    else:
        caps_txt = " + ".join(fmt(c) for c in caps) or "0"
        lines.append(f"total = {caps_txt} = {fmt(total)}")
        lines.append(f"after losing the {k} largest: {fmt(total)} − {fmt(lost)} = {fmt(surviving)}")
        if surviving:
            lines.append(
                f"utilisation after = L/survivors = {fmt(load_f)}/{fmt(surviving)} = "
                f"{pct(load_f / surviving)} (limit {pct(u)}) → {'ok' if ok else 'SHORT'}"
            )
        else:
            lines.append("no member survives → SHORT")
    return PoolResult(
        n,
        k,
        load_f,
        total,
        surviving,
        equal,
        share,
        spare,
        headroom,
        util_normal,
        util_after,
        ok,
        tuple(lines),
    )


# --- 1+1 pairs ---------------------------------------------------------------------------------------


def pair_check(
    load: Number, capacities: Sequence[Number], max_utilisation: Number = 1
) -> tuple[bool, tuple[str, ...]]:
    """Active-active (or active-standby) 1+1: each side alone carries 100% of the pair's load."""
    load_f = exact(load)
    u = exact(max_utilisation)
    caps = [exact(c) for c in capacities]
    if len(caps) < 2:
        return False, (f"only {len(caps)} member: nothing carries the load when it fails → SHORT",)
    smallest = min(caps)
    ok = load_f <= u * smallest
    limit = "" if u == 1 else f" × {pct(u)}"
    return ok, (
        f"each side must carry L = {fmt(load_f)} alone",
        f"smallest side = {fmt(smallest)}{limit}: L/side = {pct(load_f / smallest)}"
        f" → {'ok' if ok else 'SHORT'}",
    )


# --- HSS and CSCF with dynamic restoration data ---------------------------------------------------


def hss_required(
    subscribers: Number,
    overhead: Number,
    largest_scscf_users: Number,
    failover_cost: Number,
    restoration: bool = True,
) -> Fraction:
    """subscribers × (1 + overhead) + users of the largest S-CSCF × (failover cost − 1)."""
    base = exact(subscribers) * (1 + (exact(overhead) if restoration else 0))
    return base + exact(largest_scscf_users) * (exact(failover_cost) - 1)


def hss_required_ratio(
    subscribers: Number,
    overhead: Number,
    largest_scscf_users: Number,
    failover_cost: Number,
    hss_capacity: Number,
) -> Fraction:
    """Required HSS capacity relative to ``hss_capacity`` (the worked example: 1.48)."""
    return hss_required(subscribers, overhead, largest_scscf_users, failover_cost) / exact(hss_capacity)


def cscf_restoration_factor(registration_share: Number, restoration_cost: Number) -> Fraction:
    """S-CSCF load multiplier with restoration data: 1 + share × (cost − 1) (1.04–1.10)."""
    return 1 + exact(registration_share) * (exact(restoration_cost) - 1)
