#include "paired_worker.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "barrier.h"
#include "footprint.h"
#include "isolation.h"
#include "plugin_loader.h"
#include "user_error.h"

namespace allocbench {
namespace {

PairedSlot* g_slot = nullptr;

// The first error wins: it is the cause, what follows it is its consequence.
void SetError(PairedSlot* slot, const std::string& text) {
  if (slot->failed.load(std::memory_order_acquire) != 0) return;
  const size_t n = std::min(text.size(), sizeof slot->error - 1);
  std::memcpy(slot->error, text.data(), n);
  slot->error[n] = '\0';
  slot->failed.store(1, std::memory_order_release);
  Bump(&slot->events);
}

[[noreturn]] void OnTerminate() {
  SetError(g_slot, DescribeUncaught() + " (uncaught)");
  std::abort();
}

class PairedRun {
 public:
  PairedRun(const Instance& instance, const PairedCpus& cpus, PairedSlot* slot)
      : instance_(instance), cpus_(cpus), slot_(slot), barrier_(instance.threads) {}

  void Run() {
    const int n = instance_.threads;
    std::vector<ThreadContext> contexts(static_cast<size_t>(n));
    for (ThreadContext& c : contexts) c.run = this;
    const auto body = [&](int i) {
      if (!cpus_.cpus.empty())
        PinThisThread(cpus_.cpus[static_cast<size_t>(i) % cpus_.cpus.size()]);
      State state(&kHost, &contexts[static_cast<size_t>(i)], instance_.arg_values.data(),
                  instance_.arg_values.size(), n, i);
      // Thread 0 is the worker's main thread, whose callers are the coordinator's code (a
      // forked copy): an exception must not unwind into them. Uncaught, as on other threads.
      try {
        instance_.function(state);
      } catch (...) {
        std::terminate();
      }
      if (!state.loop_finished()) {
        Fail(state.loop_started()
                 ? "the scenario left its measured loop early (break or return inside it)"
                 : "the scenario body has no `for (auto _ : state)` loop");
      }
    };
    std::vector<std::thread> threads;
    for (int i = 1; i < n; ++i) threads.emplace_back(body, i);
    body(0);
    for (std::thread& t : threads) t.join();
  }

 private:
  struct ThreadContext {
    PairedRun* run = nullptr;
    bool started = false;
    bool in_batch = false;
    bool paused = false;
    int64_t cpu0 = 0;
    int64_t paused_wall0 = 0;
    int64_t paused_cpu0 = 0;
  };

  static int64_t ThreadCpu() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }

  void Fail(const std::string& why) {
    failed_.store(true);
    SetError(slot_, why);
    barrier_.Abort();
  }

  // A batch ends (or the loop begins) on this thread: every thread meets, the last one hands
  // the batch's times to the coordinator and waits for the next batch, then all go on.
  int64_t Cross(ThreadContext* t) {
    if (t->in_batch) {
      t->in_batch = false;
      const int64_t cpu = ThreadCpu();
      if (t->paused) {  // paused across the boundary: the rest of this batch was not timed
        paused_cpu_sum_ += cpu - t->paused_cpu0;
        paused_wall_sum_ += ClockNs(CLOCK_MONOTONIC) - t->paused_wall0;
      }
      cpu_sum_ += cpu - t->cpu0;
    }
    if (failed_.load()) return 0;
    bool last = false;
    if (!barrier_.Wait(&last)) return 0;
    if (last) Turn();
    if (!barrier_.Wait(nullptr)) return 0;
    const int64_t batch = batch_;  // written before the barrier, which orders it
    if (batch == 0) return 0;
    t->in_batch = true;
    t->cpu0 = ThreadCpu();
    if (t->paused) {
      t->paused_cpu0 = t->cpu0;
      t->paused_wall0 = t0_;
    }
    return batch;
  }

