"""`bisect --all`: every step of an exact metric between good and bad, not only the first.

The search (bisection.every_change) on fake value functions with pinned probe counts and found
steps, its cost bound over random patterns; the progress lines that show each probe's value and
count down their ETA; and the command end to end on the synthetic history (synthetic_history.py:
set_tag's bytes_per_op steps at commits 2, 3, 6, 10, 11; commit 7 does not build).

Probes are counted as the README states them: calls of value(i), never the two ends, whose
values are known before the search starts (measured first, or from the store).
"""

from __future__ import annotations

import contextlib
import io
import math
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import synthetic_history as synth
from allocbench.history import bisection, sweep_progress, worktrees
from allocbench.commands import bisect as command
from test_escaping import assert_terminal_safe, bisect_record
from test_sweep import run_cli, store_flags

# --- the search on fake value functions -------------------------------------------------------


def survey(values: list[float | None]) -> tuple[list[tuple[int, int, float, float]], list[int],
                                                 bisection.Survey]:
    """every_change over `values` (position 0 good, the last bad; None: does not build): the
    steps as (low, high, before, after) in the order `found` heard them, the probes in order,
    and the survey."""
    heard: list[tuple[int, int, float, float]] = []
    probes: list[int] = []

    def value(i: int) -> float | None:
        assert 0 < i < len(values) - 1, "the ends are known, never probed"
        probes.append(i)
        return values[i]

    def found(change: bisection.Change) -> None:
        heard.append((change.low, change.high, change.before, change.after))
    result = bisection.every_change(len(values) - 1, (values[0], values[-1]), value, found)
    assert [(c.low, c.high, c.before, c.after) for c in result.changes] == heard
    assert len(set(probes)) == len(probes), "no commit is probed twice"
    return heard, probes, result


@pytest.mark.parametrize("values, steps, probes", [
    # One step in the middle: ⌈log2 8⌉ probes, as a plain bisect.
    ([1, 1, 1, 1, 1, 2, 2, 2, 2], [(4, 5, 1, 2)], [4, 6, 5]),
    # Adjacent steps at the first two commits, and one at the last.
    ([1, 2, 3, 3, 3, 3, 3, 3, 4], [(0, 1, 1, 2), (1, 2, 2, 3), (7, 8, 3, 4)], [4, 2, 1, 6, 7]),
    # Steps at the first and the last commit only.
    ([0] + [1] * 15 + [2], [(0, 1, 0, 1), (15, 16, 1, 2)], [8, 4, 2, 1, 12, 14, 15]),
    # Every commit steps: every commit between the ends is probed.
    ([0, 1, 2, 3, 4], [(0, 1, 0, 1), (1, 2, 1, 2), (2, 3, 2, 3), (3, 4, 3, 4)], [2, 1, 3]),
    # One commit after good: nothing to probe.
    ([5, 7], [(0, 1, 5, 7)], []),
    # The synthetic history's set_tag B/op, commit 7 broken: its interval has equal ends
    # (336 … 336), so it is never probed; the five steps take 8 probes.
    ([136, 168, 240, 240, 240, 336, None, 336, 336, 216, 200, 200],
     [(0, 1, 136, 168), (1, 2, 168, 240), (4, 5, 240, 336), (8, 9, 336, 216),
      (9, 10, 216, 200)], [5, 2, 1, 3, 4, 8, 9, 10]),
])
def test_every_step_is_found_in_history_order_with_pinned_probes(values, steps, probes):
    heard, probed, result = survey(values)
    assert heard == steps
    assert probed == probes
    assert result.skipped == [] and all(c.exact for c in result.changes)
    assert len(probed) <= len(steps) * math.ceil(math.log2(len(values) - 1))


