"""Sweeps, sweep tables and bisect on instructions (allocbench-run --instructions): a small plugin
project whose history changes the instructions of a scenario and never its allocations.

Each op of `work/parse` allocates 40 bytes and turns an inline-asm loop of exactly three
instructions (addq, subq, jnz) SPINS times; one commit raises SPINS. So the instructions per op
step by 3 × the added turns, known from the asm and not from the tool, while B/op stays 40 in
every commit: bisect names that commit on instructions_per_op, finds nothing on bytes_per_op,
and the sweep table shows the step in its Ir/op table."""

from __future__ import annotations

import contextlib
import csv
import io
import gzip
import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.history import sweep_plot, sweep_table
from allocbench.history.store import Store, passes
from docs_pages import folded

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64",
                                reason="the scenario's work is x86-64 inline assembly")

PARSE, COPY = "work/parse", "work/copy"
TURN = 3                  # instructions in one turn of the loop: addq, subq, jnz
SPINS_BEFORE, SPINS_AFTER = 10, 35

CMAKELISTS = """cmake_minimum_required(VERSION 3.20)
project(work_scenarios CXX)
find_package(allocbench REQUIRED)
allocbench_add_plugin(work_scenarios SOURCES work.cc)
"""

WORK = """#include <allocbench/scenario.h>

#include <cstdint>
#include <cstring>

// NOTE
// The CPU work of one parse: SPINS turns of a loop of exactly three instructions.
static void Spin() {
  std::uint64_t turns = 0, left = SPINS;
  asm volatile("1: addq $1, %0\\n\\tsubq $1, %1\\n\\tjnz 1b" : "+r"(turns), "+r"(left) : : "cc");
  allocbench::DoNotOptimize(turns);
}

ALLOCBENCH_SCENARIO(Parse, state) {
  for (auto _ : state) {
    char* fields = new char[40];
    allocbench::DoNotOptimize(fields);
    Spin();
    delete[] fields;
  }
}
ALLOCBENCH_REGISTER(Parse)->Name("work/parse");

ALLOCBENCH_SCENARIO(Copy, state) {
  char from[16] = "fifteen chars..";
  for (auto _ : state) {
    char* to = new char[16];
    std::memcpy(to, from, sizeof from);
    allocbench::DoNotOptimize(to);
    delete[] to;
  }
}
ALLOCBENCH_REGISTER(Copy)->Name("work/copy");
"""

def stored(path: Path) -> dict:
    """A store record as the file holds it (version 2: gzip-compressed JSON)."""
    return json.loads(gzip.decompress(path.read_bytes()))



def work(spins: int, note: str = "a parser's work") -> str:
    return WORK.replace("SPINS;", f"{spins};").replace("// NOTE", f"// {note}")


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    tag: str
    spins: int


@dataclass(frozen=True)
class History:
    repo: Path
    commits: tuple[Commit, ...]

    @property
    def added(self) -> Commit:
        """The commit that adds the work."""
        return next(c for before, c in zip(self.commits, self.commits[1:])
                    if c.spins != before.spins)


def git(repo: Path, *args: str, when: int = 1) -> str:
    date = f"2024-02-{when:02d}T12:00:00+00:00"
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def make_history(root: Path) -> History:
    """Five commits, v1 … v2: the third raises SPINS; the others touch docs and comments."""
    repo = root / "work"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    steps = [("a parser that allocates its fields", "v1", SPINS_BEFORE,
              {"CMakeLists.txt": CMAKELISTS, "work.cc": work(SPINS_BEFORE)}),
             ("document the parser", "", SPINS_BEFORE, {"README.md": "A parser.\n"}),
             ("validate every field", "", SPINS_AFTER, {"work.cc": work(SPINS_AFTER)}),
             ("reword a comment", "", SPINS_AFTER,
              {"work.cc": work(SPINS_AFTER, "what one parse costs")}),
             ("more docs", "v2", SPINS_AFTER, {"README.md": "A parser, validating.\n"})]
    commits = []
    for when, (subject, tag, spins, files) in enumerate(steps, 1):
        for name, text in files.items():
            (repo / name).write_text(text)
        git(repo, "add", "-A", when=when)
        git(repo, "commit", "-q", "-m", subject, when=when)
        if tag:
            git(repo, "tag", tag)
        commits.append(Commit(git(repo, "rev-parse", "HEAD"), subject, tag, spins))
    return History(repo, tuple(commits))


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> History:
    return make_history(tmp_path_factory.mktemp("instructions"))


