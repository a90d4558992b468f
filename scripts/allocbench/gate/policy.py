"""The gate's policy — allocbench.toml's [time], [[budget]], [[sites]] and [sampled], and the
A/A calibration (.allocbench/calibration.json) — and where it is read from.

`ab` judges a pull request by the policy of its **base** revision: each file is read as the
base commit holds it (`git cat-file`), before anything is built, so that neither the
candidate's diff nor its build (a CMake step can write files) can loosen the rules it is judged
by. Without one in the base, allocbench.toml is the defaults, whatever the working tree holds
(in CI, the candidate's checkout; a build of an earlier run may have written there). The
calibration, which only annotates time verdicts and is this machine's (`allocbench calibrate`
writes it into the ignored .allocbench/), is read from the working tree when neither revision
holds it. `--config` / `--calibration` given explicitly are read as they are on disk: the user
chose them.

Where the candidate's file differs from what judged it, the comparison carries a PolicyChange:
the entries that differ, each rendered on one line (`entries`), so the comment says in its first
lines that this pull request changes the gate's budgets, and how. `ab` records the policy it used
beside its results (policy.json), and `compare` and `report` given that `ab` folder judge by it
rather than by the allocbench.toml of the directory they run in (a candidate's checkout, in CI).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allocbench.base.errors import UserError
from allocbench.base.fileio import decode_text, parse_json, read_json, read_text, write_atomically
from allocbench.gate import calibration as calibration_file, compare as cmp, config as config_file

CONFIG = config_file.DEFAULT_NAME
CALIBRATION = ".allocbench/calibration.json"
RECORD = "policy.json"   # beside an ab run's base/ and cand/
RECORD_FIX = "run 'allocbench ab' again to record it, or pass --config and --calibration"
_READ = {CONFIG: ("the configuration", config_file.FIX),
         CALIBRATION: ("the calibration", calibration_file.CALIBRATION_FIX)}


@dataclass(frozen=True)
class Source:
    """One policy file as the gate read it: `text` None when there was none."""
    file: str      # CONFIG or CALIBRATION
    origin: str    # where it was read: "<sha>:allocbench.toml", a path; "" for none
    text: str | None = None


@dataclass(frozen=True)
class Policy:
    config: config_file.Config
    calibration: dict | None                  # calibration.calibration_from's
    sources: tuple[Source, Source]            # (allocbench.toml, calibration), as read
    changes: tuple[cmp.PolicyChange, ...] = ()

    def judged_by(self, file: str) -> str:
        source = next(s for s in self.sources if s.file == file)
        return source.origin if source.text is not None else f"the defaults (no {file})"


def _parse_config(source: Source) -> config_file.Config:
    if source.text is None:
        return config_file.Config()
    return config_file.parse(source.text, Path(source.origin))


def _parse_calibration(source: Source) -> dict | None:
    if source.text is None:
        return None
    fix = calibration_file.CALIBRATION_FIX
    return calibration_file.calibration_from(parse_json(source.text, source.origin, fix),
                                             source.origin)


def _policy(config: Source, calibration: Source,
            changes: tuple[cmp.PolicyChange, ...] = ()) -> Policy:
    """The policy of two sources, each parsed (UserError naming its origin when it is bad)."""
    return Policy(_parse_config(config), _parse_calibration(calibration), (config, calibration),
                  changes)


def compare(rules: Policy, base: cmp.Side, cand: cmp.Side, fail_on: str = "any",
            threshold: float | None = None) -> cmp.Comparison:
    """The comparison by `rules` (`threshold`: in place of its [time] threshold), carrying the
    candidate's changes to them."""
    config = rules.config if threshold is None else rules.config.with_threshold(threshold)
    return dataclasses.replace(cmp.compare(base, cand, config, rules.calibration, fail_on),
                               policy_changes=rules.changes)


