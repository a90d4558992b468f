// Loading plugins and naming their instances; every refusal names the file and the fix.
#include "plugin_loader.h"

#include <gtest/gtest.h>

#include <map>

#include "user_error.h"

namespace allocbench {
namespace {

const std::string kDir = TEST_PLUGIN_DIR;

std::string LoadError(const std::string& path) {
  try {
    LoadPlugin(path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginLoader, ExpandsArgumentsAndThreadsIntoNamedInstances) {
  const std::vector<Instance> all = ExpandInstances({LoadPlugin(kDir + "/ground_truth.so")});
  std::vector<std::string> names;
  for (const Instance& inst : all) names.push_back(inst.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"ground_truth/mixed", "ground_truth/setup_and_pause",
                                      "ground_truth/background", "ground_truth/growing_vector",
                                      "ground_truth/threaded/threads:16",
                                      "ground_truth/sized/bytes:24", "ground_truth/sized/bytes:96",
                                      "ground_truth/fails", "ground_truth/crash_on_request"}));
  const Instance& sized = all[6];
  EXPECT_EQ(sized.scenario, "ground_truth/sized");
  ASSERT_EQ(sized.args.size(), 1u);
  EXPECT_EQ(sized.args[0].first, "bytes");
  EXPECT_EQ(sized.args[0].second, 96);
  EXPECT_EQ(all[4].threads, 16);
}

TEST(PluginLoader, TheSamePluginTwiceIsADuplicateInstance) {
  const Plugin p = LoadPlugin(kDir + "/ground_truth.so");
  try {
    ExpandInstances({p, p});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'ground_truth/mixed' is registered twice"),
              std::string::npos)
        << e.what();
  }
}

TEST(PluginLoader, MissingFile) {
  EXPECT_EQ(LoadError(kDir + "/nope.so"),
            "--plugin '" + kDir + "/nope.so': no such file; build it first or fix the path");
}

TEST(PluginLoader, NotASharedLibrary) {
  const std::string error = LoadError(TEST_PLUGIN_DIR "/../../CMakeCache.txt");
  EXPECT_NE(error.find("cannot be loaded as a shared library"), std::string::npos) << error;
}

TEST(PluginLoader, ASharedLibraryThatIsNotAPlugin) {
  const std::string error = LoadError(kDir + "/not_a_plugin.so");
  EXPECT_NE(error.find("not an allocbench plugin"), std::string::npos) << error;
}

TEST(PluginLoader, AnotherApiVersionNamesBothVersions) {
  EXPECT_EQ(LoadError(kDir + "/api_mismatch.so"),
            "--plugin '" + kDir +
                "/api_mismatch.so': built against scenario API v999, but this allocbench-run "
                "speaks v1; rebuild the plugin against this allocbench");
}

TEST(PluginLoader, ABrokenDescriptionIsRefusedNotFollowed) {
  EXPECT_EQ(LoadError(kDir + "/null_describe.so"),
            "--plugin '" + kDir +
                "/null_describe.so': allocbench_plugin_describe() returned NULL; build the plugin "
                "from sources that include <allocbench/scenario.h> instead of defining it "
                "yourself");
  EXPECT_EQ(LoadError(kDir + "/broken_describe.so"),
            "--plugin '" + kDir +
                "/broken_describe.so': its description is broken (scenario 0: name is NULL); "
                "rebuild it against this allocbench's <allocbench/scenario.h>");
}

// Names reach JSON and terminals: one that is not printable UTF-8 is kept escaped and refused,
// and the plugin's other instances are still there to run.
TEST(PluginLoader, AnUnprintableNameIsRefusedAloneAndShownEscaped) {
  const std::vector<Instance> all = ExpandInstances({LoadPlugin(kDir + "/faults.so")});
  std::map<std::string, std::string> refusals;
  for (const Instance& inst : all) refusals[inst.name] = inst.refusal;
  EXPECT_EQ(refusals.at("misuse/control_name/\\x0a\\x1b[31mred"),
            "not run: its name (shown escaped) has a control character; give the scenario a "
            "printable Name() and ArgNames()");
  EXPECT_EQ(refusals.at("misuse/invalid_utf8_name/\\xff\\xfe"),
            "not run: its name (shown escaped) is not valid UTF-8; give the scenario a "
            "printable Name() and ArgNames()");
  EXPECT_EQ(refusals.at("good/before"), "");
  EXPECT_EQ(refusals.at("good/after"), "");
}

TEST(PluginLoader, ADirectoryIsRefused) {
  EXPECT_NE(LoadError(kDir).find("not a regular file"), std::string::npos);
}

}  // namespace
}  // namespace allocbench
