#include "paired_pass.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <vector>

#include "paired_worker.h"
#include "signals.h"
#include "text.h"

namespace allocbench {
namespace {

using nlohmann::json;

constexpr const char* kSideName[2] = {"base", "candidate"};
constexpr int64_t kMaxBatchOps = int64_t{1} << 32;
constexpr int kCalibrationPairs = 3;
constexpr timespec kSlice = {0, 20 * 1000 * 1000};  // how often a silent side is checked on

// SplitMix64: the order within each pair; seeded by the name so a run can be repeated.
struct Order {
  uint64_t state;
  bool CandidateFirst() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return ((z ^ (z >> 31)) & 1) != 0;
  }
};

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

class Coordinator {
 public:
  Coordinator(PairedPage* page, double hang_s)
      : page_(page), hang_ns_(static_cast<int64_t>(hang_s * 1e9)) {}
  ~Coordinator() {
    for (int s = 0; s < 2; ++s) {
      if (pid_[s] > 0 && !reaped_[s]) {
        kill(pid_[s], SIGKILL);
        waitpid(pid_[s], nullptr, 0);
      }
    }
  }

  void Spawn(int side, const std::string& plugin, const std::string& instance,
             const PairedCpus& cpus) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      throw std::runtime_error("fork() for the paired pass's " + std::string(kSideName[side]) +
                               " failed");
    }
    if (pid == 0) PairedWorkerMain(plugin, instance, cpus, &page_->side[side]);
    pid_[side] = pid;
  }

  bool Ready(int side) {
    PairedSlot& slot = page_->side[side];
    return Await(side, [&] { return slot.ready.load(std::memory_order_acquire) != 0; });
  }

  // One batch of `ops` ops per thread on `side`; false (error() says why) if the side failed.
  bool Batch(int side, int64_t ops, int64_t* wall_ns, int64_t* cpu_ns) {
    PairedSlot& slot = page_->side[side];
    slot.batch_ops = ops;
    const uint32_t command = slot.command.load(std::memory_order_relaxed) + 1;
    Bump(&slot.command);
    if (!Await(side, [&] { return slot.done.load(std::memory_order_acquire) == command; })) {
      return false;
    }
    *wall_ns = slot.wall_ns;
    *cpu_ns = slot.cpu_ns;
    return true;
  }

  // Asks both sides to leave their loops and waits for their teardown; false if one failed.
  bool Stop() {
    for (int s = 0; s < 2; ++s) {
      page_->side[s].batch_ops = 0;
      Bump(&page_->side[s].command);
    }
    const int64_t deadline = ClockNs(CLOCK_MONOTONIC) + hang_ns_;
    for (int s = 0; s < 2; ++s) {
      int status = 0;
      while (waitpid(pid_[s], &status, WNOHANG) == 0) {
        if (ClockNs(CLOCK_MONOTONIC) > deadline) {
          error_ = Named(s, "did not end its teardown within " + Seconds(hang_ns_ / 1e9) +
                                " s, after the pairs were measured, and was killed");
          return false;
        }
        nanosleep(&kSlice, nullptr);
      }
      reaped_[s] = true;
      if (page_->side[s].failed.load(std::memory_order_acquire) != 0) {
        error_ = Named(s, page_->side[s].error);
        return false;
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        error_ = Named(s, Died(status) + " in its teardown, after the pairs were measured");
        return false;
      }
    }
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  static std::string Named(int side, const std::string& what) {
    return std::string(kSideName[side]) + ": " + ValidUtf8(what);
  }

  static std::string Died(int status) {
    if (WIFSIGNALED(status)) return "crashed with " + SignalName(WTERMSIG(status));
    return "ended the process with exit status " + std::to_string(WEXITSTATUS(status)) +
           " (a call to exit() or _exit() in the scenario?)";
  }

  // Waits until `reached()` or the side fails, ends or dies; the side's own word first.
  template <class Reached>
  bool Await(int side, Reached reached) {
    PairedSlot& slot = page_->side[side];
    const int64_t deadline = ClockNs(CLOCK_MONOTONIC) + hang_ns_;
    for (;;) {
      const uint32_t seen = slot.events.load(std::memory_order_acquire);
      if (slot.failed.load(std::memory_order_acquire) != 0) {
        error_ = Named(side, slot.error);
        return false;
      }
      if (reached()) return true;
      if (slot.ended.load(std::memory_order_acquire) != 0) {
        error_ = Named(side, "the scenario body returned before the pass ended");
        return false;
      }
      FutexWait(&slot.events, seen, &kSlice);
      if (slot.events.load(std::memory_order_acquire) != seen) continue;
      if (ClockNs(CLOCK_MONOTONIC) > deadline) {
        error_ = Named(side, "went silent for " + Seconds(hang_ns_ / 1e9) +
                                 " s (its setup or a batch hangs?) and was killed");
        return false;
      }
      int status = 0;
      if (waitpid(pid_[side], &status, WNOHANG) == pid_[side]) {
        reaped_[side] = true;
        error_ = slot.failed.load(std::memory_order_acquire) != 0 ? Named(side, slot.error)
                                                                  : Named(side, Died(status));
        return false;
      }
    }
  }

  PairedPage* page_;
  int64_t hang_ns_;
  pid_t pid_[2] = {-1, -1};
  bool reaped_[2] = {false, false};
  std::string error_;
};

