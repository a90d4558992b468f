"""The [build] table of allocbench.toml, validated: how sweep and bisect build each revision.

With `command`, a build command (buildspec.CommandBuild):

    [build]
    command = ["make", "-C", "{src}", "BUILD={build}", "-j{jobs}", "plugin"]
    plugin = "{build}/libscenarios.so"

Without it, settings of the CMake route, each also a command-line option that overrides it:

    [build]
    bench = "bench"                  # a bench project beside the subject (--bench)
    target = "tracer_scenarios"      # --target
    plugin = "tracer_scenarios.so"   # relative to the build folder (--plugin-path)
    cmake = "/opt/cmake-3.28/bin/cmake"   # --cmake
    cmake_args = ["-DTRACER_BACKEND=posix", "-DDEPS={deps}"]   # before any --cmake-arg

Both take where each revision's submodules come from and how many build jobs run (each also a
command-line option that overrides it), `env` (variables for every build step) and `vars` (names
for {placeholders}):

    [build]
    graft = ["scenarios:bench"]      # --graft PATH[:DEST], PATH relative to the file's folder
    submodules = "none"              # --submodules: auto, remote or none
    jobs = 2                         # --jobs: the builds' parallelism [$ALLOCBENCH_JOBS, the CPUs]
    [build.env]
    CC = "gcc-12"
    [build.vars]
    deps = "/opt/deps"

Paths (bench, graft's PATH, and a cmake with a '/') are relative to the file's folder.
"""

from __future__ import annotations

import re
import shlex
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from allocbench.base.errors import UserError
from allocbench.history.buildspec import PLACEHOLDERS, CommandBuild, Common
from allocbench.history.submodules import MODES

SHARED_KEYS = ("graft", "submodules", "jobs", "env", "vars")
COMMAND_KEYS = ("command", "plugin", *SHARED_KEYS)
CMAKE_KEYS = ("bench", "target", "plugin", "cmake", "cmake_args", *SHARED_KEYS)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class CMakeSettings:
    """The CMake route's settings from [build]; None: not given there."""
    bench: Path | None = None
    target: str | None = None
    plugin: str | None = None
    cmake: str | None = None
    cmake_args: tuple[str, ...] = ()
    common: Common = Common()


def _placeholders(origin: str, key: str, text: str, names: tuple[str, ...]) -> set[str]:
    try:
        used = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError as e:
        raise UserError(f"{origin}: '{key}' is not a valid template ({e}); write placeholders "
                        "as {src}, {build}, {rev} or {jobs}, and a literal brace as {{ or }}"
                        ) from None
    unknown = sorted(used - set(names))
    if unknown:
        raise UserError(f"{origin}: '{key}' uses unknown placeholder {{{unknown[0]}}}; the "
                        f"placeholders are {', '.join('{' + n + '}' for n in names)} (add "
                        "others under [build.vars])")
    return used


