"""A realistic user project with a known allocation history, for `sweep`/`bisect --bench`.

synthetic_history.py is a project written for allocbench. This one is written like the
projects users have, and allocbench must take it as it is:

  - libtrace's CMakeLists.txt knows nothing of allocbench (unless plugin_in_project) and will
    not configure without a choice: -DLIBTRACE_BACKEND=memory|null (else a FATAL_ERROR that
    says "set -DLIBTRACE_BACKEND=...");
  - it builds a STATIC library (PIC) from src/*.cc and `units` generated files src/units/*.cc
    (about a second of compiling each), so that rebuilding a revision costs something;
  - it uses a git SUBMODULE, third_party/tinyfmt, whose .gitmodules URL does not resolve
    (https://example.invalid/tinyfmt.git) while the checkout has it populated: measuring old
    revisions offline means taking the submodule from the user's checkout. The submodule moves
    twice, each time with an API change, so no single tinyfmt commit builds every revision;
  - the scenarios are a "bench project" at bench/, committed only at the last commit: a CMake
    project that adds the revision's tree with add_subdirectory(${ALLOCBENCH_SUBJECT_DIR}) and
    sets LIBTRACE_BACKEND=null for it. A -DLIBTRACE_BACKEND= (empty) given to the bench project
    wins over that default and shows libtrace's own error.
  - plugin_in_project=True also commits scenarios/ (the same scenario file) in every revision
    and builds the plugin from libtrace's CMakeLists.txt when libtrace is the top-level
    project, so the same history can be swept the way that needs no bench project:
    --target libtrace_scenarios --plugin-path libtrace_scenarios.so
    --cmake-arg=-DLIBTRACE_BACKEND=null --cmake-arg=-DCMAKE_PREFIX_PATH=<allocbench prefix>.

Every allocation is a `::operator new(n)` in src/logger.cc, n from config.h (LB = LT_LINE_BYTES,
LA = LT_LINE_ALLOCS, FB = LT_FIELD_BYTES, FA = LT_FIELD_ALLOCS, BB = LT_BATCH_BYTES,
EB = LT_EVENT_BYTES). Instances, one op = one loop iteration, B and A exact:
  libtrace/log_line         a line, 2 fields, written  B = LA*LB + 2*FA*FB   A = LA + 2*FA
  libtrace/batch/events:4   a batch of 4 events        B = BB + 4*EB         A = 5

 #  subject                                           tag  LB LA FB FA BB EB tinyfmt log_line batch
 1  Add libtrace: log lines with fields, event batches v1.0 64 1 24 1 32 48  1.0    112/3    224
 2  Grow the event record to 64 bytes                       64 1 24 1 32 64          112/3    288
 3  Format values in hex with tinyfmt 1.1's Format     v1.1 64 1 24 1 32 64  1.1    112/3    288
 4  Split each line into header and text blocks             64 2 24 1 32 64          176/4    288
 5  Document the units of config.h                          64 2 24 1 32 64          176/4    288
 6  Store each field as key and value blocks           v1.2 64 2 24 2 32 64          224/6    288
 7  Size the format buffer by tinyfmt 1.2's kMaxDigits      64 2 24 2 32 64  1.2    224/6    288
 8  Shrink the batch header to 16 bytes                v1.3 64 2 24 2 16 64          224/6    272
 …  extra_commits: "Tune summary_NNN's hashing" (one unit, every other one also README.md)
 N  Add an allocbench bench project (bench/)                                         224/6    272

(B/op, allocs/op after the slash for log_line; batch is always 5 allocs/op.) The two-step
change, between the consecutive tags v1.1 and v1.2: log_line allocs/op 3 → 4 at commit 4 and
→ 6 at commit 6, with commit 5 (a comment) in between. Commits 3 and 7 move the submodule (and
src/logger.cc to its new API); 2, 4, 5, 6 and 8 touch config.h only. Commit.expected() and
Subject.change_points() compute all this from the knobs; the table is for reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from synthetic_history import run_git

TARGET = "libtrace_scenarios"  # CMake target of the plugin, in bench/ and in-project alike
PLUGIN = "libtrace_scenarios.so"  # the plugin, relative to the build folder
SUBMODULE = "third_party/tinyfmt"
UNREACHABLE_URL = "https://example.invalid/tinyfmt.git"
BACKEND_OPTION = "LIBTRACE_BACKEND"
BACKEND_MESSAGE = "set -DLIBTRACE_BACKEND="  # in libtrace's error when the option is not set
SUBJECT_DIR_MESSAGE = "set -DALLOCBENCH_SUBJECT_DIR="  # bench/'s error without a subject
# git refuses local (file) submodule clones unless allowed; for a process that clones them:
ALLOW_FILE_ENV = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.file.allow",
                  "GIT_CONFIG_VALUE_0": "always"}

LOG_LINE = "libtrace/log_line"
BATCH = "libtrace/batch/events:4"
INSTANCES = (LOG_LINE, BATCH)
FIELDS = 2  # AddField calls per op of log_line (kFields in the scenario file)
EVENTS = 4  # Append calls per op of batch (Arg(4))
TWO_STEP = (4, 6)  # the commits of the two-step allocs/op change of log_line
QUIET = 5  # between them: the commit that only documents config.h

_UPSTREAM = (("1.0", "tinyfmt 1.0: FormatDecimal"),
             ("1.1", "tinyfmt 1.1: Format with a base, replacing FormatDecimal"),
             ("1.2", "tinyfmt 1.2: kMaxDigits, the buffer size that always fits"))
_KNOBS = {"LT_LINE_BYTES": 64, "LT_LINE_ALLOCS": 1, "LT_FIELD_BYTES": 24, "LT_FIELD_ALLOCS": 1,
          "LT_BATCH_BYTES": 32, "LT_EVENT_BYTES": 48}
_PLAN: tuple[tuple[str, str | None, dict[str, int], str | None], ...] = (
    # subject, tag, knob changes, tinyfmt version pinned from this commit on
    ("Add libtrace: log lines with fields, event batches", "v1.0", {}, "1.0"),
    ("Grow the event record to 64 bytes", None, {"LT_EVENT_BYTES": 64}, None),
    ("Format values in hex with tinyfmt 1.1's Format", "v1.1", {}, "1.1"),
    ("Split each line into header and text blocks", None, {"LT_LINE_ALLOCS": 2}, None),
    ("Document the units of config.h", None, {}, None),
    ("Store each field as key and value blocks", "v1.2", {"LT_FIELD_ALLOCS": 2}, None),
    ("Size the format buffer by tinyfmt 1.2's kMaxDigits", None, {}, "1.2"),
    ("Shrink the batch header to 16 bytes", "v1.3", {"LT_BATCH_BYTES": 16}, None),
)
BENCH_SUBJECT = "Add an allocbench bench project (bench/)"


@dataclass(frozen=True)
class Commit:
    index: int  # 1-based position on main
    sha: str
    subject: str
    tag: str | None
    knobs: dict[str, int]  # the config.h values at this commit
    tinyfmt: str  # the tinyfmt version its submodule records

    def expected(self) -> dict[str, dict[str, int]]:
        """{instance: {"bytes_per_op": B, "allocs_per_op": A}} measured at this commit (every
        commit builds, and bench/ and scenarios/ have the same instances)."""
        k = self.knobs
        line = k["LT_LINE_ALLOCS"] * k["LT_LINE_BYTES"]
        fields = FIELDS * k["LT_FIELD_ALLOCS"]  # field blocks per op
        return {
            LOG_LINE: {"bytes_per_op": line + fields * k["LT_FIELD_BYTES"],
                       "allocs_per_op": k["LT_LINE_ALLOCS"] + fields},
            BATCH: {"bytes_per_op": k["LT_BATCH_BYTES"] + EVENTS * k["LT_EVENT_BYTES"],
                    "allocs_per_op": 1 + EVENTS},
        }


@dataclass(frozen=True)
class Subject:
    repo: Path  # libtrace, checked out at the last commit with its submodule
    upstream: Path  # tinyfmt's own repository (the submodule's real origin)
    upstream_commits: dict[str, str]  # tinyfmt version: sha
    commits: tuple[Commit, ...]
    plugin_in_project: bool
    instances: tuple[str, ...] = INSTANCES

    @property
    def bench(self) -> Path:
        """The bench project (for --bench): only the last commit has it."""
        return self.repo / "bench"

    @property
    def two_step(self) -> tuple[Commit, Commit]:
        """The commits where log_line's allocs/op goes 3 → 4 and then 4 → 6."""
        return self.commits[TWO_STEP[0] - 1], self.commits[TWO_STEP[1] - 1]

    def by_tag(self, tag: str) -> Commit:
        return next(c for c in self.commits if c.tag == tag)

    def change_points(self, instance: str, metric: str) -> list[Commit]:
        """The commits where `metric` of `instance` differs from the commit before."""
        values = [c.expected()[instance][metric] for c in self.commits]
        return [c for c, before, now in zip(self.commits[1:], values, values[1:]) if now != before]

    def checkout(self, rev: str, dest: Path) -> Path:
        """A clone of the repository at `rev` in dest, with the submodule commit that `rev`
        records, fetched from the local upstream (the recorded URL does not resolve)."""
        _git(self.repo.parent, "clone", "-q", "--no-checkout", str(self.repo), str(dest))
        _git(dest, "checkout", "-q", "--detach", rev)
        _git(dest, "submodule", "init", "-q")
        _git(dest, "config", f"submodule.{SUBMODULE}.url", str(self.upstream))
        _git(dest, "-c", "protocol.file.allow=always", "submodule", "update", "-q")
        return dest


