// One scenario per kind of fault a plugin can commit, between well-behaved scenarios whose exact
// counts are known (3 x new of 32 B = 96 B/op in 3 allocations). The tests run them all in one
// allocbench-run and check that every good instance is measured exactly and every bad one is
// recorded with its reason.
#include <allocbench/scenario.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

struct Block32 {
  char bytes[32];
};

void ThreeBlocks() {
  Block32* a = new Block32;
  Block32* b = new Block32;
  Block32* c = new Block32;
  allocbench::DoNotOptimize(a);
  allocbench::DoNotOptimize(b);
  allocbench::DoNotOptimize(c);
  delete a;
  delete b;
  delete c;
}

// A real store through a null pointer (a plain one is UB that GCC may turn into a trap).
void WriteThroughNull() {
  volatile int* p = nullptr;
  allocbench::DoNotOptimize(p);
  *p = 1;
}

// What a daemonizing agent does to the descriptors it inherited: closes them all, and the files
// it opens next get their numbers.
void CloseEveryDescriptor() {
  for (int fd = 3; fd < 4096; ++fd) close(fd);
  for (int i = 0; i < 16; ++i) open("/dev/null", O_WRONLY);
}

// The same, and then no descriptor can be opened at all: the pipe cannot be opened again.
void CloseEveryDescriptorForGood() {
  for (int fd = 3; fd < 4096; ++fd) close(fd);
  const rlimit none{0, 0};
  setrlimit(RLIMIT_NOFILE, &none);
}

