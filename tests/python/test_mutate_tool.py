"""bench/mutate.py, the mutation-testing tool: the exact mutants of each operator on small
hand-written sources, stable ids, a reproducible sample, the area table over the whole tree,
and one end-to-end run on a tiny tree of its own (2 mutants: one killed, one survives)."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from docs_pages import folded, page

sys.path.insert(0, str(ROOT / "bench"))
from mutants import coverage_map  # noqa: E402
from mutants.areas import area_of, is_source  # noqa: E402
from mutants.cpp_ops import cpp_edits  # noqa: E402
from mutants.model import mutants_of, stable_key  # noqa: E402
from mutants.python_ops import python_edits  # noqa: E402
from mutants.sample import sample  # noqa: E402
from mutants.shell_ops import shell_edits  # noqa: E402
from workspace import tree_files  # noqa: E402


def diffs(text: str, edits, operator: str) -> list[str]:
    return [m.diff for m in mutants_of("x", text, edits(text)) if m.operator == operator]


PY = '''"""Doc 1 < 2."""
from __future__ import annotations


def f(a: int = 3, b: list[int] | None = None) -> bool:
    if a < 2 and not b:
        return a in b
    for x in sorted(b, key=len):
        if x is None:
            break
        a += x - 1
    return all(b) or min(a, 5) == 0


def g(name):
    parser.add_argument("--x", help="1 < 2")
    return f"<td>{escape(name)}&amp;</td>"
'''


@pytest.mark.parametrize("operator, expected", [
    ("cmp-flip", ["if a < 2 and not b: → if a <= 2 and not b:", "return a in b → return a not in b",
                  "if x is None: → if x is not None:",
                  "return all(b) or min(a, 5) == 0 → return all(b) or min(a, 5) != 0"]),
    ("and-or", ["if a < 2 and not b: → if a < 2 or not b:",
                "return all(b) or min(a, 5) == 0 → return all(b) and min(a, 5) == 0"]),
    ("not-removed", ["if a < 2 and not b: → if a < 2 and b:"]),
    ("num+1", ["def f(a: int = 3, b: list[int] | None = None) -> bool: → "
               "def f(a: int = 4, b: list[int] | None = None) -> bool:",
               "if a < 2 and not b: → if a < 3 and not b:", "a += x - 1 → a += x - 2",
               "return all(b) or min(a, 5) == 0 → return all(b) or min(a, 6) == 0",
               "return all(b) or min(a, 5) == 0 → return all(b) or min(a, 5) == 1"]),
    ("return-const", ["return a in b → return False",
                      "return all(b) or min(a, 5) == 0 → return False",
                      'return f"<td>{escape(name)}&amp;</td>" → return ""']),
    ("if-body-removed", ["return a in b → pass", "break → pass"]),
    ("if-forced", ["if a < 2 and not b: → if True:", "if x is None: → if True:"]),
    ("all-any", ["return all(b) or min(a, 5) == 0 → return any(b) or min(a, 5) == 0"]),
    ("min-max", ["return all(b) or min(a, 5) == 0 → return all(b) or max(a, 5) == 0"]),
    ("sort-reverse", ["for x in sorted(b, key=len): → for x in sorted(b, key=len, reverse=True):"]),
    ("call-to-arg", ["for x in sorted(b, key=len): → for x in b:",
                     "return all(b) or min(a, 5) == 0 → return b or min(a, 5) == 0",
                     "return all(b) or min(a, 5) == 0 → return all(b) or a == 0"]),
    ("fstring-unescape", ['return f"<td>{escape(name)}&amp;</td>" → return f"<td>{name}&amp;</td>"',
                          'return f"<td>{escape(name)}&amp;</td>" → return f"<td>{escape(name)}&</td>"']),
    ("add-sub", ["a += x - 1 → a -= x - 1", "a += x - 1 → a += x + 1"]),
    ("break-continue", ["break → continue"]),
])
def test_each_python_operator_makes_exactly_these_mutants(operator, expected):
    # The docstring, the annotations, __future__ and the help text make none.
    assert diffs(PY, python_edits, operator) == expected


CPP = '''#include <vector>
// a < b in a comment
bool F(std::vector<int>& v, int n) {
  const char* s = "a < b";
  for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 1);
  Flush(v);
  Sync();
  if (v.size() >= 2 || true) return v[0] == 3;
  return static_cast<bool>(n);
}
auto g = [](int a) { return a; };
'''


def test_an_rvalue_reference_is_not_a_logical_and():
    text = "void F(Fn&& fn, std::string&& s, int&& n, bool a, bool b) { G(a && b); }"
    assert diffs(text, cpp_edits, "and-or") == [f"{text} → " + text.replace("a && b", "a || b")]


def test_a_chain_of_logical_operators_flips_as_one():
    # gcc's -Wparentheses (an error under -Werror) refuses `a || b && c`.
    text = "bool F(bool a, bool b, bool c) { return a || (b && c) || !a; }"
    assert diffs(text, cpp_edits, "and-or") == [
        f"{text} → bool F(bool a, bool b, bool c) {{ return a && (b && c) && !a; }}",
        f"{text} → bool F(bool a, bool b, bool c) {{ return a || (b || c) || !a; }}"]


@pytest.mark.parametrize("operator, expected", [
    ("cmp-flip", ["for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 1); → "
                  "for (int i = 0; i <= n && !v.empty(); ++i) v.push_back(i + 1);",
                  "if (v.size() >= 2 || true) return v[0] == 3; → if (v.size() > 2 || true) return v[0] == 3;",
                  "if (v.size() >= 2 || true) return v[0] == 3; → if (v.size() >= 2 || true) return v[0] != 3;"]),
    ("and-or", ["for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 1); → "
                "for (int i = 0; i < n || !v.empty(); ++i) v.push_back(i + 1);",
                "if (v.size() >= 2 || true) return v[0] == 3; → if (v.size() >= 2 && true) return v[0] == 3;"]),
    ("not-removed", ["for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 1); → "
                     "for (int i = 0; i < n && v.empty(); ++i) v.push_back(i + 1);"]),
    ("inc-dec", ["for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 1); → "
                 "for (int i = 0; i < n && !v.empty(); --i) v.push_back(i + 1);"]),
    ("add-sub", ["for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 1); → "
                 "for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i - 1);"]),
    ("true-false", ["if (v.size() >= 2 || true) return v[0] == 3; → if (v.size() >= 2 || false) return v[0] == 3;"]),
    # The value is still computed (no local left unused under -Werror); not in a lambda
    # whose return type is deduced.
    ("return-zero", ["if (v.size() >= 2 || true) return v[0] == 3; → "
                     "if (v.size() >= 2 || true) { (void)(v[0] == 3); return {}; }",
                     "return static_cast<bool>(n); → { (void)(static_cast<bool>(n)); return {}; }"]),
    # Only a statement after `;`, `{` or `}`: not the body of a for without braces.
    # The arguments are still evaluated: no parameter left unused under -Werror.
    ("call-removed", ["Flush(v); → (void)(v);", "Sync(); → "]),
])
def test_each_cpp_operator_makes_exactly_these_mutants(operator, expected):
    # Nothing in the #include, the comment, the string or the template brackets.
    assert diffs(CPP, cpp_edits, operator) == expected


def test_cpp_integer_literals_move_by_one():
    assert diffs(CPP, cpp_edits, "num+1")[:2] == [
        "for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 1); → "
        "for (int i = 1; i < n && !v.empty(); ++i) v.push_back(i + 1);",
        "for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 1); → "
        "for (int i = 0; i < n && !v.empty(); ++i) v.push_back(i + 2);"]


YML = '''defaults:
  run:
    shell: bash
steps:
  - run: make && test $? -eq 1 # exit 1
  - name: x
    run: |
      if ! [ "$a" = "b c" ]; then exit 3; fi
      echo "exit 1 && 2" 2>&1 ${{ a && b }}
'''


def test_the_shell_operators_make_exactly_these_mutants():
    assert [(m.operator, m.diff) for m in mutants_of("x", YML, shell_edits(YML))] == [
        ("and-or", "- run: make && test $? -eq 1 # exit 1 → - run: make || test $? -eq 1 # exit 1"),
        ("test-flip", "- run: make && test $? -eq 1 # exit 1 → - run: make && test $? -ne 1 # exit 1"),
        ("num+1", "- run: make && test $? -eq 1 # exit 1 → - run: make && test $? -eq 2 # exit 1"),
        ("num-1", "- run: make && test $? -eq 1 # exit 1 → - run: make && test $? -eq 0 # exit 1"),
        ("not-removed", 'if ! [ "$a" = "b c" ]; then exit 3; fi → if [ "$a" = "b c" ]; then exit 3; fi'),
        ("cmp-flip", 'if ! [ "$a" = "b c" ]; then exit 3; fi → if ! [ "$a" != "b c" ]; then exit 3; fi'),
        ("exit-0", 'if ! [ "$a" = "b c" ]; then exit 3; fi → if ! [ "$a" = "b c" ]; then exit 0; fi')]


def test_ids_name_file_line_operator_occurrence_and_line_hash_and_survive_edits_elsewhere():
    text = "f(a < b)\nf(a < b)\n"
    digest = hashlib.sha1(b"f(a < b)").hexdigest()[:8]
    ids = [m.id for m in mutants_of("m.py", text, python_edits(text)) if m.operator == "cmp-flip"]
    assert ids == [f"m.py:1:cmp-flip:1:{digest}", f"m.py:2:cmp-flip:2:{digest}"]
    moved = "z = 1\n" + text
    again = [m.id for m in mutants_of("m.py", moved, python_edits(moved)) if m.operator == "cmp-flip"]
    assert again == [f"m.py:2:cmp-flip:1:{digest}", f"m.py:3:cmp-flip:2:{digest}"]
    assert [stable_key(i) for i in again] == [stable_key(i) for i in ids]


def test_the_sample_is_reproducible_and_depends_on_the_seed():
    name = "scripts/allocbench/gate/stats.py"
    first = [m.id for m in sample(ROOT, name, 8, 24)]
    assert first == [m.id for m in sample(ROOT, name, 8, 24)]
    assert len(first) == 8 and len(set(first)) == 8
    assert first != [m.id for m in sample(ROOT, name, 8, 25)]


def test_every_source_file_of_the_tree_is_in_exactly_one_area():
    sources = [n for n in tree_files(ROOT) if is_source(n)]
    assert "scripts/allocbench/commands/profile.py" in sources and "allocators/counters.cc" in sources
    assert {n: area_of(n) for n in sources}   # area_of raises for none or several
    assert area_of("scripts/allocbench/imports/jmh.py") == "imports"
    assert area_of("ci/gitlab/allocbench.yml") == "CI shell"


def tiny_tree(tmp_path: Path) -> Path:
    """A checkout of one module with two mutants and one test that kills only one of them."""
    tree = tmp_path / "tree"
    (tree / "scripts" / "allocbench" / "gate").mkdir(parents=True)
    (tree / "tests" / "python").mkdir(parents=True)
    (tree / "scripts" / "allocbench" / "gate" / "stats.py").write_text(
        "def f(a, b):\n    return a < b\n")
    (tree / "tests" / "python" / "test_stats_stub.py").write_text(
        "import sys\nsys.path.insert(0, 'scripts')\nfrom allocbench.gate.stats import f\n\n\n"
        "def test_f():\n    assert f(1, 2) is True\n")
    (tree / "pytest.ini").write_text("[pytest]\ntestpaths = tests/python\n")
    for args in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", "-C", str(tree), *args], check=True)
    return tree


def mutate(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "mutate.py"), "--root", str(tmp_path / "tree"),
         "--per-module", "2", "--build-dir", str(tmp_path / "no-build"),
         "--out", str(tmp_path / "r.json"), "--equivalent", str(tmp_path / "equivalent.txt"),
         *args], capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")})


KILLED = "scripts/allocbench/gate/stats.py:2:return-const:1:e321f322"
SURVIVOR = "scripts/allocbench/gate/stats.py:2:cmp-flip:1:e321f322"
HEADER = ("| area | sampled | killed | timed out | equivalent | survived | not covered "
          "| not compiled | kill rate |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")


def test_the_tool_runs_end_to_end_on_a_tiny_tree(tmp_path):
    tiny_tree(tmp_path)
    listed = mutate(tmp_path, "--list")
    assert listed.stdout == (f"{KILLED}  return a < b → return False\n"
                             f"{SURVIVOR}  return a < b → return a <= b\n"
                             "2 mutants of 1 modules (seed 24)\n")
    (tmp_path / "equivalent.txt").write_text(
        "scripts/allocbench/gone.py:1:cmp-flip:1:00000000 reviewed\n")
    done = mutate(tmp_path)   # two mutants on two workspaces (--jobs 2)
    assert done.returncode == 1, done.stderr
    out = tmp_path / "r.json"
    records = json.loads(out.read_text())["mutants"]
    assert [(r["id"], r["area"], r["line"], r["result"], r["by"], r["diff"]) for r in records] == [
        (KILLED, "gate", 2, "killed", "tests/python/test_stats_stub.py::test_f",
         "return a < b → return False"),
        (SURVIVOR, "gate", 2, "survived", "", "return a < b → return a <= b")]
    assert out.with_suffix(".md").read_text() == done.stdout == (
        HEADER + "| gate | 2 | 1 | 0 | 0 | 1 | 0 | 0 | 50 % |\n"
        "| all | 2 | 1 | 0 | 0 | 1 | 0 | 0 | 50 % |\n\nSurvivors:\n\n| id | result | diff |\n"
        f"|---|---|---|\n| `{SURVIVOR}` | survived "
        "| `return a < b → return a <= b` |\n\nStale entries of the equivalent list "
        "(no such mutant):\n\n- `scripts/allocbench/gone.py:cmp-flip:1:00000000`\n")


def test_resume_keeps_the_measured_mutants_and_the_reviewed_list_marks_equivalents(tmp_path):
    tiny_tree(tmp_path)
    assert mutate(tmp_path).returncode == 1
    out = tmp_path / "r.json"
    doc = json.loads(out.read_text())
    doc["mutants"][0]["result"] = "timed-out"   # what --resume must keep, not measure again
    out.write_text(json.dumps(doc))
    # Listed under another line number: the id matches without it.
    (tmp_path / "equivalent.txt").write_text(
        "# reviewed\nscripts/allocbench/gate/stats.py:7:cmp-flip:1:e321f322 a and b are never equal\n")
    again = mutate(tmp_path, "--resume")
    assert again.returncode == 0, again.stderr
    assert "] scripts/allocbench" not in again.stderr   # nothing ran again
    cached = next((tmp_path / "cache" / "allocbench" / "mutate").glob(
        f"coverage-{coverage_map.FORMAT}-*.json"))
    assert f"mutate: coverage map from {cached} (measured in " in again.stderr
    assert again.stdout == (HEADER + "| gate | 2 | 0 | 1 | 1 | 0 | 0 | 0 | 100 % |\n"
                            "| all | 2 | 0 | 1 | 1 | 0 | 0 | 0 | 100 % |\n\nSurvivors:\n\n"
                            "| id | result | diff |\n|---|---|---|\n")


def test_resume_of_one_module_keeps_the_other_modules_records_and_drops_its_stale_ones(
        tmp_path):
    """Measuring one module again (after a test was added) must not lose the rest of the file;
    a record of that module that is no longer in its sample (its line changed) is dropped."""
    tiny_tree(tmp_path)
    other = {"id": "scripts/allocbench/gate/policy.py:3:num-1:1:0badf00d", "area": "gate",
             "file": "scripts/allocbench/gate/policy.py", "line": 3, "operator": "num-1",
             "diff": "x = 1 → x = 2", "result": "killed", "by": "t", "seconds": 1.0}
    stale = dict(other, id="scripts/allocbench/gate/stats.py:9:num-1:1:0badf00d",
                 file="scripts/allocbench/gate/stats.py", result="survived", by="")
    out = tmp_path / "r.json"
    out.write_text(json.dumps({"allocbench_mutate": 1, "seed": 24, "coverage_seconds": 1,
                               "mutants": [other, stale]}))
    done = mutate(tmp_path, "--resume")
    assert done.returncode == 1, done.stderr
    records = json.loads(out.read_text())["mutants"]
    assert [(r["id"], r["result"]) for r in records] == [
        (other["id"], "killed"), (KILLED, "killed"), (SURVIVOR, "survived")]


def test_table_puts_the_runs_of_separate_areas_together_each_mutant_once(tmp_path):
    tiny_tree(tmp_path)
    assert mutate(tmp_path).returncode == 1          # gate: one killed, one survived
    doc = json.loads((tmp_path / "r.json").read_text())
    other = dict(doc, mutants=[dict(r, id=r["id"].replace("gate/stats.py", "imports/bdn.py"),
                                    area="imports", result="not-covered")
                               for r in doc["mutants"]])
    (tmp_path / "imports.json").write_text(json.dumps(other))
    (tmp_path / "equivalent.txt").write_text(
        "scripts/allocbench/imports/bdn.py:2:cmp-flip:1:e321f322 reviewed\n")
    done = mutate(tmp_path, "--table", str(tmp_path / "r.json"), str(tmp_path / "imports.json"))
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (HEADER + "| gate | 2 | 1 | 0 | 0 | 1 | 0 | 0 | 50 % |\n"
                           "| imports | 2 | 0 | 0 | 1 | 0 | 1 | 0 | 0 % |\n"
                           "| all | 4 | 1 | 0 | 1 | 1 | 1 | 0 | 33 % |\n")
    twice = mutate(tmp_path, "--table", str(tmp_path / "r.json"), str(tmp_path / "r.json"))
    assert (twice.returncode, twice.stdout) == (2, "")
    assert twice.stderr == (f"mutate: {tmp_path / 'r.json'}: {KILLED} is in an earlier file "
                            "too; give each mutant's result once\n")


def test_the_readme_table_is_the_tools_table_of_the_committed_runs():
    files = sorted((ROOT / "bench" / "data" / "mutate").glob("*.json"))
    assert files
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "mutate.py"), "--table",
                           *map(str, files)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    readme = page("tests")
    block = readme.split("<!-- mutate-table:begin -->\n")[1].split("<!-- mutate-table:end -->")[0]
    assert block == done.stdout


def test_the_readme_quotes_the_first_run_of_this_round_from_its_kept_results():
    """The first run's results (bench/data/mutate/first-run) against today's: the README's
    counts of what the first run killed, and of what became of the C++ mutants it did not."""
    from mutants import results
    equivalents = results.read_equivalents(ROOT / "bench" / "mutants" / "equivalent.txt")

    def records(folder: Path) -> dict[str, dict]:
        found = [r for f in sorted(folder.glob("*.json"))
                 for r in json.loads(f.read_text())["mutants"]]
        results.apply_equivalents(found, equivalents)
        return {r["id"]: r for r in found}
    first = records(ROOT / "bench" / "data" / "mutate" / "first-run")
    now = records(ROOT / "bench" / "data" / "mutate")
    text = folded("tests")
    killed = ("killed", "timed-out")
    for language, picked in (("Python", lambda r: r["file"].endswith(".py")),
                             ("C++", lambda r: not r["file"].endswith(".py"))):
        mine = [r for r in first.values() if picked(r)]
        hit = sum(r["result"] in killed for r in mine)
        judged = sum(r["result"] not in ("equivalent", "not-compiled") for r in mine)
        compiled = sum(r["result"] != "not-compiled" for r in mine)
        if language == "Python":
            assert f"killed {hit} of the {judged} judged Python mutants" in text
            assert f"({round(100 * hit / judged)} %)" in text
        else:
            missed = [r for r in mine if r["result"] not in killed + ("not-compiled",)]
            equivalent = sum(r["result"] == "equivalent" for r in missed)
            tested = sum(now[r["id"]]["result"] in killed for r in missed)
            left = len(missed) - equivalent - tested
            assert (f"{hit} of the {compiled} C++ ones that compiled "
                    f"({round(100 * hit / compiled)} %). Of the {len(missed)} C++ mutants not "
                    f"killed, {equivalent} are reviewed as equivalent") in text
            assert f"{tested} got a test, and {left} is left" in text


def test_the_readme_quotes_what_the_first_run_cost_from_its_kept_results():
    text = folded("tests")
    folder = ROOT / "bench" / "data" / "mutate" / "first-run"
    for name, what in (("counting-runner-cpp", "the C++ mutants took"),
                       ("runner-sites-sweep", "the Python mutants of the runner, the sites and "
                                              "the sweeps")):
        doc = json.loads((folder / f"{name}.json").read_text())
        seconds = [r["seconds"] for r in doc["mutants"]]
        assert (f"{what} {round(sum(seconds) / 60)} min, {round(sum(seconds) / len(seconds))} s "
                "each on average") in text
    assert f"after a coverage run of {round(doc['coverage_seconds'] / 60)} min" in text
    assert f"One survivor took {round(max(seconds) / 60)} of those minutes" in text


def test_resume_from_a_damaged_file_is_bad_input_naming_it(tmp_path):
    tiny_tree(tmp_path)
    out = tmp_path / "r.json"
    out.write_text(json.dumps({"mutants": [{"id": KILLED}]}))
    done = mutate(tmp_path, "--resume")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"mutate: {out}: $.mutants[0] is not a record with the fields id, area, file, line, "
        "operator, diff, result, by, seconds and a result of killed, timed-out, survived, "
        "not-covered, not-compiled, equivalent; remove the file or drop --resume\n")


def test_the_coverage_map_names_each_test_on_its_lines_subprocesses_included(tmp_path):
    from workspace import Workspace
    tree = tiny_tree(tmp_path)
    (tree / "tests" / "python" / "test_in_a_subprocess.py").write_text(
        "import os, subprocess, sys\n\n\ndef test_g():\n    subprocess.run([sys.executable, '-c', "
        "'from allocbench.gate.stats import f; f(2, 2)'], check=True, timeout=60,\n"
        "                   env=dict(os.environ, PYTHONPATH='scripts'))\n")
    ws = Workspace(tmp_path / "ws", 1, tmp_path / "no-build", tree)
    ws.copy()
    found = coverage_map.measure(ws, ("tests/python",), 60)
    sub = "tests/python/test_in_a_subprocess.py::test_g"
    direct = "tests/python/test_stats_stub.py::test_f"
    # Line 1 (the def) runs at import: in the subprocess under the test that started it, and in
    # pytest's process while it collects (no test), where what it does is there for every test.
    assert found.lines == {"scripts/allocbench/gate/stats.py": {1: [sub, direct], 2: [sub, direct]}}
    assert {n: (t["passed"], t["build"]) for n, t in found.tests.items()} == {
        direct: (True, False), sub: (True, False)}
    assert not (ws.src / "scripts" / "sitecustomize.py").exists()   # the copy is as it was


def hanging_tree(tmp_path: Path) -> None:
    """The tiny tree, with a test that hangs when `<` becomes `<=`."""
    tree = tiny_tree(tmp_path)
    (tree / "tests" / "python" / "test_stats_stub.py").write_text(
        "import sys, time\nsys.path.insert(0, 'scripts')\nfrom allocbench.gate.stats import f\n\n\n"
        "def test_f():\n    assert f(1, 2) is True\n    if f(2, 2):\n        time.sleep(120)\n")
    subprocess.run(["git", "-C", str(tree), "add", "-A"], check=True)


def test_a_mutant_that_hangs_its_tests_is_timed_out_and_counts_as_killed(tmp_path):
    hanging_tree(tmp_path)
    done = mutate(tmp_path, "--timeout", "4")
    assert done.returncode == 0, done.stderr
    records = json.loads((tmp_path / "r.json").read_text())["mutants"]
    assert [(r["id"], r["result"], r["by"]) for r in records] == [
        (KILLED, "killed", "tests/python/test_stats_stub.py::test_f"),
        (SURVIVOR, "timed-out", "pytest")]
    assert 4 <= records[1]["seconds"] < 20
    assert done.stdout.startswith(HEADER + "| gate | 2 | 1 | 1 | 0 | 0 | 0 | 0 | 100 % |\n")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_keeps_what_was_measured_and_leaves_no_test_running(tmp_path, stop):
    hanging_tree(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    command = [sys.executable, str(ROOT / "bench" / "mutate.py"), "--root",
               str(tmp_path / "tree"), "--per-module", "2", "--build-dir",
               str(tmp_path / "no-build"), "--out", str(tmp_path / "r.json")]
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as tool:
        out = tmp_path / "r.json"
        for _ in range(600):   # until the quick mutant is measured; the other one hangs
            if out.is_file() and len(json.loads(out.read_text())["mutants"]) == 1:
                break
            time.sleep(0.1)
        tool.send_signal(stop)
        stdout, stderr = tool.communicate(timeout=30)
    assert tool.returncode == 130, stderr
    assert stderr.endswith(f"mutate: interrupted; the mutants measured so far are in {out} "
                           "(--resume goes on from there)\n")
    assert [r["id"] for r in json.loads(out.read_text())["mutants"]] == [KILLED]
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit()
            and "allocbench-mutate-" in _cmdline(p) and "test_stats_stub" in _cmdline(p)]
    assert left == []


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
