"""The line a failure note quotes from a build or run log (log_summary.py), on logs as CMake, gcc,
the linker and make write them; every expected line is written out by hand."""

from __future__ import annotations

import pytest

from allocbench.history import store, sweep_table
from allocbench.history.log_summary import informative_line

SHA = "0123456789abcdef0123456789abcdef01234567"
WORKTREE = f"/home/ci/tracer/.allocbench/worktrees/{SHA}"

CMAKE_TOO_OLD = """\
-- The C compiler identification is GNU 12.2.0
-- The CXX compiler identification is GNU 12.2.0
CMake Error at CMakeLists.txt:3 (cmake_minimum_required):
  CMake 3.28 or higher is required.  You are running version 3.25.1


-- Configuring incomplete, errors occurred!
"""

CMAKE_NO_PACKAGE = f"""\
-- Detecting CXX compile features - done
CMake Error at {WORKTREE}/CMakeLists.txt:12 (find_package):
  By not providing "FindProtobuf.cmake" in CMAKE_MODULE_PATH this project has
  asked CMake to find a package configuration file provided by "Protobuf",
  but CMake did not find one.

  Could not find a package configuration file provided by "Protobuf" with any
  of the following names:

    ProtobufConfig.cmake
    protobuf-config.cmake

-- Configuring incomplete, errors occurred!
"""

CMAKE_ONE_LINE = f"""\
CMake Error: The source directory "{WORKTREE}/sub" does not appear to contain CMakeLists.txt.
Specify --help for usage, or press the help button on the CMake GUI.
"""

MAKE_PARALLEL = f"""\
[ 33%] Building CXX object CMakeFiles/bench.dir/trace.cc.o
[ 66%] Building CXX object CMakeFiles/bench.dir/span.cc.o
make[2]: *** [CMakeFiles/bench.dir/build.make:90: CMakeFiles/bench.dir/trace.cc.o] Error 1
make[2]: *** Waiting for unfinished jobs....
{WORKTREE}/bench/span.cc: In function 'void SetTags(Span&)':
{WORKTREE}/bench/span.cc:12:5: error: 'Tracer' was not declared in this scope
   12 |     Tracer tracer;
      |     ^~~~~~
make[1]: *** [CMakeFiles/Makefile2:83: CMakeFiles/bench.dir/all] Error 2
make: *** [Makefile:91: all] Error 2
"""

MAKE_VERBOSE = f"""\
/usr/bin/c++ -O2 -Wall -Wno-error=deprecated-declarations -o span.cc.o -c {WORKTREE}/bench/span.cc
{WORKTREE}/bench/span.cc:3:1: error: expected ';' before '}}' token
make[2]: *** [CMakeFiles/bench.dir/build.make:76: CMakeFiles/bench.dir/span.cc.o] Error 1
"""

MAKE_ECHO_ONLY = """\
make[2]: *** [CMakeFiles/bench.dir/build.make:90: CMakeFiles/bench.dir/trace.cc.o] Error 1
make[1]: *** [CMakeFiles/Makefile2:83: CMakeFiles/bench.dir/all] Error 2
make: *** [Makefile:91: all] Error 2
"""

LINK = """\
[100%] Linking CXX shared library libscenarios.so
/usr/bin/ld: CMakeFiles/bench.dir/span.cc.o: in function `SetTags(Span&)':
span.cc:(.text+0x1d): undefined reference to `Tracer::Tracer()'
collect2: error: ld returned 1 exit status
make[2]: *** [CMakeFiles/bench.dir/build.make:97: libscenarios.so] Error 1
"""

CRASH = """\
running 3 instances
[1/3] span_creation/web_server_span
Segmentation fault (core dumped)
"""


