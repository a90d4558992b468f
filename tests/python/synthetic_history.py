"""A synthetic user project with a known allocation history, for `allocbench sweep`/`bisect`.

make_history() writes "tinytracer": a tiny tracing library (include/tinytracer/, src/span.cc)
and its scenario plugin (bench/*.cc, globbed by CMake), twelve deterministic commits on `main`.
Every allocation is a `::operator new(n)` in src/span.cc, n from the knobs in config.h (SPAN =
TT_SPAN_BYTES, TAG_B = TT_TAG_BYTES, TAG_A = TT_TAG_ALLOCS, EXTRA = TT_CHILD_EXTRA_BYTES, LINK =
TT_CHILD_LINK_BYTES); Finish() frees all of a span's blocks:

  StartSpan()        1 alloc of SPAN
  StartChild(root)   1 alloc of SPAN + EXTRA, plus 1 child-list node of LINK in the root
  SetTag(span, key)  TAG_A allocs of TAG_B each

Instances (one op = one loop iteration; B = requested bytes/op, A = allocs/op, both exact):
  tinytracer/start_span        start, finish         B = SPAN                        A = 1
  tinytracer/set_tag           start, 3 tags, finish B = SPAN + 3*TAG_A*TAG_B        A = 1+3*TAG_A
  tinytracer/trace/children:5  root + 5 children     B = SPAN + 5*(SPAN+EXTRA+LINK)  A = 11
bench/trace.cc is added at commit 4; earlier commits have it only with today's bench/ grafted.

 #  subject                                    tag  SPAN TAG_B TAG_A EXTRA LINK  start set_tag trace
 1  Add tinytracer with span and tag scenarios v1.0   64    24     1     0   16     64   136/4   464
 2  Grow the span header by 32 bytes                  96    24     1     0   16     96   168/4   656
 3  Store each tag as key and value blocks     v1.1   96    24     2     0   16     96   240/7   656
 4  Add trace scenario; widen child list nodes        96    24     2     0   32     96   240/7   736
 5  Give child spans a parent-context block           96    24     2    48   32     96   240/7   976
 6  Enlarge the tag buffer to 40 bytes         v1.2   96    40     2    48   32     96   336/7   976
 7  Refactor SetTag (breaks the build)                96    40     2    48   32  does not build
 8  Fix the build: missing semicolon in SetTag        96    40     2    48   32     96   336/7   976
 9  Document the units of config.h             v1.3   96    40     2    48   32     96   336/7   976
10  Store each tag in one block                       96    40     1    48   32     96   216/4   976
11  Shrink the span header to 80 bytes                80    40     1    48   32     80   200/4   880
12  Drop the child parent-context block        v2.0   80    40     1     0   32     80   200/4   640

(B/op, with allocs/op after the slash for set_tag; start_span is always 1 alloc/op, trace 11.)
Commit 7 has a syntax error in src/span.cc and commit 8 fixes it; neither changes a number: a
change in the commit after a broken one could not be told from the broken one (bisect would
rightly name both). Commit 9 changes only a comment. B/op changes: start_span at 2, 11; set_tag
at 2, 3, 6, 10, 11; trace at 2, 4, 5, 11, 12 (trace first exists at 4 without grafting).
Commit.expected() computes these numbers from the knobs; this table is for reading.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

TARGET = "tinytracer_scenarios"  # CMake target of the plugin
PLUGIN = "tinytracer_scenarios.so"  # the plugin, relative to the build folder

START_SPAN = "tinytracer/start_span"
SET_TAG = "tinytracer/set_tag"
TRACE = "tinytracer/trace/children:5"
TAGS_PER_OP = 3  # SetTag calls per op of set_tag (kTags in bench/spans.cc)
CHILDREN = 5  # children per op of trace (Arg(5) in bench/trace.cc)
TRACE_ADDED = 4  # the commit that adds bench/trace.cc
BROKEN = 7  # the commit that does not compile
COMMENT_ONLY = 9  # the commit that only edits a comment

_KNOBS = {"TT_SPAN_BYTES": 64, "TT_TAG_BYTES": 24, "TT_TAG_ALLOCS": 1,
          "TT_CHILD_EXTRA_BYTES": 0, "TT_CHILD_LINK_BYTES": 16}
_PLAN: tuple[tuple[str, str | None, dict[str, int]], ...] = (  # subject, tag, knob changes
    ("Add tinytracer with span and tag scenarios", "v1.0", {}),
    ("Grow the span header by 32 bytes", None, {"TT_SPAN_BYTES": 96}),
    ("Store each tag as key and value blocks", "v1.1", {"TT_TAG_ALLOCS": 2}),
    ("Add trace scenario; widen child list nodes", None, {"TT_CHILD_LINK_BYTES": 32}),
    ("Give child spans a parent-context block", None, {"TT_CHILD_EXTRA_BYTES": 48}),
    ("Enlarge the tag buffer to 40 bytes", "v1.2", {"TT_TAG_BYTES": 40}),
    ("Refactor SetTag (breaks the build)", None, {}),
    ("Fix the build: missing semicolon in SetTag", None, {}),
    ("Document the units of config.h", "v1.3", {}),
    ("Store each tag in one block", None, {"TT_TAG_ALLOCS": 1}),
    ("Shrink the span header to 80 bytes", None, {"TT_SPAN_BYTES": 80}),
    ("Drop the child parent-context block", "v2.0", {"TT_CHILD_EXTRA_BYTES": 0}),
)


@dataclass(frozen=True)
class Commit:
    index: int  # 1-based position on main
    sha: str
    subject: str
    tag: str | None
    builds: bool
    knobs: dict[str, int]  # the config.h values at this commit

    def expected(self, graft: bool) -> dict[str, dict[str, int]] | None:
        """{instance: {"bytes_per_op": B, "allocs_per_op": A}} measured at this commit; graft:
        with today's bench/ copied in (all scenarios). None when the commit does not build."""
        if not self.builds:
            return None
        k = self.knobs
        span = k["TT_SPAN_BYTES"]
        child = span + k["TT_CHILD_EXTRA_BYTES"] + k["TT_CHILD_LINK_BYTES"]  # span + list node
        tags = TAGS_PER_OP * k["TT_TAG_ALLOCS"]  # tag blocks per op
        out = {
            START_SPAN: {"bytes_per_op": span, "allocs_per_op": 1},
            SET_TAG: {"bytes_per_op": span + tags * k["TT_TAG_BYTES"], "allocs_per_op": 1 + tags},
        }
        if graft or self.index >= TRACE_ADDED:
            out[TRACE] = {"bytes_per_op": span + CHILDREN * child,
                          "allocs_per_op": 1 + CHILDREN * 2}
        return out


