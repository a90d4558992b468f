#include "footprint.h"

#include <allocbench/counting.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace allocbench {
namespace {

int64_t ResidentBytes() noexcept {
  const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  // "size resident shared text lib data dt", in pages.
  char* end = nullptr;
  std::strtoll(buf, &end, 10);
  const long long pages = std::strtoll(end, nullptr, 10);
  return static_cast<int64_t>(pages) * sysconf(_SC_PAGESIZE);
}

}  // namespace

internal::FootprintData ReadProcessFootprint() noexcept {
  const counting::AllocatorFootprint a = counting::ReadAllocatorFootprint();
  return {ResidentBytes(), a.mapped_bytes, a.allocated_bytes};
}

}  // namespace allocbench
