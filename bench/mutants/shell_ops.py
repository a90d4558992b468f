"""Mutants of the CI templates' shell: the `run:` blocks of ci/github/*.yml and the `script:`
(`before_script:`, `after_script:`) blocks of ci/gitlab/*.yml, found by indentation as YAML
lays them out. Quoted text, comments and `${{ }}` expressions are left alone."""

from __future__ import annotations

import re

from .model import Edit

KEY = re.compile(r"^(?P<indent>[ \t]*)(?:-[ \t]+)?(?P<key>run|script|before_script|after_script)"
                 r":[ \t]*(?P<rest>.*)$")
WORD = re.compile(r"""
    (?P<skip> '[^']*' | "(?:\\.|[^"\\])*" | \$\{\{.*?\}\} | (?<!\S)\#[^\n]* | \$\(\( | \$\? )
  | (?P<test> -eq|-ne|-lt|-le|-gt|-ge )(?![\w-])
  | (?P<logic> &&|\|\| )
  | (?P<exit> \bexit[ \t]+[1-9]\d* )
  | (?P<bang> (?<![\w!])![ \t] )
  | (?P<equal> (?<=\s)!?=(?=\s) )
  | (?P<number> (?<![\w./$&-])\d+(?![\w./>]) )
""", re.X)
TESTS = {"-eq": "-ne", "-ne": "-eq", "-lt": "-le", "-le": "-lt", "-gt": "-ge", "-ge": "-gt"}


def shell_blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each script's text in a CI template."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    blocks = []
    for n, line in enumerate(lines):
        match = KEY.match(line.rstrip("\n"))
        if not match:
            continue
        rest, indent = match.group("rest"), len(match.group("indent"))
        if rest and rest[0] not in "|>":
            blocks.append((starts[n] + match.start("rest"), starts[n] + match.end("rest")))
            continue
        if not rest and match.group("key") == "run":
            continue   # `defaults: run:` is a mapping, not a script
        end = n + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent or (
                match.group("key") != "run" and _indent(lines[end]) == indent
                and lines[end].lstrip().startswith("- "))):
            end += 1
        if end > n + 1:
            blocks.append((starts[n + 1], starts[end]))
    return blocks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def shell_edits(text: str) -> list[Edit]:
    edits = []
    for start, end in shell_blocks(text):
        for match in WORD.finditer(text, start, end):
            kind, word = match.lastgroup, match.group()
            at = match.start(), match.end()
            if kind == "test":
                edits.append(Edit("test-flip", *at, TESTS[word]))
            elif kind == "logic":
                edits.append(Edit("and-or", *at, "||" if word == "&&" else "&&"))
            elif kind == "exit":
                edits.append(Edit("exit-0", *at, "exit 0"))
            elif kind == "bang":
                edits.append(Edit("not-removed", *at, ""))
            elif kind == "equal":
                edits.append(Edit("cmp-flip", *at, "=" if word == "!=" else "!="))
            elif kind == "number":
                value = int(word)
                edits.append(Edit("num+1", *at, str(value + 1)))
                if value > 0:
                    edits.append(Edit("num-1", *at, str(value - 1)))
    return edits