  void Turn() {
    const int64_t end = ClockNs(CLOCK_MONOTONIC);
    if (batch_ > 0) {
      slot_->wall_ns = end - t0_ - paused_wall_sum_.exchange(0) / instance_.threads;
      slot_->cpu_ns = cpu_sum_.exchange(0) - paused_cpu_sum_.exchange(0);
      slot_->done.store(command_, std::memory_order_release);
      Bump(&slot_->events);
    } else {
      slot_->ready.store(1, std::memory_order_release);
      Bump(&slot_->events);
    }
    uint32_t c;
    while ((c = slot_->command.load(std::memory_order_acquire)) == command_) {
      FutexWait(&slot_->command, command_, nullptr);
    }
    command_ = c;
    batch_ = slot_->batch_ops;
    t0_ = ClockNs(CLOCK_MONOTONIC);
  }

  static int64_t Start(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    if (t->started) {
      t->run->Fail("the scenario body runs `for (auto _ : state)` more than once");
      return 0;
    }
    t->started = true;
    return t->run->Cross(t);
  }
  static int64_t Next(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    return t->run->Cross(t);
  }
  static void Pause(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    if (!t->in_batch || t->paused) return t->run->Fail("PauseTiming() outside the measured loop");
    t->paused = true;
    t->paused_wall0 = ClockNs(CLOCK_MONOTONIC);
    t->paused_cpu0 = ThreadCpu();
  }
  static void Resume(void* ctx) {
    auto* t = static_cast<ThreadContext*>(ctx);
    if (!t->in_batch || !t->paused) {
      return t->run->Fail("ResumeTiming() outside the measured loop");
    }
    t->paused = false;
    t->run->paused_cpu_sum_ += ThreadCpu() - t->paused_cpu0;
    t->run->paused_wall_sum_ += ClockNs(CLOCK_MONOTONIC) - t->paused_wall0;
  }
  static void Skip(void* ctx, const char* message) {
    static_cast<ThreadContext*>(ctx)->run->Fail(message ? message
                                                        : "SkipWithError() with no message");
  }
  static void CountThisThread(void*) {}
  static void SetCounter(void*, const char*, double, const char*) {}
  static internal::FootprintData Footprint(void*) { return ReadProcessFootprint(); }
  static constexpr internal::Host kHost = {&Start,           &Next,       &Pause,    &Resume, &Skip,
                                           &CountThisThread, &SetCounter, &Footprint};

  const Instance& instance_;
  const PairedCpus& cpus_;
  PairedSlot* slot_;
  Barrier barrier_;
  std::atomic<bool> failed_{false};
  std::atomic<int64_t> cpu_sum_{0};
  std::atomic<int64_t> paused_cpu_sum_{0};
  std::atomic<int64_t> paused_wall_sum_{0};
  // Written by the last thread of a crossing, read by all after it.
  int64_t batch_ = 0;
  int64_t t0_ = 0;
  uint32_t command_ = 0;
};

}  // namespace

void PinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void PairedWorkerMain(const std::string& plugin, const std::string& instance,
                      const PairedCpus& cpus, PairedSlot* slot) {
  g_slot = slot;
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the coordinator gone: nobody will ask for a batch
  std::set_terminate(OnTerminate);
  int status = 0;
  try {
    std::vector<Instance> all = ExpandInstances({LoadPlugin(plugin)});
    const Instance* found = nullptr;
    for (const Instance& i : all) {
      if (i.name == instance) found = &i;
    }
    if (found == nullptr) {
      SetError(slot, "this build has no instance named '" + instance + "'");
      status = 2;
    } else if (!found->refusal.empty()) {
      SetError(slot, found->refusal);
      status = 2;
    } else {
      PairedRun(*found, cpus, slot).Run();
    }
  } catch (const UserError& e) {
    SetError(slot, e.what());
    status = 2;
  }
  slot->ended.store(1, std::memory_order_release);
  Bump(&slot->events);
  std::fflush(nullptr);
  _exit(status);
}

}  // namespace allocbench
