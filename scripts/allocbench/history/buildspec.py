"""How a revision's scenario plugin is built: with CMake (the project's own, or a bench project
beside it), or with a configured command (allocbench.toml's [build], parsed in buildconfig.py).

CMake route. By default the revision's own CMake builds the plugin target (its scenarios live in
the project, or are grafted in). With a bench project (`--bench DIR`, `[build] bench`), DIR — a
small CMake project in today's checkout — is configured against each revision:
`-DALLOCBENCH_SUBJECT_DIR=<the revision's source tree>`, so it can add_subdirectory() the
subject and link its targets; the subject's CMake never needs to know about allocbench.

Every plugin build finds allocbench's own package (`find_package(allocbench)`: the scenario API
and allocbench_add_plugin) of the harness that will run it, without an install step: CMake gets
-Dallocbench_DIR, a command gets allocbench_ROOT and CMAKE_PREFIX_PATH in its environment.

Placeholders in a command, the plugin path, CMake arguments and env values of allocbench.toml:
{src} the revision's worktree, {build} its build folder, {rev} the full sha, {jobs} the build's
parallelism (--jobs, [build] jobs, $ALLOCBENCH_JOBS, else the number of CPUs), and every name of
[build.vars]. A command is a list of arguments run without a shell; the
same values are in its environment as ALLOCBENCH_SRC, ALLOCBENCH_BUILD and ALLOCBENCH_REV.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from allocbench.base.errors import UserError
from allocbench.base.fileio import read_json, write_atomically
from allocbench.harness import project
from allocbench.harness.project import DEFAULT_PLUGIN, DEFAULT_TARGET
from allocbench.history import graft, worktrees
from allocbench.history.worktrees import StepFailed, build_folder, step

PLACEHOLDERS = ("src", "build", "rev", "jobs")
DEFAULT_CMAKE = "cmake"


@dataclass(frozen=True)
class Common:
    """What both routes take from allocbench.toml: environment and variables, recorded in the
    recipe (a machine path that changes the build changes the recipe); where submodules come
    from (sweep.Plan records `none` in the recipe) and how many build jobs run, which changes
    no build's result and so is not in the recipe. None: not set, the command line's or the
    default applies."""
    env: tuple[tuple[str, str], ...] = ()
    vars: tuple[tuple[str, str], ...] = ()
    submodules: str | None = None
    jobs: int | None = None
    grafts: tuple[tuple[str, str], ...] = ()   # (the toml, PATH[:DEST] relative to its folder)

    def identity(self) -> dict[str, Any]:
        """Only what is set, so that recipes recorded before these existed keep their ids."""
        return {key: dict(value) for key, value in (("env", self.env), ("vars", self.vars))
                if value}

    def values(self, source: Path, build: Path, sha: str) -> dict[str, str]:
        return {**dict(self.vars), "src": str(source), "build": str(build), "rev": sha,
                "jobs": self.jobs_text()}

    def jobs_text(self) -> str:
        return str(self.jobs) if self.jobs is not None else project.build_jobs()

    def environment(self, values: dict[str, str], package: Path | None) -> dict[str, str]:
        env = dict(os.environ)
        if package is not None:
            prefix = str(package.parents[2])     # <prefix>/lib/cmake/allocbench
            env["allocbench_ROOT"] = prefix
            env["CMAKE_PREFIX_PATH"] = os.pathsep.join(
                p for p in (prefix, os.environ.get("CMAKE_PREFIX_PATH", "")) if p)
        # ccache keys on paths relative to the subject repository: builds in the shared trees
        # of every recipe, and of every copy of the repository, hit the same entries.
        state = next((p for p in Path(values["build"]).parents if p.name == ".allocbench"), None)
        if state is not None:
            env.setdefault("CCACHE_BASEDIR", str(state.parent))
        env.setdefault("CCACHE_NOHASHDIR", "true")
        env.update((name, text.format(**values)) for name, text in self.env)
        return env


def cmake_program(given: str | None) -> str:
    """--cmake (or [build] cmake), checked before anything is built; else cmake on PATH."""
    program = given or DEFAULT_CMAKE
    if shutil.which(program) is None:
        raise UserError(f"--cmake {program}: no such program; give the path of a cmake "
                        "executable, e.g. --cmake /opt/cmake-3.28/bin/cmake")
    return program


_MINIMUM = re.compile(r"^\s*cmake_minimum_required\s*\(\s*VERSION\s+(\d+(?:\.\d+)*)",
                      re.IGNORECASE | re.MULTILINE)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def required_cmake(text: str) -> str | None:
    """The version a CMakeLists.txt's cmake_minimum_required asks for (its lower bound)."""
    found = _MINIMUM.search(text)
    return found.group(1) if found else None


def cmake_version(program: str) -> str | None:
    """What `program --version` says it is, e.g. 3.25.1; None when it does not say."""
    try:
        done = subprocess.run([program, "--version"], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"version (\d+(?:\.\d+)*)", done.stdout)
    return found.group(1) if found else None


def too_old(program: str, required: str | None) -> str | None:
    """The version of `program` when it is older than `required`, else None."""
    have = cmake_version(program) if required else None
    return have if have is not None and _version(have) < _version(required) else None


def package_dir(runner: Path) -> Path | None:
    """allocbench's CMake package beside `runner` (<prefix>/bin/allocbench-run): a build
    tree's <build>/lib/cmake/allocbench or an install's <prefix>/lib*/cmake/allocbench."""
    prefix = runner.resolve().parent.parent
    found = sorted(prefix.glob("lib*/cmake/allocbench/allocbenchConfig.cmake")) + \
        sorted(prefix.glob("lib/*/cmake/allocbench/allocbenchConfig.cmake"))
    return found[0].parent if found else None