@dataclass(frozen=True)
class History:
    repo: Path
    commits: tuple[Commit, ...]

    def bench(self) -> Path:
        """Today's scenario sources (for --graft)."""
        return self.repo / "bench"

    def by_tag(self, tag: str) -> Commit:
        for c in self.commits:
            if c.tag == tag:
                return c
        raise KeyError(tag)


CMAKELISTS = """cmake_minimum_required(VERSION 3.20)
project(tinytracer CXX)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
find_package(allocbench REQUIRED)

add_library(tinytracer STATIC src/span.cc)
target_include_directories(tinytracer PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)

# Every scenario file in bench/, so that a grafted bench/ brings its new files along.
file(GLOB TINYTRACER_SCENARIOS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/bench/*.cc)
allocbench_add_plugin(tinytracer_scenarios SOURCES ${TINYTRACER_SCENARIOS})
target_link_libraries(tinytracer_scenarios PRIVATE tinytracer)
"""

SPAN_H = """#ifndef TINYTRACER_SPAN_H_
#define TINYTRACER_SPAN_H_

namespace tinytracer {

struct Span;

Span* StartSpan();                 // 1 allocation of TT_SPAN_BYTES
Span* StartChild(Span* parent);    // a span of TT_SPAN_BYTES + TT_CHILD_EXTRA_BYTES, plus a
                                   // TT_CHILD_LINK_BYTES node in the parent's child list
void SetTag(Span* span, int key);  // TT_TAG_ALLOCS allocations of TT_TAG_BYTES
void Finish(Span* span);           // frees the span, its tags and its child list

}  // namespace tinytracer

#endif  // TINYTRACER_SPAN_H_
"""

SPAN_CC = """#include "tinytracer/span.h"

#include <new>

#include "tinytracer/config.h"

namespace tinytracer {

// Tag blocks and child-list nodes are chained through their first bytes.
struct Node {
  Node* next;
};

struct Span {
  Node* tags;
  Node* children;
};

static_assert(sizeof(Span) <= TT_SPAN_BYTES, "span header too small");
static_assert(sizeof(Node) < TT_TAG_BYTES && sizeof(Node) <= TT_CHILD_LINK_BYTES, "node");

namespace {

void Push(Node** head, void* block) {
  Node* node = static_cast<Node*>(block);
  node->next = *head;
  *head = node;
}

void FreeAll(Node* node) {
  while (node != nullptr) {
    Node* next = node->next;
    ::operator delete(node);
    node = next;
  }
}

}  // namespace

Span* StartSpan() { return new (::operator new(TT_SPAN_BYTES)) Span{nullptr, nullptr}; }

Span* StartChild(Span* parent) {
  Push(&parent->children, ::operator new(TT_CHILD_LINK_BYTES));
  return new (::operator new(TT_SPAN_BYTES + TT_CHILD_EXTRA_BYTES)) Span{nullptr, nullptr};
}

void SetTag(Span* span, int key) {
  for (int i = 0; i < TT_TAG_ALLOCS; ++i) {
    char* block = static_cast<char*>(::operator new(TT_TAG_BYTES));
    block[TT_TAG_BYTES - 1] = static_cast<char>(key);
    Push(&span->tags, block);
  }
}

void Finish(Span* span) {
  FreeAll(span->tags);
  FreeAll(span->children);
  ::operator delete(span);
}

}  // namespace tinytracer
"""

