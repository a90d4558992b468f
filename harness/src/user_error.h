// The one kind of error allocbench-run reports to the user: bad input or usage. main() prints
// "allocbench-run: error: <what>" and exits 2; the message names the input and the fix.
#ifndef ALLOCBENCH_HARNESS_USER_ERROR_H_
#define ALLOCBENCH_HARNESS_USER_ERROR_H_

#include <stdexcept>

namespace allocbench {

class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_USER_ERROR_H_
