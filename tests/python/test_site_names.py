"""names.slug: the file name of an instance or a revision label, short and apart from every
other name's. The hashes here are sha256's (hashlib), the prefixes written out by hand; through
`ab` and `profile` with such names: test_site_budget_ab.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from allocbench import cli
from allocbench.base.names import slug
from allocbench.harness import runners
from allocbench.reports import pages
from docs_pages import folded


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


@pytest.mark.parametrize("name, readable", [
    ("span_creation/start_span", "span_creation_start_span"),
    ("a/b:1", "a_b_1"), ("a/b_1", "a_b_1"),           # one prefix, two hashes
    ("main~1", "main_1"),
    ("日本語/span", "span"),                           # non-ASCII: one `_` per run, stripped
    ("-rf", "rf"), (".hidden", "hidden"),              # never an option or a hidden file
])
def test_a_slug_is_the_safe_prefix_and_the_hash_of_the_whole_name(name, readable):
    assert slug(name) == f"{readable}-{sha(name)}"


def test_names_that_read_alike_get_files_apart():
    assert slug("a/b:1") == "a_b_1-3dee3bf45c"
    assert slug("a/b_1") == "a_b_1-882cc2a0c6"


def test_a_name_with_nothing_safe_is_its_hash():
    assert slug("日本語") == "77710aedc7" == sha("日本語")


def test_a_long_name_is_cut_to_60_characters_and_its_hash():
    name = "span_creation/" + "x" * 280 + "/threads:1"   # 304 characters
    assert slug(name) == "span_creation_" + "x" * 46 + "-" + sha(name)
    assert len(slug(name)) == 71
    # Multi-byte characters count for nothing in the prefix: the name stays at most 71 bytes.
    wide = "é" * 200 + "/" + "y" * 100
    assert slug(wide) == "y" * 60 + "-" + sha(wide)
    assert len(slug(wide).encode()) == 71
    # A cut that ends on a separator drops it: no file name ends in `_` before its hash.
    assert slug("a" * 59 + "/b") == "a" * 59 + "-" + sha("a" * 59 + "/b")


def test_the_report_names_its_pages_with_the_same_slug():
    assert pages.slug is slug


def test_the_readme_names_files_as_slug_does():
    readme = folded("sites")
    assert slug("span_creation/start_span") == "span_creation_start_span-0f59846e23"
    assert "`span_creation/start_span` is `span_creation_start_span-0f59846e23`" in readme
    assert slug("main~1") == "main_1-3c9e739b6b"
    assert "(`main~1` is `main_1-3c9e739b6b`)" in readme
    assert "cut to 60, then 10 hex digits of the SHA-256 of the whole name" in readme
    assert "a file name of at most 71 bytes" in readme   # test_a_long_name_is_cut_…


# Three instances whose names were file names that failed or collided: 300 characters (350
# bytes of UTF-8, 250 of them safe: too long a file name with .run1.results.json after them),
# and two that read alike once `/` and `:` are made safe.
LONG = "span_creation/" + "x" * 236 + "é" * 50
NAMES = {"Long": LONG, "Colon": "a/b:1", "Underscore": "a/b_1"}
TAGS = {"Long": 24, "Colon": 32, "Underscore": 40}   # bodies apart: identical ones are folded
EXTRA = "Block* block = new Block; allocbench::DoNotOptimize(block); delete block;"
SPANS = "#include <allocbench/scenario.h>\n\n#include <array>\n\n" \
        "using Block = std::array<char, 96>;\n" + "".join(f"""