def _strings(origin: str, key: str, value: Any, example: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UserError(f"{origin}: 'build.{key}' must be a table of strings, e.g. "
                        f"[build.{key}] {example}")
    for name in value:
        if not _NAME.match(name):
            raise UserError(f"{origin}: 'build.{key}.{name}' is not a usable name; use letters, "
                            "digits and '_', not starting with a digit")
    return value


def _common(origin: str, table: dict[str, Any]) -> tuple[Common, tuple[str, ...]]:
    """submodules, jobs, env and vars; the placeholder names they make available."""
    submodules = table.get("submodules")
    if submodules is not None and submodules not in MODES:
        raise UserError(f"{origin}: 'build.submodules' is {submodules!r}; give one of "
                        f"{', '.join(MODES)}, e.g. submodules = \"none\" for a project that "
                        "builds without them")
    jobs = table.get("jobs")
    if jobs is not None and (not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1):
        raise UserError(f"{origin}: 'build.jobs' is {jobs!r}; give a whole number of build jobs "
                        "above 0, e.g. jobs = 2")
    variables = _strings(origin, "vars", table.get("vars", {}), 'deps = "/opt/deps"')
    for name in variables:
        if name in PLACEHOLDERS:
            raise UserError(f"{origin}: 'build.vars.{name}' would hide the placeholder "
                            f"{{{name}}}; give it another name")
    names = (*PLACEHOLDERS, *variables)
    env = _strings(origin, "env", table.get("env", {}), 'CC = "gcc-12"')
    for name, text in env.items():
        _placeholders(origin, f"build.env.{name}", text, names)
    grafts = table.get("graft", [])
    if not isinstance(grafts, list) or not all(isinstance(g, str) and g for g in grafts):
        raise UserError(f"{origin}: 'build.graft' must be an array of \"PATH[:DEST]\" strings "
                        "(PATH relative to this file's folder), e.g. graft = [\"bench\"]")
    return Common(tuple(sorted(env.items())), tuple(sorted(variables.items())), submodules,
                  jobs, tuple((origin, g) for g in grafts)), names


def _command(origin: str, value: Any) -> list[str]:
    command = value
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
    return command


def _unknown(origin: str, table: dict[str, Any], known: tuple[str, ...], route: str) -> None:
    for key in table:
        if key not in known:
            raise UserError(f"{origin}: unknown key 'build.{key}'; with {route} the known keys "
                            f"are {', '.join(known)} — fix the spelling or remove it")


def parse(origin: str, table: Any) -> CommandBuild | CMakeSettings:
    """The [build] table of allocbench.toml at `origin`, validated."""
    if not isinstance(table, dict):
        raise UserError(f"{origin}: 'build' must be a table ([build]): a 'command' and "
                        "'plugin', or CMake settings such as 'bench' and 'target'")
    common, names = _common(origin, table)
    if "command" not in table:
        return _cmake(origin, table, common, names)
    _unknown(origin, table, COMMAND_KEYS, "a build command")
    if "plugin" not in table:
        raise UserError(f"{origin}: [build] has no 'plugin'; a build command needs both, e.g.\n"
                        '  command = ["make", "-C", "{src}", "BUILD={build}", "plugin"]\n'
                        '  plugin = "{build}/libscenarios.so"')
    command = _command(origin, table["command"])
    used: set[str] = set()
    for i, part in enumerate(command):
        used |= _placeholders(origin, f"build.command[{i}]", part, names)
    for name, why in (("src", "where the revision is checked out"),
                      ("build", "the build folder allocbench keeps for it")):
        if name not in used:
            raise UserError(f"{origin}: 'build.command' does not use {{{name}}} ({why}); "
                            "every revision is built from its worktree into that folder, "
                            "e.g. [\"cmake\", \"--build\", \"{build}\"]")
    plugin = table["plugin"]
    if not isinstance(plugin, str) or not plugin:
        raise UserError(f"{origin}: 'build.plugin' must be a string, the path of the built "
                        "plugin, e.g. \"{build}/libscenarios.so\"")
    if not _placeholders(origin, "build.plugin", plugin, names) & {"src", "build"}:
        raise UserError(f"{origin}: 'build.plugin' must start from {{build}} or {{src}} (each "
                        "revision has its own), e.g. \"{build}/libscenarios.so\"")
    return CommandBuild(tuple(command), plugin, origin, common)


def _cmake(origin: str, table: dict[str, Any], common: Common, names: tuple[str, ...]
           ) -> CMakeSettings:
    _unknown(origin, table, CMAKE_KEYS, "the CMake route (no 'command')")
    folder = Path(origin).resolve().parent
    text = {}
    for key, example in (("bench", '"bench"'), ("target", '"my_scenarios"'),
                         ("plugin", '"my_scenarios.so"'), ("cmake", '"/opt/cmake/bin/cmake"')):
        if key in table:
            if not isinstance(table[key], str) or not table[key]:
                raise UserError(f"{origin}: 'build.{key}' must be a non-empty string, e.g. "
                                f"{key} = {example}")
            text[key] = table[key]
    args = table.get("cmake_args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise UserError(f"{origin}: 'build.cmake_args' must be an array of strings, e.g. "
                        '["-DTRACER_BACKEND=posix"]')
    for i, arg in enumerate(args):
        _placeholders(origin, f"build.cmake_args[{i}]", arg, names)
    if "plugin" in text:
        _placeholders(origin, "build.plugin", text["plugin"], names)
    cmake = text.get("cmake")
    if cmake is not None and "/" in cmake:
        cmake = str(folder / cmake)
    bench = folder / text["bench"] if "bench" in text else None
    return CMakeSettings(bench, text.get("target"), text.get("plugin"), cmake, tuple(args),
                         common)
