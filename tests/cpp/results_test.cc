// The results document, its atomic writing, and the console table: all driven by fields.h.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "console_table.h"
#include "fields.h"
#include "results_json.h"
#include "user_error.h"

namespace allocbench {
namespace {

using nlohmann::json;

InstanceResult Sample() {
  InstanceResult r;
  r.instance.name = "span_creation/web_server/tags:7";
  r.instance.scenario = "span_creation/web_server";
  r.instance.args = {{"tags", 7}};
  r.instance.arg_values = {7};
  r.instance.plugin = "p.so";
  AllocMetrics a;
  a.warmup_ops = 1000;
  a.window_ops = 1000;
  a.bytes_per_op = 206;
  a.allocs_per_op = 5;
  a.frees_per_op = 5;
  a.peak_live_bytes = 248;
  r.alloc = a;
  TimeMetrics t;
  t.samples_ns = {10, 12, 11};
  t.iterations = {100, 100, 100};
  Summarize(t, 1);
  r.time = t;
  return r;
}

// What an instructions pass with the cache simulation adds: 2 windows of 1000 ops, 7 Ir each.
InstructionMetrics SampleInstructions() {
  InstructionMetrics m;
  m.window_ops = 1000;
  const callgrind::Events window = {{"Ir", 7000}, {"Dr", 2000}, {"Dw", 1000},
                                    {"I1mr", 0},  {"D1mr", 10}, {"D1mw", 0},
                                    {"ILmr", 0},  {"DLmr", 1},  {"DLmw", 0}};
  m.windows[0] = m.windows[1] = window;
  m.instructions_per_op = 7;
  m.estimated_cycles_per_op = 10.07;
  return m;
}

TEST(ResultsJson, DocumentCarriesSchemaFieldsAndEveryMetric) {
  const json context = {{"allocator", {{"name", "glibc"}}}};
  InstanceResult sample = Sample();
  sample.instructions = SampleInstructions();
  const json doc = ResultsDocument(context, json::array({ResultToJson(sample, "glibc")}), true);
  EXPECT_EQ(doc["schema_version"], kResultsSchemaVersion);
  EXPECT_EQ(doc["complete"], true);
  ASSERT_EQ(doc["fields"].size(), std::size(kFields));
  const json& r = doc["results"][0];
  EXPECT_EQ(r["allocator"], "glibc");
  EXPECT_EQ(r["args"], json({{"tags", 7}}));
  EXPECT_EQ(r["alloc"]["bytes_per_op"], 206.0);
  EXPECT_EQ(r["alloc"]["peak_live_bytes"], 248);
  EXPECT_TRUE(r["alloc"]["bytes_per_op"].is_number_integer());
  EXPECT_EQ(r["alloc"]["steady"], true);
  EXPECT_FALSE(r["alloc"].contains("steady_reason"));
  EXPECT_EQ(r["time"]["samples_ns_per_op"], json({10.0, 12.0, 11.0}));
  EXPECT_EQ(r["time"]["ns_per_op"], 11.0);
  EXPECT_EQ(r["instructions"]["instructions_per_op"], 7);
  EXPECT_TRUE(r["instructions"]["instructions_per_op"].is_number_integer());
  EXPECT_EQ(r["instructions"]["estimated_cycles_per_op"], 10.07);
  EXPECT_EQ(r["instructions"]["windows"][1]["DLmr"], 1);
  EXPECT_EQ(r["instructions"]["window_ops"], 1000);
  EXPECT_FALSE(r.contains("error"));
  // Every field of the list is in its section: the list is the schema.
  for (const Field& f : kFields) {
    EXPECT_TRUE(r[SectionName(f.section)].contains(f.key)) << f.key;
  }
}

TEST(ResultsJson, CountersAreWrittenWithTheirUnits) {
  InstanceResult r = Sample();
  EXPECT_FALSE(ResultToJson(r, "glibc").contains("counters"));
  r.counters = {{"floor_empty_rss_bytes", 2621440, "B"}, {"set_size", 4096, ""}};
  const json j = ResultToJson(r, "glibc");
  EXPECT_EQ(j["counters"], json({{"floor_empty_rss_bytes", {{"value", 2621440.0}, {"unit", "B"}}},
                                 {"set_size", {{"value", 4096.0}, {"unit", ""}}}}));
}

TEST(ResultsJson, AFailedInstanceHasAnErrorAndNoMetrics) {
  InstanceResult r = Sample();
  r.alloc.reset();
  r.time.reset();
  r.error = "count pass: boom";
  const json j = ResultToJson(r, "glibc");
  EXPECT_EQ(j["error"], "count pass: boom");
  EXPECT_TRUE(j["alloc"].is_null());
  EXPECT_TRUE(j["time"].is_null());
}

TEST(ResultsJson, AtomicWriteReplacesWholeFiles) {
  const std::string path = ::testing::TempDir() + "/allocbench_results_test.json";
  WriteFileAtomically(path, "first");
  WriteFileAtomically(path, "second");
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(), "second");
  EXPECT_NE(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK), 0);
  std::remove(path.c_str());
}

