"""allocbench profile INSTANCE… [--plugin PATH…] [--rev REV…]: where each instance's bytes
come from, per op, exactly.

Runs each instance under heaptrack (two runs, N and 2·N measured ops, and 3·N when their sites
do not sum to the count pass; profile.py) and writes per instance, into --out (per revision,
--out/<revision>, with two): the heaptrack profile (<slug>.zst, for heaptrack_gui and
heaptrack_print) and its per-op site table (<slug>.sites.json, which names the instance, and
.sites.md), where <slug> is names.slug of the instance; prints the tables, and under one that
does not sum, its sites that were not steady. With --rev, each revision's plugin is the one a
sweep or bisect measured it with under the same recipe (--config, --bench, --graft,
--submodules, as sweep takes them) when that copy is still kept, else it is built by that
recipe; with two revisions, the site diff of each instance follows. Exit
codes: 0 profiled, and every op-thread site table sums to its count pass exactly; 1 one does
not (a nondeterministic instance); 2 bad input (an unknown instance: the closest names are
named); 3 heaptrack or a build failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from allocbench.base import exit_codes, packages
from allocbench.base.errors import UserError
from allocbench.base.escape import md_code, md_text, terminal
from allocbench.base.fileio import write_atomically
from allocbench.base.names import slug
from allocbench.harness import project, runners
from allocbench.history import buildspec, sweep as sweeping, worktrees
from allocbench.history.store import Store, machine_id
from allocbench.sites import per_op as sites_of, profile
from allocbench.sites.changes import PROFILE_PACKAGES
from allocbench.sites.per_op import count_text as count
from allocbench.commands import arguments, sweep as sweep_command


def setup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="INSTANCE",
                        help="scenario instances to profile, e.g. span_creation/bare_start_span")
    parser.add_argument("--plugin", action="append", default=[], type=Path, metavar="PATH",
                        help="scenario plugin (repeatable) [the built-in scenarios]")
    parser.add_argument("--rev", action="append", default=[], metavar="REV",
                        help="profile this revision's plugin, built by the recipe 'sweep' "
                             "builds it with (or the copy a sweep kept); two: their site "
                             "diff too")
    parser.add_argument("--repo", type=Path, metavar="PATH",
                        help="the repository of --rev [the current checkout]")
    arguments.add_cmake_arguments(parser)
    arguments.add_recipe_arguments(parser)
    parser.add_argument("--ops", type=arguments.positive, default=2, metavar="N",
                        help="ops per count window of the shorter run (the longer: 2·N) [2]")
    parser.add_argument("--out", type=Path, default=Path("allocbench-profiles"), metavar="DIR",
                        help="where the profiles and site tables go [./allocbench-profiles]")


def markdown(profiled: profile.Profiled, title: str) -> str:
    """The site table of one instance: the op threads' sites, then other threads'."""
    allocs, size = profiled.total()
    out = [f"### {md_text(title)}", "",
           f"Per op of {md_code(profiled.instance)}, from {profiled.ops} measured ops "
           f"({md_text(profiled.profile.name)}); sizes as requested.", "",
           "| site (innermost frame of your code first) | allocs/op | B/op | sizes |",
           "|---|---:|---:|---|"]
    for cost in profiled.costs:
        where = " ← ".join(md_code(sites_of.where(f)) for f in cost.site.frames)
        if cost.site.via:
            where += f" via {md_code(cost.site.via)}"
        if cost.site.background:
            where = "another thread: " + where
        out.append(f"| {where} | {count(cost.allocs)} | {count(cost.bytes)} "
                   f"| {md_text(sites_of.sizes_text(cost.sizes))} |")
    out.append(f"| **total** | **{count(allocs)}** | **{count(size)}** | |")
    want_allocs, want_bytes = profiled.expected()
    verdict = (f"equal to the count pass ({count(want_allocs)} allocs/op, "
               f"{count(want_bytes)} B/op with its background)" if profiled.exact()
               else f"**not** the count pass's {count(want_allocs)} allocs/op, "
               f"{count(want_bytes)} B/op (with its background): the instance is "
               "not deterministic" + ("" if profiled.steady else " (its count windows differ)"))
    out += ["", f"Sum over the sites: {verdict}.", ""]
    if not profiled.exact():
        shaky = ", ".join(md_code(sites_of.place_text(s))
                          for s in sorted(profiled.unsteady, key=sites_of.Site.label))
        stretches = ("two stretches of ops (the second run's extra ops and a third run's, "
                     "of 3·N per window)")
        out += [f"Not steady, allocating differently per op over {stretches}: {shaky}; a "
                "`[[sites]]` budget does not judge them." if shaky else
                f"Every site allocated alike per op over {stretches}.", ""]
    return "\n".join(out) + "\n"


def _profile_all(runner: Path, plugins: list[Path], names: list[str], folder: Path, ops: int,
                 title: str) -> dict[str, profile.Profiled]:
    profile.check_names(names, profile.instances(runner, plugins))
    found = {}
    for name in names:
        print(f"allocbench: profiling {terminal(name)} ({terminal(title)}) under heaptrack",
              file=sys.stderr, flush=True)
        found[name] = done = profile.profile(runner, plugins, name, folder, ops)
        path = profile.write(done, folder)
        table = markdown(done, f"{name} — {title}")
        write_atomically(path.with_name(path.name.replace(".sites.json", ".sites.md")), table)
        print(table)
    return found


def _built(repo: Path | None, rev: list[str], jobs: int | None, **recipe: Any
           ) -> tuple[Path, dict[str, list[Path]]]:
    """The profile runner and each revision's plugin (labelled by its name), by the recipe a
    sweep of `repo` uses (checked before the runner is built)."""
    repo = worktrees.toplevel(repo or Path.cwd())
    shas = {name: worktrees.resolve(repo, name) for name in rev}
    how = sweep_command.recipe(repo=repo, jobs=jobs, revisions=list(shas.values()), **recipe)
    runner = runners.profile_runner_path(jobs=how.spec.common.jobs)
    plan = sweeping.Plan(repo, how.spec, how.grafts, runner, "system", machine_id(None),
                         Store(worktrees.state_dir(repo) / "results"),
                         submodules=how.submodules)
    return runner, {name: [sweeping.plugin_of(plan, sha)] for name, sha in shas.items()}


def run(*, names: list[str], plugin: list[Path] | None = None, rev: list[str] | None = None,
        repo: Path | None = None, target: str | None = None, plugin_path: str | None = None,
        cmake_arg: list[str] | None = None, cmake: str | None = None, jobs: int | None = None,
        graft: list[str] | None = None, bench: Path | None = None,
        submodules: str | None = None, config: Path | None = None, ops: int = 2,
        out: Path = Path("allocbench-profiles")) -> int:
    if plugin and rev:
        raise UserError("--plugin and --rev both say which plugin to profile: give one of them")
    if len(rev or []) > 2:
        raise UserError(f"--rev given {len(rev)} times: give one revision, or two to compare")
    recipe = {"graft": graft or [], "bench": bench, "submodules": submodules, "config": config}
    if not rev and any(recipe.values()):
        given = [f"--{key}" for key, value in recipe.items() if value]
        say, them = ("say", "them") if len(given) > 1 else ("says", "it")
        raise UserError(f"{' and '.join(given)} {say} how a revision is built: give --rev too, "
                        f"or drop {them}")
    packages.ensure(PROFILE_PACKAGES)
    if rev:
        runner, sides = _built(repo, rev, jobs, target=target, plugin_path=plugin_path,
                               cmake_arg=cmake_arg or [], cmake=cmake, **recipe)
    else:
        runner = runners.profile_runner_path(jobs=jobs)
        sides = {"plugin": [p.resolve() for p in plugin] if plugin else
                 [project.build_dir() / buildspec.DEFAULT_PLUGIN]}
    for paths in sides.values():
        for path in paths:
            if not path.is_file():
                raise UserError(f"--plugin {path}: no such file; give a scenario plugin (.so)")
    profiled = {label: _profile_all(runner, paths, names,
                                    out / slug(label) if len(sides) > 1 else out, ops, label)
                for label, paths in sides.items()}
    if len(profiled) == 2:
        (a, base), (b, cand) = profiled.items()
        for name in names:
            changes = sites_of.diff(base[name].costs, cand[name].costs)
            print(f"### Sites of {md_code(name)}: {md_code(a)} → {md_code(b)}\n")
            print("\n".join(f"- {c.text(md_code)}" for c in changes) or "- no site changed")
            print()
    exact = all(p.exact() for found in profiled.values() for p in found.values())
    print(f"allocbench: profiles and site tables in {out}", file=sys.stderr)
    return exit_codes.OK if exact else exit_codes.FAILED


