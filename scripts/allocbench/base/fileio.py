"""Reading and writing the files allocbench owns, so that a damaged, hostile or half-written
file is one UserError (the file, the problem, the fix), never a traceback, and a reader never
sees half of a file allocbench writes."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections import Counter
from pathlib import Path
from typing import Any

from allocbench.base.errors import UserError

MAX_DEPTH = 64          # a store record nests 6 deep; deeper is damage, and it would recurse
INT64 = 2 ** 63         # nlohmann/json writes integers that fit 64 bits
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_PLAIN = re.compile(r"[A-Za-z0-9_]+")
_WIDE_BOMS = (b"\x00\x00\xfe\xff", b"\xff\xfe\x00\x00", b"\xff\xfe", b"\xfe\xff")


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file is, for messages; None for a regular file."""
    return next((name for test, name in _KINDS if test(mode)), None)


def read_text(path: Path, what: str, fix: str) -> str:
    """The UTF-8 text of the regular file `path` (`what`, e.g. "the configuration", names it in
    'cannot read …'). A FIFO or device is refused before it is read: reading could block or
    never end."""
    return decode_text(read_bytes(path, what), path, fix)


def read_bytes(path: Path, what: str) -> bytes:
    """The bytes of the regular file `path`, as read_text reads them."""
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC), "rb") as f:
            kind = _kind(os.fstat(f.fileno()).st_mode)
            if kind:
                raise UserError(f"{path}: is {kind}, not a file; give the path of a file")
            data = f.read()
    except OSError as e:
        raise UserError(f"{path}: cannot read{' ' + what if what else ''} ({e.strerror})"
                        ) from None
    return data


