"""Measuring revisions into the store: how each is checked out, built and run, and the
progress line.

Shared by `allocbench sweep` (many revisions) and `allocbench bisect` (the ones a binary search
asks for). A revision is measured at most once per recipe (build + graft): a stored record is
used as it is — a failure too, until --retry-failed — unless --force. A record without a pass
that is asked for (the time pass; the instructions pass, --instructions; its --estimated-cycles)
is measured again, never shown as a gap: with the passes asked for and the ones it had, so that
completing a record never loses what it measured (time, say, when a bisect asks for
instructions); the progress line says why, and the new record keeps the earlier one's date and
build time under `earlier`. (--force measures exactly what is asked.)

Every revision of one recipe is checked out in ONE worktree and built in ONE build folder
(revisions.shared_tree), moved from revision to revision: git rewrites the files that differ,
the build recompiles what they touch, and ccache (paths made relative to the repository) serves
what an earlier revision already compiled.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from allocbench.base import proc, results
from allocbench.base.errors import UserError
from allocbench.history import graft as grafting, submodules as submodules_of, worktrees
from allocbench.history.buildspec import BUILD_LOG, CMakeBuild, CommandBuild, package_dir
from allocbench.history.revision import git
from allocbench.history.store import STORE_VERSION, Store, passes

LOG_TAIL_LINES = 30


@dataclass(frozen=True)
class Plan:
    """What every revision of one sweep or bisect is measured with."""
    repo: Path
    spec: CMakeBuild | CommandBuild
    grafts: tuple[grafting.Graft, ...]
    runner: Path
    allocator: str
    machine: str
    store: Store
    run_options: tuple[str, ...] = ()    # --repetitions, --min-time
    time: bool = True
    timeout: float = 1800.0
    force: bool = False
    retry_failed: bool = False
    submodules: str = submodules_of.DEFAULT
    instructions: bool = False           # --instructions: the instructions pass too
    estimated_cycles: bool = False       # --estimated-cycles: its cache simulation too
    recipe: dict[str, Any] = field(init=False)   # build and graft, as recorded
    recipe_id: str = field(init=False)           # its hash, what a record is matched on

    def __post_init__(self) -> None:
        # The graft as it is when the sweep starts: every record of the sweep names that.
        recipe = {"build": self.spec.identity(),
                  "graft": grafting.fingerprint(list(self.grafts))}
        if self.submodules == "none":   # auto and remote check out the same commits
            recipe["submodules"] = "none"
        digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()
        object.__setattr__(self, "recipe", recipe)
        object.__setattr__(self, "recipe_id", digest[:16])

    def previous(self, sha: str) -> dict[str, Any] | None:
        """The record of `sha` with this recipe, whatever it holds."""
        return self.store.get(self.machine, self.allocator, sha, self.recipe_id)

    def asked(self) -> frozenset[str]:
        """The optional passes every revision is measured with, as store.passes names them."""
        return frozenset(name for name, on in (
            ("time", self.time), ("instructions", self.instructions),
            ("estimated_cycles", self.estimated_cycles)) if on)

    def stored(self, sha: str) -> dict[str, Any] | None:
        """The record that makes measuring `sha` again unnecessary, if there is one: not one
        without a pass this plan asks for."""
        record = None if self.force else self.previous(sha)
        if record is None:
            return None
        if record["status"] != "ok":
            return None if self.retry_failed else record
        return record if self.asked() <= passes(record) else None


def subject_line(repo: Path, sha: str) -> str:
    return git(repo, "log", "-1", "--format=%s", sha).stdout.strip()


def commit_date(repo: Path, sha: str) -> str:
    """The commit's date (ISO 8601): what orders untagged revisions in a report."""
    return git(repo, "log", "-1", "--format=%cI", sha).stdout.strip()


def label(repo: Path, sha: str) -> str:
    """The revision's tag when it has one that is a revision name (revisions.accepted: what
    the table shows can be given to bisect), else its short sha."""
    tag = git(repo, "describe", "--tags", "--exact-match", sha)
    if tag.returncode != 0:
        return sha[:10]
    if worktrees.accepted(tag.stdout.strip()):
        return tag.stdout.strip()
    tags = git(repo, "tag", "--points-at", sha, "--sort=version:refname").stdout.split()
    return next((name for name in tags if worktrees.accepted(name)), sha[:10])


def _tail(text: str) -> str:
    return "\n".join(text.strip().splitlines()[-LOG_TAIL_LINES:])


def _output(value: str | bytes | None) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value or ""


LOG_KEPT = 256 * 1024   # bytes of a measured revision's build log kept: its end, where it counts


def _keep_build_log(built: Path, log: Path) -> None:
    """The build output of a measured revision, so that `why did this probe take 460 s` can be
    answered after the shared tree moved on: its last LOG_KEPT bytes."""
    if built.is_file():
        data = built.read_bytes()
        log.write_bytes(data[-LOG_KEPT:])


