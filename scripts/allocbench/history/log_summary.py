"""The one line of a build or run log that says why it failed: what a failure note in the sweep
table, a progress line or bisect's report quotes (store.problem); the whole log stays on disk.

The first of these that the log has:
- CMake's error. `CMake Error at CMakeLists.txt:3 (cmake_minimum_required):` only says where; the
  message is the indented paragraph under it, joined into one line: `CMake Error: CMake 3.28 or
  higher is required. You are running version 3.25.1`. `CMake Error: message` is that line.
- A diagnostic: `error:` (`span.cc:3:1: error: …`, `fatal error:`, `ld.lld: error:`) or the
  linker's `undefined reference to` (which comes before its `collect2: error:` summary), even
  after make's echo of a failure (`make[2]: *** [...] Error 1`), which says only that a step
  failed: with parallel jobs the echo of one can come first. A compiler's command line echoed
  with `-Wno-error=…` is not one.
- Any line with the word error.
- The last line: a crash or a timeout leaves its last words there.

Paths into allocbench's worktrees are cut to the path inside the repository: the note names the
file, not the checkout a machine happened to build it in (a quote before the path is kept).
"""

from __future__ import annotations

import re

WORKTREE = re.compile(r"[^\s\"'`‘“(\[]*/\.allocbench/"
                      r"(?:worktrees/[0-9a-f]{40}|trees/[a-z]+-[0-9a-f]{8}(?:-none)?/src)/")
_CMAKE = re.compile(r"^(\s*)CMake Error\b(.*)$")
_DIAGNOSTIC = re.compile(r"\berror:|\bundefined reference to\b", re.IGNORECASE)
_ERROR = re.compile(r"\berror\b", re.IGNORECASE)


def informative_line(log_text: str) -> str:
    """The most informative line of `log_text`, stripped; "" for an empty log."""
    lines = [WORKTREE.sub("", line).rstrip() for line in log_text.splitlines()]
    return (_cmake_error(lines) or _first(lines, _DIAGNOSTIC) or _first(lines, _ERROR)
            or next((line.strip() for line in reversed(lines) if line.strip()), ""))


def _first(lines: list[str], pattern: re.Pattern[str]) -> str | None:
    return next((line.strip() for line in lines if pattern.search(line)), None)


def _cmake_error(lines: list[str]) -> str | None:
    """The first CMake error with its message: on its line, else in the paragraph under it (the
    line alone when the log's tail cut the paragraph off)."""
    for i, line in enumerate(lines):
        match = _CMAKE.match(line)
        if match is None:
            continue
        indent, rest = match.groups()
        if rest.startswith(":") and rest[1:].strip():
            return line.strip()
        message = _paragraph(lines[i + 1:], len(indent))
        return f"CMake Error: {message}" if message else line.strip()
    return None


def _paragraph(lines: list[str], indent: int) -> str:
    """The message indented deeper than `indent` as one line with single spaces (CMake wraps
    its messages and puts two spaces between sentences). Its first paragraph, and the next ones
    while the sentence is unfinished: CMake sets a path apart with blank lines ("The source
    directory / <path> / does not contain a CMakeLists.txt file.")."""
    words: list[str] = []
    for line in lines:
        if not line.strip():
            if words and words[-1].endswith((".", "!", "?")):
                break
            continue
        if len(line) - len(line.lstrip()) <= indent:
            break
        words += line.split()
    return " ".join(words)
