// Internal to testing/: where a captured allocation was made, symbolised after the counted
// window has closed (addr2line for functions and file:line, dladdr when it is missing).
#ifndef ALLOCBENCH_TESTING_STACKS_H_
#define ALLOCBENCH_TESTING_STACKS_H_

#include <string>
#include <vector>

#include "recorder.h"

namespace allocbench::testing::internal {

struct Frame {
  std::string function;  // demangled, "" when unknown
  std::string file;      // base name, "" without debug info
  std::string path;      // the file as the debug info names it
  int line = 0;
  std::string module;  // base name of the executable or library, and the offset, for unknowns
};

// The program's frames of each event's stack, the allocating one first: the frames of the
// allocation functions, of allocbench itself and of the C and C++ runtimes (std:: code too,
// inlined or not) are dropped, and inlined calls are frames of their own.
std::vector<std::vector<Frame>> ProgramFrames(const Recorder& recorder);

// "Name(...)" from a demangled name: no return type, parameters or qualifiers.
std::string ShortName(const std::string& demangled);

}  // namespace allocbench::testing::internal

#endif  // ALLOCBENCH_TESTING_STACKS_H_
