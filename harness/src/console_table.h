// The console table: one row per instance, one column per field of fields.h that has a column
// header, and notes under it for unsteady windows and failed scenarios.
#ifndef ALLOCBENCH_HARNESS_CONSOLE_TABLE_H_
#define ALLOCBENCH_HARNESS_CONSOLE_TABLE_H_

#include <string>
#include <vector>

#include "result.h"

namespace allocbench {

std::string FormatTable(const std::vector<InstanceResult>& results);

// "206", "2.5", "1,234,567" for ops/s: the console form of a metric value in `unit`.
std::string FormatValue(double value, const char* unit);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_CONSOLE_TABLE_H_