// Starts an agent as daemons start: fork, setsid() (out of the instance's session and process
// group), fork again, the middle process exits. The agent waits for ever; its pid is appended to
// $ALLOCBENCH_TEST_DAEMON_PIDS, for the test that checks it is gone.
void StartDaemon() {
  int started[2];  // the agent says it has written its pid; the scenario waits for that
  if (pipe(started) != 0) std::abort();
  const pid_t middle = fork();
  if (middle == 0) {
    setsid();
    if (fork() == 0) {
      if (const char* file = std::getenv("ALLOCBENCH_TEST_DAEMON_PIDS")) {
        const std::string line = std::to_string(getpid()) + "\n";
        const int fd = open(file, O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (write(fd, line.data(), line.size()) < 0) _exit(1);
        close(fd);
      }
      if (write(started[1], "x", 1) != 1) _exit(1);
      for (;;) pause();
    }
    _exit(0);
  }
  waitpid(middle, nullptr, 0);
  char c;
  while (read(started[0], &c, 1) < 0 && errno == EINTR) {
  }
  close(started[0]);
  close(started[1]);
}

// A process the scenario started signals its parent: the instance's process (or, without
// isolation, allocbench-run itself). To the scenario's thread, which holds the signal until the
// child is reaped, so that no process of the scenario's is left when it strikes.
void SignalFromAChild() {
  sigset_t term, before;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &before);
  const pid_t parent = getpid();
  const pid_t thread = static_cast<pid_t>(syscall(SYS_gettid));
  const pid_t child = fork();
  if (child == 0) {
    syscall(SYS_tgkill, parent, thread, SIGTERM);
    _exit(0);
  }
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

// An agent of the scenario's, in a session of its own, signals allocbench-run.
void SignalTheRunnerFromADaemon(int signal_number) {
  const pid_t runner = getppid();
  if (fork() == 0) {
    setsid();
    kill(runner, signal_number);
    for (;;) pause();
  }
  for (;;) pause();
}

ALLOCBENCH_SCENARIO(Good, state) {
  for (auto _ : state) ThreeBlocks();
}

// Faults strike on the op after the cold one, so the pass has begun when they do.
#define FAULT_SCENARIO(function, fault)  \
  ALLOCBENCH_SCENARIO(function, state) { \
    int64_t op = 0;                      \
    for (auto _ : state) {               \
      ThreeBlocks();                     \
      if (++op == 2) {                   \
        fault;                           \
      }                                  \
    }                                    \
  }

FAULT_SCENARIO(Segfault, WriteThroughNull())
FAULT_SCENARIO(Abort, std::abort())
FAULT_SCENARIO(Throw, throw std::runtime_error("the span pool is empty"))
FAULT_SCENARIO(ThrowNotAnException, throw 42)
FAULT_SCENARIO(ThrowOnAnotherThread,
               std::thread([] { throw std::logic_error("flush thread failed"); }).join())
FAULT_SCENARIO(Exit, std::exit(0))
FAULT_SCENARIO(KillItself, std::raise(SIGKILL))
FAULT_SCENARIO(Hang, for (;;) pause())
FAULT_SCENARIO(SigtermToTheRunner, kill(getppid(), SIGTERM); for (;;) pause())
FAULT_SCENARIO(SigintToTheRunner, kill(getppid(), SIGINT); for (;;) pause())
FAULT_SCENARIO(SignalFromADaemon, SignalTheRunnerFromADaemon(SIGHUP))
FAULT_SCENARIO(SigtermFromAChild, SignalFromAChild())
FAULT_SCENARIO(ClosesEveryDescriptor, CloseEveryDescriptor())
FAULT_SCENARIO(ClosesEveryDescriptorForGood, CloseEveryDescriptorForGood())

// Starts one agent per process (in the count pass), and goes on: measured, and the agent is
// killed when the instance ends.
ALLOCBENCH_SCENARIO(Daemon, state) {
  static bool started = false;
  for (auto _ : state) {
    ThreeBlocks();
    if (!started) {
      started = true;
      StartDaemon();
    }
  }
}

// Keeps 64 B per op and leaves a thread behind that allocates for ever: both end with the
// instance's process, so the next instance is measured as if they had never been.
ALLOCBENCH_SCENARIO(Leak, state) {
  std::thread([] {
    for (;;) {
      void* p = std::malloc(48);
      allocbench::DoNotOptimize(p);
      std::free(p);
      std::this_thread::yield();
    }
  }).detach();
  for (auto _ : state) {
    char* kept = new char[64];
    allocbench::DoNotOptimize(kept);
  }
}

// Survives the count pass at its default op counts (1000 warm-up + 2 x 1000) and crashes in the
// time pass: what the count pass measured is kept.
ALLOCBENCH_SCENARIO(CrashAfter3000Ops, state) {
  static int64_t ops = 0;  // across both passes: they run in the same process
  for (auto _ : state) {
    ThreeBlocks();
    if (++ops > 3000) WriteThroughNull();
  }
}

// End the process in the time pass, after the count pass has reported its result: the instance
// is still a failed one.
ALLOCBENCH_SCENARIO(ExitAfter3000Ops, state) {
  static int64_t ops = 0;
  for (auto _ : state) {
    ThreeBlocks();
    if (++ops > 3000) std::exit(0);
  }
}

ALLOCBENCH_SCENARIO(UnderscoreExitAfter3000Ops, state) {
  static int64_t ops = 0;
  for (auto _ : state) {
    ThreeBlocks();
    if (++ops > 3000) _exit(0);
  }
}

// A signal in the time pass (not a crash of the code's own: raise()): the same.
ALLOCBENCH_SCENARIO(SigtermAfter3000Ops, state) {
  static int64_t ops = 0;
  for (auto _ : state) {
    ThreeBlocks();
    if (++ops > 3000) std::raise(SIGTERM);
  }
}

// Throws in the time pass, whose first thread is Google Benchmark's own: still the scenario's
// exception, not the harness's failure.
ALLOCBENCH_SCENARIO(ThrowAfter3000Ops, state) {
  static int64_t ops = 0;
  for (auto _ : state) {
    ThreeBlocks();
    if (++ops > 3000) throw std::runtime_error("the flush queue is full");
  }
}

ALLOCBENCH_SCENARIO(TwoLoops, state) {
  for (auto _ : state) ThreeBlocks();
  for (auto _ : state) ThreeBlocks();
}

ALLOCBENCH_SCENARIO(SkipWithNull, state) {
  for (auto _ : state) {
    state.SkipWithError(nullptr);
    break;
  }
}

ALLOCBENCH_SCENARIO(CounterWithNullName, state) {
  for (auto _ : state) ThreeBlocks();
  state.SetCounter(nullptr, 1.0, nullptr);
}

ALLOCBENCH_SCENARIO(NanCounter, state) {
  for (auto _ : state) ThreeBlocks();
  state.SetCounter("hit_ratio", std::nan(""));
}

ALLOCBENCH_SCENARIO(PauseOutsideTheLoop, state) {
  state.PauseTiming();
  for (auto _ : state) ThreeBlocks();
}

ALLOCBENCH_SCENARIO(InvalidUtf8Error, state) {
  for (auto _ : state) {
    state.SkipWithError("caf\xe9 au lait: not UTF-8");
    break;
  }
}

}  // namespace

