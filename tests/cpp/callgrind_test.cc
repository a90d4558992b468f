// Reading what callgrind dumped for the count windows, and the cycle model, on files written
// here in callgrind's format (as valgrind 3.19 writes them).
#include "callgrind.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace allocbench::callgrind {
namespace {

class Dumps : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/callgrind-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string& f : written_) unlink(f.c_str());
    rmdir(dir_.c_str());
  }
  void Write(const std::string& name, const std::string& trigger, const std::string& events,
             const std::string& totals) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << "# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n"
                        << "pid: 4242\ncmd:  allocbench-run\npart: 1\n\n"
                        << "desc: I1 cache: \ndesc: Timerange: Basic block 0 - 410544\n"
                        << "desc: Trigger: Client Request: " << trigger << "\n\n"
                        << "positions: line\nevents: " << events << "\nsummary: " << totals
                        << "\n\nfl=(1) span.cc\nfn=(1) Op\n12 " << totals
                        << "\n\ntotals: " << totals << "\n";
    written_.push_back(path);
  }
  std::string dir_;
  std::vector<std::string> written_;
};

TEST_F(Dumps, EachWindowIsItsOwnDumpOfThisProcess) {
  Write("cg.4242.1", "allocbench window 1", "Ir", "3114069");
  Write("cg.4242.2", "allocbench window 2", "Ir", "3114070");
  Write("cg.999.2", "allocbench window 2", "Ir", "1");  // another process
  std::string error;
  const auto w1 = ReadWindow(dir_ + "/cg", 4242, 1, &error);
  const auto w2 = ReadWindow(dir_ + "/cg", 4242, 2, &error);
  ASSERT_TRUE(w1 && w2) << error;
  EXPECT_EQ(*w1, (Events{{"Ir", 3114069}}));
  EXPECT_EQ(*w2, (Events{{"Ir", 3114070}}));
  // Consumed: the next instance measured in this process finds its own dump, not this one.
  EXPECT_NE(access((dir_ + "/cg.4242.1").c_str(), F_OK), 0);
  EXPECT_FALSE(ReadWindow(dir_ + "/cg", 4242, 1, &error));
  EXPECT_EQ(access((dir_ + "/cg.999.2").c_str(), F_OK), 0);
}

TEST_F(Dumps, TrailingZeroEventsThatCallgrindLeavesOutAreZero) {
  Write("cg.7.1", "allocbench window 1", "Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw", "700 200 100");
  std::string error;
  const auto w = ReadWindow(dir_ + "/cg", 7, 1, &error);
  ASSERT_TRUE(w) << error;
  EXPECT_EQ(w->at("Dw"), 100);
  EXPECT_EQ(w->at("DLmw"), 0);
  EXPECT_EQ(w->size(), 9u);
}

TEST_F(Dumps, AMissingWindowIsAnErrorNamingWhatWasLookedFor) {
  Write("cg.7.1", "allocbench window 1", "Ir", "5");
  Write("cg.7", "Program termination", "Ir", "0");
  std::string error;
  EXPECT_FALSE(ReadWindow(dir_ + "/cg", 7, 2, &error));
  EXPECT_EQ(error, "callgrind wrote no dump of allocbench window 2 (looked for cg.7.*)");
  EXPECT_FALSE(ReadWindow(dir_ + "/nowhere/cg", 7, 1, &error));
  EXPECT_EQ(error, "cannot read callgrind's folder " + dir_ + "/nowhere");
}

TEST(EstimatedCycles, IsL1HitsPlus5LastLevelHitsPlus35RamAccesses) {
  // 10,000 accesses (7,000 instructions, 2,000 reads, 1,000 writes); 10 miss L1 (5 + 4 + 1), 3
  // of them miss the last level too: 9,990 L1 hits, 7 LL hits, 3 RAM accesses.
  const Events e = {{"Ir", 7000}, {"Dr", 2000}, {"Dw", 1000}, {"I1mr", 5}, {"D1mr", 4},
                    {"D1mw", 1},  {"ILmr", 1},  {"DLmr", 1},  {"DLmw", 1}};
  EXPECT_EQ(EstimatedCycles(e), 9990 + 5 * 7 + 35 * 3);
  EXPECT_EQ(EstimatedCycles({{"Ir", 7000}}), std::nullopt);  // no cache simulation
}

}  // namespace
}  // namespace allocbench::callgrind