PLUGINS_KEPT = 32   # measured plugins kept per recipe, the newest: what a later profile reruns


def kept_folder(plan: Plan, sha: str) -> Path:
    """Where the plugin `sha` was measured with is kept: its own copy, which no other
    revision's build replaces (the shared tree's plugin is the last probe's)."""
    return worktrees.state_dir(plan.repo) / "plugins" / plan.recipe_id / sha


def keep_plugin(plan: Plan, sha: str, plugin: Path) -> Path:
    """Copies the plugin just built for `sha` into kept_folder, which the run then loads (so its
    results name that copy), and drops the oldest copies of the recipe beyond PLUGINS_KEPT: a
    record whose copy is gone names a path that does not exist, never another revision's."""
    kept = kept_folder(plan, sha) / plugin.name
    kept.parent.mkdir(parents=True, exist_ok=True)
    partial = kept.with_name(kept.name + ".partial")
    shutil.copy2(plugin, partial)
    os.replace(partial, kept)
    folders = sorted((p for p in kept.parent.parent.iterdir() if p.is_dir()),
                     key=lambda p: p.stat().st_mtime_ns)
    for old in folders[:-PLUGINS_KEPT]:
        if old != kept.parent:
            shutil.rmtree(old, ignore_errors=True)
    return kept


def _tree_key(plan: Plan) -> str:
    # a tree without submodules stays without: `none` gets its own
    return plan.spec.tree_key() + ("-none" if plan.submodules == "none" else "")


def plugin_of(plan: Plan, sha: str) -> Path:
    """`sha`'s plugin under this recipe: the kept copy a sweep or bisect measured (what its
    record names), else built as measure() builds it (checked out, grafted, in the shared
    tree) and kept, so that the tree's next build does not replace it."""
    found = sorted(p for p in kept_folder(plan, sha).glob("*")
                   if p.is_file() and not p.name.endswith(".partial"))
    if found:
        worktrees.announce(f"{sha[:12]}: its plugin as this recipe built it, {found[0]}")
        return found[0]
    key = _tree_key(plan)
    with worktrees.locked(plan.repo, f"tree-{key}", f"the build tree {key}"):
        tree = worktrees.shared_tree(plan.repo, key)
        source = grafting.checkout(plan.repo, sha, list(plan.grafts),
                                   submodules=plan.submodules, tree=tree[0])
        return keep_plugin(plan, sha, plan.spec.build(source, tree[1], sha,
                                                      package_dir(plan.runner)))


def measure(plan: Plan, sha: str, name: str) -> dict[str, Any]:
    """Checks out, grafts, builds and runs `sha` (labelled `name`) in the plan's shared tree;
    stores and returns its record. A failing build or run is recorded with the end of its log,
    not raised."""
    key = _tree_key(plan)
    with worktrees.locked(plan.repo, f"tree-{key}", f"the build tree {key}"):
        return _measure(plan, sha, name, worktrees.shared_tree(plan.repo, key))


