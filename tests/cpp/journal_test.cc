// FILE.partial: one line per instance, appended, and read back whole or cut off mid-line.
#include "journal.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "results_json.h"

namespace allocbench {
namespace {

using nlohmann::json;

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/allocbench-journal-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/r.json.partial";
  }
  void TearDown() override {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  std::string Content() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  std::string dir_, path_;
};

const json kContext = {{"allocator", {{"name", "glibc"}}}};

json Entry(const std::string& name, int bytes) {
  return {{"name", name}, {"alloc", {{"bytes_per_op", bytes}}}};
}

std::string Header() {
  json header = ResultsDocument(kContext, json::array(), false);
  header["journal"] = true;
  return header.dump() + "\n";
}

TEST_F(JournalTest, NothingIsWrittenBeforeTheFirstEntryThenOneLineEach) {
  Journal journal(path_, kContext);
  struct stat st;
  EXPECT_NE(stat(path_.c_str(), &st), 0);
  journal.Append(Entry("a", 96));
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  const ino_t inode = st.st_ino;
  journal.Append(Entry("b", 24));
  // Appended in place, not rewritten: the same file, each entry one line after the header.
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_ino, inode);
  EXPECT_EQ(Content(), Header() + R"({"alloc":{"bytes_per_op":96},"name":"a"})"
                                  "\n"
                                  R"({"alloc":{"bytes_per_op":24},"name":"b"})"
                                  "\n");
  journal.Remove();
  EXPECT_NE(stat(path_.c_str(), &st), 0);
}

TEST_F(JournalTest, ReadBackItIsTheDocumentOfTheEntriesSoFar) {
  {
    Journal journal(path_, kContext);
    journal.Append(Entry("a", 96));
    journal.Append(Entry("b", 24));
  }
  EXPECT_EQ(ReadResults(path_),
            ResultsDocument(kContext, json::array({Entry("a", 96), Entry("b", 24)}), false));
}

TEST_F(JournalTest, ALineCutOffByAKillIsDropped) {
  {
    std::ofstream out(path_);
    out << Header() << Entry("a", 96).dump() << "\n"
        << R"({"alloc":{"bytes_pe)";
  }
  EXPECT_EQ(ReadResults(path_), ResultsDocument(kContext, json::array({Entry("a", 96)}), false));
}

TEST_F(JournalTest, ADocumentWrittenWholeIsReadAsItIs) {
  const json doc = ResultsDocument(kContext, json::array({Entry("a", 96)}), true);
  WriteFileAtomically(path_, doc.dump(2) + "\n");
  EXPECT_EQ(ReadResults(path_), doc);
}

TEST_F(JournalTest, NoFileOrNoResultsIsNull) {
  EXPECT_TRUE(ReadResults(path_).is_null());
  WriteFileAtomically(path_, "{\"results\": 3}\n");
  EXPECT_TRUE(ReadResults(path_).is_null());
}

}  // namespace
}  // namespace allocbench
