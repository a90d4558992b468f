#include "proc_stat.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

namespace allocbench {
namespace {

// "/proc/<pid>/stat" into `path` (at least 32 bytes).
void StatPath(pid_t pid, char* path) {
  char* p = path;
  for (const char* s = "/proc/"; *s; ++s) *p++ = *s;
  p = AppendDecimal(p, static_cast<unsigned long>(pid));
  for (const char* s = "/stat"; *s; ++s) *p++ = *s;
  *p = '\0';
}

}  // namespace

char* AppendDecimal(char* out, unsigned long value) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value > 0);
  while (n > 0) *out++ = digits[--n];
  return out;
}

bool ReadProcStat(pid_t pid, ProcStat* out) {
  if (pid <= 0) return false;
  char path[32];
  StatPath(pid, path);
  const int saved_errno = errno;  // a signal handler must leave errno as it found it
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    errno = saved_errno;
    return false;
  }
  // "pid (comm) state ppid ...": comm may hold spaces and ')', so the state follows the last ')'.
  char buf[512];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf - 1)) < 0 && errno == EINTR) {
  }
  close(fd);
  errno = saved_errno;
  if (n <= 0) return false;
  buf[n] = '\0';
  const char* close_paren = nullptr;
  for (const char* p = buf; *p; ++p) {
    if (*p == ')') close_paren = p;
  }
  if (close_paren == nullptr || close_paren[1] != ' ' || close_paren[2] == '\0') return false;
  out->state = close_paren[2];
  long parent = 0;
  const char* p = close_paren + 3;
  if (*p++ != ' ') return false;
  for (; *p >= '0' && *p <= '9'; ++p) parent = parent * 10 + (*p - '0');
  out->parent = static_cast<pid_t>(parent);
  return true;
}

bool IsDescendant(pid_t pid) {
  const pid_t self = getpid();
  // Deeper than any tree an instance builds; the bound also ends a walk through a pid reused
  // while it went on.
  for (int depth = 0; depth < 256 && pid > 1 && pid != self; ++depth) {
    ProcStat stat;
    if (!ReadProcStat(pid, &stat)) return false;
    if (stat.parent == self) return true;
    pid = stat.parent;
  }
  return false;
}

}  // namespace allocbench
