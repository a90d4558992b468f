"""The README's numbers of the built-in scenarios come from code and data in the repository.

Its generated blocks (the "What you get" excerpt, the built-in table, the fan-out table) are
bench/readme_builtin.py's rendering of bench/data/builtin-results.json; that file's exact counts
are what a fresh count pass of the built-in plugin gives; and every exact number of the prose
around them is the fresh count it describes, formatted as the README writes it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from allocbench.harness.run_report import format_value
from conftest import count_only
from docs_pages import folded, path

ROOT = Path(__file__).resolve().parents[2]
# The pages that hold the generated blocks: "What you get" on the front door, the built-in and
# fan-out tables on docs/scenarios.md.
PAGES = ("README", "scenarios")
COMMITTED = ROOT / "bench" / "data" / "builtin-results.json"
SCRIPT = ROOT / "bench" / "readme_builtin.py"
EXACT = ("bytes_per_op", "allocs_per_op", "frees_per_op", "first_op_bytes")
FRESH_THREAD = "span_creation/fresh_thread_span/builder_reuse:"


def _by_name(path: Path) -> dict[str, dict]:
    return {r["name"]: r for r in json.loads(path.read_text())["results"]}


@pytest.fixture(scope="module")
def plugin(build_dir) -> Path:
    return build_dir / "lib" / "allocbench" / "allocbench_builtin.so"


@pytest.fixture(scope="module")
def fresh(runner, plugin, tmp_path_factory) -> dict[str, dict]:
    out = tmp_path_factory.mktemp("fresh") / "builtin.json"
    count_only(runner, plugin, out)
    return _by_name(out)


@pytest.fixture(scope="module")
def committed() -> dict[str, dict]:
    return _by_name(COMMITTED)


def _check(*pages: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), "--results", str(COMMITTED), "--check",
                           *map(str, pages)], capture_output=True, text=True, timeout=60)


def test_the_readme_blocks_are_the_rendering_of_the_committed_results():
    done = _check(*(path(name) for name in PAGES))
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_shows_a_changed_number_and_write_puts_it_back(tmp_path):
    readme, scenarios = tmp_path / "README.md", tmp_path / "scenarios.md"
    shutil.copy(path("README"), readme)
    shutil.copy(path("scenarios"), scenarios)
    front, text = readme.read_text(), scenarios.read_text()
    row = re.search(r"^\| `trace_fanout/propagation_tags_copy` \| (\d+) \|", text, re.M)
    scenarios.write_text(text[:row.start(1)] + str(int(row.group(1)) + 1) + text[row.end(1):])
    done = _check(readme, scenarios)
    assert done.returncode == 1
    assert f"-| `trace_fanout/propagation_tags_copy` | {int(row.group(1)) + 1} |" in done.stdout
    assert subprocess.run([sys.executable, str(SCRIPT), "--results", str(COMMITTED), "--write",
                           str(readme), str(scenarios)], timeout=60).returncode == 0
    assert (readme.read_text(), scenarios.read_text()) == (front, text)
    scenarios.write_text(text.replace("<!-- fanout-table:end -->", ""))
    assert _check(readme, scenarios).returncode == 2


def test_each_block_must_be_on_exactly_one_of_the_pages(tmp_path):
    """A page left out, or a block on two pages: bad input naming the block, nothing written."""
    readme, scenarios = tmp_path / "README.md", tmp_path / "scenarios.md"
    shutil.copy(path("README"), readme)
    shutil.copy(path("scenarios"), scenarios)
    done = _check(readme)
    assert done.returncode == 2
    assert "'<!-- builtin-table:begin -->'" in done.stderr and "found on none of them" in \
        done.stderr
    block = re.search(r"<!-- fanout-table:begin -->\n.*?<!-- fanout-table:end -->\n",
                      scenarios.read_text(), re.S).group()
    readme.write_text(readme.read_text() + "\n" + block)
    front = readme.read_text()
    done = subprocess.run([sys.executable, str(SCRIPT), "--results", str(COMMITTED), "--write",
                           str(readme), str(scenarios)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert f"found on {readme}, {scenarios}" in done.stderr
    assert readme.read_text() == front


def test_the_committed_counts_are_those_of_a_fresh_count_pass(committed, fresh):
    assert list(committed) == list(fresh)  # the same instances, in the runner's order
    differ = [(name, key, committed[name]["alloc"][key], fresh[name]["alloc"][key])
              for name in fresh for key in EXACT
              if committed[name]["alloc"][key] != fresh[name]["alloc"][key]]
    assert differ == []


# Every exact number of the prose, from the fresh count pass: (the phrase, as the README writes
# it with the numbers as {}, and the numbers).
def _b(value: float) -> str:
    return format_value(value, "B")


def _n(value: float) -> str:
    return f"{round(value):,}"


def _mb(value: float) -> str:
    return f"{value / 1e6:.3g}"


def _bytes(f, name):
    return f[name]["alloc"]["bytes_per_op"]


def _allocs(f, name):
    return f[name]["alloc"]["allocs_per_op"]


def _counter(f, name, counter):
    return f[name]["counters"][counter]["value"]


def _naming(f, precomputed):
    return [_bytes(f, n) for n in f
            if n.startswith("naming_schema/") and n.endswith(f"/precomputed:{precomputed}")]


def _slope(f, share):
    web = "trace_fanout/web_trace/children:{}/share:" + str(share)
    return (_bytes(f, web.format(20)) - _bytes(f, web.format(1))) / 19


def _init(storage):
    return f"tag_interning/init/contexts:7500/tags:26/storage:{storage}"


def _frames(shards, kib):
    return f"dictionary_inserts/profile_frames/shards:{shards}/chunk_kib:{kib}/threads:1"


BARE, BUILD = "span_creation/bare_start_span", "span_creation/bare_build_span/builder_reuse:0"
WEB = "span_creation/web_server_span/dense:"

PROSE = {
    "naming": ("precomputed names cost **{} B/op** where interpolation costs {}–{} B",
               lambda f: (_b(max(_naming(f, 1))), _b(min(b for b in _naming(f, 0) if b)),
                          _b(max(_naming(f, 0))))),
    "builder": ("(**+{} B, +{} allocs**)",
                lambda f: (_b(_bytes(f, BUILD) - _bytes(f, BARE)),
                           _b(_allocs(f, BUILD) - _allocs(f, BARE)))),
    "fresh thread": ("a fresh thread pays for that cache instead of saving (+{} B)",
                     lambda f: (_b(_bytes(f, FRESH_THREAD + "1")
                                   - _bytes(f, FRESH_THREAD + "0")),)),
    "dense tags": ("saves **{} B and {} allocations** per 7-tag span",
                   lambda f: (_b(_bytes(f, WEB + "0") - _bytes(f, WEB + "1")),
                              _b(_allocs(f, WEB + "0") - _allocs(f, WEB + "1")))),
    "fan-out": ("lowers the per-child slope by exactly one copy of them, **{} B**",
                lambda f: (_b(_slope(f, 0) - _slope(f, 1)),)),
    "handles": ("cut the metrics agent's init from {} allocations to {}",
                lambda f: (_n(_allocs(f, _init(0))), _n(_allocs(f, _init(1))))),
    # The long tag strings, as the scenario counts them from its generator; the init difference
    # is that less the interner's few blocks (tests/metrics derives both exactly).
    "long tags": ("exactly the {} tag strings too long for the small-string buffer",
                  lambda f: (_n(_counter(f, _init(0), "tag_strings_over_sso")),)),
    "floor": ("drops from {} MB (16 × 1 MiB chunks) to {} MB (4 × 256 KiB)",
              lambda f: (_mb(_counter(f, _frames(16, 1024), "floor_empty_allocator_bytes")),
                         _mb(_counter(f, _frames(4, 256), "floor_empty_allocator_bytes")))),
    "steady inserts": ("its steady inserts cost {} B/op",
                       lambda f: (_b(max(_bytes(f, n) for n in f
                                         if n.startswith("dictionary_inserts/profile_frames/"))),)),
    "cold op alone": ("`first_op_bytes` ({} B, as when it runs alone)",
                      lambda f: (_b(f[FRESH_THREAD + "1"]["alloc"]["first_op_bytes"]),)),
}


# The page of each phrase: what the built-in scenarios show is on docs/scenarios.md, the cold
# op that isolation keeps cold on docs/reliability.md.
PAGE = dict.fromkeys(PROSE, "scenarios") | {"cold op alone": "reliability"}


@pytest.mark.parametrize("key", PROSE)
def test_the_prose_states_the_fresh_count(fresh, key):
    phrase, numbers = PROSE[key]
    expected = phrase.format(*numbers(fresh))
    assert expected in folded(PAGE[key])


def test_the_handles_save_the_long_tag_strings_less_the_interners_blocks(fresh):
    saved = _allocs(fresh, _init(0)) - _allocs(fresh, _init(1))
    long_tags = _counter(fresh, _init(0), "tag_strings_over_sso")
    assert 0 < long_tags - saved < 100  # a few tens: pool chunks, index tables, handle list


def test_the_cold_op_after_builder_reuse_0_in_the_same_process(runner, plugin, tmp_path):
    """What isolation costs: without it, builder_reuse:1's cold op finds the thread set-up paid."""
    one_process = count_only(runner, plugin, tmp_path / "one_process.json", "--no-isolation",
                             "--filter", "span_creation/fresh_thread_span")
    phrase = f"instead of {_b(one_process[FRESH_THREAD + '1']['first_op_bytes'])} B after " \
             "`builder_reuse:0` had paid it in the same process"
    assert phrase in folded("reliability")


def test_the_contention_numbers_are_the_committed_measurement(committed):
    """Time is the committed measurement's; the claim is that 4 shards trail 16 at 2 threads by
    no more than at 1 thread, where no lock is contended."""
    def ops(shards, threads):
        kib = 256 if shards == 4 else 1024
        return committed[f"dictionary_inserts/profile_frames/shards:{shards}/chunk_kib:{kib}"
                         f"/threads:{threads}"]["time"]["ops_per_s"]

    def shown(shards, threads):
        return format_value(ops(shards, threads), "ops/s")

    phrase = (f"4 shards trail 16 at 2 threads ({shown(4, 2)} vs {shown(16, 2)} ops/s) by no more "
              f"than at 1 thread ({shown(4, 1)} vs {shown(16, 1)} ops/s)")
    assert phrase in folded("scenarios")
    assert ops(4, 2) / ops(16, 2) >= ops(4, 1) / ops(16, 1)
