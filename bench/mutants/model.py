"""A mutant: one span of one file replaced, its stable id and its one-line diff."""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """One replacement found by an operator: text[start:end] → replacement (offsets in
    characters of the file's text)."""
    operator: str
    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str          # relative to the repository
    line: int          # 1-based, of the span's start
    operator: str
    start: int
    end: int
    replacement: str
    diff: str          # "old line → new line", whitespace collapsed

    def apply(self, text: str) -> str:
        return text[:self.start] + self.replacement + text[self.end:]


def line_hash(line: str) -> str:
    return hashlib.sha1(" ".join(line.split()).encode()).hexdigest()[:8]


def squeeze(text: str) -> str:
    return " ".join(text.split())


def mutants_of(file: str, text: str, edits: list[Edit]) -> list[Mutant]:
    """The mutants of `edits`, in file order, with ids `file:line:operator:N:hash`: N counts
    the same operator on lines of the same text before it (the first is 1), hash is that
    text's; so an id survives edits elsewhere in the file but the line number, which
    `stable_key` leaves out."""
    line_starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            line_starts.append(i + 1)
    seen: dict[tuple[str, str], int] = {}
    mutants = []
    for edit in sorted(set(edits), key=lambda e: (e.start, e.end, e.operator, e.replacement)):
        first = bisect.bisect_right(line_starts, edit.start) - 1
        last = bisect.bisect_right(line_starts, max(edit.start, edit.end - 1)) - 1
        begin = line_starts[first]
        finish = line_starts[last + 1] - 1 if last + 1 < len(line_starts) else len(text)
        old = text[begin:finish]
        new = old[:edit.start - begin] + edit.replacement + old[edit.end - begin:]
        if squeeze(old) == squeeze(new):
            continue   # a change of whitespace only
        digest = line_hash(old)
        key = (edit.operator, digest)
        seen[key] = seen.get(key, 0) + 1
        mutants.append(Mutant(
            id=f"{file}:{first + 1}:{edit.operator}:{seen[key]}:{digest}", file=file,
            line=first + 1, operator=edit.operator, start=edit.start, end=edit.end,
            replacement=edit.replacement, diff=f"{squeeze(old)} → {squeeze(new)}"))
    return mutants


def stable_key(mutant_id: str) -> str:
    """The id without its line number: what a reviewed list matches on."""
    file, _line, rest = mutant_id.split(":", 2)
    return f"{file}:{rest}"

