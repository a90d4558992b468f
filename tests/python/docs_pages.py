"""The pages of allocbench's documentation, for the tests that check what they say.

README.md is the front door; the user guide is docs/<name>.md, one page per capability
(docs/README.md lists them). A test reads the one page where the text it checks lives,
page("gating"), never all pages together: a claim is checked where a reader finds it, and a
claim moved to another page fails its test until the test is pointed there too."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
FRONT_DOOR = "README"


def path(name: str) -> Path:
    """README.md for "README", else docs/<name>.md; a page that is not there fails the test
    that reads it, naming the file."""
    found = ROOT / "README.md" if name == FRONT_DOOR else DOCS / f"{name}.md"
    if not found.is_file():
        pages = ", ".join(sorted(p.stem for p in DOCS.glob("*.md")))
        pytest.fail(f"{found.relative_to(ROOT)} does not exist: the test reads page {name!r} "
                    f"(the guide's pages: {pages}); point the test at the page that now holds "
                    "the text it checks", pytrace=False)
    return found


def page(name: str) -> str:
    """The page's text, as written."""
    return path(name).read_text()


def folded(name: str) -> str:
    """The page's text with its line breaks (and runs of spaces) folded into single spaces."""
    return " ".join(page(name).split())

