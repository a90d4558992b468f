"""The [build] table's CMake route, env and vars (buildconfig.py), and what a build step is
given: placeholders filled from [build.vars], the environment of [build.env], allocbench's own
package, and the recipe that records them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from allocbench.base.errors import UserError
from allocbench.history import buildconfig, buildspec, worktrees
from allocbench.commands import sweep as sweep_command

SHA = "cd" * 20


def parse(table: dict) -> buildspec.CommandBuild | buildconfig.CMakeSettings:
    return buildconfig.parse("/cfg/allocbench.toml", table)


@pytest.mark.parametrize("table, message", [
    ({"bench": 3}, "'build.bench' must be a non-empty string"),
    ({"target": ""}, "'build.target' must be a non-empty string"),
    ({"cmake_args": "-DX=1"}, "'build.cmake_args' must be an array of strings"),
    ({"cmake_args": ["-DX={nope}"]}, "'build.cmake_args[0]' uses unknown placeholder {nope}"),
    ({"plugin": "{missing}.so"}, "'build.plugin' uses unknown placeholder {missing}"),
    ({"command_": ["x"]}, "unknown key 'build.command_'; with the CMake route (no 'command') "
                          "the known keys are bench, target, plugin, cmake, cmake_args, "
                          "graft, submodules, jobs, env, vars"),
    ({"command": ["m", "{src}", "{build}"], "plugin": "{build}/p.so", "bench": "b"},
     "unknown key 'build.bench'; with a build command the known keys are command, plugin, "
     "graft, submodules, jobs, env, vars"),
    ({"graft": "bench"}, "'build.graft' must be an array of \"PATH[:DEST]\" strings"),
    ({"graft": [""]}, "'build.graft' must be an array of \"PATH[:DEST]\" strings"),
    ({"submodules": "sometimes"}, "'build.submodules' is 'sometimes'; give one of auto, remote, "
                                  "none, e.g. submodules = \"none\""),
    ({"jobs": 0}, "'build.jobs' is 0; give a whole number of build jobs above 0, e.g. jobs = 2"),
    ({"jobs": "2"}, "'build.jobs' is '2'; give a whole number"),
    ({"jobs": True}, "'build.jobs' is True; give a whole number"),
    ({"jobs": 1.5}, "'build.jobs' is 1.5; give a whole number"),
    ({"env": {"CC": 12}}, "'build.env' must be a table of strings"),
    ({"env": ["CC=gcc"]}, "'build.env' must be a table of strings"),
    ({"env": {"MY-VAR": "x"}}, "'build.env.MY-VAR' is not a usable name"),
    ({"env": {"DEPS": "{deps}"}}, "'build.env.DEPS' uses unknown placeholder {deps}"),
    ({"vars": {"src": "/elsewhere"}}, "'build.vars.src' would hide the placeholder {src}"),
    ({"vars": {"1st": "x"}}, "'build.vars.1st' is not a usable name"),
])
def test_bad_build_tables_name_the_field_and_the_fix(table, message):
    with pytest.raises(UserError) as e:
        parse(table)
    assert str(e.value).startswith("/cfg/allocbench.toml: ")
    assert message in str(e.value)


def test_cmake_route_paths_are_relative_to_the_configuration():
    settings = parse({"bench": "perf/bench", "cmake": "tools/cmake", "target": "t",
                      "plugin": "t.so", "cmake_args": ["-DA={deps}"],
                      "vars": {"deps": "/opt/deps"}, "env": {"CC": "gcc-12"}})
    assert settings == buildconfig.CMakeSettings(
        Path("/cfg/perf/bench"), "t", "t.so", "/cfg/tools/cmake", ("-DA={deps}",),
        buildspec.Common((("CC", "gcc-12"),), (("deps", "/opt/deps"),)))
    assert parse({"cmake": "cmake3"}).cmake == "cmake3"   # a name is looked up on PATH


def test_vars_fill_placeholders_and_env_reaches_the_command(tmp_path):
    spec = parse({"command": ["sh", "-c", 'printf "%s|%s|%s" "$1" "$GREETING" "$ROOT" > "$2/p"',
                              "x", "{deps}/lib", "{build}", "{src}"],
                  "plugin": "{build}/p", "vars": {"deps": "/opt/deps"},
                  "env": {"GREETING": "hello {rev}", "ROOT": "{src}"}})
    plugin = spec.build(tmp_path, tmp_path / "b", SHA)
    assert plugin.read_text() == f"/opt/deps/lib|hello {SHA}|{tmp_path}"


def test_the_recipe_records_env_and_vars_only_when_given():
    plain = parse({"command": ["m", "{src}", "{build}"], "plugin": "{build}/p"})
    assert plain.identity() == {"command": ["m", "{src}", "{build}"], "plugin": "{build}/p"}
    given = parse({"command": ["m", "{src}", "{build}"], "plugin": "{build}/p",
                   "env": {"CC": "gcc-12"}, "vars": {"deps": "/d"}})
    assert given.identity() == {**plain.identity(), "env": {"CC": "gcc-12"},
                                "vars": {"deps": "/d"}}
    assert given.tree_key() != plain.tree_key()   # a different build gets its own tree


def test_a_command_build_finds_allocbenchs_own_package(tmp_path, build_dir, monkeypatch):
    package = buildspec.package_dir(build_dir / "bin" / "allocbench-run")
    assert package == build_dir / "lib" / "cmake" / "allocbench"
    assert (package / "allocbenchConfig.cmake").is_file()
    spec = parse({"command": ["sh", "-c", 'echo "$allocbench_ROOT;$CMAKE_PREFIX_PATH" > "$1/p"',
                              "x", "{build}", "{src}"], "plugin": "{build}/p"})
    monkeypatch.delenv("CMAKE_PREFIX_PATH", raising=False)
    plugin = spec.build(tmp_path, tmp_path / "b", SHA, package)
    assert plugin.read_text() == f"{build_dir};{build_dir}\n"


def test_no_package_beside_a_runner_that_has_none(tmp_path):
    (tmp_path / "bin").mkdir()
    assert buildspec.package_dir(tmp_path / "bin" / "allocbench-run") is None


def test_command_line_cmake_options_override_the_table(tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "CMakeLists.txt").write_text("project(b)\n")
    (tmp_path / "allocbench.toml").write_text(
        '[build]\nbench = "bench"\ntarget = "from_toml"\ncmake_args = ["-DA=1"]\n')
    spec = sweep_command.build_spec(tmp_path, None, target="from_cli", cmake_arg=["-DB=2"])
    assert (spec.bench, spec.target, spec.cmake_args) == (bench, "from_cli", ("-DA=1", "-DB=2"))
    assert spec.plugin_path == buildspec.DEFAULT_PLUGIN
    before = spec.identity()
    (bench / "scenarios.cc").write_text("// a new scenario\n")
    after = sweep_command.build_spec(tmp_path, None, target="from_cli", cmake_arg=["-DB=2"])
    assert after.identity() != before               # the recipe follows the bench project
    assert after.tree_key() == spec.tree_key()      # but the incremental build goes on


@pytest.mark.parametrize("kwargs, message", [
    ({"bench": Path("nowhere")}, "no CMakeLists.txt there"),
    ({"cmake": "/no/such/cmake"}, "--cmake /no/such/cmake: no such program"),
])
def test_bad_cmake_options_are_refused_before_anything_is_built(tmp_path, kwargs, message):
    with pytest.raises(UserError, match=message):
        sweep_command.build_spec(tmp_path, None, **kwargs)


@pytest.mark.parametrize("option", [{"target": "t"}, {"plugin_path": "p.so"},
                                    {"cmake_arg": ["-DA=1"]}, {"bench": Path("b")},
                                    {"cmake": "cmake"}])
def test_a_build_command_refuses_each_cmake_option_alone(tmp_path, option):
    config = tmp_path / "allocbench.toml"
    config.write_text('[build]\ncommand = ["m", "{src}", "{build}"]\nplugin = "{build}/p"\n')
    with pytest.raises(UserError) as refused:
        sweep_command.build_spec(tmp_path, None, **option)
    assert str(refused.value) == (
        f"{config} has a [build] command, so --target, --plugin-path, --cmake-arg, --bench and "
        "--cmake do not apply; drop them or the [build] command")
    assert isinstance(sweep_command.build_spec(tmp_path, None), buildspec.CommandBuild)


def test_cmake_route_configures_with_the_package_and_the_subject(tmp_path):
    """The configure command a bench project gets, read back from the build's stamp."""
    fake = tmp_path / "cmake"
    # configure (-S SRC -B BUILD …) makes the cache and the plugin; --build does nothing
    fake.write_text('#!/bin/sh\n[ "$1" = -S ] && touch "$4/CMakeCache.txt" "$4/p.so"\nexit 0\n')
    fake.chmod(0o755)
    spec = buildspec.CMakeBuild("t", "p.so", ("-DX={rev}",), tmp_path / "bench", str(fake))
    build = tmp_path / "build"
    spec.build(tmp_path / "src", build, SHA, tmp_path / "pkg")
    configure = json.loads((build / "allocbench-cmake-args.json").read_text())
    launcher = ["-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"]
    assert configure == [str(fake), "-S", str(tmp_path / "bench"), "-B", str(build),
                         "-DCMAKE_BUILD_TYPE=Release",
                         *(launcher if shutil.which("ccache") else []),
                         f"-Dallocbench_DIR={tmp_path / 'pkg'}",
                         f"-DALLOCBENCH_SUBJECT_DIR={tmp_path / 'src'}", f"-DX={SHA}"]


