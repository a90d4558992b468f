"""How a revision's scenario plugin is built: the project's CMake, or a configured command.

    [build]                      # in allocbench.toml
    command = ["make", "-C", "{src}", "BUILD={build}", "-j{jobs}", "plugin"]
    plugin = "{build}/libscenarios.so"

Placeholders: {src} the revision's worktree, {build} its build folder (one per revision, kept
across runs), {rev} the full commit sha, {jobs} the number of CPUs. The command is a list of
arguments run without a shell (a string is split like a shell would, but never run by one); the
same values are in the environment as ALLOCBENCH_SRC, ALLOCBENCH_BUILD and ALLOCBENCH_REV.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allocbench.errors import UserError
from allocbench.fileio import read_json, write_atomically
from allocbench.project import JOBS
from allocbench.revisions import StepFailed, build_folder, step

PLACEHOLDERS = ("src", "build", "rev", "jobs")
DEFAULT_TARGET = "allocbench_builtin"            # this repository's built-in plugin
DEFAULT_PLUGIN = "lib/allocbench/allocbench_builtin.so"


def _check_plugin(plugin: Path, sha: str, fix: str) -> Path:
    if not plugin.is_file():
        raise StepFailed(f"looking for the plugin of {sha[:12]}", 1,
                            f"the build succeeded, but {plugin} does not exist; {fix}")
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


@dataclass(frozen=True)
class CMakeBuild:
    target: str
    plugin_path: str               # relative to the build folder
    cmake_args: tuple[str, ...] = ()

    def identity(self) -> dict[str, Any]:
        return {"cmake": {"target": self.target, "plugin": self.plugin_path,
                          "args": list(self.cmake_args)}}

    def folder(self, repo: Path, sha: str) -> Path:
        return build_folder(repo, sha)

    def build(self, source: Path, build: Path, sha: str) -> Path:
        """Configures (when new or when the arguments changed) and builds the target."""
        build.mkdir(parents=True, exist_ok=True)
        stamp = build / "allocbench-cmake-args.json"
        configure = ["cmake", "-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"]
        if shutil.which("ccache"):
            configure += ["-DCMAKE_C_COMPILER_LAUNCHER=ccache",
                          "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
        configure += self.cmake_args
        if not (build / "CMakeCache.txt").exists() or _configured(stamp) != configure:
            stamp.unlink(missing_ok=True)
            step(configure, f"configuring {sha[:12]}")
            write_atomically(stamp, json.dumps(configure))
        step(["cmake", "--build", str(build), "--target", self.target, "-j", JOBS],
             f"building {self.target} at {sha[:12]}")
        return _check_plugin(build / self.plugin_path, sha,
                             "pass --plugin-path (relative to the build folder)")


@dataclass(frozen=True)
class CommandBuild:
    command: tuple[str, ...]
    plugin: str
    origin: str                    # where it was configured, for messages

    def identity(self) -> dict[str, Any]:
        return {"command": list(self.command), "plugin": self.plugin}

    def folder(self, repo: Path, sha: str) -> Path:
        """Apart from the CMake builds of the same revision: a command may build differently."""
        tag = hashlib.sha256(json.dumps(self.identity()).encode()).hexdigest()[:8]
        return build_folder(repo, sha).with_name(f"{sha}-{tag}")

    def build(self, source: Path, build: Path, sha: str) -> Path:
        build.mkdir(parents=True, exist_ok=True)
        values = {"src": str(source), "build": str(build), "rev": sha, "jobs": JOBS}
        command = [part.format(**values) for part in self.command]
        env = dict(os.environ, ALLOCBENCH_SRC=values["src"], ALLOCBENCH_BUILD=values["build"],
                   ALLOCBENCH_REV=sha)
        step(command, f"building {sha[:12]} with {self.origin}'s build.command", cwd=source,
             env=env)
        return _check_plugin(Path(self.plugin.format(**values)), sha,
                             f"fix build.plugin in {self.origin}")


def _placeholders(origin: str, key: str, text: str) -> set[str]:
    try:
        names = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError as e:
        raise UserError(f"{origin}: '{key}' is not a valid template ({e}); write placeholders "
                        "as {src}, {build}, {rev} or {jobs}, and a literal brace as {{ or }}"
                        ) from None
    unknown = sorted(names - set(PLACEHOLDERS))
    if unknown:
        raise UserError(f"{origin}: '{key}' uses unknown placeholder {{{unknown[0]}}}; the "
                        "placeholders are {src}, {build}, {rev} and {jobs}")
    return names


def parse(origin: str, table: Any) -> CommandBuild:
    """The [build] table of allocbench.toml at `origin`, validated."""
    if not isinstance(table, dict):
        raise UserError(f"{origin}: 'build' must be a table ([build]) with 'command' and "
                        "'plugin'")
    for key in table:
        if key not in ("command", "plugin"):
            raise UserError(f"{origin}: unknown key 'build.{key}'; the known keys here are "
                            "command, plugin — fix the spelling or remove it")
    for key in ("command", "plugin"):
        if key not in table:
            raise UserError(f"{origin}: [build] has no '{key}'; a build needs both, e.g.\n"
                            '  command = ["make", "-C", "{src}", "BUILD={build}", "plugin"]\n'
                            '  plugin = "{build}/libscenarios.so"')
    command = table["command"]
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as e:
            raise UserError(f"{origin}: 'build.command' cannot be split into arguments ({e}); "
                            "write it as an array of strings") from None
    if not isinstance(command, list) or not command or \
            not all(isinstance(part, str) for part in command):
        raise UserError(f"{origin}: 'build.command' must be an array of strings (the program "
                        "and its arguments) or one string")
    used: set[str] = set()
    for i, part in enumerate(command):
        used |= _placeholders(origin, f"build.command[{i}]", part)
    for name, why in (("src", "where the revision is checked out"),
                      ("build", "the revision's own build folder, kept across runs")):
        if name not in used:
            raise UserError(f"{origin}: 'build.command' does not use {{{name}}} ({why}); "
                            "every revision is built from its own worktree into its own folder, "
                            "e.g. [\"cmake\", \"--build\", \"{build}\"]")
    plugin = table["plugin"]
    if not isinstance(plugin, str) or not plugin:
        raise UserError(f"{origin}: 'build.plugin' must be a string, the path of the built "
                        "plugin, e.g. \"{build}/libscenarios.so\"")
    if not _placeholders(origin, "build.plugin", plugin) & {"src", "build"}:
        raise UserError(f"{origin}: 'build.plugin' must start from {{build}} or {{src}} (each "
                        "revision has its own), e.g. \"{build}/libscenarios.so\"")
    return CommandBuild(tuple(command), plugin, origin)
