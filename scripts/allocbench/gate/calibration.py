"""The calibration file (.allocbench/calibration.json, written by `allocbench calibrate`),
validated on load: per instance and time metric, its A/A noise (what `_with_noise` in
compare.py annotates unpaired time verdicts with) and, from `calibrate --layout`, how far
another code layout moved it paired (what the paired gate raises that instance's threshold
to, gate/paired_gate.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from allocbench.base.errors import UserError
from allocbench.base.fileio import json_path, read_json
from allocbench.base.results import Key, key_of
from allocbench.base.validate import Checker, finite

CALIBRATION_FIX = "run 'allocbench calibrate' again to regenerate the file"


def load_calibration(path: Path) -> dict[tuple[Key, str], dict[str, Any]]:
    """calibrate's noise per instance and time metric (see commands/calibrate.py)."""
    return calibration_from(read_json(path, "the calibration", CALIBRATION_FIX), path)


def calibration_from(doc: Any, path: Path | str) -> dict[tuple[Key, str], dict[str, Any]]:
    """load_calibration of a document read from `path` (a file, or `<sha>:<file>`)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("scenarios"), list) or \
            doc.get("allocbench_calibration") != 1 or doc["allocbench_calibration"] is True:
        raise UserError(f"{path}: not a calibration file written by 'allocbench calibrate'; "
                        "run it again to regenerate the file")
    check = Checker(str(path), CALIBRATION_FIX)
    found = {_calibrated(check, entry, json_path("scenarios", i)): entry
             for i, entry in enumerate(doc["scenarios"])}
    # A/A′ (calibrate --layout): how far another code layout moved each instance, paired.
    where = "layout"
    for i, entry in enumerate(check.array(doc.get(where, []), where)):
        at = json_path(where, i)
        check.each(check.obj(entry, at), at, {
            "scenario": check.text, "args": check.integers, "allocator": check.text,
            "threads": lambda value, w: check.integer(value, w, low=1), "metric": check.text,
            "unstable": check.text,
            "layout_percent": lambda value, w: check.want(
                finite(value) and value >= 0, w, value, "a number of percent >= 0")})
        key = (key_of(entry), entry["metric"])
        found[key] = {**found.get(key, {}), "layout_percent": entry["layout_percent"],
                      "layout_unstable": entry["unstable"]}
    return found


def _calibrated(c: Checker, entry: Any, where: str) -> tuple[Key, str]:
    """The key of one calibrated instance and metric, checked with what _with_noise reads."""
    def positive(value: Any, at: str) -> int:
        return c.integer(value, at, low=1)

    c.each(c.obj(entry, where), where, {
        "scenario": c.text, "args": c.integers, "threads": positive, "allocator": c.text,
        "metric": c.text, "noisy": c.flag, "false_positive_rate": c.number, "forks": positive,
        "repetitions": positive,
        "mde_percent": lambda value, at: value is None or c.number(value, at)})
    return key_of(entry), entry["metric"]
