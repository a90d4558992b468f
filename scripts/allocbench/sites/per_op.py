"""Allocation sites per op, exactly: the difference of two heaptrack profiles of one instance
that differ only in how many ops they measured.

Both runs do the same setup, the same warm-up and the same harness work; the second measures
2·N more ops per thread than the first (its two count windows are twice as long). Subtracting
their allocations stack by stack leaves exactly those ops' allocations; divided by the number of
ops, they are per op, in the count pass's unit (per op per thread). For a deterministic
instance the sites sum to the count pass's allocs_per_op and bytes_per_op exactly.

A site is a call stack folded to the frames of the user's code: frames in the plugin, without
the library headers inlined into it (/usr/include: libstdc++'s containers and strings), innermost
first. The harness, libstdc++ and the allocator are folded away. A stack with no such frame is
kept under the module that allocated. Allocations on threads the harness did not start for
the scenario (no frame of the runner outside the user's frames) are marked as on another
thread: a thread the op started (the count pass counts it as the op's) or a background thread
(the count pass's background_*_per_op); a stack cannot tell which.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from allocbench.sites.heaptrack import Frame, Profile, allocations

SYSTEM_SOURCES = ("/usr/include/", "/usr/lib/", "/usr/src/")

UserFrame = tuple[str, str, int]   # function, file (base name), line


@dataclass(frozen=True)
class Site:
    frames: tuple[UserFrame, ...]   # innermost first
    background: bool   # on a thread the harness did not start (see the module comment)
    via: str = ""   # the library function the innermost user frame allocated through

    def label(self) -> str:
        stack = " ← ".join(frame_text(f) for f in self.frames) or "(no frame)"
        return f"{stack} via {self.via}" if self.via else stack


def frame_text(frame: UserFrame) -> str:
    function, file, line = frame
    return f"{function} ({file}:{line})" if file else function


def _user(frame: Frame, plugins: set[str]) -> bool:
    return Path(frame.module).name in plugins and not frame.file.startswith(SYSTEM_SOURCES)


def site_of(stack: list[Frame], plugins: set[str], runner: str) -> Site:
    user = [i for i, f in enumerate(stack) if _user(f, plugins)]
    if not user:
        # No frame of the user's code: the first module outside the allocator's own.
        outside = next((f for f in stack if Path(f.module).name != runner), None)
        name = Path(outside.module).name if outside else runner
        return Site(((f"(in {name})", "", 0),), background=False)
    frames = tuple((stack[i].function or f"0x{stack[i].address:x} in "
                    f"{Path(stack[i].module).name}", Path(stack[i].file).name if stack[i].file
                    else "", stack[i].line) for i in user)
    background = not any(Path(f.module).name == runner for f in stack[user[-1] + 1:])
    return Site(frames, background, _via(stack[:user[0]], runner))


def _via(inner: list[Frame], runner: str) -> str:
    """The first library function between the allocator and the user's code that says what
    was allocated (a hash table's node or buckets, a string's buffer), past the allocator
    plumbing (std::allocator, allocator_traits, operator new)."""
    for frame in inner:
        name = short_function(frame.function)
        if Path(frame.module).name == runner or not name or "allocator" in name or \
                name.startswith("operator new"):
            continue
        return name
    return ""


def calls_by_site(profile: Profile, plugins: set[str], runner: str
                  ) -> dict[Site, Counter[int]]:
    """Site → {size: calls}, over the whole profile."""
    out: dict[Site, Counter[int]] = {}
    stacks: dict[int, Site] = {}
    for (size, trace), calls in allocations(profile).items():
        if trace not in stacks:
            stacks[trace] = site_of(profile.stack(trace), plugins, runner)
        out.setdefault(stacks[trace], Counter())[size] += calls
    return out


@dataclass(frozen=True)
class SiteCost:
    site: Site
    sizes: tuple[tuple[int, Fraction], ...]   # (size in bytes, allocations per op)

    @property
    def allocs(self) -> Fraction:
        return sum((n for _, n in self.sizes), Fraction(0))

    @property
    def bytes(self) -> Fraction:
        return sum((size * n for size, n in self.sizes), Fraction(0))


def per_op(small: dict[Site, Counter[int]], large: dict[Site, Counter[int]], ops: int
           ) -> list[SiteCost]:
    """What `large` allocated beyond `small`, per op; biggest B/op first. A site or size that
    allocated less in the longer run (it cannot, for a deterministic instance) keeps its
    negative count, so that sums stay honest."""
    costs = []
    for site in set(small) | set(large):
        diff = Counter(large.get(site, Counter()))
        diff.subtract(small.get(site, Counter()))
        sizes = tuple(sorted((size, Fraction(n, ops)) for size, n in diff.items() if n))
        if sizes:
            costs.append(SiteCost(site, sizes))
    return sorted(costs, key=lambda c: (c.site.background, -c.bytes, c.site.label()))


def unsteady(first: list[SiteCost], second: list[SiteCost]) -> frozenset[Site]:
    """The sites whose allocations per op differ between two tables of one instance measured
    over different ops (a site in one table only included): for a deterministic instance,
    none."""
    a, b = ({c.site: c.sizes for c in costs} for costs in (first, second))
    return frozenset(site for site in a.keys() | b.keys() if a.get(site) != b.get(site))


def number(value: Fraction) -> int | float:
    return int(value) if value.denominator == 1 else float(value)


def site_json(site: Site) -> dict[str, Any]:
    return {"frames": [{"function": f, "file": file, "line": line}
                       for f, file, line in site.frames],
            "background": site.background, "via": site.via}


def to_json(costs: list[SiteCost]) -> list[dict[str, Any]]:
    return [{**site_json(c.site), "allocs_per_op": number(c.allocs),
             "bytes_per_op": number(c.bytes),
             "sizes": [{"bytes": size, "allocs_per_op": number(n)} for size, n in c.sizes]}
            for c in costs]


def from_json(sites: list[dict[str, Any]]) -> list[SiteCost]:
    return [SiteCost(Site(tuple((f["function"], f["file"], f["line"]) for f in s["frames"]),
                          s["background"], s.get("via", "")),
                     tuple((z["bytes"], Fraction(z["allocs_per_op"]).limit_denominator(10**9))
                           for z in s["sizes"])) for s in sites]


def short_function(name: str) -> str:
    """`tracer::TagStore::SetInMap` of `tracer::TagStore::SetInMap(std::string, …) const`:
    without template and function arguments, return type or qualifiers."""
    name = name.replace("operator()", "operator\0")
    out, depth = [], 0
    for char in name:
        if char in "<(":
            depth += 1
        elif char in ">)" and depth:
            depth -= 1
        elif depth == 0:
            out.append(char)
    words = "".join(out).replace("\0", "()").split()
    return next((w for w in reversed(words) if w not in ("const", "volatile", "&", "&&")),
                name)


def where(frame: UserFrame) -> str:
    function, file, line = frame
    return f"{short_function(function)} ({file}:{line})" if file else short_function(function)


def key(site: Site, lines: bool = False) -> tuple:
    """What makes a site the same one in another revision: its functions, files and library
    function; with `lines`, the line numbers too (which any edit above them moves)."""
    return (site.background, site.via, tuple((short_function(f), file, line if lines else 0)
                                             for f, file, line in site.frames))


def sizes_text(sizes: tuple[tuple[int, Fraction], ...]) -> str:
    """'3 × 32 B + 1 × 17 B'."""
    return " + ".join(f"{count_text(n)} × {size} B" for size, n in sorted(
        sizes, key=lambda s: (-abs(s[1]) * s[0], s[0])))


def count_text(value: Fraction) -> str:
    """A per-op count: 3, or 0.333 when an instance is not deterministic."""
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.3g}"


def place_text(site: Site, code=str, plain=str) -> str:
    """'Span::SetTag (span.cc:88) via std::string::_M_create (another thread)': the innermost
    frame of the user's code, short; escaped as SiteChange.text escapes it."""
    function, file, line = site.frames[0]
    place = code(short_function(function)) + (f" ({plain(file)}:{line})" if file else "")
    if site.via:
        place += f" via {code(site.via)}"
    return place + (" (another thread)" if site.background else "")


