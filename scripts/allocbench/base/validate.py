"""Checking a JSON document value by value. Every problem is one UserError that names the file,
the JSON path of the value, what it is and what it must be, and the fix (STYLE.md: a message
names the file, the field and the fix), e.g.

    r.json: results[3].alloc.bytes_per_op is NaN, not a finite number; re-run the measurement
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, NoReturn

from allocbench.base.errors import UserError
from allocbench.base.fileio import INT64, json_path

# The value of a key that a document lacks (dict.get's default), told apart from null.
MISSING: Any = object()


def finite(value: Any) -> bool:
    """A number a gate can compare: not a bool, not NaN or infinite, within 64 bits."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return -INT64 <= value < INT64 if isinstance(value, int) else math.isfinite(value)


def describe(value: Any) -> str:
    """`value` in a few words, always one line."""
    if value is MISSING or value is None:
        return "missing" if value is MISSING else "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, int) and not finite(value):
        return "an integer beyond the 64-bit range"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        text = json.dumps(value)
        return f"a string ({text if len(text) <= 40 else text[:38] + '…'})"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


@dataclass(frozen=True)
class Checker:
    """Checks the values of the document read from `origin`; `fix` ends every message."""
    origin: str
    fix: str

    def fail(self, where: str, problem: str) -> NoReturn:
        raise UserError(f"{self.origin}: {where} {problem}; {self.fix}")

    def want(self, ok: bool, where: str, value: Any, wanted: str) -> None:
        if not ok:
            self.fail(where, f"is {describe(value)}, not {wanted}")

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        self.want(isinstance(value, dict), where, value, "an object")
        return value

    def array(self, value: Any, where: str) -> list[Any]:
        self.want(isinstance(value, list), where, value, "a list")
        return value

    def text(self, value: Any, where: str, empty: bool = True) -> str:
        self.want(isinstance(value, str) and (empty or value != ""), where, value,
                  "a string" if empty else "a non-empty string")
        return value

    def flag(self, value: Any, where: str) -> bool:
        self.want(isinstance(value, bool), where, value, "true or false")
        return value

    def integer(self, value: Any, where: str, low: int = -INT64) -> int:
        self.want(finite(value) and isinstance(value, int) and value >= low, where, value,
                  "an integer" if low == -INT64 else f"an integer >= {low}")
        return value

    def integers(self, value: Any, where: str) -> dict[str, int]:
        """An object of integers, e.g. a scenario instance's arguments."""
        for key, item in self.obj(value, where).items():
            self.integer(item, json_path(where, key))
        return value

    def number(self, value: Any, where: str) -> float:
        self.want(finite(value), where, value, "a finite number")
        return value

    def member(self, value: Any, where: str, allowed: tuple[str, ...]) -> str:
        self.want(value in allowed and isinstance(value, str), where, value,
                  "one of " + ", ".join(allowed))
        return value

    def each(self, doc: dict[str, Any], where: str, checks: dict[str, Any],
             optional: tuple[str, ...] = ()) -> None:
        """Applies checks[key](value, path) to each key of `doc`; the `optional` ones only when
        present."""
        for key, check in checks.items():
            if key in doc or key not in optional:
                check(doc.get(key, MISSING), json_path(where, key))