ALLOCBENCH_SCENARIO({function}, state) {{
  for (auto _ : state) {{
    char* tag = new char[{TAGS[function]}];
    allocbench::DoNotOptimize(tag);
    delete[] tag;
    EXTRA_{function}
  }}
}}
ALLOCBENCH_REGISTER({function})->Name("{name}");
""" for function, name in NAMES.items())
LINES = {function: next(i for i, text in enumerate(SPANS.splitlines(), 1)
                        if f"EXTRA_{function}" in text) for function in NAMES}
SLUGS = {LONG: "span_creation_" + "x" * 46 + "-" + sha(LONG),
         "a/b:1": "a_b_1-3dee3bf45c", "a/b_1": "a_b_1-882cc2a0c6"}


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The base allocates a tag per op; the candidate one 96-byte block more, each instance on
    its own line. Branches `rev/1` and `rev_1` (one folder name before slugs)."""
    from test_ab import CMAKELISTS, commit, git
    repo = tmp_path_factory.mktemp("named") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = SPANS
    for function in NAMES:
        base = base.replace(f"EXTRA_{function}", "")
    shas = {"base": commit(repo, "base", {"CMakeLists.txt": CMAKELISTS, "spans.cc": base}),
            "cand": commit(repo, "a block per op", {"spans.cc": SPANS.replace(
                "EXTRA_Long", EXTRA).replace("EXTRA_Colon", EXTRA).replace(
                "EXTRA_Underscore", EXTRA)})}
    git(repo, "branch", "rev/1", shas["base"])
    git(repo, "branch", "rev_1", shas["cand"])
    return repo, shas


def build_flags(prefix: Path) -> list[str]:
    return [f"--cmake-arg=-DCMAKE_PREFIX_PATH={prefix}", "--target", "e2e_scenarios",
            "--plugin-path", "e2e_scenarios.so"]


def tables(folder: Path) -> dict[str, str]:
    """file name → the instance its site table names."""
    return {p.name: json.loads(p.read_text())["instance"]
            for p in sorted(folder.glob("*.sites.json"))}


def test_ab_profiles_long_and_alike_names_into_their_own_files(named, prefix, runner, capsys):
    repo, shas = named
    code = cli.main(["ab", "--repo", str(repo), "--base", "main~1", "--cand", "main",
                     *build_flags(prefix), "--runner", str(runner), "--forks", "1", "--no-time",
                     "--format", "markdown"])
    comment = capsys.readouterr().out
    assert code == 1, comment   # each instance allocates more: regressions, and said so
    assert comment.splitlines()[4] == (
        "❌ Gate failed: 9 gated regressions (--fail-on any) in "
        + "; ".join(f"{name} (bytes_per_op, allocs_per_op, frees_per_op)"
                    for name in NAMES.values()) + ".")
    for function, name in NAMES.items():   # each instance's own new site, under it
        at = comment.index(f"scenario:`{name}`")
        assert comment[at:].splitlines()[5] == (
            f"- ↳ +96 B/op, +1 allocs/op: new site `{function}` (spans.cc:{LINES[function]}) "
            "1 × 96 B")
    run_dir = repo / ".allocbench" / "ab" / f"{shas['base'][:12]}-{shas['cand'][:12]}"
    for side in ("base", "cand"):
        assert tables(run_dir / "sites" / side) == {
            f"{SLUGS[name]}.sites.json": name for name in sorted(NAMES.values(),
                                                                 key=SLUGS.get)}


def test_profile_writes_long_and_alike_names_and_labels_apart(named, prefix, runner, capsys,
                                                              tmp_path, monkeypatch):
    repo, _ = named
    monkeypatch.setattr(runners, "profile_runner_path",
                        lambda jobs=None: runner.parent / "allocbench-run-profile")
    code = cli.main(["profile", *NAMES.values(), "--rev", "rev/1", "--rev", "rev_1", "--repo",
                     str(repo), *build_flags(prefix), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    for function, name in NAMES.items():
        assert (f"### Sites of `{name}`: `rev/1` → `rev_1`\n\n- +96 B/op, +1 allocs/op: new "
                f"site `{function}` (spans.cc:{LINES[function]}) 1 × 96 B\n") in out
    folders = {"rev/1": "rev_1-" + sha("rev/1"), "rev_1": "rev_1-" + sha("rev_1")}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(folders.values())
    for folder in folders.values():
        assert sorted(p.name for p in (tmp_path / folder).iterdir()) == sorted(
            f"{SLUGS[name]}{suffix}" for name in NAMES.values()
            for suffix in (".sites.json", ".sites.md", ".zst"))
        assert sorted(tables(tmp_path / folder).values()) == sorted(NAMES.values())
