// Internal to allocbench's archives that bundle the hooks (allocbench::gbench,
// allocbench::testing): the linker extracts an archive member only for a symbol still undefined,
// so a suite whose own code never calls malloc or operator new would link no hook at all and
// count nothing of libstdc++'s calls. A member that the user's objects always pull in says
// ALLOCBENCH_ANCHOR_HOOKS(); at namespace scope, which references both hook objects.
#ifndef ALLOCBENCH_ALLOCATORS_HOOK_ANCHORS_H_
#define ALLOCBENCH_ALLOCATORS_HOOK_ANCHORS_H_

#include <stdlib.h>

#include <cstddef>
#include <new>

namespace allocbench::hooks {

struct Anchors {
  void* (*malloc_fn)(size_t) noexcept;
  void* (*new_fn)(size_t);
};

}  // namespace allocbench::hooks

#define ALLOCBENCH_ANCHOR_HOOKS() \
  __attribute__((used)) const ::allocbench::hooks::Anchors kAnchors = {&malloc, &::operator new }

#endif  // ALLOCBENCH_ALLOCATORS_HOOK_ANCHORS_H_
