"""sites/heaptrack.py and sites/per_op.py on hand-written profiles: the record format, stacks, folding
to the user's frames, the per-op difference and the site diff. The same code on real heaptrack
profiles of the built-in scenarios: test_profile.py."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest

from allocbench.sites import heaptrack, per_op

RUNNER = "allocbench-run-profile"
PLUGIN = "plugin.so"


def profile_text(calls: dict[int, int]) -> list[str]:
    """A profile in heaptrack's format: strings, ips (one with an inlined library frame), two
    stacks and allocations; `calls`: allocation index → how many '+' records."""
    lines = ["v 10400 3",
             f"s {len('/bin/' + RUNNER):x} /bin/{RUNNER}",      # 1
             f"s {len('/lib/' + PLUGIN):x} /lib/{PLUGIN}",      # 2
             "s 6 malloc",                                       # 3
             "s 9 Span::Tag",                                    # 4
             "s 7 span.cc",                                      # 5
             "s 1d std::basic_string::_M_create",               # 6
             "s 21 /usr/include/c++/12/basic_string",           # 7
             "s 9 RunThread",                                    # 8
             "s 7 Spawned",                                      # 9
             "i 1000 1 3",                    # 1: malloc in the runner, no file
             "i 2000 2 6 7 c8 4 5 58",        # 2: _M_create inlined into Span::Tag (span.cc:88)
             "i 3000 1 8",                    # 3: the runner's thread function
             "i 4000 2 9 5 a",                # 4: a thread the plugin started (span.cc:10)
             # Traces from the outermost frame in: 3 is malloc ← Tag ← RunThread, 6 is
             # malloc ← Tag ← Spawned.
             "t 3 0", "t 2 1", "t 1 2", "t 4 0", "t 2 4", "t 1 5"]
    lines += ["a 20 3", "a 11 3", "a 40 6"]            # 32 B and 17 B on the op thread, 64 B
    for index, n in calls.items():
        lines += [f"+ {index:x}"] * n + [f"- {index:x}"] * n
    return lines


def test_records_are_read_into_stacks_innermost_first():
    profile = heaptrack.parse(profile_text({0: 3}))
    assert heaptrack.allocations(profile) == Counter({(32, 3): 3})
    stack = profile.stack(3)
    assert [(f.function, f.file, f.line) for f in stack] == [
        ("malloc", "", 0), ("std::basic_string::_M_create", "/usr/include/c++/12/basic_string",
                            200), ("Span::Tag", "span.cc", 88), ("RunThread", "", 0)]
    assert [f.module.rsplit("/", 1)[1] for f in stack] == [RUNNER, PLUGIN, PLUGIN, RUNNER]


def test_a_site_is_the_users_frames_via_the_library_function_and_its_thread():
    profile = heaptrack.parse(profile_text({}))
    op = per_op.site_of(profile.stack(3), {PLUGIN}, RUNNER)
    assert op == per_op.Site((("Span::Tag", "span.cc", 88),), False,
                            "std::basic_string::_M_create")
    spawned = per_op.site_of(profile.stack(6), {PLUGIN}, RUNNER)
    assert spawned.background and spawned.frames[-1] == ("Spawned", "span.cc", 10)


def test_per_op_is_the_difference_of_two_runs_divided_by_the_ops():
    # 10 and 30 calls of 32 B, 10 and 30 of 17 B, 4 and 4 of 64 B (setup: not per op).
    short = per_op.calls_by_site(heaptrack.parse(profile_text({0: 10, 1: 10, 2: 4})),
                                {PLUGIN}, RUNNER)
    long = per_op.calls_by_site(heaptrack.parse(profile_text({0: 30, 1: 30, 2: 4})),
                               {PLUGIN}, RUNNER)
    (cost,) = per_op.per_op(short, long, ops=20)
    assert cost.sizes == ((17, Fraction(1)), (32, Fraction(1)))
    assert (cost.allocs, cost.bytes) == (2, 49)
    assert per_op.sizes_text(cost.sizes) == "1 × 32 B + 1 × 17 B"


@pytest.mark.parametrize("name, short", [
    ("tracer::TagStore::SetInMap(std::string, std::basic_string_view<char>)",
     "tracer::TagStore::SetInMap"),
    ("void* allocbench::hooks::CountedAllocPath<F>(unsigned long, F)",
     "allocbench::hooks::CountedAllocPath"),
    ("std::pair<A, B> std::_Hashtable<K, V>::_M_emplace<Args>(std::true_type, Args&&)",
     "std::_Hashtable::_M_emplace"),
    ("Foo::Bar() const", "Foo::Bar"), ("operator()<>", "operator()"), ("Hex16", "Hex16")])
def test_short_function_names(name, short):
    assert per_op.short_function(name) == short


def cost(function: str, line: int, *sizes: tuple[int, int], via: str = "") -> per_op.SiteCost:
    return per_op.SiteCost(per_op.Site(((function, "span.cc", line),), False, via),
                          tuple((size, Fraction(n)) for size, n in sizes))


def test_the_diff_matches_sites_by_function_not_line_and_sorts_by_bytes():
    base = [cost("Span::Tag", 10, (32, 3)), cost("Span::Name", 20, (17, 1)),
            cost("Span::Tag", 12, (8, 1))]   # one function at two lines: one site
    cand = [cost("Span::Tag", 14, (32, 3), (8, 1)),            # moved by an edit: same
            cost("Span::Link", 30, (96, 1)), cost("Span::Name", 21, (24, 1))]
    changes = per_op.diff(base, cand)
    assert [(c.kind, c.site.frames[0][0], c.bytes, c.allocs) for c in changes] == [
        ("new", "Span::Link", 96, 1), ("changed", "Span::Name", 7, 0)]
    assert changes[0].text() == "+96 B/op, +1 allocs/op: new site Span::Link (span.cc:30) " \
                                "1 × 96 B"
    assert changes[1].text() == "+7 B/op, +0 allocs/op: site Span::Name (span.cc:21) " \
                                "+1 × 24 B −1 × 17 B (1 × 17 B → 1 × 24 B)"
    gone = per_op.diff(cand, base)
    assert gone[0].text() == "−96 B/op, −1 allocs/op: site gone Span::Link (span.cc:30) " \
                             "(was 1 × 96 B)"


def test_a_new_line_in_a_function_whose_other_lines_stayed_is_a_new_site():
    base = [cost("Span::Tag", 10, (32, 3))]
    cand = [cost("Span::Tag", 10, (32, 3)), cost("Span::Tag", 11, (96, 1))]
    (change,) = per_op.diff(base, cand)
    assert change.text() == "+96 B/op, +1 allocs/op: new site Span::Tag (span.cc:11) 1 × 96 B"


def test_site_tables_survive_json():
    costs = [cost("Span::Tag", 10, (32, 3), via="std::basic_string::_M_create")]
    assert per_op.from_json(per_op.to_json(costs)) == costs


def test_a_site_whose_sizes_change_at_equal_bytes_is_a_change():
    # 1 × 64 B → 2 × 32 B: the bytes stay, one allocation more per op.
    (more,) = per_op.diff([cost("Span::Tag", 10, (64, 1))], [cost("Span::Tag", 10, (32, 2))])
    assert (more.kind, more.bytes, more.allocs) == ("changed", 0, 1)
    assert more.text() == "+0 B/op, +1 allocs/op: site Span::Tag (span.cc:10) +2 × 32 B " \
                          "−1 × 64 B (1 × 64 B → 2 × 32 B)"
    # 64 B + 32 B → 2 × 48 B: the bytes and the allocations stay, the sizes do not.
    (same,) = per_op.diff([cost("Span::Tag", 10, (64, 1), (32, 1))],
                         [cost("Span::Tag", 10, (48, 2))])
    assert (same.kind, same.bytes, same.allocs) == ("changed", 0, 0)
    assert same.text() == "+0 B/op, +0 allocs/op: site Span::Tag (span.cc:10) +2 × 48 B " \
                          "−1 × 64 B −1 × 32 B (1 × 64 B + 1 × 32 B → 2 × 48 B)"


def test_unsteady_sites_are_those_whose_sizes_differ_between_two_tables():
    tag, name, flush = (cost("Span::Tag", 10, (32, 3)), cost("Span::Name", 20, (17, 1)),
                        cost("Span::Flush", 30, (11, 1), (7, -1)))
    later = [tag, cost("Span::Name", 20, (18, 1)),           # other sizes
             cost("Span::Link", 40, (96, 1))]                # in one table only
    assert per_op.unsteady([tag, name, flush], later) == {name.site, flush.site,
                                                         later[2].site}
    assert per_op.unsteady([tag, name], [tag, name]) == frozenset()


def test_a_change_is_judged_when_no_site_of_its_function_was_unsteady():
    # The base's Span::Tag at line 10 varied; the candidate's, at line 12 (an edit moved it),
    # is the same site by function: its change is not judged, Span::Link's is.
    base = [cost("Span::Tag", 10, (32, 3)), cost("Span::Name", 20, (17, 1))]
    cand = [cost("Span::Tag", 12, (32, 4)), cost("Span::Name", 20, (17, 1)),
            cost("Span::Link", 40, (96, 1))]
    shaky = per_op.Unsteady.of(base, frozenset({base[0].site}), cand, frozenset())
    assert shaky == per_op.Unsteady((base[0].site,), steady=2)   # Span::Name, Span::Link
    changes = per_op.diff(base, cand)
    assert [(c.site.frames[0][:2], shaky.judged(c)) for c in changes] == [
        (("Span::Link", "span.cc"), True), (("Span::Tag", "span.cc"), False)]
    # Unsteady on both sides, and a site the table does not list (it allocated in the third
    # run only): named once, by the first label; no site is steady.
    gone = cost("Span::Gone", 50, (8, 1)).site
    both = per_op.Unsteady.of(base[:1], frozenset({base[0].site, gone}), cand[:1],
                             frozenset({cand[0].site}))
    assert both == per_op.Unsteady((gone, base[0].site), steady=0)