TINYFMT_CMAKE = """cmake_minimum_required(VERSION 3.16)
project(tinyfmt CXX)
add_library(tinyfmt STATIC src/format.cc)
target_include_directories(tinyfmt PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
"""

# tinyfmt's digits loop, the same in every version: {name}, {params} and {base} vary.
TINYFMT_CC = """#include "tinyfmt/format.h"

namespace tinyfmt {{

std::size_t {name}(char* out, std::size_t size, long value{params}) {{
  static const char kDigits[] = "0123456789abcdef";
  char digits[66];
  std::size_t count = 0;
  unsigned long rest = value < 0 ? 0UL - static_cast<unsigned long>(value)
                                 : static_cast<unsigned long>(value);
  do {{
    digits[count++] = kDigits[rest % {base}];
    rest /= {base};
  }} while (rest != 0);
  std::size_t written = 0;
  if (value < 0 && written < size) out[written++] = '-';
  while (count > 0 && written < size) out[written++] = digits[--count];
  return written;
}}

}}  // namespace tinyfmt
"""


def _tinyfmt_files(version: str) -> dict[str, str]:
    if version == "1.0":
        decl = "// Writes value in decimal; returns the characters written (at most size).\n" \
               "std::size_t FormatDecimal(char* out, std::size_t size, long value);\n"
        source = TINYFMT_CC.format(name="FormatDecimal", params="", base="10")
    else:
        decl = "// Writes value in base 2..16; returns the characters written (at most size).\n" \
               "std::size_t Format(char* out, std::size_t size, long value, int base);\n"
        source = TINYFMT_CC.format(name="Format", params=", int base",
                                   base="static_cast<unsigned long>(base)")
    if version == "1.2":
        decl = "// Enough for any long in any base, with its sign.\n" \
               "constexpr std::size_t kMaxDigits = 66;\n\n" + decl
    return {
        "CMakeLists.txt": TINYFMT_CMAKE,
        "README.md": f"# tinyfmt {version}\n\nNumbers to text, without allocating.\n",
        "include/tinyfmt/format.h": (
            "#ifndef TINYFMT_FORMAT_H_\n#define TINYFMT_FORMAT_H_\n\n#include <cstddef>\n\n"
            f"namespace tinyfmt {{\n\n{decl}\n}}  // namespace tinyfmt\n\n"
            "#endif  // TINYFMT_FORMAT_H_\n"),
        "src/format.cc": source,
    }


