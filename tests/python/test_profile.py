"""allocbench profile on the built-in scenarios, under the real heaptrack: the per-op sites sum to
the count pass, and the sites behind the README's two known changes are named.

Expectations come from the count pass of the normal runner (allocbench-run, no heaptrack) and
from the sizes of the types involved, never from the profile under test.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.base import packages
from allocbench.harness import runners
from allocbench.sites import changes, per_op, profile
from conftest import count_only
from docs_pages import page

WEB = "span_creation/web_server_span/dense:{}"
NAMES = "naming_schema/protocol_names/schema:0/precomputed:{}"
# A node of unordered_map<std::string, std::string> (libstdc++, x86-64): the next pointer, the
# pair of two 32-byte strings, the cached hash.
MAP_NODE = 8 + 2 * 32 + 8


@pytest.fixture(scope="module")
def profiler(build_dir) -> tuple[Path, list[Path]]:
    packages.ensure(["heaptrack", "zstd"])
    runner = build_dir / "bin" / "allocbench-run-profile"
    assert runner.is_file(), f"{runner} was not built"
    return runner, [build_dir / "lib" / "allocbench" / "allocbench_builtin.so"]


def counted(runner: Path, plugin: Path, tmp_path: Path, *names: str) -> dict[str, dict]:
    return count_only(runner, plugin, tmp_path / "count.json", "--filter",
                      "^(" + "|".join(map(re.escape, names)) + ")$")


def test_the_dense_tag_store_moves_the_maps_nodes_and_buckets(profiler, build_dir, tmp_path):
    runner, plugins = profiler
    count = counted(build_dir / "bin" / "allocbench-run", plugins[0], tmp_path, WEB.format(0),
                    WEB.format(1))
    before, after = (profile.profile(runner, plugins, WEB.format(d), tmp_path / str(d), 2)
                     for d in (0, 1))
    assert before.exact() and after.exact()
    changes = per_op.diff(before.costs, after.costs)
    # The sites account for the count pass's difference exactly (681 B, 9 allocations).
    saved_bytes = count[WEB.format(0)]["bytes_per_op"] - count[WEB.format(1)]["bytes_per_op"]
    saved_allocs = count[WEB.format(0)]["allocs_per_op"] - count[WEB.format(1)]["allocs_per_op"]
    assert (saved_bytes, saved_allocs) == (681, 9)
    assert sum(c.bytes for c in changes) == -saved_bytes
    assert sum(c.allocs for c in changes) == -saved_allocs
    by_via = {c.site.via.rsplit("::", 1)[-1]: c for c in changes}
    nodes, buckets = by_via["_M_allocate_node"], by_via["_M_allocate_buckets"]
    assert nodes.kind == buckets.kind == "gone"
    assert per_op.short_function(nodes.site.frames[0][0]) == "tracer::TagStore::SetInMap"
    assert nodes.base.sizes == ((MAP_NODE, 7),)     # one node per tag of the 7-tag span
    assert buckets.allocs == -1
    assert nodes.text().startswith(f"−{7 * MAP_NODE} B/op, −7 allocs/op: site gone "
                                   "tracer::TagStore::SetInMap (tag_store.cc:")
    # docs/sites.md's example is this diff: its lines (up to a "…") in this order.
    readme = page("sites")
    block = readme[readme.index("<!-- sites-example:begin -->"):
                   readme.index("<!-- sites-example:end -->")].split("```")[1].strip()
    shown = block.splitlines()
    assert len(shown) == len(changes)
    for line, change in zip(shown, changes):
        assert change.text().startswith(line.split("…")[0]), (line, change.text())
        assert "…" in line or line == change.text()


def test_precomputed_names_make_the_concatenation_sites_vanish(profiler, build_dir, tmp_path):
    runner, plugins = profiler
    count = counted(build_dir / "bin" / "allocbench-run", plugins[0], tmp_path, NAMES.format(0))
    before, after = (profile.profile(runner, plugins, NAMES.format(p), tmp_path / str(p), 2)
                     for p in (0, 1))
    (change,) = per_op.diff(before.costs, after.costs)
    assert change.kind == "gone"
    assert (-change.bytes, -change.allocs) == (count[NAMES.format(0)]["bytes_per_op"],
                                               count[NAMES.format(0)]["allocs_per_op"]) == (62, 2)
    assert per_op.short_function(change.site.frames[0][0]) == \
        "tracer::InterpolateProtocolServiceName"
    assert after.costs == []


# Three heaptrack runs of each of the built-in instances: minutes on a loaded 2-core machine.
@pytest.mark.timeout(900)
def test_the_sites_sum_to_the_count_pass_for_every_builtin_instance(profiler, tmp_path):
    runner, plugins = profiler
    names = profile.instances(runner, plugins)
    assert len(names) == 46

    def one(name: str) -> tuple[str, bool, tuple, tuple]:
        found = profile.profile(runner, plugins, name, tmp_path / name.replace("/", "_"), 2)
        return name, found.exact(), found.total(), found.expected()
    with ThreadPoolExecutor(2) as pool:
        outcomes = list(pool.map(one, names))
    assert [o for o in outcomes if not o[1]] == []
    # Not a trivial pass: most instances allocate.
    assert sum(o[2][0] > 0 for o in outcomes) >= 30


def test_the_command_writes_the_profile_and_the_table(profiler, build_dir, tmp_path, capsys,
                                                      monkeypatch):
    monkeypatch.setattr(runners, "profile_runner_path", lambda jobs=None: profiler[0])
    out = tmp_path / "profiles"
    code = cli.main(["profile", NAMES.format(0), "--plugin", str(profiler[1][0]),
                     "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    assert "| **total** | **2** | **62** | |" in text
    assert "Sum over the sites: equal to the count pass (2 allocs/op, 62 B/op" in text
    slug = "naming_schema_protocol_names_schema_0_precomputed_0-" + hashlib.sha256(
        NAMES.format(0).encode()).hexdigest()[:10]
    assert sorted(p.name for p in out.iterdir()) == [f"{slug}.sites.json", f"{slug}.sites.md",
                                                    f"{slug}.zst"]


def test_an_unknown_instance_names_the_closest(profiler, capsys, monkeypatch):
    monkeypatch.setattr(runners, "profile_runner_path", lambda jobs=None: profiler[0])
    code = cli.main(["profile", "span_creation/bare_start_spam", "--plugin",
                     str(profiler[1][0])])
    assert code == 2
    assert capsys.readouterr().err.startswith(
        "allocbench: error: no scenario instance is named 'span_creation/bare_start_spam'; did "
        "you mean span_creation/bare_start_span")


def test_a_site_table_that_misses_its_count_pass_is_1(profiler, ground_truth, capsys,
                                                     monkeypatch, tmp_path):
    # growing_vector keeps what it allocates: its vector grows in some ops and not in others,
    # so the few ops profiled do not show the count pass's average.
    monkeypatch.setattr(runners, "profile_runner_path", lambda jobs=None: profiler[0])
    code = cli.main(["profile", "ground_truth/growing_vector", "--plugin", str(ground_truth),
                     "--out", str(tmp_path)])
    assert code == 1
    out = capsys.readouterr().out
    assert "Sum over the sites: **not** the count pass's" in out
    # The runs push 3 + 2·N elements (N = 2, 4, 6): 7, 11, 15. The vector doubles at the 9th
    # (8 → 16 int64_t: 128 B), which is in the second run's 4 extra ops, and not again before
    # the 17th, past the third's: the site is not steady, and the table says so.
    assert "| `::GrowingVector` | 0.25 | 32 | 0.25 × 128 B |" in out
    assert ("Not steady, allocating differently per op over two stretches of ops (the second "
            "run's extra ops and a third run's, of 3·N per window): `::GrowingVector`, ") in out
    (table,) = tmp_path.glob("*.sites.json")
    assert json.loads(table.read_text())["unsteady"][0] == {
        "frames": [{"function": "(anonymous namespace)::GrowingVector(allocbench::State&)",
                    "file": "", "line": 0}], "background": False, "via": ""}


def test_a_third_run_is_made_only_for_a_table_that_misses_its_count_pass(
        profiler, ground_truth, tmp_path, monkeypatch):
    calls = []
    run = profile._run

    def recorded(runner, plugins, name, ops, out):
        calls.append((ops, out.name))
        return run(runner, plugins, name, ops, out)

    monkeypatch.setattr(profile, "_run", recorded)
    mixed, vector = "ground_truth/mixed", "ground_truth/growing_vector"
    exact = profile.profile(profiler[0], [ground_truth], mixed, tmp_path / "m", 4)
    stem = "ground_truth_mixed-" + hashlib.sha256(mixed.encode()).hexdigest()[:10]
    # 4, 8 and 12 ops per window have the same width: the runs' command lines the same length.
    assert calls == [("04", f"{stem}.run1"), ("08", f"{stem}.run2")]
    assert exact.exact() and exact.unsteady == frozenset()
    calls.clear()
    found = profile.profile(profiler[0], [ground_truth], vector, tmp_path / "g", 4)
    stem = "ground_truth_growing_vector-" + hashlib.sha256(vector.encode()).hexdigest()[:10]
    assert calls == [("04", f"{stem}.run1"), ("08", f"{stem}.run2"), ("12", f"{stem}.run3")]
    # 11, 19 and 27 elements: the 17th doubles the vector (16 → 32 int64_t: 256 B) in the
    # second run's 8 extra ops; the third's (20th to 27th) allocate nothing.
    (grows,) = [c for c in found.costs if "GrowingVector" in c.site.frames[0][0]]
    assert grows.sizes == ((256, Fraction(1, 8)),)
    assert not found.exact() and grows.site in found.unsteady
    assert [p.name for p in (tmp_path / "g").iterdir()] == [f"{stem}.zst"]   # the second's


def test_a_stripped_plugin_gives_addresses_in_its_module(profiler, ground_truth, tmp_path):
    stripped = tmp_path / "ground_truth.so"
    shutil.copy(ground_truth, stripped)
    subprocess.run(["strip", str(stripped)], check=True)
    found = profile.profile(profiler[0], [stripped], "ground_truth/mixed", tmp_path / "p", 2)
    assert found.exact()   # the sums do not need symbols
    labels = [c.site.label() for c in found.costs]
    assert labels and all(re.search(r"^0x[0-9a-f]+ in ground_truth\.so", label)
                          for label in labels), labels


def test_without_heaptrack_ab_gates_and_says_the_sites_were_skipped(monkeypatch):
    from allocbench.base.errors import UserError
    from allocbench.gate import compare as cmp, config
    data = Path(__file__).parent / "data" / "compare"
    comparison = cmp.compare(cmp.load_side(data / "base.json"), cmp.load_side(data / "cand.json"),
                             config.Config())

    def missing(needed):
        raise UserError("missing Debian packages; run as root:\n  sudo apt-get install heaptrack")
    monkeypatch.setattr(packages, "ensure", missing)
    found = changes.site_changes(comparison, [], [], Path("unused"), 3)
    assert found.changes == {}
    assert found.note == ("skipped, heaptrack is not available (missing Debian packages; run as root:: "
                    "apt-get install heaptrack)")


def test_a_profile_that_fails_is_named_and_costs_ab_nothing_else(monkeypatch, tmp_path):
    from allocbench.base.errors import MeasurementFailed
    from allocbench.gate import compare as cmp, config
    from allocbench.commands import ab
    data = Path(__file__).parent / "data" / "compare"
    comparison = cmp.compare(cmp.load_side(data / "base.json"), cmp.load_side(data / "cand.json"),
                             config.Config())
    sized, mixed = "ground_truth/sized/bytes:24", "ground_truth/mixed"   # moved; budgeted

    def fake(runner, plugins, name, folder, ops):
        if name in (sized, mixed):
            raise MeasurementFailed(f"heaptrack allocbench-run-profile ({name}) failed with "
                                    "exit code 3: x")
        folder.mkdir(parents=True, exist_ok=True)
        return profile.Profiled(name, 4, [], dict.fromkeys(
            ("allocs_per_op", "bytes_per_op", "background_allocs_per_op",
             "background_bytes_per_op"), 0), folder / f"{len(name)}.zst", True)

    monkeypatch.setattr(packages, "ensure", lambda needed: None)
    monkeypatch.setattr(runners, "profile_runner", lambda near: Path("runner"))
    monkeypatch.setattr(profile, "profile", fake)
    found = changes.site_changes(comparison, [], [], tmp_path, 3,
                                         budgeted=lambda name: name == mixed)
    # The three instances whose allocations changed, and the budgeted one: two profiled.
    assert sorted(found.changes) == ["strings/interpolated_name",
                                     "trace_fanout/web_trace/children:5"]
    assert found.failed == {name: f"heaptrack allocbench-run-profile ({name}) failed with exit "
                                  "code 3: x" for name in (sized, mixed)}
    cfg_path = tmp_path / "allocbench.toml"
    cfg_path.write_text(f'[[sites]]\nmatch = "{mixed}"\nbytes_per_op = 0\n')
    judged, _, note = ab.judge_sites(comparison, config.load(cfg_path), found)
    assert judged.sites_not_judged == (cmp.SitesNotJudged(
        mixed, f"profiling it under heaptrack failed: {found.failed[mixed]}", gates=True),)
    assert note == f"the sites of {sized} were not profiled: {found.failed[sized]}"


def test_when_no_allocation_moved_and_nothing_is_budgeted_nothing_is_profiled(monkeypatch,
                                                                               tmp_path):
    from allocbench.gate import compare as cmp, config
    base = cmp.load_side(Path(__file__).parent / "data" / "compare" / "base.json")
    comparison = cmp.compare(base, base, config.Config())

    def never(*args):
        raise AssertionError("nothing should be profiled, or heaptrack looked for")

    monkeypatch.setattr(packages, "ensure", never)
    monkeypatch.setattr(profile, "profile", never)
    assert changes.site_changes(comparison, [], [], tmp_path, 3,
                                        budgeted=lambda name: False) == \
        changes.SiteChanges({})


def _rows(table: str) -> list[str]:
    """The rows of a site table, the header and its rule left out."""
    lines = [line for line in table.splitlines() if line.startswith("| ")]
    assert lines[0] == "| site (innermost frame of your code first) | allocs/op | B/op | sizes |"
    return lines[1:]


def test_every_row_of_the_site_tables_in_order(profiler, ground_truth, capsys, monkeypatch,
                                               tmp_path):
    """ground_truth.cc's op: 3 × new of 32 B and malloc(100) in the scenario's function, and a
    strdup of 9 characters (10 B) through libc: two sites, the bigger B/op first, and the sizes
    of one site by their bytes (1 × 100 B before 3 × 32 B). ground_truth/background adds a
    thread that mallocs 64 B as fast as it can: its row comes last, whatever its B/op (mostly
    more than both others), and how many it made per op is the scheduler's."""
    monkeypatch.setattr(runners, "profile_runner_path", lambda jobs=None: profiler[0])
    code = cli.main(["profile", "ground_truth/mixed", "ground_truth/background", "--plugin",
                     str(ground_truth), "--out", str(tmp_path)])
    assert code == 1   # the background thread's allocations per op are not the count pass's
    mixed, background = capsys.readouterr().out.split("### ")[1:]
    op_rows = [r"\| `::{0}` \| 4 \| 196 \| 1 × 100 B \+ 3 × 32 B \|",
               r"\| `::{0}` via `(__GI___)?strdup` \| 1 \| 10 \| 1 × 10 B \|"]
    rows = _rows(mixed)
    assert len(rows) == 3
    for row, pattern in zip(rows, op_rows):
        assert re.fullmatch(pattern.format("Mixed"), row), row
    assert rows[2] == "| **total** | **5** | **206** | |"
    rows = _rows(background)
    assert len(rows) == 4
    for row, pattern in zip(rows, op_rows):
        assert re.fullmatch(pattern.format("Background"), row), row
    # How many the thread made per op (the difference of two runs) is the scheduler's: even
    # negative, and not a whole number. Its size is not.
    number = r"−?[\d.e+-]+"
    assert re.fullmatch(rf"\| another thread: `std::thread::_State_impl::_M_run` \| {number} \| "
                        rf"{number} \| \\?{number} × 64 B \|", rows[2]), rows[2]
    assert rows[3].startswith("| **total** | **")
    # The .sites.md files hold the tables printed (print() adds a line).
    written = sorted(p.read_text() for p in tmp_path.glob("*.sites.md"))
    assert written == sorted("### " + t[:-1] for t in (mixed, background))