ALLOCBENCH_REGISTER(Good)->Name("good/before");
ALLOCBENCH_REGISTER(Segfault)->Name("fault/segfault");
ALLOCBENCH_REGISTER(Abort)->Name("fault/abort");
ALLOCBENCH_REGISTER(Throw)->Name("fault/throw");
ALLOCBENCH_REGISTER(ThrowNotAnException)->Name("fault/throw_int");
ALLOCBENCH_REGISTER(ThrowOnAnotherThread)->Name("fault/throw_on_thread");
ALLOCBENCH_REGISTER(Exit)->Name("fault/exit");
ALLOCBENCH_REGISTER(KillItself)->Name("fault/sigkill");
ALLOCBENCH_REGISTER(Hang)->Name("fault/hang");
ALLOCBENCH_REGISTER(SigtermToTheRunner)->Name("fault/sigterm_to_runner");
ALLOCBENCH_REGISTER(SigintToTheRunner)->Name("fault/sigint_to_runner");
ALLOCBENCH_REGISTER(SignalFromADaemon)->Name("fault/sighup_to_runner_from_daemon");
ALLOCBENCH_REGISTER(SigtermFromAChild)->Name("fault/sigterm_from_child");
ALLOCBENCH_REGISTER(ClosesEveryDescriptor)->Name("fault/closes_every_descriptor");
ALLOCBENCH_REGISTER(ClosesEveryDescriptorForGood)->Name("fault/closes_the_report_pipe_for_good");
ALLOCBENCH_REGISTER(Daemon)->Name("fault/daemon");
ALLOCBENCH_REGISTER(Leak)->Name("fault/leak");
ALLOCBENCH_REGISTER(CrashAfter3000Ops)->Name("fault/segfault_in_time_pass");
ALLOCBENCH_REGISTER(ThrowAfter3000Ops)->Name("fault/throw_in_time_pass");
ALLOCBENCH_REGISTER(ExitAfter3000Ops)->Name("fault/exit_in_time_pass");
ALLOCBENCH_REGISTER(UnderscoreExitAfter3000Ops)->Name("fault/_exit_in_time_pass");
ALLOCBENCH_REGISTER(SigtermAfter3000Ops)->Name("fault/sigterm_in_time_pass");
ALLOCBENCH_REGISTER(TwoLoops)->Name("misuse/two_loops");
ALLOCBENCH_REGISTER(SkipWithNull)->Name("misuse/skip_with_null");
ALLOCBENCH_REGISTER(CounterWithNullName)->Name("misuse/counter_null_name");
ALLOCBENCH_REGISTER(NanCounter)->Name("misuse/nan_counter");
ALLOCBENCH_REGISTER(PauseOutsideTheLoop)->Name("misuse/pause_outside_loop");
ALLOCBENCH_REGISTER(InvalidUtf8Error)->Name("misuse/invalid_utf8_error");
ALLOCBENCH_REGISTER(Good)->Name("misuse/invalid_utf8_name/\xff\xfe");
ALLOCBENCH_REGISTER(Good)->Name("misuse/control_name/\n\x1b[31mred");
ALLOCBENCH_REGISTER(Good)->Name("good/after");
