#include "options.h"

#include <gtest/gtest.h>

#include "user_error.h"

namespace allocbench {
namespace {

Options Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "allocbench-run");
  return ParseOptions(static_cast<int>(args.size()), args.data());
}

std::string ParseError(std::vector<const char*> args) {
  try {
    Parse(std::move(args));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(Options, Defaults) {
  const Options o = Parse({});
  EXPECT_TRUE(o.plugins.empty());
  EXPECT_TRUE(o.count);
  EXPECT_TRUE(o.time);
  EXPECT_EQ(o.count_options.warmup, 1000);
  EXPECT_EQ(o.count_options.ops, 1000);
  EXPECT_EQ(o.time_options.repetitions, 5);
  EXPECT_TRUE(o.isolate);
  EXPECT_EQ(o.instance_timeout_s, 600);
  const Options set = Parse({"--instance-timeout", "2.5", "--no-isolation"});
  EXPECT_EQ(set.instance_timeout_s, 2.5);
  EXPECT_FALSE(set.isolate);
}

TEST(Options, AgainstIsThePairedPassAloneWithItsOwnSettings) {
  const Options plain = Parse({});
  EXPECT_TRUE(plain.paired.against.empty());
  EXPECT_EQ(plain.paired.budget_s, 1.0);
  EXPECT_EQ(plain.paired.sessions, 10);
  EXPECT_EQ(plain.paired.batch_s, 100e-6);
  const Options o =
      Parse({"--plugin", "a.so", "--against", "b.so", "--paired-time", "2", "--paired-sessions",
             "4", "--batch-time", "0.001", "--instance-timeout", "10"});
  EXPECT_EQ(o.paired.against, "b.so");
  EXPECT_EQ(o.paired.budget_s, 2.0);
  EXPECT_EQ(o.paired.sessions, 4);
  EXPECT_EQ(o.paired.batch_s, 0.001);
  EXPECT_FALSE(o.count);  // the paired pass alone
  // A side silent for most of the instance's time is named before the isolation kills both.
  EXPECT_DOUBLE_EQ(o.paired.hang_s, 9.0);
  EXPECT_EQ(ParseError({"--plugin", "a.so", "--against", "b.so", "--paired-sessions", "0"}),
            "--paired-sessions expects a whole number >= 1, not '0'");
  EXPECT_EQ(ParseError({"--plugin", "a.so", "--against", "b.so", "--instructions"}),
            "--against runs only the paired time pass: drop --instructions, --no-count and "
            "--no-time (measure counts in a run of their own)");
}

TEST(Options, BothSpellingsOfValues) {
  const Options o = Parse({"--plugin", "a.so", "--plugin=b.so", "--count-ops=50", "--count-warmup",
                           "7", "--repetitions=3", "--min-time", "0.01", "--filter", "span",
                           "--out", "r.json", "--no-time", "--context", "revision.sha=abc"});
  EXPECT_EQ(o.plugins, (std::vector<std::string>{"a.so", "b.so"}));
  EXPECT_EQ(o.count_options.ops, 50);
  EXPECT_EQ(o.count_options.warmup, 7);
  EXPECT_EQ(o.time_options.repetitions, 3);
  EXPECT_EQ(o.time_options.min_time_s, 0.01);
  EXPECT_EQ(o.filter, "span");
  EXPECT_EQ(o.out, "r.json");
  EXPECT_FALSE(o.time);
  ASSERT_EQ(o.context.size(), 1u);
  EXPECT_EQ(o.context[0].first, "revision.sha");
  EXPECT_EQ(o.context[0].second, "abc");
}

TEST(Options, ForceCountOpsIsOffUnlessGiven) {
  EXPECT_FALSE(Parse({}).count_options.force);
  const Options o = Parse({"--count-ops", "02", "--force-count-ops"});
  EXPECT_TRUE(o.count_options.force);
  EXPECT_EQ(o.count_options.ops, 2);  // zero-padded, as allocbench profile passes it
  EXPECT_EQ(ParseError({"--force-count-ops=1"}), "--force-count-ops takes no value (see --help)");
}

TEST(Options, InstructionsAreOffUnlessGivenAndCyclesNeedThem) {
  const Options plain = Parse({});
  EXPECT_FALSE(plain.instructions);
  EXPECT_FALSE(plain.count_options.callgrind);
  const Options o = Parse({"--instructions", "--estimated-cycles", "--no-count", "--no-time"});
  EXPECT_TRUE(o.instructions && o.estimated_cycles);  // the instructions pass alone is a run
  EXPECT_FALSE(o.count_options.callgrind);            // only the run under callgrind collects
  EXPECT_EQ(ParseError({"--estimated-cycles"}),
            "--estimated-cycles needs --instructions (it is part of that pass); add it");
  EXPECT_EQ(ParseError({"--instructions=yes"}), "--instructions takes no value (see --help)");
  EXPECT_TRUE(Parse({"--callgrind-dumps", "/tmp/x/cg"}).count_options.callgrind);
}

TEST(Options, Errors) {
  EXPECT_EQ(ParseError({"--frobnicate"}), "unknown flag '--frobnicate' (see --help)");
  EXPECT_EQ(ParseError({"--count-ops", "0"}), "--count-ops expects a whole number >= 1, not '0'");
  EXPECT_EQ(ParseError({"--count-ops", "12x"}),
            "--count-ops expects a whole number >= 1, not '12x'");
  EXPECT_EQ(ParseError({"--min-time", "-1"}),
            "--min-time expects a finite number of seconds > 0, not '-1'");
  for (const char* bad : {"inf", "nan", "0", "1e999"}) {
    EXPECT_EQ(ParseError({"--instance-timeout", bad}),
              std::string("--instance-timeout expects a finite number of seconds > 0, not '") +
                  bad + "'");
  }
  EXPECT_EQ(ParseError({"--no-isolation=1"}), "--no-isolation takes no value (see --help)");
  EXPECT_EQ(ParseError({"--out"}), "--out needs a value (see --help)");
  EXPECT_EQ(ParseError({"--list=yes"}), "--list takes no value (see --help)");
  EXPECT_EQ(ParseError({"--context", "novalue"}), "--context expects KEY=VALUE, not 'novalue'");
  EXPECT_EQ(ParseError({"--no-count", "--no-time"}),
            "--no-count and --no-time together leave nothing to measure; drop one");
}

}  // namespace
}  // namespace allocbench