def _read(file: str, path: Path | None) -> Source:
    """The policy file `file` at `path` on disk; None: none."""
    return Source(file, str(path), read_text(path, *_READ[file])) if path else Source(file, "")


def from_files(config: Path | None, calibration: Path | None) -> Policy:
    """The policy of files on disk (None: that file's defaults)."""
    return _policy(_read(CONFIG, config), _read(CALIBRATION, calibration))


def overridden(rules: Policy, config: Path | None, calibration: Path | None) -> Policy:
    """`rules` with the files given in place of its own (and of the changes to them)."""
    given = {CONFIG: config, CALIBRATION: calibration}
    sources = [_read(s.file, given[s.file]) if given[s.file] else s for s in rules.sources]
    return _policy(*sources, tuple(c for c in rules.changes if not given[c.file]))


# --- the base revision's policy (ab) ---

def _blob(repo: Path, sha: str, file: str) -> bytes | None:
    """The bytes of `file` as commit `sha` holds it; None when it holds no such file."""
    listed = subprocess.run(["git", "-C", str(repo), "ls-tree", "-z", sha, "--", file],
                            capture_output=True, check=False)
    if listed.returncode != 0:
        raise UserError(f"{repo}: git ls-tree {sha[:12]} failed: "
                        f"{listed.stderr.decode(errors='replace').strip()}")
    if not listed.stdout:
        return None
    mode, kind, _ = listed.stdout.split(b" ", 2)
    if kind != b"blob" or mode == b"120000":
        what = "a symbolic link" if mode == b"120000" else f"a {kind.decode()}"
        raise UserError(f"{sha[:12]}:{file} is {what}, not a file; allocbench reads its policy "
                        f"from a regular file: commit {file} as one")
    shown = subprocess.run(["git", "-C", str(repo), "cat-file", "blob", f"{sha}:{file}"],
                           capture_output=True, check=False)
    if shown.returncode != 0:
        raise UserError(f"{repo}: cannot read {sha[:12]}:{file}: "
                        f"{shown.stderr.decode(errors='replace').strip()}")
    return shown.stdout


def _at(repo: Path, sha: str, file: str) -> Source:
    """`file` as commit `sha` holds it (its text None when it holds none)."""
    data, origin = _blob(repo, sha, file), f"{sha[:12]}:{file}"
    return Source(file, origin, None if data is None else
                  decode_text(data, origin, _READ[file][1]))


def _base_source(repo: Path, base: str, cand: str, file: str,
                 given: Path | None) -> tuple[Source, Source | None]:
    """(what judges, the candidate's version: its text None when it holds none) of one policy
    file; given by the user, (that file, None): the candidate's does not matter."""
    if given is not None:   # chosen by the user: as it is on disk
        return _read(file, given), None
    at_base, at_cand = _at(repo, base, file), _at(repo, cand, file)
    if at_base.text is not None:
        return at_base, at_cand
    local = repo / file
    if file == CALIBRATION and at_cand.text is None and local.is_file():
        return _read(file, local), None   # in no revision: this machine's, from calibrate
    if file == CONFIG and local.is_file() and at_cand.text is None:
        print(f"allocbench: {local} is in neither revision, so it does not judge them: the "
              f"base's policy is the defaults; commit it, or pass --config {local}",
              file=sys.stderr)
    return Source(file, ""), at_cand


def at_base(repo: Path, base: str, cand: str, config: Path | None = None,
            calibration: Path | None = None) -> Policy:
    """The policy that judges `cand` against `base` (full shas in `repo`), and the candidate's
    changes to it."""
    used_config, cand_config = _base_source(repo, base, cand, CONFIG, config)
    used_cal, cand_cal = _base_source(repo, base, cand, CALIBRATION, calibration)
    policy = _policy(used_config, used_cal)
    changes = [] if cand_config is None else _config_change(policy, cand_config)
    if cand_cal is not None and cand_cal.text != used_cal.text:
        changes.append(cmp.PolicyChange(CALIBRATION, policy.judged_by(CALIBRATION)))
    return dataclasses.replace(policy, changes=tuple(changes))