@dataclass(frozen=True)
class SiteChange:
    kind: str                  # "new", "gone" or "changed"
    site: Site                 # the candidate's (the base's when gone)
    allocs: Fraction           # candidate − base, per op
    bytes: Fraction
    base: SiteCost | None
    cand: SiteCost | None

    def text(self, code=str, plain=str) -> str:
        """'+96 B/op, +3 allocs/op: new site `Span::SetTag` (span.cc:88) 3 × 32 B'; `code`
        and `plain` escape function names and file names for the output they go to."""
        place = place_text(self.site, code, plain)
        change = f"{_signed(self.bytes)} B/op, {_signed(self.allocs)} allocs/op"
        if self.kind == "new":
            return f"{change}: new site {place} {sizes_text(self.cand.sizes)}"
        if self.kind == "gone":
            return f"{change}: site gone {place} (was {sizes_text(self.base.sizes)})"
        moved = Counter(dict(self.cand.sizes))
        moved.subtract(dict(self.base.sizes))
        delta = " ".join(f"{_signed(n)} × {size} B" for size, n in sorted(
            moved.items(), key=lambda s: (-abs(s[1]) * s[0], s[0])) if n)
        return (f"{change}: site {place} {delta} ({sizes_text(self.base.sizes)} → "
                f"{sizes_text(self.cand.sizes)})")


