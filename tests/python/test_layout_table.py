"""The README's Layout tables match the tree: one row per top-level folder of the checkout, one
row per part of the Python package, and the parts listed from the bottom up (each after every
part it may import, as its __init__.py says)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import package_graph as graph

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "scripts" / "allocbench"


def tables() -> list[list[str]]:
    """The first cells of each table of the README's Layout section, in order."""
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    found: list[list[str]] = []
    previous = ""
    for line in section.splitlines():
        if line.startswith("| `"):
            if not previous.startswith("|"):
                found.append([])
            found[-1].append(re.match(r"\| `([^`]+)` \|", line).group(1))
        elif line.startswith("|") and not previous.startswith("|"):
            found.append([])   # a header row
        previous = line
    return [rows for rows in found if rows]


def tracked_folders() -> set[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, check=True).stdout.split()
    return {name.split("/")[0] for name in listed
            if "/" in name and not name.startswith(".")}


def test_every_top_level_folder_has_its_row_and_no_row_names_a_folder_that_is_gone():
    folders, _ = tables()
    assert {row.split("/")[0] for row in folders} == tracked_folders()
    for row in folders:
        assert (ROOT / row).is_dir(), f"README's Layout names {row}, which is not a folder"


def test_every_part_of_the_package_has_its_row_bottom_up():
    _, parts = tables()
    order = [p.rstrip("/") for p in parts]
    assert sorted(order) == sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    for part, allowed in graph.rules(PACKAGE).items():
        for lower in allowed:
            lower_part = lower.split(".")[0]
            if lower_part != part:
                assert order.index(lower_part) < order.index(part), (
                    f"the Layout lists {part}/ before {lower_part}/, which it imports")
