// Mode, window, thread and peak semantics observed through real allocations, plus the checks
// that the hooks themselves never allocate, are exported to plugins, and keep every block with
// the allocator that made it. Built once per backend.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "allocbench/counting.h"
#include "counting_test_util.h"

namespace allocbench::counting::testing {
namespace {

void AllocateAndFreeOnce() {
  void* p = malloc(64);
  Escape(p);
  free(p);
  char* q = new char[16];
  Escape(q);
  delete[] q;
}

TEST(BackendTest, NameIsTheLinkedBackend) {
  EXPECT_STREQ(BackendName(), ALLOCBENCH_EXPECTED_BACKEND);
  EXPECT_STRNE(BackendVersion(), "none");
  EXPECT_STRNE(BackendVersion(), "");
  RecordProperty("backend_version", BackendVersion());
}

TEST(ModeTest, PausedCountsNothingEvenWithTheWindowOpen) {
  SetBackgroundWindow(true);
  SetMode(Mode::kPaused);
  const Delta d = Observed(AllocateAndFreeOnce);
  SetMode(Mode::kUnassigned);
  SetBackgroundWindow(false);
  ExpectNothing(d);
}

TEST(ModeTest, IgnoredCountsNothingEvenWithTheWindowOpen) {
  SetBackgroundWindow(true);
  SetMode(Mode::kIgnored);
  const Delta d = Observed(AllocateAndFreeOnce);
  SetMode(Mode::kUnassigned);
  SetBackgroundWindow(false);
  ExpectNothing(d);
}

TEST(ModeTest, UnassignedCountsAsBackgroundOnlyWhileTheWindowIsOpen) {
  ASSERT_EQ(GetMode(), Mode::kUnassigned);
  ExpectNothing(Observed(AllocateAndFreeOnce));

  SetBackgroundWindow(true);
  const Delta open = Observed(AllocateAndFreeOnce);
  SetBackgroundWindow(false);
  EXPECT_EQ(open.scenario.allocs + open.scenario.frees, 0u);
  EXPECT_EQ(open.background.allocs, 2u);
  EXPECT_EQ(open.background.frees, 2u);
  EXPECT_EQ(open.background.requested_bytes, 64u + 16u);
}

// A thread allocbench never touched is kUnassigned; its first counted event also registers it,
// and that registration must count nothing of its own.
TEST(ModeTest, NewThreadIsBackgroundWhileTheWindowIsOpen) {
  std::atomic<int> stage{0};
  std::thread thread([&] {
    while (stage.load() != 1) {
    }
    void* p = malloc(77);
    Escape(p);
    free(p);
    stage.store(2);
    while (stage.load() != 3) {  // std::thread frees its state on exit: not while counting
    }
  });
  const Delta d = Observed([&] {
    SetBackgroundWindow(true);
    stage.store(1);
    while (stage.load() != 2) {
    }
    SetBackgroundWindow(false);
  });
  stage.store(3);
  thread.join();
  EXPECT_EQ(d.background.allocs, 1u);
  EXPECT_EQ(d.background.frees, 1u);
  EXPECT_EQ(d.background.requested_bytes, 77u);
  EXPECT_EQ(d.scenario.allocs + d.scenario.frees, 0u);
}

TEST(ThreadTest, FirstCountedEventOnABrandNewThreadCountsExactlyWhatItDid) {
  void* p = nullptr;
  const Delta d = Observed([&] {
    std::thread([&] {
      SetMode(Mode::kCounting);
      p = malloc(100);
      SetMode(Mode::kPaused);
    }).join();
  });
  ExpectOneAlloc(d, 100, GetTracking());
  free(p);
}

// pthread_join returns after the thread's exit destructors folded its block into the retired
// total, so a Read() after the join must see everything the thread did.
TEST(ThreadTest, ExitedThreadsCountsSurvive) {
  const Delta d = Observed([] {
    std::thread([] {
      SetMode(Mode::kCounting);
      void* p = malloc(50);
      Escape(p);
      free(p);
      char* q = new char[30];
      Escape(q);
      delete[] q;
      SetMode(Mode::kPaused);
    }).join();
  });
  EXPECT_EQ(d.scenario.allocs, 2u);
  EXPECT_EQ(d.scenario.frees, 2u);
  EXPECT_EQ(d.scenario.requested_bytes, 80u);
}

TEST(PeakTest, PeakLiveBytesUnderFullTracking) {
  ScopedTracking tracking(Tracking::kFull);
  void* blocks[3] = {};
  size_t usable_sum = 0;
  int64_t peak = 0;
  int64_t live = 0;
  Counted([&] {
    ResetLive();
    for (void*& p : blocks) p = malloc(32);
    for (void* p : blocks) free(p);
    peak = PeakLiveBytes();
    live = LiveBytes();
  });
  for (void* p : blocks) Escape(p);
  // The blocks are gone; their usable sizes are the same for any 32-byte request.
  for (int i = 0; i < 3; ++i) {
    void* p = malloc(32);
    usable_sum += malloc_usable_size(p);
    free(p);
  }
  EXPECT_GE(peak, 96);
  EXPECT_EQ(peak, static_cast<int64_t>(usable_sum));
  EXPECT_EQ(live, 0);
}

TEST(PeakTest, BasicTrackingLeavesPeakAtZero) {
  ScopedTracking tracking(Tracking::kBasic);
  int64_t peak = -1;
  Counted([&] {
    ResetLive();
    void* p = malloc(32);
    Escape(p);
    free(p);
    peak = PeakLiveBytes();
  });
  EXPECT_EQ(peak, 0);
}

// The hooks never allocate: not for a usable-size look-up, not to register the thread.
TEST(HooksTest, OneMallocIsExactlyOneAllocationUnderEveryTracking) {
  for (Tracking level : {Tracking::kBasic, Tracking::kFull}) {
    ScopedTracking tracking(level);
    void* p = nullptr;
    ExpectOneAlloc(Counted([&] { p = malloc(100); }), 100, level);
    ExpectOneFree(Counted([&] { free(p); }));
  }
}

// Scenario plugins are dlopen'ed after start-up; they must bind to the executable's hooks.
TEST(HooksTest, EveryHookIsExportedFromTheExecutable) {
  Dl_info self{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&AllocateAndFreeOnce), &self), 0);
  const char* const names[] = {"_Znwm",
                               "_Znam",
                               "_ZnwmRKSt9nothrow_t",
                               "_ZnamRKSt9nothrow_t",
                               "_ZnwmSt11align_val_t",
                               "_ZnamSt11align_val_t",
                               "_ZnwmSt11align_val_tRKSt9nothrow_t",
                               "_ZnamSt11align_val_tRKSt9nothrow_t",
                               "_ZdlPv",
                               "_ZdaPv",
                               "_ZdlPvRKSt9nothrow_t",
                               "_ZdaPvRKSt9nothrow_t",
                               "_ZdlPvm",
                               "_ZdaPvm",
                               "_ZdlPvSt11align_val_t",
                               "_ZdaPvSt11align_val_t",
                               "_ZdlPvmSt11align_val_t",
                               "_ZdaPvmSt11align_val_t",
                               "_ZdlPvSt11align_val_tRKSt9nothrow_t",
                               "_ZdaPvSt11align_val_tRKSt9nothrow_t",
                               "malloc",
                               "calloc",
                               "realloc",
                               "reallocarray",
                               "free",
                               "posix_memalign",
                               "aligned_alloc",
                               "memalign",
                               "valloc",
                               "pvalloc",
                               "malloc_usable_size"};
  for (const char* name : names) {
    void* symbol = dlsym(RTLD_DEFAULT, name);
    ASSERT_NE(symbol, nullptr) << name;
    Dl_info where{};
    ASSERT_NE(dladdr(symbol, &where), 0) << name;
    EXPECT_EQ(where.dli_fbase, self.dli_fbase) << name << " resolves to " << where.dli_fname;
  }
}