@pytest.mark.parametrize("log, line", [
    (CMAKE_TOO_OLD,
     "CMake Error: CMake 3.28 or higher is required. You are running version 3.25.1"),
    (CMAKE_NO_PACKAGE,
     'CMake Error: By not providing "FindProtobuf.cmake" in CMAKE_MODULE_PATH this project has '
     'asked CMake to find a package configuration file provided by "Protobuf", but CMake did not '
     'find one.'),
    (CMAKE_ONE_LINE,
     'CMake Error: The source directory "sub" does not appear to contain CMakeLists.txt.'),
    ("-- Detecting CXX compile features - done\n"
     "CMake Error at CMakeLists.txt:3 (cmake_minimum_required):\n",
     "CMake Error at CMakeLists.txt:3 (cmake_minimum_required):"),
    (MAKE_PARALLEL, "bench/span.cc:12:5: error: 'Tracer' was not declared in this scope"),
    (MAKE_VERBOSE, "bench/span.cc:3:1: error: expected ';' before '}' token"),
    (MAKE_ECHO_ONLY, "make[2]: *** [CMakeFiles/bench.dir/build.make:90: "
                     "CMakeFiles/bench.dir/trace.cc.o] Error 1"),
    (LINK, "span.cc:(.text+0x1d): undefined reference to `Tracer::Tracer()'"),
    (CRASH, "Segmentation fault (core dumped)"),
    ("allocbench-run: error: --plugin libscenarios.so: cannot load it\n  (see the log)\n",
     "allocbench-run: error: --plugin libscenarios.so: cannot load it"),
    ("CMake Error:X\n  the paragraph under it\n", "CMake Error:X"),
    ("", ""),
    ("\n   \n", ""),
    ("/home/ci/t/.allocbench/trees/cmake-0a1b2c3d/src/src/span.cc:9:2: error: 'x' undeclared\n",
     "src/span.cc:9:2: error: 'x' undeclared"),
    ("-- Detecting CXX compile features - done\n"
     "CMake Error at /home/ci/t/.allocbench/trees/cmake-0a1b2c3d-none/src/CMakeLists.txt:14 "
     "(add_subdirectory):\n  The source directory\n\n"
     "    /home/ci/t/.allocbench/trees/cmake-0a1b2c3d-none/src/third_party/fmt\n\n"
     "  does not contain a CMakeLists.txt file.\n\n\n-- Configuring incomplete, errors occurred!\n",
     "CMake Error: The source directory third_party/fmt does not contain a CMakeLists.txt "
     "file."),
], ids=["cmake-too-old", "cmake-paragraph", "cmake-one-line", "cmake-message-cut-off",
        "gcc-after-parallel-make", "gcc-after-command-line", "make-alone", "linker", "crash",
        "runner", "cmake-one-character", "empty", "blank", "shared-tree", "cmake-path-apart"])
def test_the_note_quotes_the_informative_line(log, line):
    assert informative_line(log) == line


def test_a_failed_record_names_cmakes_message_not_its_location():
    record = {"status": "build_failed", "log_tail": CMAKE_TOO_OLD}
    assert store.problem(record) == ("build failed: CMake Error: CMake 3.28 or higher is "
                                     "required. You are running version 3.25.1")
    assert store.problem({"status": "timeout", "log_tail": ""}) == "timeout"
    column = sweep_table.Column("c" * 40, "cccccccccc", {
        "sha": "c" * 40, "label": "cccccccccc", "machine": "m1", "recipe": "0" * 16,
        "status": "build_failed", "time_measured": False, "results": None,
        "log": "/l/c.log", "log_tail": CMAKE_TOO_OLD})
    assert sweep_table.markdown([column], ["bytes_per_op"]).splitlines()[-1] == (
        "- ✗ `cccccccccc` build failed: `CMake Error: CMake 3.28 or higher is required. You are "
        "running version 3.25.1` — log: /l/c.log")


def test_a_note_on_a_record_reaches_its_failure_line_and_an_ok_revisions_notes():
    note = "submodule bench/gbench (2dd015d0a1b2) left empty: …; fix: …"
    failed = {"sha": "c" * 40, "label": "cccccccccc", "machine": "m1", "recipe": "0" * 16,
              "status": "build_failed", "time_measured": False, "results": None,
              "log": "/l/c.log", "log_tail": "span.cc:3:1: fatal error: gbench.h: No such file",
              "note": note}
    assert store.problem(failed) == \
        f"build failed: span.cc:3:1: fatal error: gbench.h: No such file ({note})"
    assert store.problem(dict(failed, note="")) == \
        "build failed: span.cc:3:1: fatal error: gbench.h: No such file"
    column = sweep_table.Column("c" * 40, "cccccccccc", failed)
    assert sweep_table.markdown([column], ["bytes_per_op"]).splitlines()[-1] == (
        f"- ✗ `cccccccccc` build failed: `span.cc:3:1: fatal error: gbench.h: No such file "
        f"({note})` — log: /l/c.log")