def test_a_site_table_with_a_background_of_half_an_allocation_per_op(tmp_path):
    """Per op: 3 × 32 B on the op's thread, and a flush thread's 1 B every second op. Every
    count is written as a decimal, the verdict's sums included (3.5 allocs/op, 96.5 B/op),
    never as a fraction. The count pass's numbers are floats, as they are read from JSON."""
    from allocbench.commands import profile as profile_command
    op = per_op.Site((("Span::Start", "span.cc", 10),), background=False)
    flush = per_op.Site((("Agent::Flush", "agent.cc", 5),), background=True)
    profiled = profile.Profiled(
        "tracer/span", 6, [per_op.SiteCost(op, ((32, Fraction(3)),)),
                           per_op.SiteCost(flush, ((1, Fraction(1, 2)),))],
        {"allocs_per_op": 3.0, "bytes_per_op": 96.0, "background_allocs_per_op": 0.5,
         "background_bytes_per_op": 0.5}, tmp_path / "p.zst", True)
    assert profiled.exact()
    table = profile_command.markdown(profiled, "tracer/span")
    assert _rows(table) == ["| `Span::Start (span.cc:10)` | 3 | 96 | 3 × 32 B |",
                            "| another thread: `Agent::Flush (agent.cc:5)` | 0.5 | 0.5 "
                            "| 0.5 × 1 B |",
                            "| **total** | **3.5** | **96.5** | |"]
    assert ("Sum over the sites: equal to the count pass (3.5 allocs/op, 96.5 B/op with its "
            "background).") in table
