"""The README is a front door of at most 250 lines and the guide behind it holds together
(issue 25): every relative link of README.md and docs/*.md names a file that exists, every
#anchor names a heading of its page by GitHub's rules, every docs/ page is in the README's
table of the guide and starts with its title and a link back, every generated block lives on
one page, and the README's examples are the guide's own text."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from docs_pages import DOCS, ROOT

FRONT_DOOR = ROOT / "README.md"
MAX_LINES = 250
PAGES = [FRONT_DOOR, *sorted(DOCS.glob("*.md"))]

# Links to files that are built, not committed: each with what makes it and why it is linked.
GENERATED = {
    "build/report-example/index.html":
        "the example report, which ./allocbench test generates (test_report_browser.py builds "
        "it); the README points readers at it after they ran the tests",
}

# The generated blocks of the README before it was split (issue 25): each is on one page now.
SPLIT_BLOCKS = {
    "what-you-get", "builtin-table", "fanout-table", "gbench-table", "gbench-overhead", "faults",
    "policy-change", "calibration-table", "import-unstable-example", "import-example",
    "instructions-determinism", "instructions-gate", "time-noise", "sites-example",
    "sites-not-judged", "profile-cost", "sweep-commands", "libtrace-toml", "bench-project",
    "report-bench", "exit-codes", "mutate-table"}

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def prose_lines(page: Path) -> list[tuple[int, str]]:
    """(line number, line) of the page outside fenced code blocks."""
    found, fence = [], None
    for number, line in enumerate(page.read_text().splitlines(), 1):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None:
            if line.strip().startswith(fence[0] * len(fence)) and \
                    set(line.strip()) == {fence[0]}:
                fence = None
        else:
            found.append((number, line))
    return found


def without_code_spans(line: str) -> str:
    """The line with its inline code spans (`x`, ``x``) blanked: their text is not a link."""
    return re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group()), line)


def links(page: Path) -> list[tuple[int, str]]:
    return [(number, target) for number, line in prose_lines(page)
            for target in LINK.findall(without_code_spans(line))]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text as rendered (code spans and link text kept, their
    markup dropped), lowercased, every character but letters, digits, spaces, '-' and '_'
    dropped, each space a '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # a link: its text
    text = re.sub(r"(`+)(.+?)\1", r"\2", text)                   # a code span: its text
    text = re.sub(r"(\*\*|__|\*)(.+?)\1", r"\2", text)           # emphasis
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> list[str]:
    """The anchors of the page's headings, in order; a repeated one gets -1, -2, … as GitHub
    numbers them."""
    seen: dict[str, int] = {}
    found = []
    for _, line in prose_lines(page):
        heading = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        base = slug(heading.group(1))
        anchor = base if base not in seen else f"{base}-{seen[base]}"
        seen[base] = seen.get(base, 0) + 1
        found.append(anchor)
    return found


def broken_links(page: Path) -> list[str]:
    problems = []
    for number, target in links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):   # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        where = f"{name(page)}:{number}: link ({target})"
        resolved = (page.parent / file).resolve() if file else page
        try:
            shown = str(resolved.relative_to(ROOT))
        except ValueError:
            problems.append(f"{where} leaves the repository; link to a file of the repository")
            continue
        if shown in GENERATED:
            continue
        if not resolved.exists():
            folder = name(page.parent) if page.parent != ROOT else "."
            problems.append(f"{where} names {shown}, which does not exist; links are relative "
                            f"to the page's folder ({folder}/), so fix the path or add the file")
            continue
        if not anchor:
            continue
        if resolved.suffix != ".md":
            problems.append(f"{where} has an anchor on a file that is not a page; drop "
                            f"#{anchor} or link to a heading of a .md page")
        elif anchor not in anchors(resolved):
            problems.append(f"{where}: {shown} has no heading whose anchor is #{anchor}; its "
                            f"anchors are {', '.join('#' + a for a in anchors(resolved))}; fix "
                            "the anchor or the heading it names")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_every_link_resolves(page):
    problems = broken_links(page)
    assert not problems, "\n".join(problems)


def test_the_slugs_are_githubs():
    assert slug("Faults: one instance's crash is its own") == \
        "faults-one-instances-crash-is-its-own"
    assert slug("Google Benchmark suites: B/op by linking one target") == \
        "google-benchmark-suites-bop-by-linking-one-target"
    assert slug("Sweeps and bisect: how did we get here?") == \
        "sweeps-and-bisect-how-did-we-get-here"
    assert slug("`allocbench-run` and [its faults](x.md)") == "allocbench-run-and-its-faults"
    assert slug("exit_codes, 3 ≥ 2") == "exit_codes-3--2"


def test_a_repeated_heading_is_numbered(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# A\n\n## Notes\n\n```sh\n# Notes\n```\n\n## Notes\n\n### Notes\n")
    assert anchors(page) == ["a", "notes", "notes-1", "notes-2"]


def test_a_broken_link_is_named_with_its_fix(tmp_path, monkeypatch):
    """The check itself: a missing file, a missing anchor and a generated file, on a page of a
    stand-in repository."""
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Its part\n")
    page = tmp_path / "README.md"
    page.write_text("# R\n\n[a](docs/a.md#its-part) [b](docs/b.md) [c](docs/a.md#nothing)\n"
                    "`[d](docs/d.md)` [e](build/report-example/index.html)\n\n"
                    "```\n[f](docs/f.md)\n```\n")
    assert broken_links(page) == [
        "README.md:3: link (docs/b.md) names docs/b.md, which does not exist; links are "
        "relative to the page's folder (./), so fix the path or add the file",
        "README.md:3: link (docs/a.md#nothing): docs/a.md has no heading whose anchor is "
        "#nothing; its anchors are #a-page, #its-part; fix the anchor or the heading it names"]


def test_the_front_door_is_at_most_250_lines():
    lines = len(FRONT_DOOR.read_text().splitlines())
    assert lines <= MAX_LINES, (f"README.md has {lines} lines, more than {MAX_LINES}: move a "
                                "section to its page under docs/ and link it from the table")


def test_every_page_of_the_guide_is_in_the_front_doors_table():
    table = [target for number, line in prose_lines(FRONT_DOOR) if line.startswith("|")
             for target in LINK.findall(without_code_spans(line))]
    listed = {(ROOT / target.partition("#")[0]).resolve() for target in table}
    missing = [name(page) for page in PAGES[1:] if page.resolve() not in listed]
    assert missing == [], ("README.md's table of the guide has no row for these pages; add "
                           "'| [Title](docs/page.md) | what it covers |'")


@pytest.mark.parametrize("page", PAGES[1:], ids=name)
def test_every_page_starts_with_its_title_and_a_link_back(page):
    lines = [line for line in page.read_text().splitlines() if line.strip()]
    assert re.match(r"# \S", lines[0]), f"{name(page)}: its first line is not a '# Title'"
    assert "](../README.md)" in lines[1], (
        f"{name(page)}: the line after its title has no link back to the front door, "
        "[allocbench](../README.md)")


def test_every_generated_block_is_on_one_page():
    """A block moved with its content: its two markers once each, on one page, in order."""
    where: dict[str, list[str]] = {}
    for page in PAGES:
        text = page.read_text()
        for block in set(re.findall(r"<!-- ([\w-]+):begin -->", text)):
            where.setdefault(block, []).append(name(page))
            assert text.count(f"<!-- {block}:begin -->\n") == 1, (name(page), block)
            assert text.count(f"<!-- {block}:end -->") == 1, (name(page), block)
            assert text.index(f"<!-- {block}:begin -->") < text.index(f"<!-- {block}:end -->")
    assert {block: pages for block, pages in where.items() if len(pages) > 1} == {}
    assert sorted(SPLIT_BLOCKS - set(where)) == []   # none lost in the split
    assert where["what-you-get"] == ["README.md"]


def code_blocks(page: Path) -> list[str]:
    return re.findall(r"^```\w*\n(.*?)^```$", page.read_text(), re.S | re.M)


def test_the_front_doors_examples_are_the_guides():
    """Each code block of the README but the two commands and the generated excerpt is an
    example the guide shows (and its tests run) too, word for word."""
    text = FRONT_DOOR.read_text()
    excerpt = text.split("<!-- what-you-get:begin -->")[1].split("<!-- what-you-get:end -->")[0]
    examples = [b for b in code_blocks(FRONT_DOOR)[1:] if b not in excerpt]
    assert examples, "the README shows no example: a first scenario and the gate's command"
    guide = [b for page in PAGES[1:] for b in code_blocks(page)]
    assert [b for b in examples if b not in guide] == []