def test_a_change_undone_between_equal_ends_is_not_searched_for():
    # 10 → 20 → 10 at commits 3, 4: the first probe (4) equals good, so 0 … 4 is assumed
    # unchanged; only the step to 30 is found. Documented in the README and the output.
    heard, probed, _ = survey([10, 10, 10, 20, 10, 10, 10, 10, 30])
    assert heard == [(7, 8, 10, 30)]
    assert probed == [4, 6, 7]
    # Equal good and bad: nothing is probed at all.
    assert survey([5, 6, 5]) == ([], [], bisection.Survey())


@pytest.mark.parametrize("values, steps, exact, probes, skipped", [
    # The skipped commit 5 stands right before the step: commits 5 and 6 are the suspects.
    ([1, 1, 1, 1, 1, None, 2, 2, 2], [(4, 6, 1, 2)], [False], [4, 6, 5], [5]),
    # The middle (4) is skipped, the lower neighbour probed instead; 4 then hides the step.
    ([1, 1, 1, 1, None, 2, 2, 2, 2], [(3, 5, 1, 2)], [False], [4, 3, 5], [4]),
    # A skip beside the middle costs one probe; the step after it is still named exactly.
    ([1, 1, 1, None, 1, 2, 2], [(4, 5, 1, 2)], [True], [3, 2, 4, 5], [3]),
    # Two skips hide one step, the other two steps are exact.
    ([1, 2, 2, None, None, 3, 3, 3, 4], [(0, 1, 1, 2), (2, 5, 2, 3), (7, 8, 3, 4)],
     [True, False, True], [4, 3, 5, 2, 1, 6, 7], [4, 3]),
])
def test_skips_next_to_a_step_leave_its_suspects(values, steps, exact, probes, skipped):
    heard, probed, result = survey(values)
    assert heard == steps
    assert [c.exact for c in result.changes] == exact
    assert probed == probes and result.skipped == skipped
    for change in result.changes:
        if not change.exact:  # every commit between the ends was skipped
            assert set(range(change.low + 1, change.high)) <= set(skipped)
            assert change.high in change.suspects()


def random_values(rng: random.Random, count: int, monotone: bool) -> list[float]:
    """`count` + 1 values with steps at random density; monotone ones never return to an
    earlier value, so every step is visible to the search."""
    density = rng.choice([0.02, 0.1, 0.3, 0.7])
    values = [100.0]
    for _ in range(count):
        step = rng.random() < density
        values.append(values[-1] + (rng.choice([8, 16]) if monotone else rng.choice([-8, 8]))
                      if step else values[-1])
    return values


def true_steps(values: list[float | None]) -> list[int]:
    return [i for i in range(1, len(values)) if values[i] != values[i - 1]]


@pytest.mark.parametrize("monotone", [True, False])
def test_probes_stay_within_k_log2_n_over_random_patterns(monotone):
    rng = random.Random(20240601)
    for _ in range(3000):
        count = rng.randint(1, 300)
        values = random_values(rng, count, monotone)
        _, probed, result = survey(values)
        found = [c.high for c in result.changes]
        assert all(c.exact for c in result.changes)
        assert set(found) <= set(true_steps(values))
        if monotone:
            assert found == true_steps(values)
        assert len(probed) <= len(found) * math.ceil(math.log2(count)), (values, probed)


def broken_commits(rng: random.Random, count: int) -> set[int]:
    """A few commits strictly between the ends that do not build."""
    return set(rng.sample(range(1, count), min(count - 1, rng.choice([1, 2, 3, 5]))))


def test_skips_cost_at_most_two_probes_each_over_random_patterns():
    """The README's bound with skips: k·⌈log2 N⌉ plus two per skip, one to try the commit and
    one for the uneven halving around it (8 commits, the middle skipped, the step at the last:
    probes 4, 3, 5, 6, 7, five for ⌈log2 8⌉ = 3 and one skip)."""
    _, probed, _ = survey([1, 1, 1, 1, None, 1, 1, 1, 2])
    assert probed == [4, 3, 5, 6, 7]
    rng = random.Random(7)
    for _ in range(3000):
        count = rng.randint(2, 200)
        values: list[float | None] = list(random_values(rng, count, monotone=True))
        for i in broken_commits(rng, count):
            values[i] = None
        _, probed, result = survey(values)
        bound = len(result.changes) * math.ceil(math.log2(count))
        assert len(probed) <= bound + 2 * len(result.skipped), (values, probed)
        for change in result.changes:  # each names the step or a run of skips before it
            assert values[change.low] != values[change.high]
            assert set(range(change.low + 1, change.high)) <= set(result.skipped)