def _config_change(policy: Policy, cand: Source) -> list[cmp.PolicyChange]:
    """The candidate's allocbench.toml against the one that judged (none: the defaults)."""
    judged_by = policy.judged_by(CONFIG)
    try:
        cand_entries = entries(_parse_config(cand))
    except UserError as e:
        return [cmp.PolicyChange(CONFIG, judged_by, problem=str(e))]
    diff = [line for line in difflib.unified_diff(entries(policy.config), cand_entries,
                                                  lineterm="", n=0)
            if line[:1] in "-+" and line[:3] not in ("---", "+++")]
    return [cmp.PolicyChange(CONFIG, judged_by, tuple(diff))] if diff else []


def _value(value: Any) -> str:
    """A TOML-like spelling on one line: strings quoted with every non-ASCII character and
    control escaped (a glob is the pull request's text), numbers as short as they are."""
    if value is None:
        return "none"
    if isinstance(value, config_file.Limit):
        return json.dumps(str(value)) if value.percent else f"{value.amount:g}"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


def entries(config: config_file.Config) -> list[str]:
    """Every setting of the gate, one line each, in the order the file gives them (the last
    matching [[budget]] wins, so order is policy too); defaults spelled out, so that removing a
    key shows as a change. [build] is how sweeps build, not the gate's: left out."""
    lines = [f"[time] {f.name} = {_value(getattr(config.time, f.name))}"
             for f in dataclasses.fields(config.time)]
    for table, budgets in (("budget", config.budgets), ("sites", config.sites)):
        for budget in budgets:
            keys = [f"match = {_value(budget.match)}"]
            keys += [f"{metric} = {_value(limit)}" for metric, limit in budget.limits.items()]
            if budget.time_threshold is not None:
                keys.append(f"time_threshold = {_value(budget.time_threshold)}")
            lines.append(f"[[{table}]] {', '.join(keys)}")
    lines += [f"[sampled] {f.name} = {_value(getattr(config.sampled, f.name))}"
              for f in dataclasses.fields(config.sampled)]
    return lines


# --- recorded beside an ab run (compare and report of its folder) ---

def record(policy: Policy, folder: Path) -> None:
    """policy.json in `folder`: the sources that judged and the candidate's changes."""
    doc = {"allocbench_policy": 1,
           "sources": [dataclasses.asdict(s) for s in policy.sources],
           "changes": [dict(dataclasses.asdict(c), diff=list(c.diff)) for c in policy.changes]}
    write_atomically(folder / RECORD, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def recorded(base: Path, cand: Path) -> Policy | None:
    """The policy an `ab` run recorded, when `base` and `cand` are its two folders."""
    base, cand = Path(base), Path(cand)
    path = base.parent / RECORD
    if not (base.is_dir() and cand.is_dir() and base.parent.resolve() == cand.parent.resolve()
            and path.is_file()):
        return None
    doc = read_json(path, "ab's record of its policy", RECORD_FIX)
    try:
        if doc["allocbench_policy"] != 1 or doc["allocbench_policy"] is True:
            raise TypeError
        config, calibration = (Source(s["file"], s["origin"], s["text"]) for s in doc["sources"])
        if (config.file, calibration.file) != (CONFIG, CALIBRATION) or \
                not all(isinstance(s.text, (str, type(None))) and isinstance(s.origin, str)
                        for s in (config, calibration)):
            raise TypeError
        changes = tuple(cmp.PolicyChange(c["file"], c["judged_by"], tuple(c["diff"]),
                                         c["problem"]) for c in doc["changes"])
        if not all(isinstance(v, str) for c in changes
                   for v in (c.file, c.judged_by, c.problem, *c.diff)):
            raise TypeError
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{path}: not a policy record of allocbench ab; {RECORD_FIX}") from None
    return _policy(config, calibration, changes)
