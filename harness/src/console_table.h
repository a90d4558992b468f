// The console table: one row per instance, one column per field of fields.h that has a column
// header, and notes under it for unsteady windows and failed scenarios.
#ifndef ALLOCBENCH_HARNESS_CONSOLE_TABLE_H_
#define ALLOCBENCH_HARNESS_CONSOLE_TABLE_H_

#include <nlohmann/json.hpp>
#include <string>

namespace allocbench {

// `results`: the results document's "results" array (results_json.h), which is what a
// supervised run has of each instance. Names and errors are made safe for a terminal.
std::string FormatTable(const nlohmann::json& results);

// "206", "2.5", "1,234,567" for ops/s: the console form of a metric value in `unit`.
std::string FormatValue(double value, const char* unit);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_CONSOLE_TABLE_H_