def test_plain_bisect_skips_cost_at_most_two_probes_each_too():
    """The README states the same bound for bisect without --all (k = 1)."""
    rng = random.Random(11)
    for _ in range(3000):
        count = rng.randint(2, 200)
        first, broken = rng.randrange(count), {i - 1 for i in broken_commits(rng, count)}
        probes: list[int] = []

        def differs(i: int, first: int = first, broken: set[int] = broken) -> bool | None:
            probes.append(i)
            return None if i in broken else i >= first
        found = bisection.search(count, differs)
        assert first in found.suspects()
        assert len(probes) <= math.ceil(math.log2(count)) + 2 * len(found.skipped)


def test_probes_ahead_estimates_the_search_left():
    assert bisection.probes_ahead({0: 1, 8: 2}) == 3          # 7 untested: ⌈log2 8⌉
    assert bisection.probes_ahead({0: 1, 4: 1, 8: 2}) == 2    # only 4 … 8 has different ends
    assert bisection.probes_ahead({0: 1, 4: None, 8: 2}) == 3  # 6 untested around the skip
    assert bisection.probes_ahead({0: 1, 1: 2}) == 0
    assert bisection.probes_ahead({0: 1, 2: 2, 4: 3}) == 2


def test_steps_print_no_control_characters(capsys):
    """Tags, subjects and log lines come from the subject repository: escaped, as elsewhere."""
    probed = [bisect_record("a" * 40, 64, "tidy\x1b[8m"),
              bisect_record("b" * 40, None, "refactor\nforged line"),
              bisect_record("c" * 40, 96, "fix\r\x9b2J")]
    command._print_step(1, bisection.Change(0, 2, 64, 96), probed, "bytes_per_op", "s")
    command._print_step(2, bisection.Change(0, 1, 64, 96), probed[::2], "bytes\x1b", "s")
    out = capsys.readouterr().out
    assert_terminal_safe(out)
    assert out.splitlines() == [
        "change 1 is one of these 2 commits; the skipped ones hide which (bytes_per_op 64 → 96 "
        "(+32, +50.0%) from aaaaaaaaaa):",
        "    bbbbbbbbbb (skipped, build failed: x.cc:1: error: \\x1b[2J gone) refactor\\nforged "
        "line",
        "    cccccccccc (changed) fix\\r\\x9b2J",
        f"change 2: {'c' * 40} (\\x1b]0;title\\x07v2)",
        "    fix\\r\\x9b2J",
        "    bytes\\x1b 64 → 96 (+32, +50.0%); its parent aaaaaaaaaa has 64"]


class FakeProbes:
    """What bisect's --all path asks of its probes, over records with known values."""

    def __init__(self, values: list[float | None], store: Path):
        self.plan = SimpleNamespace(store=SimpleNamespace(root=store), machine="m",
                                    allocator="system", recipe_id="0123456789abcdef")
        self.commits = [f"{i:x}" * 40 for i in range(len(values))]
        self.all = [bisect_record(sha, v, f"commit {i}", label=sha[:10])
                    for i, (sha, v) in enumerate(zip(self.commits, values))]
        self.scenario, self.metric = "s\x1b[1m", "bytes_per_op"
        self.records = {0: self.all[0], len(values) - 1: self.all[-1]}
        self.values = {i: values[i] for i in self.records}
        self.progress = sweep_progress.Progress(len(values), 0)

    def value(self, position: int) -> float | None:
        self.records[position] = self.all[position]
        self.values[position] = command._value(self.all[position], self.scenario, self.metric)
        return self.values[position]

    def probed(self) -> list[dict[str, Any] | None]:
        return [self.records.get(i) for i in range(len(self.commits))]

    def cost(self) -> str:
        return "costs"


