"""File names made from names that are not file names: scenario instances, revision labels.

An instance name may be any text of any length (`a/b:1`, 300 characters, `日本語`); a file
system takes 255 bytes per name and a few characters. `slug` keeps a readable prefix of the
name's safe characters and adds a hash of the whole name, so that the result is short (at
most 71 bytes, ASCII), safe on every file system and in a URL, and different for different
names even where their readable prefixes agree (`a/b:1` and `a/b_1` are both `a_b_1`). Readers
never parse a name back from its file: the files that need it say the name inside.
"""

from __future__ import annotations

import hashlib
import re

PREFIX = 60    # characters of the readable prefix
DIGITS = 10    # hex digits of the name's sha256: a collision needs ~10^6 names in one folder
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: str) -> str:
    """`span_creation_start_span-1a2b3c4d5e` of `span_creation/start_span`: its safe characters
    (each run of others one `_`), cut to PREFIX, then a hash of the whole of `text`; the hash
    alone when nothing safe is left. Never starts with a `.` or `-`."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:DIGITS]
    readable = _UNSAFE.sub("_", text).strip("_.-")[:PREFIX].rstrip("_.-")
    return f"{readable}-{digest}" if readable else digest