struct Pairs {
  int64_t batch_ops = 0;
  int64_t warmup_pairs = 0;
  std::vector<int64_t> session_pairs;  // the pairs of each session, in order
  std::vector<int> cand_first;
  std::vector<int64_t> wall[2];
  std::vector<int64_t> cpu[2];
};

// Both sides' batches, in the order `cand_first` gives; false if a side failed.
bool Pair(Coordinator& c, int64_t ops, bool cand_first, int64_t wall[2], int64_t cpu[2]) {
  const int first = cand_first ? 1 : 0;
  return c.Batch(first, ops, &wall[first], &cpu[first]) &&
         c.Batch(1 - first, ops, &wall[1 - first], &cpu[1 - first]);
}

// Who goes first in each pair: the measured pairs' order has a stream of its own, untouched
// by the warm-up's (whose length depends on the machine), so it is the same in every run.
struct Orders {
  Order warmup;
  Order measured;
};

// One session: its pairs into `out` for `budget_s`, the first warmup_fraction of it dropped;
// the batch length is found by the first session and kept by the others.
bool Measure(Coordinator& c, Orders& orders, const PairedOptions& options, double budget_s,
             Pairs* out) {
  int64_t wall[2], cpu[2];
  // The batch length: grow until the slower side's batch lasts batch_s, judged by the quickest
  // of a few pairs: on a busy machine one pair's wait for a core would stop the growth early.
  const double target_ns = options.batch_s * 1e9;
  for (int64_t ops = 1; out->batch_ops == 0;) {
    double longest = 0;
    for (int i = 0; i < kCalibrationPairs; ++i) {
      if (!Pair(c, ops, orders.warmup.CandidateFirst(), wall, cpu)) return false;
      const double pair = static_cast<double>(std::max(wall[0], wall[1]));
      longest = i == 0 ? pair : std::min(longest, pair);
    }
    if (longest >= target_ns || ops >= kMaxBatchOps) {
      out->batch_ops = ops;
    } else {
      const double grow = longest > 0 ? 1.2 * target_ns / longest : 10.0;
      ops = std::min(kMaxBatchOps, ops * static_cast<int64_t>(std::clamp(grow, 2.0, 10.0)));
    }
  }
  const int64_t ops = out->batch_ops;
  const int64_t start = ClockNs(CLOCK_MONOTONIC);
  const int64_t warm_end = start + static_cast<int64_t>(options.warmup_fraction * budget_s * 1e9);
  const int64_t end = start + static_cast<int64_t>(budget_s * 1e9);
  int64_t measured = 0;
  for (int64_t now = start; now < end; now = ClockNs(CLOCK_MONOTONIC)) {
    if (Interrupted()) return false;
    const bool warming = now < warm_end;
    const bool cand_first = (warming ? orders.warmup : orders.measured).CandidateFirst();
    if (!Pair(c, ops, cand_first, wall, cpu)) return false;
    if (warming) {
      ++out->warmup_pairs;
      continue;
    }
    ++measured;
    out->cand_first.push_back(cand_first ? 1 : 0);
    for (int s = 0; s < 2; ++s) {
      out->wall[s].push_back(wall[s]);
      out->cpu[s].push_back(cpu[s]);
    }
  }
  out->session_pairs.push_back(measured);
  return true;
}