def test_a_step_hidden_by_skips_makes_bisect_all_exit_1(capsys, tmp_path):
    code = command._every_step(FakeProbes([1, 1, 1, 1, 1, None, 2, 2, 2], tmp_path), (1, 2),
                               sites=False)
    assert code == 1
    # kept as it is: not exact, so a report names no commit for it
    from allocbench.history import bisected
    (kept,), _ = bisected.read(tmp_path)
    assert [(s["before"], s["after"], s["exact"]) for s in kept["steps"]] == [
        ("4" * 40, "6" * 40, False)]
    assert capsys.readouterr().out.splitlines() == [
        "change 1 is one of these 2 commits; the skipped ones hide which (bytes_per_op 1 → 2 "
        "(+1, +100.0%) from 4444444444):",
        "    5555555555 (skipped, build failed: x.cc:1: error: \\x1b[2J gone) commit 5",
        "    6666666666 (changed) commit 6",
        "skipped 5555555555: build failed: x.cc:1: error: \\x1b[2J gone",
        "1 step, 1 hidden among skipped commits; a change undone between two commits of equal "
        "value is not searched for",
        "8 commits after good, 3 probed between the ends; costs"]


# --- progress lines -----------------------------------------------------------------------------


class FakePlan:
    """What Progress.measure asks of a plan: the repository and the stored record."""

    def __init__(self, stored: dict[str, Any] | None):
        self.repo, self.record = Path("/nowhere"), stored

    def stored(self, sha: str) -> dict[str, Any] | None:
        return self.record


def ok_record(value: float) -> dict[str, Any]:
    return {"status": "ok", "value": value}