def test_the_readmes_build_tables_are_valid():
    import tomllib
    from conftest import ROOT
    from docs_pages import page
    blocks = re.findall(r"```toml\n(.*?)```", page("sweeps"), re.S)
    builds = [tomllib.loads(re.sub(r"(?m)^  ", "", b))["build"] for b in blocks
              if "[build]" in b]
    # The first is libtrace's, which test_readme_examples.py sweeps with as printed; the last
    # is the recipe outside the subject (test_the_guides_recipe_outside_the_subject_…).
    assert len(builds) == 4
    # Read as the allocbench.toml of the repository's root, beside its bench/.
    cmake, command = (buildconfig.parse(str(ROOT / "allocbench.toml"), b) for b in builds[1:3])
    assert (cmake.common.submodules, cmake.common.jobs) == ("none", 2)
    assert cmake.bench == (ROOT / "bench") and cmake.target == "libtrace_scenarios"
    assert dict(cmake.common.vars) == {"deps": "/opt/deps"}
    assert command.plugin == "{build}/libscenarios.so"


@pytest.mark.parametrize("given", [False, True])
def test_a_sweeps_store_is_the_repositorys_own_unless_one_is_given(tmp_path, runner, given):
    """No --store: the records go to .allocbench/results of the repository measured (git
    ignores .allocbench/), not to a results/ folder beside its sources."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    store = tmp_path / "elsewhere" if given else None
    plan = sweep_command.make_plan(
        repo=repo, store=store, machine="m", allocator="system", graft=[], target=None,
        plugin_path=None, cmake_arg=[], config=None, runner=runner, timeout=60, force=False,
        retry_failed=False, time=False, run_options=[])
    if given:   # nothing written into the repository
        assert plan.store.root == store and not (repo / ".allocbench").exists()
    else:
        assert plan.store.root == repo / ".allocbench" / "results"
        assert (repo / ".allocbench" / ".gitignore").read_text().endswith("\n*\n")


@pytest.mark.parametrize("route", [{}, {"command": ["m", "{src}", "{build}"], "plugin": "{build}/p"}])
def test_submodules_and_jobs_are_part_of_either_routes_table_but_not_of_its_recipe(route):
    plain, given = parse(route), parse({**route, "submodules": "none", "jobs": 3})
    assert (given.common.submodules, given.common.jobs) == ("none", 3)
    assert (plain.common.submodules, plain.common.jobs) == (None, None)
    if route:   # the same build, so the same recipe and tree (sweep.Plan records 'none' itself)
        assert given.identity() == plain.identity() and given.tree_key() == plain.tree_key()


def test_the_build_runs_with_the_jobs_given_else_allocbench_jobs_else_one_per_cpu(tmp_path,
                                                                                  monkeypatch):
    def jobs_seen(table: dict) -> str:
        spec = parse({"command": ["sh", "-c", 'echo "$1" > "$2/p"', "x", "{jobs}", "{build}",
                                  "{src}"], "plugin": "{build}/p", **table})
        return spec.build(tmp_path, tmp_path / "b", SHA).read_text().strip()

    monkeypatch.delenv("ALLOCBENCH_JOBS", raising=False)
    assert jobs_seen({}) == str(os.cpu_count())
    monkeypatch.setenv("ALLOCBENCH_JOBS", "5")
    assert jobs_seen({}) == "5"
    assert jobs_seen({"jobs": 3}) == "3"
    monkeypatch.setenv("ALLOCBENCH_JOBS", "two")
    with pytest.raises(UserError) as refused:
        jobs_seen({})
    assert str(refused.value) == ("ALLOCBENCH_JOBS='two': give a whole number of build jobs "
                                  "above 0, e.g. ALLOCBENCH_JOBS=2, or unset it for one per CPU")


def test_the_cmake_route_builds_with_the_jobs_given(tmp_path):
    fake = tmp_path / "cmake"
    fake.write_text('#!/bin/sh\n[ "$1" = -S ] && touch "$4/CMakeCache.txt" "$4/p.so"\n'
                    '[ "$1" = --build ] && echo "$@" > "$2/build-args"\nexit 0\n')
    fake.chmod(0o755)
    common = buildspec.Common(jobs=3)
    spec = buildspec.CMakeBuild("t", "p.so", (), None, str(fake), common)
    spec.build(tmp_path / "src", tmp_path / "build", SHA)
    assert (tmp_path / "build" / "build-args").read_text() == \
        f"--build {tmp_path / 'build'} --target t -j 3\n"


@pytest.mark.parametrize("route", ['bench = "bench"\n',
                                   'command = ["m", "{src}", "{build}"]\nplugin = "{build}/p"\n'])
def test_the_command_lines_jobs_override_the_tables_for_either_route(tmp_path, route):
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "CMakeLists.txt").write_text("project(b)\n")
    (tmp_path / "allocbench.toml").write_text(f"[build]\n{route}jobs = 2\n")
    assert sweep_command.build_spec(tmp_path, None).common.jobs == 2
    assert sweep_command.build_spec(tmp_path, None, jobs=4).common.jobs == 4


def test_a_wrong_bench_in_the_table_names_the_file_and_the_key(tmp_path):
    config = tmp_path / "recipes" / "tracer.toml"
    config.parent.mkdir()
    config.write_text('[build]\nbench = "bench"\n')
    with pytest.raises(UserError) as refused:
        sweep_command.build_spec(tmp_path, config)
    assert str(refused.value) == (
        f"{config}: 'build.bench' names {tmp_path / 'recipes' / 'bench'} (relative to that "
        "file's folder), which has no CMakeLists.txt; fix build.bench to the folder of the "
        "CMake project that builds your scenario plugin")


@pytest.mark.parametrize("table, given, used", [
    ("", None, "auto"), ('submodules = "none"\n', None, "none"),
    ('submodules = "none"\n', "remote", "remote")])
def test_the_tables_submodules_apply_unless_the_command_line_says_otherwise(tmp_path, runner,
                                                                            table, given, used):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "allocbench.toml").write_text(f"[build]\n{table}")
    plan = sweep_command.make_plan(
        repo=repo, store=tmp_path / "store", machine="m", allocator="system", graft=[],
        target=None, plugin_path=None, cmake_arg=[], config=None, runner=runner, timeout=60,
        force=False, retry_failed=False, time=False, run_options=[], submodules=given)
    assert plan.submodules == used
    assert ("submodules" in plan.recipe) == (used == "none")


def test_the_guides_recipe_outside_the_subject_works_as_printed(tmp_path):
    """docs/sweeps.md's team-bench example: the toml read from its own folder, both commands
    parsed by the CLI, and the error it quotes for a wrong bench."""
    import shlex
    from allocbench import cli
    from docs_pages import folded, page
    text = page("sweeps").split("<!-- recipe-outside:begin -->")[1].split(
        "<!-- recipe-outside:end -->")[0]
    toml, commands = (re.sub(r"(?m)^  ", "", re.search(rf"```{kind}\n(.*?)```", text, re.S)[1])
                      for kind in ("toml", "sh"))
    team = tmp_path / "team-bench"
    (team / "tracer").mkdir(parents=True)
    (team / "tracer" / "CMakeLists.txt").write_text("project(bench)\n")
    (team / "tracer.toml").write_text(toml)
    repo = tmp_path / "tracer"
    repo.mkdir()
    spec = sweep_command.build_spec(repo, team / "tracer.toml")
    assert (spec.bench, spec.target, spec.plugin_path, spec.common.submodules) == (
        team / "tracer", "tracer_scenarios", "tracer_scenarios.so", "none")
    lines = commands.strip().splitlines()
    assert [shlex.split(line)[:2] for line in lines] == [
        ["./allocbench", "sweep"], ["./allocbench", "bisect"], ["./allocbench", "profile"]]
    for line in lines:
        args = vars(cli.build_parser().parse_args(shlex.split(line)[1:]))
        assert (args["repo"], args["config"]) == (Path("../tracer"),
                                                  Path("../team-bench/tracer.toml"))
    (team / "tracer" / "CMakeLists.txt").unlink()
    with pytest.raises(UserError) as refused:
        sweep_command.build_spec(repo, team / "tracer.toml")
    quoted = str(refused.value).replace(str(tmp_path), "…").split(", which has")[0]
    assert f"`{quoted}, which has no CMakeLists.txt`" in folded("sweeps")


@pytest.mark.parametrize("output, count", [
    ("[ 25%] Building CXX object CMakeFiles/t.dir/a.cc.o\n[ 50%] Building C object "
     "CMakeFiles/t.dir/b.c.o\n[ 75%] Linking CXX shared module t.so\n[100%] Built target t\n", 2),
    ("[1/3] Building CXX object CMakeFiles/t.dir/a.cc.o\n[2/3] Building ASM object x.S.o\n"
     "[3/3] Linking CXX shared module t.so\n", 2),
    ("[100%] Built target t\n", 0),
    ("gcc -c a.c   # a plain make: no CMake lines\n", 0),
])
def test_a_build_says_how_many_files_it_compiled(output, count):
    assert worktrees.compiled(output) == count


def test_each_build_announces_what_it_recompiled_and_keeps_its_output(tmp_path):
    """`why did this probe take 460 s`: the progress line says what was compiled, and the
    output stays in the build folder for the revision's log."""
    fake = tmp_path / "cmake"
    fake.write_text('#!/bin/sh\n[ "$1" = -S ] && touch "$4/CMakeCache.txt" "$4/p.so" && exit 0\n'
                    'echo "[ 50%] Building CXX object a.o"; echo "[100%] Building CXX object b.o"'
                    '\n')
    fake.chmod(0o755)
    said: list[str] = []
    spec = buildspec.CMakeBuild("t", "p.so", (), None, str(fake))
    with worktrees.announcing(said.append):
        spec.build(tmp_path / "src", tmp_path / "build", SHA)
    assert re.fullmatch(r"built: 2 files compiled in \d+\.\d s", said[-1]), said
    assert (tmp_path / "build" / buildspec.BUILD_LOG).read_text() == \
        "[ 50%] Building CXX object a.o\n[100%] Building CXX object b.o\n"