// The CPUs this process may run on, from the one it runs on now: the sides' threads and the
// coordinator stay on them for the instance (PairedCpus).
PairedCpus ChooseCpus() {
  cpu_set_t allowed;
  PairedCpus out;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return out;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  const int now = sched_getcpu();
  const auto here = std::find(cpus.begin(), cpus.end(), now);
  if (here != cpus.end()) std::rotate(cpus.begin(), here, cpus.end());
  out.cpus = cpus;
  return out;
}

// Pins the calling thread to `cpus.cpus[0]` while it lives; then back where it may run.
class Pinned {
 public:
  explicit Pinned(const PairedCpus& cpus) {
    ok_ = !cpus.cpus.empty() && sched_getaffinity(0, sizeof before_, &before_) == 0;
    if (ok_) PinThisThread(cpus.cpus.front());
  }
  ~Pinned() {
    if (ok_) sched_setaffinity(0, sizeof before_, &before_);
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;

 private:
  cpu_set_t before_;
  bool ok_;
};

}  // namespace

json PairedEntry(const Instance& instance, const std::string& allocator) {
  json out = {{"name", instance.name},  {"scenario", instance.scenario},
              {"args", json::object()}, {"threads", instance.threads},
              {"allocator", allocator}, {"paired", nullptr}};
  for (const auto& [key, value] : instance.args) out["args"][key] = value;
  return out;
}

json RunPaired(const Instance& instance, const std::string& base_plugin,
               const PairedOptions& options, const std::string& allocator) {
  json out = PairedEntry(instance, allocator);
  if (!instance.refusal.empty()) {
    out["error"] = instance.refusal;
    return out;
  }
  void* memory =
      mmap(nullptr, sizeof(PairedPage), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::runtime_error("mmap() of the paired pass's page failed");
  Pairs pairs;
  Orders orders{Order{~Fnv1a(instance.name)}, Order{Fnv1a(instance.name)}};
  bool ok = true;
  std::string error;
  const PairedCpus cpus = ChooseCpus();
  const Pinned pinned(cpus);
  for (int session = 0; ok && session < options.sessions; ++session) {
    auto* page = new (memory) PairedPage();
    Coordinator c(page, options.hang_s);
    // Each side's process is fresh in every session, the first one forked in turn: the speed
    // a process brings of its own (1-2% for a whole session, measured) differs from session
    // to session, and the estimate's interval sees that spread (gate/paired.py).
    const std::string* plugins[2] = {&base_plugin, &options.against};
    const int first = session % 2;
    c.Spawn(first, *plugins[first], instance.name, cpus);
    c.Spawn(1 - first, *plugins[1 - first], instance.name, cpus);
    ok = c.Ready(0) && c.Ready(1) &&
         Measure(c, orders, options, options.budget_s / options.sessions, &pairs) && c.Stop();
    error = c.error();
  }
  munmap(memory, sizeof(PairedPage));
  if (!ok) {
    out["error"] = "paired time pass: " + (error.empty() ? "interrupted" : error);
    return out;
  }
  out["paired"] = {{"batch_ops", pairs.batch_ops},         {"batch_target_s", options.batch_s},
                   {"budget_s", options.budget_s},         {"warmup_pairs", pairs.warmup_pairs},
                   {"session_pairs", pairs.session_pairs}, {"cand_first", pairs.cand_first},
                   {"base_wall_ns", pairs.wall[0]},        {"cand_wall_ns", pairs.wall[1]},
                   {"base_cpu_ns", pairs.cpu[0]},          {"cand_cpu_ns", pairs.cpu[1]}};
  return out;
}

}  // namespace allocbench