TEST(ResultsJson, UnwritablePathsAreUserErrors) {
  try {
    CheckWritable("/nonexistent-dir/r.json");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write '/nonexistent-dir/r.json' (create: No such file or directory); "
              "choose a writable --out path");
  }
}

// A rename replaces whatever is at the path: a link, a FIFO or a device must be refused instead.
TEST(ResultsJson, OnlyRegularFilesAreEverReplaced) {
  const std::string dir =
      ::testing::TempDir() + "/allocbench_out_kinds_" + std::to_string(getpid());
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string target = dir + "/target.json";
  WriteFileAtomically(target, "keep");
  ASSERT_EQ(symlink(target.c_str(), (dir + "/link.json").c_str()), 0);
  ASSERT_EQ(mkfifo((dir + "/fifo.json").c_str(), 0644), 0);
  const std::pair<std::string, std::string> cases[] = {
      {"link.json", "a symbolic link"}, {"fifo.json", "a FIFO"}, {"", "a directory"}};
  for (const auto& [name, kind] : cases) {
    const std::string path = dir + "/" + name;
    for (auto write : {+[](const std::string& p) { WriteFileAtomically(p, "new"); },
                       +[](const std::string& p) { CheckWritable(p); }}) {
      try {
        write(path);
        ADD_FAILURE() << "expected a UserError for " << path;
      } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()), "cannot write '" + path + "': it is " + kind +
                                             ", and allocbench-run writes only regular files; "
                                             "choose another --out path");
      }
    }
  }
  struct stat st;
  ASSERT_EQ(lstat((dir + "/link.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ASSERT_EQ(lstat((dir + "/fifo.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  std::ifstream in(target);
  std::stringstream content;
  content << in.rdbuf();
  EXPECT_EQ(content.str(), "keep");
  for (const char* name : {"/link.json", "/fifo.json", "/target.json"})
    unlink((dir + name).c_str());
  rmdir(dir.c_str());
}

TEST(ConsoleTable, ColumnsComeFromTheFieldList) {
  InstanceResult unsteady = Sample();
  unsteady.instance.name = "grows";
  unsteady.alloc->steady = false;
  unsteady.alloc->steady_reason = "amortized growth: ...";
  InstanceResult failed = Sample();
  failed.instance.name = "broken";
  failed.alloc.reset();
  failed.time.reset();
  failed.error = "count pass: boom";
  const std::string table =
      FormatTable(json::array({ResultToJson(Sample(), "glibc"), ResultToJson(unsteady, "glibc"),
                               ResultToJson(failed, "glibc")}));
  EXPECT_EQ(table,
            "scenario                         B/op  allocs/op  ns/op     cv       ops/s\n"
            "--------------------------------------------------------------------------\n"
            "span_creation/web_server/tags:7   206          5   11.0  0.091  90,909,091\n"
            "grows *                           206          5   11.0  0.091  90,909,091\n"
            "broken !                            -          -      -      -           -\n"
            "  * grows: not steady: amortized growth: ...\n"
            "  ! broken: error: count pass: boom\n");
}

TEST(ConsoleTable, NamesAndErrorsCannotDriveTheTerminal) {
  InstanceResult failed = Sample();
  failed.instance.name = "a\x1b[2Jb";
  failed.alloc.reset();
  failed.time.reset();
  failed.error = "count pass: line one\nline two\x07";
  const std::string table = FormatTable(json::array({ResultToJson(failed, "glibc")}));
  EXPECT_EQ(table.find('\x1b'), std::string::npos) << table;
  EXPECT_EQ(table.find('\x07'), std::string::npos) << table;
  EXPECT_NE(table.find("  ! a\\x1b[2Jb: error: count pass: line one\nline two\\x07\n"),
            std::string::npos)
      << table;
}

TEST(ConsoleTable, Values) {
  EXPECT_EQ(FormatValue(206, "B"), "206");
  EXPECT_EQ(FormatValue(4.5, "B"), "4.500");
  EXPECT_EQ(FormatValue(12.345, "ns"), "12.3");
  EXPECT_EQ(FormatValue(1234567.4, "ops/s"), "1,234,567");
  EXPECT_EQ(FormatValue(999, "ops/s"), "999");
}

}  // namespace
}  // namespace allocbench