CMAKELISTS = """cmake_minimum_required(VERSION 3.16)
project(libtrace CXX)

# Where written lines go. Required: a tracer has no sensible default sink.
set(LIBTRACE_BACKEND "" CACHE STRING "libtrace's sink: memory or null (required)")
if(NOT LIBTRACE_BACKEND MATCHES "^(memory|null)$")
  message(FATAL_ERROR "libtrace: LIBTRACE_BACKEND is '${LIBTRACE_BACKEND}'; "
                      "set -DLIBTRACE_BACKEND=memory or -DLIBTRACE_BACKEND=null")
endif()

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
add_subdirectory(third_party/tinyfmt)

file(GLOB LIBTRACE_UNITS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/units/*.cc)
add_library(libtrace STATIC src/logger.cc src/backend.cc ${LIBTRACE_UNITS})
add_library(libtrace::libtrace ALIAS libtrace)
set_target_properties(libtrace PROPERTIES OUTPUT_NAME trace)
target_include_directories(libtrace PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
string(TOUPPER "${LIBTRACE_BACKEND}" LIBTRACE_BACKEND_NAME)
target_compile_definitions(libtrace PRIVATE LIBTRACE_BACKEND_${LIBTRACE_BACKEND_NAME})
target_link_libraries(libtrace PRIVATE tinyfmt)
"""