SPANS_BENCH = """#include <allocbench/scenario.h>

#include "tinytracer/span.h"

// One op: a span started and finished. B/op = TT_SPAN_BYTES, 1 alloc.
ALLOCBENCH_SCENARIO(TtStartSpan, state) {
  for (auto _ : state) {
    tinytracer::Span* span = tinytracer::StartSpan();
    allocbench::DoNotOptimize(span);
    tinytracer::Finish(span);
  }
}
ALLOCBENCH_REGISTER(TtStartSpan)->Name("tinytracer/start_span");

// One op: a span with kTags tags.
// B/op = TT_SPAN_BYTES + kTags * TT_TAG_ALLOCS * TT_TAG_BYTES;
// allocs/op = 1 + kTags * TT_TAG_ALLOCS.
constexpr int kTags = 3;
ALLOCBENCH_SCENARIO(TtSetTag, state) {
  for (auto _ : state) {
    tinytracer::Span* span = tinytracer::StartSpan();
    for (int key = 0; key < kTags; ++key) tinytracer::SetTag(span, key);
    allocbench::DoNotOptimize(span);
    tinytracer::Finish(span);
  }
}
ALLOCBENCH_REGISTER(TtSetTag)->Name("tinytracer/set_tag");
"""

TRACE_BENCH = """#include <allocbench/scenario.h>

#include "tinytracer/span.h"

// One op: a root span and n children, all finished. allocs = 1 + 2n;
// B/op = TT_SPAN_BYTES + n * (TT_SPAN_BYTES + TT_CHILD_EXTRA_BYTES + TT_CHILD_LINK_BYTES).
ALLOCBENCH_SCENARIO(TtTrace, state) {
  const int64_t children = state.range(0);
  for (auto _ : state) {
    tinytracer::Span* root = tinytracer::StartSpan();
    for (int64_t i = 0; i < children; ++i) {
      tinytracer::Span* child = tinytracer::StartChild(root);
      allocbench::DoNotOptimize(child);
      tinytracer::Finish(child);
    }
    allocbench::DoNotOptimize(root);
    tinytracer::Finish(root);
  }
}
ALLOCBENCH_REGISTER(TtTrace)->Name("tinytracer/trace")->Arg(5)->ArgNames({"children"});
"""


def _files(index: int, knobs: dict[str, int]) -> dict[str, str]:
    """The whole tree at commit `index`."""
    units = ("// Every knob is a size in bytes passed to ::operator new, or a count.\n"
             if index >= COMMENT_ONLY else "// Sizes in bytes.\n")
    defines = "".join(f"#define {name} {value}\n" for name, value in knobs.items())
    span_cc = SPAN_CC
    if index == BROKEN:
        span_cc = span_cc.replace("Push(&span->tags, block);", "Push(&span->tags, block)")
    scenarios = "bench/spans.cc" + (" and bench/trace.cc" if index >= TRACE_ADDED else "")
    files = {
        "CMakeLists.txt": CMAKELISTS,
        "README.md": f"# tinytracer\n\nA tiny tracer. Allocation scenarios: {scenarios}.\n",
        "include/tinytracer/config.h": (
            "#ifndef TINYTRACER_CONFIG_H_\n#define TINYTRACER_CONFIG_H_\n\n"
            f"{units}{defines}\n#endif  // TINYTRACER_CONFIG_H_\n"),
        "include/tinytracer/span.h": SPAN_H,
        "src/span.cc": span_cc,
        "bench/spans.cc": SPANS_BENCH,
    }
    if index >= TRACE_ADDED:
        files["bench/trace.cc"] = TRACE_BENCH
    return files


def run_git(repo: Path, *args: str, date: str = "2024-01-01T12:00:00+00:00",
            author: tuple[str, str] = ("Tiny Tracer", "dev@tinytracer.example")) -> str:
    """git in `repo` with nothing of the machine's git configuration and a fixed author and
    date, so that the same history has the same shas everywhere."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1],
               GIT_COMMITTER_NAME=author[0], GIT_COMMITTER_EMAIL=author[1],
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout.strip()


def make_history(root: Path) -> History:
    """Creates root/"tinytracer" (must not exist) with the 12 commits and their tags, and leaves
    the working tree clean at the last commit."""
    repo = Path(root) / "tinytracer"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    knobs = dict(_KNOBS)
    commits = []
    for index, (subject, tag, changes) in enumerate(_PLAN, start=1):
        knobs.update(changes)
        for name, text in _files(index, knobs).items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        date = f"2024-01-{index:02d}T12:00:00+00:00"
        run_git(repo, "add", "-A")
        run_git(repo, "commit", "-q", "-m", subject, date=date)
        if tag is not None:
            run_git(repo, "tag", tag)
        commits.append(Commit(index, run_git(repo, "rev-parse", "HEAD"), subject, tag,
                              index != BROKEN, dict(knobs)))
    return History(repo, tuple(commits))