@pytest.fixture
def clock(monkeypatch) -> list[float]:
    """A settable time.monotonic for the progress module, and labels without git."""
    now = [1000.0]
    monkeypatch.setattr(sweep_progress.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(sweep_progress, "label", lambda repo, sha: sha[:4])
    return now


def progress_lines(err: str) -> list[str]:
    return [line.split(": ", 2)[2] for line in err.splitlines()]


def describe(record: dict[str, Any]) -> str:
    return f"bytes_per_op {record['value']:g}"


def test_progress_lines_show_each_probes_value(clock, monkeypatch, capsys):
    progress = sweep_progress.Progress(total=4, to_measure=2)
    progress.measure(FakePlan(ok_record(240)), 1, "aaaa" * 10, describe)
    progress.measure(FakePlan(ok_record(240)), 2, "bbbb" * 10)  # sweep: no value
    failed = {"status": "build_failed", "log_tail": "x.cc:1: error: boom"}
    progress.measure(FakePlan(failed), 3, "cccc" * 10, describe)
    monkeypatch.setattr(sweep_progress, "measure", lambda plan, sha, name: ok_record(336))
    progress.measure(FakePlan(None), 4, "dddd" * 10, describe)
    assert [line.rsplit(" (", 1)[0] for line in progress_lines(capsys.readouterr().err)] == [
        "stored: bytes_per_op 240",
        "stored",
        "stored, build failed: x.cc:1: error: boom (--retry-failed measures it again)",
        "measured: bytes_per_op 336"]


def test_the_eta_counts_down_while_a_revision_is_measured(clock, monkeypatch, capsys):
    """The ETA of `running` lines was the mean time × the revisions left, unchanged for the
    whole of a long run; now the time spent on the current revision comes off it."""
    timelines = [[0, 30, 200], [0, 150, 450]]   # seconds into each revision, as announced

    def measure(plan: FakePlan, sha: str, name: str) -> dict[str, Any]:
        started = clock[0]
        for spent in timelines.pop(0):
            clock[0] = started + spent
            worktrees.announce("running")
        return ok_record(1)
    monkeypatch.setattr(sweep_progress, "measure", measure)
    progress = sweep_progress.Progress(total=3, to_measure=3)
    progress.measure(FakePlan(None), 1, "a" * 40)
    progress.measure(FakePlan(None), 2, "b" * 40)
    etas = [line.rsplit("ETA ", 1)[1].rstrip(")") if "ETA" in line else None
            for line in capsys.readouterr().err.splitlines()]
    # The first revision: nothing measured yet. Then 200 s × 2 left = 6:40, less the time
    # spent on the second revision, never below 0; after it, what the second cost × 1 left.
    assert etas == [None, None, None, "6:40",
                    "6:40", "4:10", "0:00", "7:30"]


def test_the_eta_is_what_the_probes_after_the_cold_first_one_cost(clock, monkeypatch, capsys):
    """dd-trace-cpp's bisect said `ETA 46:47` after its cold first probe and ended 12 minutes
    later: the later probes reuse the tree. Once a second is measured, the first is left out."""
    costs = [460, 30, 50, 40]

    def measure(plan: FakePlan, sha: str, name: str) -> dict[str, Any]:
        clock[0] += costs.pop(0)
        return ok_record(1)
    monkeypatch.setattr(sweep_progress, "measure", measure)
    progress = sweep_progress.Progress(total=7, to_measure=7)
    for i in range(4):
        progress.measure(FakePlan(None), i + 1, chr(ord("a") + i) * 40)
    etas = [line.rsplit("ETA ", 1)[1].rstrip(")") for line in capsys.readouterr().err.splitlines()]
    # 460 × 6 left; then 30 × 5; the median of 30 and 50 × 4; the median of 30, 50, 40 × 3
    assert etas == ["46:00", "2:30", "2:40", "2:00"]


# --- end to end on the synthetic history ----------------------------------------------------------

def bisect(argv: list[str]) -> tuple[int, str, str]:
    """allocbench bisect: (exit code, stdout, the progress lines of stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = run_cli(["bisect", *argv], stdout=out)
    lines = [line for line in err.getvalue().splitlines() if line.startswith("allocbench: [")]
    return code, out.getvalue(), "\n".join(lines)


def set_tag_bytes(commit: synth.Commit) -> int | None:
    expected = commit.expected(graft=False)
    return None if expected is None else expected[synth.SET_TAG]["bytes_per_op"]


def expected_steps(commits: tuple[synth.Commit, ...]) -> list[tuple[synth.Commit, int, int,
                                                                    synth.Commit]]:
    """(commit, before, after, parent) for each commit whose set_tag B/op differs from the
    last commit that builds before it, from the knobs (Commit.expected), not from the tool."""
    steps, last = [], commits[0]
    for commit in commits[1:]:
        if set_tag_bytes(commit) is None:
            continue
        if set_tag_bytes(commit) != set_tag_bytes(last):
            steps.append((commit, set_tag_bytes(last), set_tag_bytes(commit), last))
        last = commit
    return steps


def step_lines(number: int, commit: synth.Commit, before: int, after: int,
               parent: synth.Commit) -> list[str]:
    tag = f" ({commit.tag})" if commit.tag else ""
    change = after - before
    return [f"change {number}: {commit.sha}{tag}", f"    {commit.subject}",
            f"    bytes_per_op {before} → {after} ({change:+d}, {change / before * 100:+.1f}%); "
            f"its parent {parent.sha[:10]} has {before}"]


def probe_values(progress: str, tracer: synth.History) -> dict[int, str]:
    """{commit index: what its progress line says after measured/stored}."""
    by_label = {c.tag or c.sha[:10]: c.index for c in tracer.commits}
    found = {}
    for line in progress.splitlines():
        label, what = line.split("] ", 1)[1].split(": ", 1)
        if what.startswith(("measured", "stored", "build failed")):
            found[by_label[label]] = what.rsplit(" (", 1)[0]
    return found


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("bisect-all") / "store"


@pytest.fixture(scope="module")
def every_set_tag_step(tracer, build_flags, store) -> tuple[int, str, str]:
    return bisect([synth.SET_TAG, "--good", "v1.0", "--bad", "v2.0", "--all", "--no-sites",
                   *build_flags, *store_flags(store)])


def test_bisect_all_names_each_step_of_set_tag(tracer, every_set_tag_step, store):
    code, out, progress = every_set_tag_step
    assert code == 0, out
    steps = expected_steps(tracer.commits)
    assert [commit.index for commit, *_ in steps] == [2, 3, 6, 10, 11]
    good, bad = tracer.by_tag("v1.0"), tracer.by_tag("v2.0")
    lines = out.splitlines()
    assert lines[0] == (f"{synth.SET_TAG} bytes_per_op: 136 at v1.0 ({good.sha[:10]}), "
                        f"200 at v2.0 ({bad.sha[:10]})")
    assert lines[1:-2] == [line for n, step in enumerate(steps, 1)
                           for line in step_lines(n, *step)]
    assert lines[-2] == ("5 steps, each named exactly; a change undone between two commits of "
                         "equal value is not searched for")
    # N = 11 commits after v1.0; 8 probes between the ends (⌈log2 11⌉ = 4, 5 steps: ≤ 20).
    assert lines[-1].startswith("11 commits after good, 8 probed between the ends; 10 "
                                "revisions looked at, the ends included: 10 measured, 0 from "
                                "the store ")
    # Each probe's line shows its value; commit 7 lies between 336 and 336 and is not probed.
    values = probe_values(progress, tracer)
    assert values == {c.index: f"measured: bytes_per_op {set_tag_bytes(c)}"
                      for c in tracer.commits if c.index in (1, 12, 6, 3, 2, 4, 5, 9, 10, 11)}


def test_the_steps_are_kept_in_the_store_and_a_report_names_each_ones_commit(
        tracer, every_set_tag_step, store):
    """Kept beside the records (history/bisected.py), so the report's largest changes name
    the commit of each set_tag step: the probes on both sides of it are in the store."""
    from allocbench.history import bisected
    from allocbench.reports import inputs, steps as steps_of
    (kept,), problems = bisected.read(store)
    assert problems == []
    good, bad = tracer.by_tag("v1.0"), tracer.by_tag("v2.0")
    assert {k: kept[k] for k in ("scenario", "metric", "good", "bad", "search")} == {
        "scenario": synth.SET_TAG, "metric": "bytes_per_op", "good": good.sha, "bad": bad.sha,
        "search": "all"}
    expected = [(parent.sha, commit.sha, True, before, after, commit.subject)
                for commit, before, after, parent in expected_steps(tracer.commits)]
    assert [(s["before"], s["after"], s["exact"], s["from"], s["to"], s["subject"])
            for s in kept["steps"]] == expected
    # merged into another store, with the records
    from allocbench import cli
    merged = store.parent / "merged"
    assert cli.main(["merge", str(store), "--into", str(merged)]) == 0
    assert bisected.read(merged) == ([kept], [])
    site = inputs.read([], merged, [], [])
    named = sorted((s.old.sha, s.new.sha, s.commit["subject"])
                   for s in steps_of.steps(site.histories, site.bisects)
                   if s.name == synth.SET_TAG)
    assert named == sorted((a, b, subject) for a, b, _, _, _, subject in expected)


def test_bisect_all_again_and_plain_bisect_reuse_the_store(tracer, build_flags,
                                                           every_set_tag_step, store):
    _, first_out, _ = every_set_tag_step
    code, out, progress = bisect([synth.SET_TAG, "--good", "v1.0", "--bad", "v2.0", "--all",
                                  "--no-sites", *build_flags, *store_flags(store)])
    assert code == 0
    assert out.splitlines()[:-1] == first_out.splitlines()[:-1]
    assert ("8 probed between the ends; 10 revisions looked at, the ends included: 0 "
            "measured, 10 from the store ") in out
    assert all(": stored: bytes_per_op " in line for line in progress.splitlines())
    # A plain bisect finds the first step only, in 3 probes (its 5 revisions all stored).
    code, out, progress = bisect([synth.SET_TAG, "--good", "v1.0", "--bad", "v2.0",
                                  "--no-sites", *build_flags, *store_flags(store)])
    assert code == 0
    assert f"first change: {tracer.commits[1].sha}\n" in out
    assert ("11 commits after good; 5 revisions looked at, the ends included: 0 measured, 5 "
            "from the store ") in out
    assert len(progress.splitlines()) == 2 + 3


def test_bisect_all_skips_a_broken_commit_and_says_how_to_retry_it(tracer, build_flags,
                                                                   every_set_tag_step, store):
    """From commit 5 to 10 the middle is the broken commit 7: it is skipped, its lower
    neighbour probed, and both steps (6, 10) are still named exactly."""
    first, last = tracer.commits[4], tracer.commits[9]
    broken = tracer.commits[synth.BROKEN - 1]
    argv = [synth.SET_TAG, "--good", first.sha, "--bad", last.sha, "--all", *build_flags,
            *store_flags(store)]
    code, out, progress = bisect(argv)
    assert code == 0, out
    assert [line for line in out.splitlines() if line.startswith("change ")] == [
        f"change 1: {tracer.commits[5].sha} (v1.2)", f"change 2: {last.sha}"]
    assert f"skipped {broken.sha[:10]}: build failed: " in out
    # Each exact step gets its allocation sites' diff (the --help's promise), after the summary.
    steps = [(tracer.commits[4].sha, tracer.commits[5].sha), (tracer.commits[8].sha, last.sha)]
    titles = [line.split(" (heaptrack")[0] for line in out.splitlines()
              if line.startswith("sites of ")]
    assert titles == [f"sites of change {i}, {synth.SET_TAG}, {a[:10]} → {b[:10]}"
                      for i, (a, b) in enumerate(steps, 1)]
    assert out.index("probed between the ends") < out.index("sites of change 1")
    # Probed: 7 (skipped), 6, 8, 9; 7 and 8 are new, the ends and 6, 9 are stored.
    assert ("5 commits after good, 4 probed between the ends; 6 revisions looked at, the ends "
            "included: 2 measured, 4 from the store ") in out
    values = probe_values(progress, tracer)
    assert values[synth.BROKEN].startswith("build failed: ")
    assert values[8] == "measured: bytes_per_op 336" and values[6] == "stored: bytes_per_op 336"
    # Run again: the stored failure is replayed, and its line says how to measure it again.
    code, _, progress = bisect([*argv, "--no-sites"])
    assert code == 0
    again = probe_values(progress, tracer)[synth.BROKEN]
    assert again.startswith("stored, build failed: ")
    assert again.endswith(" (--retry-failed measures it again)")


def test_the_readmes_build_reuse_bisect_takes_four_probes():
    """bench/build_reuse.py --bisect-arg=--all: log_line's B/op over v1.0 … main of the generated
    libtrace (realistic_subject.py's table: 112 B at commits 1–3, 176 at 4–5, 224 from 6 on;
    12 commits), as the README quotes it: both steps, 4 probes between the ends."""
    values = [112.0] * 3 + [176.0] * 2 + [224.0] * 7
    heard, probes, _ = survey(values)
    assert heard == [(2, 3, 112.0, 176.0), (4, 5, 176.0, 224.0)]   # commits 4 and 6
    assert len(probes) == 4 <= 2 * math.ceil(math.log2(len(values) - 1))