IN_PROJECT_PLUGIN = """
# The allocation scenarios, when libtrace is the top-level project (a bench project that adds
# libtrace with add_subdirectory builds its own).
if(CMAKE_SOURCE_DIR STREQUAL PROJECT_SOURCE_DIR)
  find_package(allocbench REQUIRED)
  allocbench_add_plugin(libtrace_scenarios SOURCES scenarios/logging.cc)
  target_link_libraries(libtrace_scenarios PRIVATE libtrace)
endif()
"""

BENCH_CMAKE = """# libtrace's allocation scenarios, built against any revision of libtrace:
#   cmake -S bench -B build -DALLOCBENCH_SUBJECT_DIR=<a libtrace source tree>
#         -DCMAKE_PREFIX_PATH=<where allocbench is installed>
# (allocbench sweep --bench passes each revision's tree and its own package).
cmake_minimum_required(VERSION 3.16)
project(libtrace_bench CXX)

if(NOT ALLOCBENCH_SUBJECT_DIR)
  message(FATAL_ERROR "libtrace_bench: set -DALLOCBENCH_SUBJECT_DIR=<a libtrace source tree>; "
                      "allocbench sweep --bench passes each revision's")
endif()
find_package(allocbench REQUIRED)

# libtrace requires a backend; the scenarios measure the null one. A -DLIBTRACE_BACKEND=...
# on the command line wins (an empty one shows libtrace's own error).
set(LIBTRACE_BACKEND null CACHE STRING "libtrace's sink: memory or null")
add_subdirectory(${ALLOCBENCH_SUBJECT_DIR} subject)

allocbench_add_plugin(libtrace_scenarios SOURCES logging.cc)
target_link_libraries(libtrace_scenarios PRIVATE libtrace::libtrace)
"""

# How sweep and bisect build libtrace's scenarios, committed with the bench project; the
# README shows it (test_readme_examples.py runs the README's commands on it as printed).
BENCH_TOML = """[build]
bench = "bench"                    # --bench: the CMake project beside the library, below
target = "libtrace_scenarios"      # --target
plugin = "libtrace_scenarios.so"   # --plugin-path, relative to the build folder
"""

