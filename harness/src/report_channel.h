// The child's end of the pipe to its supervisor (see child_process.h): one message is a kind
// letter, a space, the text (no newline in it) and a newline.
//
// A scenario may close file descriptors it did not open — an agent that daemonizes closes them
// all — and then open files that get the same numbers. Before each message the channel checks
// that its descriptor is still the pipe (the same device and inode); if it is not, the channel
// opens the pipe again through the supervisor's end, /proc/<supervisor>/fd/<n>, so the message
// (the measured result among them) still arrives and nothing is written into the scenario's
// files. Only if that fails too is the channel lost; the supervisor is then told why through
// memory the two share, which no close() can take away.
#ifndef ALLOCBENCH_HARNESS_REPORT_CHANNEL_H_
#define ALLOCBENCH_HARNESS_REPORT_CHANNEL_H_

#include <sys/types.h>

#include <string>

namespace allocbench {

// Memory shared by the supervisor and one child (MAP_SHARED, mapped before the fork).
struct ChannelState {
  int lost_errno;  // 0, or why the child could not open the pipe again
};

// Child side, right after the fork: `fd` is its end of the pipe; `supervisor_fd` the
// supervisor's end, in process `supervisor`.
void OpenChannel(int fd, pid_t supervisor, int supervisor_fd, ChannelState* state);

// Sends one message; false if it could not be sent. Never allocates, so it may run in a
// terminate handler.
bool SendToParent(char kind, const char* text, size_t length);
bool SendToParent(char kind, const std::string& text);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_REPORT_CHANNEL_H_