def _signed(value: Fraction) -> str:
    return f"{'+' if value >= 0 else '−'}{count_text(abs(value))}"


def _merged(costs: list[SiteCost], lines: bool) -> dict[tuple, SiteCost]:
    """The costs of sites with one key (one function at several lines, without `lines`)
    merged into one."""
    merged: dict[tuple, tuple[Site, Counter]] = {}
    for c in costs:
        site, sizes = merged.setdefault(key(c.site, lines), (c.site, Counter()))
        for size, n in c.sizes:
            sizes[size] += n
    return {k: SiteCost(site, tuple(sorted((z, n) for z, n in sizes.items() if n)))
            for k, (site, sizes) in merged.items()}


def diff(base: list[SiteCost], cand: list[SiteCost]) -> list[SiteChange]:
    """Sites that appeared, vanished or changed between two site tables; biggest |ΔB/op|
    first. Sites are matched by functions, files and lines first; what is left, by functions
    and files alone (an edit moved the lines), merged per function."""
    exact_base, exact_cand = _merged(base, lines=True), _merged(cand, lines=True)
    both = exact_base.keys() & exact_cand.keys()
    changes = [_change(exact_base[k], exact_cand[k]) for k in both]
    rest_base = _merged([c for k, c in exact_base.items() if k not in both], lines=False)
    rest_cand = _merged([c for k, c in exact_cand.items() if k not in both], lines=False)
    for k in dict.fromkeys([*rest_cand, *rest_base]):
        changes.append(_change(rest_base.get(k), rest_cand.get(k)))
    changes = [c for c in changes if c is not None]
    return sorted(changes, key=lambda ch: (-abs(ch.bytes), -abs(ch.allocs), ch.site.label()))


def _change(b: SiteCost | None, c: SiteCost | None) -> SiteChange | None:
    if b is not None and c is not None and b.sizes == c.sizes:
        return None
    kind = "new" if b is None else "gone" if c is None else "changed"
    allocs = (c.allocs if c else 0) - (b.allocs if b else 0)
    size = (c.bytes if c else 0) - (b.bytes if b else 0)
    return SiteChange(kind, (c or b).site, Fraction(allocs), Fraction(size), b, c)


@dataclass(frozen=True)
class Unsteady:
    """Of an instance profiled on both sides whose sites do not sum to the count pass on a side:
    its sites that did not allocate alike over two stretches of ops on a side (profile.py), one
    per key lines aside (the key by which `diff` matches a site that an edit moved), and how
    many keys of the two sides' sites are steady. A change is judged against a budget when its
    key is steady: every site it stands for, on both sides, allocated alike."""
    sites: tuple[Site, ...]
    steady: int

    @staticmethod
    def of(base: list[SiteCost], base_unsteady: frozenset[Site], cand: list[SiteCost],
           cand_unsteady: frozenset[Site]) -> Unsteady:
        shaky: dict[tuple, Site] = {}
        for site in sorted(base_unsteady | cand_unsteady, key=Site.label):
            shaky.setdefault(key(site), site)
        every = {key(c.site) for c in (*base, *cand)} | shaky.keys()
        return Unsteady(tuple(shaky.values()), len(every - shaky.keys()))

    def judged(self, change: SiteChange) -> bool:
        return key(change.site) not in {key(s) for s in self.sites}