def test_a_measured_revisions_build_log_is_kept_to_its_last_256_kib(tmp_path):
    from allocbench.history import sweep
    built, log = tmp_path / "built.log", tmp_path / "kept.log"
    built.write_bytes(b"a" * 1000 + b"b" * (256 * 1024))
    sweep._keep_build_log(built, log)
    assert log.read_bytes() == b"b" * (256 * 1024)
    built.write_bytes(b"short\n")
    sweep._keep_build_log(built, log)
    assert log.read_bytes() == b"short\n"
    sweep._keep_build_log(tmp_path / "none.log", tmp_path / "never.log")   # nothing built
    assert not (tmp_path / "never.log").exists()


@pytest.mark.parametrize("text, version", [
    ("cmake_minimum_required(VERSION 3.28)\nproject(x)\n", "3.28"),
    ("# cmake_minimum_required(VERSION 9)\n  CMAKE_MINIMUM_REQUIRED ( VERSION 3.10...3.28 )\n",
     "3.10"),
    ("project(x)\n", None)])
def test_the_cmake_a_project_asks_for_is_its_lower_bound(text, version):
    assert buildspec.required_cmake(text) == version


def test_a_cmake_too_old_for_the_subject_is_said_before_the_harness_is_built(tmp_path, capsys):
    """The first sweep of dd-trace-cpp said its CMake was too old only after building the
    harness cold (about 4 minutes); both are known before."""
    fake = tmp_path / "cmake"
    fake.write_text("#!/bin/sh\necho 'cmake version 3.25.1'\n")
    fake.chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["add", "-A"]):
        (repo / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.28)\n")
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e",
                    "commit", "-q", "-m", "x"], check=True)
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                         text=True, check=True).stdout.strip()
    spec = buildspec.CMakeBuild("t", "p.so", cmake=str(fake))
    sweep_command.check_cmake(repo, spec, [sha])
    assert capsys.readouterr().err == (
        f"allocbench: warning: {sha[:12]}'s CMakeLists.txt requires CMake 3.28, but {fake} is "
        "3.25.1: revisions like it will fail to configure; pass --cmake (or [build] cmake) "
        "with a newer one\n")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.27)\n")
    with pytest.raises(UserError) as refused:
        sweep_command.check_cmake(repo, buildspec.CMakeBuild("t", "p.so", (), tmp_path / "bench",
                                                             str(fake)), [])
    assert str(refused.value) == (
        f"{tmp_path / 'bench' / 'CMakeLists.txt'} requires CMake 3.27 (cmake_minimum_required), "
        f"but {fake} is 3.25.1; pass --cmake (or [build] cmake) with a newer one")
    # new enough: nothing said
    fake.write_text("#!/bin/sh\necho 'cmake version 3.28.0'\n")
    sweep_command.check_cmake(repo, spec, [sha])
    assert capsys.readouterr().err == ""