LOGGER_H = """#ifndef LIBTRACE_LOGGER_H_
#define LIBTRACE_LOGGER_H_

namespace libtrace {

struct Line;
struct Batch;

Line* BeginLine(int level);                      // LT_LINE_ALLOCS blocks of LT_LINE_BYTES
void AddField(Line* line, int key, long value);  // LT_FIELD_ALLOCS blocks of LT_FIELD_BYTES
void EndLine(Line* line);                        // writes the line, frees its blocks

Batch* BeginBatch();                    // 1 block of LT_BATCH_BYTES
void Append(Batch* batch, long value);  // 1 block of LT_EVENT_BYTES
void Flush(Batch* batch);               // writes the events, frees the batch

}  // namespace libtrace

#endif  // LIBTRACE_LOGGER_H_
"""

LOGGER_CC = """#include "libtrace/logger.h"

#include <cstddef>
#include <new>

#include "backend.h"
#include "libtrace/config.h"
#include "tinyfmt/format.h"

namespace libtrace {

// Every block is chained through its first bytes; its value follows.
struct Block {
  Block* next;
  long value;
};

struct Line {
  Block* blocks;
  int level;
};

struct Batch {
  Block* events;
};

static_assert(sizeof(Line) <= LT_LINE_BYTES && sizeof(Batch) <= LT_BATCH_BYTES, "headers");
static_assert(sizeof(Block) <= LT_FIELD_BYTES && sizeof(Block) <= LT_EVENT_BYTES, "blocks");

namespace {

void Push(Block** head, std::size_t bytes, long value) {
  *head = new (::operator new(bytes)) Block{*head, value};
}

// Formats each block's value to the backend, then frees the blocks.
void Write(Block* block) {
  char text[@BUFFER@];
  while (block != nullptr) {
    Block* next = block->next;
    Emit(text, @FORMAT@);
    ::operator delete(block);
    block = next;
  }
}

}  // namespace

Line* BeginLine(int level) {
  Line* line = new (::operator new(LT_LINE_BYTES)) Line{nullptr, level};
  for (int i = 1; i < LT_LINE_ALLOCS; ++i) Push(&line->blocks, LT_LINE_BYTES, level);
  return line;
}

void AddField(Line* line, int key, long value) {
  for (int i = 0; i < LT_FIELD_ALLOCS; ++i) Push(&line->blocks, LT_FIELD_BYTES, value + i * key);
}

void EndLine(Line* line) {
  Write(line->blocks);
  ::operator delete(line);
}

Batch* BeginBatch() { return new (::operator new(LT_BATCH_BYTES)) Batch{nullptr}; }

void Append(Batch* batch, long value) { Push(&batch->events, LT_EVENT_BYTES, value); }

void Flush(Batch* batch) {
  Write(batch->events);
  ::operator delete(batch);
}

}  // namespace libtrace
"""

BACKEND_H = """#ifndef LIBTRACE_BACKEND_H_
#define LIBTRACE_BACKEND_H_

#include <cstddef>

namespace libtrace {

void Emit(const char* text, std::size_t size);  // never allocates

}  // namespace libtrace

#endif  // LIBTRACE_BACKEND_H_
"""

BACKEND_CC = """#include "backend.h"

namespace libtrace {

#if defined(LIBTRACE_BACKEND_MEMORY)
static char ring[4096];
static std::size_t head = 0;

void Emit(const char* text, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) ring[head++ % sizeof ring] = text[i];
}
#else
static volatile unsigned long checksum = 0;

void Emit(const char* text, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) checksum = checksum * 31 + static_cast<unsigned>(text[i]);
}
#endif

}  // namespace libtrace
"""