@pytest.fixture(scope="module")
def flags(history, runner, tmp_path_factory) -> list[str]:
    store = tmp_path_factory.mktemp("instructions-store") / "store"
    return ["--repo", str(history.repo), "--target", "work_scenarios", "--plugin-path",
            "work_scenarios.so", "--runner", str(runner), "--store", str(store), "--machine",
            "test-machine"]


def allocbench(*argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the allocbench command line."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def progress(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("allocbench: [")]


def csv_rows(text: str) -> dict[tuple[str, str], list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    found = {("", row[0]): row[2:] for row in rows[:3]}
    found.update({(row[0], row[1]): row[2:] for row in rows[3:]})
    return found


@pytest.fixture(scope="module")
def bisected(history, flags) -> tuple[int, str, str]:
    return allocbench("bisect", PARSE, "--good", "v1", "--bad", "v2", "--metric",
                      "instructions_per_op", "--instructions", *flags)


def test_bisect_names_the_commit_that_added_the_work(history, bisected):
    code, out, err = bisected
    assert code == 0, out + err
    step = TURN * (SPINS_AFTER - SPINS_BEFORE)   # from the asm: 3 instructions a turn
    lines = out.splitlines()
    assert lines[0].startswith(f"{PARSE} instructions_per_op: ")
    before, after = (float(lines[0].split(": ")[1].split(" at v1 ")[0]),
                     float(lines[0].split(", ")[1].split(" at v2 ")[0]))
    assert round(after - before, 6) == step
    added = history.added
    assert added.subject == "validate every field"
    first = lines.index(f"first change: {added.sha}")
    assert lines[first + 1] == f"    {added.subject}"
    assert lines[first + 2].startswith(
        f"    instructions_per_op {lines[0].split(': ')[1].split(' at v1 ')[0]} → ")
    assert f" (+{step}, +" in lines[first + 2]
    # No heaptrack site diff: sites explain allocations, and none changed.
    assert "no allocation sites: instructions_per_op is not an allocation metric" in out
    assert "sites of " not in out
    # Every probe's line shows the instructions it counted.
    shown = [line for line in progress(err) if ": measured: " in line]
    assert shown and all("measured: instructions_per_op " in line for line in shown)


def test_the_probes_stored_their_instructions_and_not_time(history, flags, bisected):
    store = Store(Path(flags[flags.index("--store") + 1]))
    records = [record for _, record in store.records()]
    assert len(records) == 4   # the ends and two probes: ⌈log2 4⌉
    for record in records:
        assert passes(record) == {"instructions"}
        context = record["results"]["context"]["instructions"]
        assert context["tool"] == "callgrind" and context["estimated_cycles"] is False
        for result in record["results"]["results"]:
            assert result["alloc"]["bytes_per_op"] == {PARSE: 40, COPY: 16}[result["name"]]
            assert result["instructions"]["steady"] is True


def test_the_metric_implies_the_pass_and_the_store_serves_it(flags, bisected):
    code, out, err = allocbench("bisect", PARSE, "--good", "v1", "--bad", "v2", "--metric",
                                "instructions_per_op", *flags)   # no --instructions
    assert code == 0, out + err
    cost = [line for line in out.splitlines() if " commits after good; " in line]
    assert cost[0].startswith("4 commits after good; 4 revisions looked at, the ends "
                              "included: 0 measured, 4 from the store ")
    assert [line for line in out.splitlines() if line not in cost] == \
        [line for line in bisected[1].splitlines() if " commits after good; " not in line]
    assert all(": stored: instructions_per_op " in line for line in progress(err)), err


def test_bytes_do_not_change_so_bisect_on_them_finds_nothing(history, flags, bisected):
    code, out, err = allocbench("bisect", PARSE, "--good", "v1", "--bad", "v2", *flags)
    assert code == 1, out + err   # bisect's exit code for equal ends
    assert out.splitlines() == [f"{PARSE} bytes_per_op is 40 at both v1 and v2: nothing to "
                                "bisect (a change that was undone in between is not searched "
                                "for)"]
    # Both ends come from the instructions bisect's records: nothing is built or run again.
    assert [line.split("] ")[1].split(" (")[0] for line in progress(err)] == [
        "v1: stored: bytes_per_op 40", "v2: stored: bytes_per_op 40"]


def test_a_metric_that_is_not_exact_lists_the_exact_ones(flags, bisected):
    code, _, err = allocbench("bisect", PARSE, "--good", "v1", "--bad", "v2", "--metric",
                              "estimated_cycles_per_op", *flags)
    assert code == 2
    assert "allocbench: error: --metric estimated_cycles_per_op: bisect needs an exact " \
        "metric, one of bytes_per_op, allocs_per_op, frees_per_op, instructions_per_op\n" in err


@pytest.fixture(scope="module")
def swept(history, flags, bisected) -> tuple[int, str, str]:
    """Every commit with --instructions, after the bisect: only the commit it did not probe
    is measured."""
    return allocbench("sweep", "--range", "v1..v2", "--instructions", "--no-time", *flags)


def test_sweep_with_instructions_measures_only_what_bisect_left(history, swept):
    code, out, err = swept
    assert code == 0, out + err
    outcomes = [line.split(": ", 2)[2].split(" (")[0] for line in progress(err)
                if ": stored" in line or ": measured" in line]
    assert outcomes == ["stored"] * 3 + ["measured", "stored"], err   # the 4th: not probed
    # --instructions adds the Ir/op table to the sweep's own.
    assert "#### Ir/op — exact" in out.splitlines()


def test_sweep_table_shows_the_step_in_instructions_only(history, flags, swept):
    store_flags = flags[flags.index("--store"):flags.index("--store") + 4]
    code, text, _ = allocbench("sweep-table", "--range", "v1..v2", "--repo", str(history.repo),
                               *store_flags, "--metric", "instructions_per_op", "--format",
                               "csv")
    assert code == 0
    rows = csv_rows(text)
    assert rows[("", "status")] == ["ok"] * 5 + ["", ""]
    assert rows[("bytes_per_op", PARSE)] == ["40"] * 5 + ["0", "0.00"]
    ir = rows[("instructions_per_op", PARSE)]
    values = [float(v) for v in ir[:5]]
    step = TURN * (SPINS_AFTER - SPINS_BEFORE)
    added = history.commits.index(history.added)
    assert [round(b - a, 6) for a, b in zip(values, values[1:])] == [
        step if i + 1 == added else 0 for i in range(4)]
    assert ir[5] == str(step)
    copy = rows[("instructions_per_op", COPY)]
    assert len(set(copy[:5])) == 1 and copy[5] == "0"   # the other scenario: no change

    code, text, _ = allocbench("sweep-table", "--range", "v1..v2", "--repo", str(history.repo),
                               *store_flags, "--metric", "instructions_per_op")
    lines = text.splitlines()
    heading = lines.index("#### Ir/op — exact")
    assert lines[heading + 2].startswith("| scenario | v1 | ") and \
        lines[heading + 2].endswith(" | v2 | Δ v1 → v2 | Δ % |")
    parse = next(line for line in lines[heading:] if line.startswith(f"| `{PARSE}` |"))
    cells = parse.split(" | ")
    assert [sweep_table.exact_number(v) for v in values] == cells[1:6]   # every digit
    assert cells[6] == f"+{step}"
    assert "#### B/op — exact" in lines and "ns/op" not in text


def test_a_record_without_instructions_is_measured_again_keeping_its_time(history, flags,
                                                                          tmp_path):
    store = tmp_path / "store"
    mine = [*flags[:flags.index("--store")], "--store", str(store), "--machine", "test-machine"]
    v1 = history.commits[0].sha
    # A timed sweep, without instructions.
    code, _, err = allocbench("sweep", "v1", *mine, "--repetitions", "1", "--min-time", "0.001")
    assert code == 0, err
    [path] = store.rglob(f"{v1}/*.json.gz")
    timed = stored(path)
    assert passes(timed) == {"time"}
    # The table of instructions shows it as measured without them, never as a failure.
    code, text, _ = allocbench("sweep-table", "v1", "--repo", str(history.repo), "--store",
                               str(store), "--machine", "test-machine", "--metric",
                               "instructions_per_op")
    lines = text.splitlines()
    heading = lines.index("#### Ir/op — exact")
    assert lines[heading + 4] == f"| `{PARSE}` | ∅ |"
    assert f"- ∅ `v1` ({v1[:10]}): measured without the instructions pass; run the sweep " \
        "again with --instructions to count them" in lines
    # A table of instructions asks for them (--metric implies --instructions): the record is
    # measured again, with the time pass it had, though this sweep says --no-time.
    code, out, err = allocbench("sweep", "v1", *mine, "--metric", "instructions_per_op",
                                "--no-time")
    assert code == 0, err
    assert "v1: measuring again: its stored record has no instructions pass (--instructions)" \
        in err
    assert list(store.rglob("*.json.gz")) == [path]
    counted = stored(path)
    assert passes(counted) == {"time", "instructions"}
    assert counted["earlier"][0]["recorded"] == timed["recorded"]
    assert [r["alloc"] for r in counted["results"]["results"]] == \
        [r["alloc"] for r in timed["results"]["results"]]
    assert "∅" not in out and "#### Ir/op — exact" in out
    # Now it has everything any of these sweeps asks for: nothing is measured again.
    for asked in (["--no-time"], ["--instructions"], ["--instructions", "--no-time"]):
        code, _, err = allocbench("sweep", "v1", *mine, *asked)
        assert code == 0 and [": stored" in line for line in progress(err)] == [True], err
    # --estimated-cycles is a pass of its own: asked for, it measures again.
    code, out, err = allocbench("sweep", "v1", *mine, "--instructions", "--estimated-cycles",
                                "--no-time")
    assert code == 0, err
    assert "has no cache simulation (--estimated-cycles)" in err
    assert passes(stored(path)) == {"time", "instructions", "estimated_cycles"}
    assert "#### estimated_cycles_per_op — shown, never gated" in out


# --- the tables, from hand-made records -------------------------------------------------------

FIELDS = [
    {"section": "alloc", "key": "bytes_per_op", "column": "B/op", "unit": "B", "gate": "exact"},
    {"section": "alloc", "key": "peak_live_bytes", "column": None, "unit": "B", "gate": "info"},
    {"section": "instructions", "key": "instructions_per_op", "column": "Ir/op", "unit": "Ir",
     "gate": "exact"},
    {"section": "instructions", "key": "estimated_cycles_per_op", "column": None,
     "unit": "cycles", "gate": "info"},
    {"section": "time", "key": "ns_per_op", "column": "ns/op", "unit": "ns", "gate": "time"}]


def column(sha: str, label: str, ir: float | None, machine: str = "m1") -> sweep_table.Column:
    """A revision of one instance, 40 B/op; `ir` None: measured without --instructions."""
    context = {"count": {"warmup_ops": 100, "window_ops": 100}, "time": None,
               "instructions": None if ir is None else {
                   "tool": "callgrind", "estimated_cycles": False, "warmup_ops": 100,
                   "window_ops": 1000}}
    result = {"name": PARSE, "scenario": PARSE, "args": {}, "threads": 1, "allocator": "glibc",
              "alloc": {"bytes_per_op": 40, "peak_live_bytes": 40}, "time": None,
              "instructions": None if ir is None else {"instructions_per_op": ir}}
    doc = {"schema_version": 1, "context": context, "fields": FIELDS, "complete": True,
           "results": [result]}
    return sweep_table.Column(sha, label, {
        "store_version": 1, "sha": sha, "label": label, "subject": "s", "machine": machine,
        "allocator": "system", "recipe": "0123456789abcdef", "status": "ok",
        "time_measured": False, "results": doc})


def test_ir_table_is_exact_with_every_digit_and_notes_what_was_not_counted():
    a, b, c = (x * 40 for x in "abc")
    columns = [column(a, "v1", 305.068), column(b, "bbbbbbbbbb", None),
               column(c, "v2", 380.068, machine="m2")]
    text = sweep_table.markdown(columns, ["bytes_per_op", "instructions_per_op",
                                          "estimated_cycles_per_op"])
    lines = text.splitlines()
    assert [line for line in lines if line.startswith("####")] == [
        "#### B/op — exact", "#### Ir/op — exact",
        "#### estimated_cycles_per_op — shown, never gated"]
    ir = lines.index("#### Ir/op — exact")
    assert lines[ir + 2:ir + 5] == [
        "| scenario | v1 | bbbbbbbbbb | v2 | Δ v1 → v2 | Δ % |", "|---|---:|---:|---:|---:|---:|",
        f"| `{PARSE}` | 305.068 | ∅ | 380.068 | +75 | +24.6% |"]
    assert lines[ir + 6] == "Measured on m1, m2: instruction counts can differ between CPUs " \
        "(libc picks its code paths by the CPU)."
    cycles = lines.index("#### estimated_cycles_per_op — shown, never gated")
    assert lines[cycles + 4] == f"| `{PARSE}` | ∅ | ∅ | ∅ |  |  |"
    assert text.split("Notes:\n\n")[1].splitlines() == [
        "- ∅ `v1` (aaaaaaaaaa): measured without the cache simulation; run the sweep again "
        "with --instructions --estimated-cycles to estimate them",
        "- ∅ `bbbbbbbbbb`: measured without the instructions pass; run the sweep again with "
        "--instructions to count them",
        "- ∅ `v2` (cccccccccc): measured without the cache simulation; run the sweep again "
        "with --instructions --estimated-cycles to estimate them"]
    assert sweep_table.csv_text(columns, ["instructions_per_op"]).splitlines()[3:] == [
        f"instructions_per_op,{PARSE},305.068,,380.068,75,24.58"]
    # --changed-only keeps a scenario whose instructions move, though its bytes do not.
    assert f"| `{PARSE}` |" in sweep_table.markdown(columns, ["bytes_per_op",
                                                             "instructions_per_op"], True)
    assert sweep_table.markdown(columns, ["bytes_per_op"], True).startswith(
        "_1 of 1 scenarios have the same bytes_per_op in every revision")


def test_plot_draws_instructions_next_to_the_allocation_metrics(tmp_path):
    columns = [column("a" * 40, "v1", 305.068), column("c" * 40, "v2", 380.068)]
    path = tmp_path / "curve.svg"
    sweep_plot.plot(columns, ["bytes_per_op", "instructions_per_op"], path, False)
    assert "B/op (exact)" in path.read_text() and "Ir/op (exact)" in path.read_text()


def test_metrics_name_their_section_and_pass_before_anything_is_measured():
    assert sweep_table.section_of({}, "instructions_per_op") == "instructions"
    assert sweep_table.section_of({}, "allocs_per_op") == "alloc"
    assert sweep_table.passes_for(["bytes_per_op"]) == (False, False)
    assert sweep_table.passes_for(["instructions_per_op"]) == (True, False)
    assert sweep_table.passes_for(["estimated_cycles_per_op"]) == (True, True)
    with pytest.raises(Exception, match="choose from bytes_per_op, peak_live_bytes, "
                                        "instructions_per_op, estimated_cycles_per_op$"):
        sweep_table.check_metrics([column("a" * 40, "v1", None)], ["ir_per_op"])


def test_bisect_help_says_the_metric_implies_the_pass():
    import argparse
    from allocbench.commands import bisect
    parser = argparse.ArgumentParser()
    bisect.setup_arguments(parser)
    helps = {a.dest: a.help or "" for a in parser._actions}
    assert "instructions_per_op, which implies --instructions" in helps["metric"]
    assert "as --metric instructions_per_op needs and implies" in helps["instructions"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_the_readmes_bisect_sentence_is_this_histories_arithmetic():
    text = folded("sweeps")
    added = SPINS_AFTER - SPINS_BEFORE
    assert (f"a history whose one commit adds {added} turns of a 3-instruction loop "
            f"(+{3 * added} Ir/op) while B/op stays the same") in text
