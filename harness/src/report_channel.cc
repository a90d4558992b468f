#include "report_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "proc_stat.h"

namespace allocbench {
namespace {

struct Channel {
  int fd = -1;
  dev_t dev = 0;
  ino_t ino = 0;
  pid_t supervisor = 0;
  int supervisor_fd = -1;
  ChannelState* state = nullptr;
};

Channel g_channel;  // a child has one supervisor

bool IsThePipe(int fd) {
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == g_channel.dev && st.st_ino == g_channel.ino;
}

// The pipe, opened again if the scenario closed or replaced our descriptor; -1 if it cannot be.
int Descriptor() {
  if (IsThePipe(g_channel.fd)) return g_channel.fd;
  if (g_channel.state == nullptr || g_channel.state->lost_errno != 0) return -1;
  char path[64] = "/proc/";
  char* p = AppendDecimal(path + 6, static_cast<unsigned long>(g_channel.supervisor));
  for (const char* s = "/fd/"; *s; ++s) *p++ = *s;
  *AppendDecimal(p, static_cast<unsigned long>(g_channel.supervisor_fd)) = '\0';
  // Opening a pipe's /proc entry opens the pipe itself, as a FIFO, in the mode asked for.
  const int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || !IsThePipe(fd)) {
    g_channel.state->lost_errno = fd < 0 ? errno : ESTALE;
    if (fd >= 0) close(fd);
    return -1;
  }
  g_channel.fd = fd;
  return fd;
}

// One writev(): a message of up to PIPE_BUF bytes is never interleaved with one that another
// process of the instance's sends (a forked process's terminate handler, say).
bool WriteMessage(int fd, char kind, const char* text, size_t length) {
  char head[2] = {kind, ' '};
  char newline = '\n';
  iovec parts[3] = {{head, 2}, {const_cast<char*>(text), length}, {&newline, 1}};
  iovec* next = parts;
  int left = 3;
  while (left > 0) {
    const ssize_t n = writev(fd, next, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // the supervisor is gone: nothing left to tell
    size_t done = static_cast<size_t>(n);
    for (; left > 0 && done >= next->iov_len; --left, ++next) done -= next->iov_len;
    if (left > 0) {  // a part written in part
      next->iov_base = static_cast<char*>(next->iov_base) + done;
      next->iov_len -= done;
    }
  }
  return true;
}

}  // namespace

void OpenChannel(int fd, pid_t supervisor, int supervisor_fd, ChannelState* state) {
  struct stat st;
  if (fstat(fd, &st) == 0) {
    g_channel.dev = st.st_dev;
    g_channel.ino = st.st_ino;
  }
  g_channel.fd = fd;
  g_channel.supervisor = supervisor;
  g_channel.supervisor_fd = supervisor_fd;
  g_channel.state = state;
}

bool SendToParent(char kind, const char* text, size_t length) {
  const int saved_errno = errno;
  const int fd = Descriptor();
  const bool sent = fd >= 0 && WriteMessage(fd, kind, text, length);
  errno = saved_errno;
  return sent;
}

bool SendToParent(char kind, const std::string& text) {
  return SendToParent(kind, text.data(), text.size());
}

}  // namespace allocbench