def test_the_tables_grafts_come_first_relative_to_its_folder(tmp_path, runner):
    repo = tmp_path / "repo"
    (repo / "bench").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    team = tmp_path / "team"
    (team / "scenarios").mkdir(parents=True)
    (team / "scenarios" / "a.cc").write_text("// a\n")
    (repo / "extra.cc").write_text("// b\n")
    config = team / "tracer.toml"
    config.write_text('[build]\ngraft = ["scenarios:bench/team"]\n')
    plan = sweep_command.make_plan(
        repo=repo, store=tmp_path / "store", machine="m", allocator="system",
        graft=[str(repo / "extra.cc")], target=None, plugin_path=None, cmake_arg=[],
        config=config, runner=runner, timeout=60, force=False, retry_failed=False, time=False,
        run_options=[])
    assert [(g.source, g.dest) for g in plan.grafts] == [(team / "scenarios", "bench/team"),
                                                          (repo / "extra.cc", "extra.cc")]
    config.write_text('[build]\ngraft = ["gone"]\n')
    with pytest.raises(UserError) as refused:
        sweep_command.make_plan(
            repo=repo, store=tmp_path / "store", machine="m", allocator="system", graft=[],
            target=None, plugin_path=None, cmake_arg=[], config=config, runner=runner,
            timeout=60, force=False, retry_failed=False, time=False, run_options=[])
    assert str(refused.value) == (f"{config}: 'build.graft' entry 'gone': "
                                  f"{team / 'gone'} does not exist; give a file or folder of "
                                  "scenario sources, e.g. --graft bench")


def test_profile_refuses_a_recipe_without_a_revision_to_build(tmp_path, capsys):
    """--bench, --graft, --submodules and --config say how --rev is built: without --rev they
    would be ignored, so they are refused, each named, before anything is built."""
    from allocbench import cli
    code = cli.main(["profile", "a/b", "--bench", str(tmp_path), "--submodules", "none"])
    assert code == 2
    assert capsys.readouterr().err == ("allocbench: error: --bench and --submodules say how a "
                                       "revision is built: give --rev too, or drop them\n")
    assert cli.main(["profile", "a/b", "--config", str(tmp_path / "allocbench.toml")]) == 2
    assert capsys.readouterr().err == ("allocbench: error: --config says how a revision is "
                                       "built: give --rev too, or drop it\n")