SCENARIOS = """#include <allocbench/scenario.h>

#include "libtrace/logger.h"

// One op: a line with kFields fields, written.
// B/op = LT_LINE_ALLOCS * LT_LINE_BYTES + kFields * LT_FIELD_ALLOCS * LT_FIELD_BYTES;
// allocs/op = LT_LINE_ALLOCS + kFields * LT_FIELD_ALLOCS.
constexpr int kFields = 2;
ALLOCBENCH_SCENARIO(LtLogLine, state) {
  for (auto _ : state) {
    libtrace::Line* line = libtrace::BeginLine(3);
    for (int key = 0; key < kFields; ++key) libtrace::AddField(line, key, 1000 + key);
    allocbench::DoNotOptimize(line);
    libtrace::EndLine(line);
  }
}
ALLOCBENCH_REGISTER(LtLogLine)->Name("libtrace/log_line");

// One op: a batch of n events, flushed. B/op = LT_BATCH_BYTES + n * LT_EVENT_BYTES; 1 + n allocs.
ALLOCBENCH_SCENARIO(LtBatch, state) {
  const int64_t events = state.range(0);
  for (auto _ : state) {
    libtrace::Batch* batch = libtrace::BeginBatch();
    for (int64_t i = 0; i < events; ++i) libtrace::Append(batch, i);
    allocbench::DoNotOptimize(batch);
    libtrace::Flush(batch);
  }
}
ALLOCBENCH_REGISTER(LtBatch)->Name("libtrace/batch")->Arg(4)->ArgNames({"events"});
"""

# A generated unit: standard containers and streams, about a second of -O3 compiling each.
UNIT = """// Generated: field summary {i} of libtrace's reports.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace libtrace::units {{

std::string Summary{i:03d}(const std::vector<long>& values) {{
  constexpr long kSalt = {salt};
  std::map<std::string, long> totals;
  for (long v : values) {{
    std::ostringstream key;
    key << "k" << (v * kSalt + {i}) % 11;
    totals[key.str()] += v;
  }}
  std::vector<std::pair<std::string, long>> sorted(totals.begin(), totals.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) {{ return a.second > b.second; }});
  std::ostringstream out;
  for (const auto& [name, total] : sorted) out << name << '=' << total << ';';
  return out.str();
}}

}}  // namespace libtrace::units
"""


def _files(index: int, knobs: dict[str, int], tinyfmt: str, salts: list[int],
           changes: list[str], *, bench: bool, plugin_in_project: bool) -> dict[str, str]:
    """The whole tree at commit `index` (the submodule apart)."""
    units = ("// Line, field, batch and event sizes are in bytes; *_ALLOCS are counts.\n"
             if index >= QUIET else "// Sizes in bytes.\n")
    defines = "".join(f"#define {name} {value}\n" for name, value in knobs.items())
    format_call = {"1.0": "tinyfmt::FormatDecimal(text, sizeof text, block->value)"}.get(
        tinyfmt, "tinyfmt::Format(text, sizeof text, block->value, 16)")
    buffer = "tinyfmt::kMaxDigits" if tinyfmt == "1.2" else "32"
    files = {
        "CMakeLists.txt": CMAKELISTS + (IN_PROJECT_PLUGIN if plugin_in_project else ""),
        "README.md": "# libtrace\n\nLog lines with fields, and event batches.\n"
                     + "".join(f"\n- {line}" for line in changes) + ("\n" if changes else ""),
        "include/libtrace/config.h": ("#ifndef LIBTRACE_CONFIG_H_\n#define LIBTRACE_CONFIG_H_\n\n"
                                      f"{units}{defines}\n#endif  // LIBTRACE_CONFIG_H_\n"),
        "include/libtrace/logger.h": LOGGER_H,
        "src/backend.h": BACKEND_H,
        "src/backend.cc": BACKEND_CC,
        "src/logger.cc": LOGGER_CC.replace("@BUFFER@", buffer).replace("@FORMAT@", format_call),
    }
    for i, salt in enumerate(salts):
        files[f"src/units/summary_{i:03d}.cc"] = UNIT.format(i=i, salt=salt)
    if plugin_in_project:
        files["scenarios/logging.cc"] = SCENARIOS
    if bench:
        files["bench/CMakeLists.txt"] = BENCH_CMAKE
        files["bench/logging.cc"] = SCENARIOS
        files["allocbench.toml"] = BENCH_TOML
    return files