TEST(HooksTest, DlopenedLibraryAllocatesThroughTheHooks) {
  void* plugin = dlopen(ALLOCBENCH_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(plugin, nullptr) << dlerror();
  using Churn = void (*)();
  auto churn = reinterpret_cast<Churn>(dlsym(plugin, "allocbench_test_plugin_churn"));
  ASSERT_NE(churn, nullptr);
  const Delta d = Counted(churn);
  dlclose(plugin);
  // The plugin: malloc(10), new char[20], aligned new of 64 bytes, calloc(3, 10); all freed.
  EXPECT_EQ(d.scenario.allocs, 4u);
  EXPECT_EQ(d.scenario.frees, 4u);
  EXPECT_EQ(d.scenario.requested_bytes, 10u + 20u + 64u + 30u);
}

// The C library and libstdc++ allocate through the hooks, and their blocks go back to the same
// allocator: a block freed into the wrong one would abort or corrupt the heap here.
TEST(HooksTest, LibraryAllocationsStayWithTheBackend) {
  std::string formatted;
  const Delta d = Counted([&] {
    char* dup = strdup("a string the C library copies");
    EXPECT_GE(malloc_usable_size(dup), strlen(dup) + 1);
    free(dup);

    char* printed = nullptr;
    ASSERT_GT(asprintf(&printed, "%d-%s", 42, "asprintf"), 0);
    EXPECT_GE(malloc_usable_size(printed), strlen(printed) + 1);
    free(printed);

    void* array = reallocarray(nullptr, 10, 8);
    array = reallocarray(array, 100, 8);
    free(array);

    char* buffer = nullptr;
    size_t size = 0;
    FILE* stream = open_memstream(&buffer, &size);
    fprintf(stream, "%s %d", "open_memstream", 7);
    fclose(stream);
    free(buffer);

    std::ofstream sink("/dev/null");  // a filebuf: its buffer comes from operator new[]
    sink << "iostream " << 42 << std::endl;
    sink.close();

    std::ostringstream out;
    out << "ostringstream " << 12345 << ' ' << std::string(100, 'y');
    formatted = out.str();
    formatted.clear();
    formatted.shrink_to_fit();
  });
  EXPECT_GE(d.scenario.allocs, 7u);
  EXPECT_EQ(d.scenario.allocs, d.scenario.frees);
}

}  // namespace
}  // namespace allocbench::counting::testing