def _check_plugin(plugin: Path, sha: str, fix: str) -> Path:
    if not plugin.is_file():
        raise StepFailed(f"looking for the plugin of {sha[:12]}", 1,
                         f"error: the build succeeded, but {plugin} does not exist; {fix}")
    return plugin


def _configured(stamp: Path) -> Any:
    """The cmake command that configured a build folder, as its stamp records it; None when the
    stamp is absent or damaged, which only costs a reconfigure."""
    if not stamp.exists():
        return None
    try:
        return read_json(stamp, "the configure stamp", "allocbench configures again")
    except UserError:
        return None


def _digest(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class CMakeBuild:
    target: str
    plugin_path: str               # relative to the build folder
    cmake_args: tuple[str, ...] = ()
    bench: Path | None = None      # a bench project beside the subject
    cmake: str = DEFAULT_CMAKE
    common: Common = field(default_factory=Common)
    bench_fingerprint: str = ""    # of the bench project's files when the sweep started

    def identity(self) -> dict[str, Any]:
        cmake: dict[str, Any] = {"target": self.target, "plugin": self.plugin_path,
                                 "args": list(self.cmake_args)}
        if self.cmake != DEFAULT_CMAKE:
            cmake["program"] = self.cmake
        if self.bench is not None:
            cmake["bench"] = {"path": str(self.bench), "fingerprint": self.bench_fingerprint}
        return {"cmake": cmake, **self.common.identity()}

    def tree_key(self) -> str:
        """Names the shared tree: the build without the bench project's content, whose edits
        an incremental build absorbs."""
        identity = self.identity()
        identity["cmake"].pop("bench", None)
        return "cmake-" + _digest({**identity, "bench": str(self.bench)})

    def folder(self, repo: Path, sha: str) -> Path:
        return build_folder(repo, sha)

    def build(self, source: Path, build: Path, sha: str, package: Path | None = None) -> Path:
        """Configures (when new or when the command changed) and builds the target."""
        build.mkdir(parents=True, exist_ok=True)
        values = self.common.values(source, build, sha)
        env = self.common.environment(values, package)
        stamp = build / "allocbench-cmake-args.json"
        configure = [self.cmake, "-S", str(self.bench or source), "-B", str(build),
                     "-DCMAKE_BUILD_TYPE=Release"]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache",
                          "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        if package is not None:
            configure.append(f"-Dallocbench_DIR={package}")
        if self.bench is not None:
            configure.append(f"-DALLOCBENCH_SUBJECT_DIR={source}")
        configure += [arg.format(**values) for arg in self.cmake_args]
        if not (build / "CMakeCache.txt").exists() or _configured(stamp) != configure:
            stamp.unlink(missing_ok=True)
            step(configure, f"configuring {sha[:12]}", env=env)
            write_atomically(stamp, json.dumps(configure))
        started = time.monotonic()
        output = step([self.cmake, "--build", str(build), "--target", self.target, "-j",
                       self.common.jobs_text()], f"building {self.target} at {sha[:12]}",
                      env=env)
        _built(build, output, time.monotonic() - started)
        return _check_plugin(build / self.plugin_path.format(**values), sha,
                             "pass --plugin-path (relative to the build folder)")


@dataclass(frozen=True)
class CommandBuild:
    command: tuple[str, ...]
    plugin: str
    origin: str                    # where it was configured, for messages
    common: Common = field(default_factory=Common)

    def identity(self) -> dict[str, Any]:
        return {"command": list(self.command), "plugin": self.plugin, **self.common.identity()}

    def tree_key(self) -> str:
        return "command-" + _digest(self.identity())

    def build(self, source: Path, build: Path, sha: str, package: Path | None = None) -> Path:
        build.mkdir(parents=True, exist_ok=True)
        values = self.common.values(source, build, sha)
        command = [part.format(**values) for part in self.command]
        env = self.common.environment(values, package)
        env.update(ALLOCBENCH_SRC=values["src"], ALLOCBENCH_BUILD=values["build"],
                   ALLOCBENCH_REV=sha)
        started = time.monotonic()
        output = step(command, f"building {sha[:12]} with {self.origin}'s build.command",
                      cwd=source, env=env)
        _built(build, output, time.monotonic() - started)
        return _check_plugin(Path(self.plugin.format(**values)), sha,
                             f"fix build.plugin in {self.origin}")


BUILD_LOG = "allocbench-build.log"   # the last build's output, in its build folder


def _built(build: Path, output: str, seconds: float) -> None:
    """Says what the build recompiled and how long it took (a probe that took 460 s says why),
    and keeps its output in the build folder for the record's log (sweep.py)."""
    count = worktrees.compiled(output)
    worktrees.announce(f"built: {count} file{'' if count == 1 else 's'} compiled in "
                       f"{seconds:.1f} s")
    (build / BUILD_LOG).write_text(output)


def build_plugins(repo: Path, shas: list[str], runner: Path, *, target: str | None,
                  plugin_path: str | None, cmake_arg: list[str] | None, cmake: str | None,
                  jobs: int | None = None) -> dict[str, Path]:
    """Each revision's plugin, built with the project's CMake in its own worktree (folders
    kept and reused) against the package of `runner`'s build, `jobs` at once."""
    spec = CMakeBuild(target or DEFAULT_TARGET, plugin_path or DEFAULT_PLUGIN,
                      tuple(cmake_arg or ()), cmake=cmake_program(cmake), common=Common(jobs=jobs))
    plugins: dict[str, Path] = {}
    for sha in dict.fromkeys(shas):
        with worktrees.locked(repo, sha):
            plugins[sha] = spec.build(graft.checkout(repo, sha, []), spec.folder(repo, sha), sha,
                                      package_dir(runner))
    return plugins