def _date(day: int) -> str:
    return (datetime(2024, 1, 1, 12, tzinfo=timezone.utc) + timedelta(days=day)).isoformat()


def _git(repo: Path, *args: str, date: str = "2024-01-01T12:00:00+00:00") -> str:
    return run_git(repo, *args, date=date, author=("Lib Trace", "dev@libtrace.example"))


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def _make_upstream(path: Path) -> dict[str, str]:
    """tinyfmt's repository, one commit per version; {version: sha}."""
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    shas = {}
    for day, (version, subject) in enumerate(_UPSTREAM):
        _write(path, _tinyfmt_files(version))
        _git(path, "add", "-A")
        _git(path, "commit", "-q", "-m", subject, date=_date(-30 + day))
        shas[version] = _git(path, "rev-parse", "HEAD")
    return shas


def make_subject(root: Path, *, units: int = 4, plugin_in_project: bool = False,
                 extra_commits: int = 0, reachable_submodule: bool = False) -> Subject:
    """Creates root/"tinyfmt-upstream" and root/"libtrace" (neither may exist): the eight
    commits of the table, `extra_commits` after them that each edit one generated unit (every
    other one README.md too), and the bench project last; the checkout is left clean at the
    last commit. reachable_submodule records the upstream's path in .gitmodules instead of the
    unreachable URL (cloning it then needs ALLOW_FILE_ENV), for tools that fetch submodules."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    upstream = root / "tinyfmt-upstream"
    upstream_commits = _make_upstream(upstream)
    repo = root / "libtrace"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    knobs, salts, changes, tinyfmt = dict(_KNOBS), [17 + 2 * i for i in range(units)], [], "1.0"
    if extra_commits and not units:
        raise ValueError("extra_commits edit generated units: give units >= 1")
    steps = [(s, t, k, f, None) for s, t, k, f in _PLAN]
    for n in range(extra_commits):  # (unit to edit, whether README.md changes too)
        unit = n * 7 % units
        steps.append((f"Tune summary_{unit:03d}'s hashing", None, {}, None, (unit, n % 2 == 1)))
    steps.append((BENCH_SUBJECT, None, {}, None, None))
    commits = []
    for index, (subject, tag, knob_changes, pin, edit) in enumerate(steps, start=1):
        knobs.update(knob_changes)
        if edit is not None:
            unit, readme = edit
            salts[unit] += 1
            if readme:
                changes.append(f"summary_{unit:03d} hashes with salt {salts[unit]}")
        tinyfmt = pin or tinyfmt
        _write(repo, _files(index, knobs, tinyfmt, salts, changes, bench=index == len(steps),
                            plugin_in_project=plugin_in_project))
        if index == 1:
            _git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q",
                 str(upstream), SUBMODULE)
            url = str(upstream) if reachable_submodule else UNREACHABLE_URL
            _git(repo, "config", "-f", ".gitmodules", f"submodule.{SUBMODULE}.url", url)
            _git(repo, "submodule", "sync", "-q")
        if pin is not None:
            _git(repo / SUBMODULE, "checkout", "-q", "--detach", upstream_commits[pin])
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", subject, date=_date(index))
        if tag is not None:
            _git(repo, "tag", tag)
        commits.append(Commit(index, _git(repo, "rev-parse", "HEAD"), subject, tag, dict(knobs),
                              tinyfmt))
    return Subject(repo, upstream, upstream_commits, tuple(commits), plugin_in_project)