def decode_text(data: bytes, origin: Path | str, fix: str) -> str:
    """`data` as UTF-8 text (a BOM dropped); UserError naming `origin` (a file, or where in a
    revision the bytes came from) when it is UTF-16, binary or not UTF-8."""
    if data.startswith(_WIDE_BOMS) or b"\x00" in data:
        raise UserError(f"{origin}: is UTF-16 (or binary), not UTF-8; {fix}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise UserError(f"{origin}: is not UTF-8 text (byte 0x{data[e.start]:02x} at offset "
                        f"{e.start}); {fix}") from None


class _Bad:
    """A value JSON can spell but allocbench cannot judge, found during parsing and reported
    afterwards with its place in the document."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _int(text: str) -> Any:
    digits = len(text.lstrip("-"))   # first: int() of 5,000 digits is an error of its own
    value = int(text) if digits <= 19 else None
    if value is None or not -INT64 <= value < INT64:
        return _Bad(f"is an integer of {digits} digits, beyond the 64-bit range")
    return value


def _float(text: str) -> Any:
    value = float(text)   # 1e999 is inf
    return value if math.isfinite(value) else _Bad(f"is {text[:20]}, beyond the range of a "
                                                   "double")


def _object(pairs: list[tuple[str, Any]]) -> Any:
    found = dict(pairs)
    if len(found) == len(pairs):
        return found
    twice = next(key for key, n in Counter(key for key, _ in pairs).items() if n > 1)
    return _Bad(f"has the key {json.dumps(twice)[:60]} twice")


def _unpaired(text: str) -> bool:
    """True if `text` holds a lone surrogate (JSON can escape one, "\\ud800"): no output can
    print it."""
    if text.isascii():
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def json_path(where: str, key: str | int) -> str:
    """The JSON path `where` one level down, e.g. results[3].alloc; an odd key is quoted, so
    that a message stays one line."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    shown = key if _PLAIN.fullmatch(key) else json.dumps(key)[:40]
    return f"{where}.{shown}" if where else shown


def _own_problem(value: Any) -> str | None:
    if isinstance(value, _Bad):
        return value.problem
    if isinstance(value, str) and _unpaired(value):
        return "holds an unpaired UTF-16 surrogate"
    if isinstance(value, dict) and any(_unpaired(key) for key in value):
        return "has a key with an unpaired UTF-16 surrogate"
    return None


def _first_problem(doc: Any, root: Any = None) -> str | None:
    """'<JSON path> <problem>' of the first value no gate can judge, else None. A value's place
    is kept as (parent's place, key) and spelled out only for the value reported: a store of
    a hundred records has a million values. `root` is the place of `doc` itself."""
    stack: list[tuple[Any, Any, int]] = [(root, doc, 0)]
    while stack:
        place, value, depth = stack.pop()
        problem = _own_problem(value)
        if problem is None and depth > MAX_DEPTH:
            problem = f"nests deeper than {MAX_DEPTH} levels"
        if problem:
            return f"{_spelled(place) or 'the document'} {problem}"
        if isinstance(value, (dict, list)):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack += reversed([((place, k), v, depth + 1) for k, v in items])
    return None


def _spelled(place: Any) -> str:
    keys = []
    while place is not None:
        place, key = place
        keys.append(key)
    where = ""
    for key in reversed(keys):
        where = json_path(where, key)
    return where


def _special(text: str) -> float:
    return math.nan if text == "NaN" else math.copysign(math.inf, -1.0 if text[0] == "-" else 1.0)


def read_json(path: Path, what: str, fix: str, *, special_numbers: bool = False) -> Any:
    """The JSON document at `path`. UserError naming the file, the problem and `fix` when the
    file cannot be read, is not UTF-8, is empty, or its text is refused by parse_json."""
    return parse_json(read_json_text(path, what, fix), str(path), fix,
                      special_numbers=special_numbers)


def read_json_text(path: Path, what: str, fix: str) -> str:
    """read_text(), refusing an empty file (no JSON value)."""
    text = read_text(path, what, fix)
    if not text.strip():
        raise UserError(f"{path}: is empty; {fix}")
    return text


def parse_json(text: str, origin: str, fix: str, *, special_numbers: bool = False,
               line: int = 1, root: Any = None) -> Any:
    """The JSON value of `text`, which starts on line `line` of `origin` and sits at the place
    `root` of its document (see _first_problem). UserError naming `origin`, the problem and
    `fix` when it is not JSON, spells NaN or Infinity (unless `special_numbers`: then they are
    floats, for a reader that refuses them where it reads a value), holds a number beyond a
    double or a 64-bit integer, repeats a key, or nests deeper than MAX_DEPTH: values no gate
    can judge."""
    constant = _special if special_numbers else \
        (lambda s: _Bad(f"is {s}, not a finite number"))
    try:
        doc = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=constant,
                         object_pairs_hook=_object)
    except json.JSONDecodeError as e:
        raise UserError(f"{origin}: not valid JSON (line {e.lineno + line - 1}, column "
                        f"{e.colno}: {e.msg}); {fix}") from None
    except RecursionError:
        raise UserError(f"{origin}: nests deeper than {MAX_DEPTH} levels; {fix}") from None
    problem = _first_problem(doc, root)
    if problem:
        raise UserError(f"{origin}: {problem}; {fix}")
    return doc


def _refuse_special(path: Path) -> None:
    """A rename would replace a link, a FIFO or a device: only a regular file may be there."""
    try:
        kind = _kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        return
    except OSError as e:
        raise UserError(f"{path}: cannot write ({e.strerror}); give another path") from None
    if kind:
        raise UserError(f"{path} is {kind}; allocbench writes only regular files: give another "
                        "path")


def write_atomically(path: Path, text: str | bytes) -> None:
    """Writes through a temporary file in the same folder and a rename. The temporary file is
    created, never opened if present (O_EXCL | O_NOFOLLOW): a link planted at its name is not
    followed."""
    path = Path(path)
    _refuse_special(path)
    temp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(temp, flags, 0o644)
    except OSError as e:
        raise UserError(f"{path}: cannot write {temp.name} ({e.strerror}); give another path, "
                        "or remove what is in the way") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except OSError as e:
        temp.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write ({e.strerror}); give another path") from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