def _measure(plan: Plan, sha: str, name: str, tree: tuple[Path, Path]) -> dict[str, Any]:
    state = worktrees.state_dir(plan.repo)
    logs = state / "logs"
    logs.mkdir(exist_ok=True)
    record: dict[str, Any] = {
        "store_version": STORE_VERSION, "sha": sha, "label": name,
        "subject": subject_line(plan.repo, sha), "committed": commit_date(plan.repo, sha),
        "machine": plan.machine,
        "allocator": plan.allocator, "recipe": plan.recipe_id, "recipe_detail": plan.recipe,
        "harness": str(plan.runner), "status": "ok", "time_measured": plan.time,
        "seconds": {}, "results": None}
    earlier = plan.previous(sha)
    wanted = plan.asked()
    if earlier is not None:
        record["earlier"] = [_summary(earlier), *earlier.get("earlier", [])]
        lacking = plan.asked() - passes(earlier)
        if not plan.force and earlier["status"] == "ok" and lacking:
            worktrees.announce(f"measuring again: its stored record has no "
                               f"{_passes_text(lacking)}")
            wanted |= _keepable(plan, earlier)
    record["time_measured"] = "time" in wanted

    def fail(status: str, step: str, output: str) -> dict[str, Any]:
        # one log per recipe: another recipe's failure never replaces the one a record names
        log = logs / f"{sha}-{plan.recipe_id}-{step}.log"
        log.write_text(output)
        record.update(status=status, step=step, log=str(log), log_tail=_tail(output))
        return _put(plan, record)

    started = time.monotonic()
    try:
        source = grafting.checkout(plan.repo, sha, list(plan.grafts),
                                   submodules=plan.submodules, tree=tree[0])
        empty = submodules_of.left_empty(source) if plan.submodules != "none" else []
        if empty:   # auto went on without them: the numbers, or the failure, say so
            record["note"] = submodules_of.empty_note(empty)
        plugin = plan.spec.build(source, tree[1], sha, package_dir(plan.runner))
    except worktrees.StepFailed as e:
        record["seconds"]["build"] = round(time.monotonic() - started, 3)
        return fail("build_failed", "build", f"{e.what} failed (exit code {e.code})\n{e.output}")
    record["seconds"]["build"] = round(time.monotonic() - started, 3)
    _keep_build_log(tree[1] / BUILD_LOG, logs / f"{sha}-{plan.recipe_id}-build.log")
    plugin = keep_plugin(plan, sha, plugin)

    worktrees.announce(f"running {plugin.name}")
    runs = state / "runs"
    runs.mkdir(exist_ok=True)
    out = runs / f"{plan.machine}-{plan.allocator}-{sha}.json"
    partial = out.with_name(out.name + ".partial")  # left by a run that was killed
    out.unlink(missing_ok=True)
    partial.unlink(missing_ok=True)
    command = [str(plan.runner), "--quiet", "--out", str(out), "--plugin", str(plugin),
               *worktrees.revision(plan.repo, sha).context_flags(), *plan.run_options]
    command += [*([] if "time" in wanted else ["--no-time"]),
                *(["--instructions"] if "instructions" in wanted else []),
                *(["--estimated-cycles"] if "estimated_cycles" in wanted else [])]
    started = time.monotonic()
    try:
        done = proc.run(command, capture_output=True, text=True, errors="replace",
                        timeout=plan.timeout)
    except subprocess.TimeoutExpired as e:
        record["seconds"]["run"] = round(time.monotonic() - started, 3)
        return fail("timeout", "run", f"{' '.join(command)}\nno result after {plan.timeout:g} s "
                    f"(--timeout)\n{_output(e.stdout)}{_output(e.stderr)}")
    record["seconds"]["run"] = round(time.monotonic() - started, 3)
    if done.returncode == 130:   # it was interrupted, not the revision: nothing to store
        raise KeyboardInterrupt
    if done.returncode not in (0, 1) or not out.is_file():  # 1: a scenario failed, not all
        return fail("run_failed", "run", f"{' '.join(command)}\nexit code {done.returncode}\n"
                    f"{done.stdout}{done.stderr}")
    record["results"] = results.load(out)
    ran = record["results"]["context"].get("allocator", {}).get("name")
    if ran != {"system": "glibc"}.get(plan.allocator, plan.allocator):
        raise UserError(f"{plan.runner} measures with {ran}, not {plan.allocator}: pass the "
                        f"allocbench-run of that allocator, or --allocator {ran}")
    if not wanted <= passes(record):
        raise UserError(f"{plan.runner} did not run the {_passes_text(wanted - passes(record))}"
                        " it was asked for; pass an allocbench-run built from this checkout")
    _put(plan, record)
    out.unlink()
    return record


PASS_NAMES = {"time": "time pass", "instructions": "instructions pass (--instructions)",
              "estimated_cycles": "cache simulation (--estimated-cycles)"}


def _passes_text(names: frozenset[str]) -> str:
    return " nor ".join(PASS_NAMES[name] for name in sorted(names))


def _keepable(plan: Plan, earlier: dict[str, Any]) -> frozenset[str]:
    """The passes of `earlier` that measuring it again can keep: time always; the instructions
    pass when the same harness counted them and valgrind is still here (an allocbench-run
    built without valgrind's headers refuses --instructions, and a whole run that fails would
    replace a good record with a failure)."""
    had = passes(earlier)
    if earlier.get("harness") != str(plan.runner) or shutil.which("valgrind") is None:
        had -= {"instructions", "estimated_cycles"}
    return had


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    """What a new record keeps of the one it supersedes: when and how it was measured."""
    return {key: record[key] for key in ("recorded", "status", "time_measured", "seconds",
                                         "harness", "log") if key in record}


def _put(plan: Plan, record: dict[str, Any]) -> dict[str, Any]:
    # Microseconds: two sweeps of one revision within a second (a reused build) must still
    # tell which is newer. ISO text sorts by time, also against older records' whole seconds.
    record["recorded"] = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    plan.store.put(record)
    return record


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    index, _, count = text.partition("/")
    if index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count):
        return int(index), int(count)
    raise UserError(f"--shard {text}: write it as I/N with 1 <= I <= N, e.g. --shard 2/3")


def shard(shas: list[str], part: tuple[int, int] | None) -> list[str]:
    """Shard i of n takes every n-th revision starting at the i-th: each shard gets old and new
    revisions, and together they are the whole sweep."""
    if part is None:
        return shas
    index, count = part
    return shas[index - 1::count]
