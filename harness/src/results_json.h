// The results document (schema below) and its atomic writing.
//
// {
//   "schema_version": 1, "complete": true,
//   "context": {...},                       // see context.h
//   "fields": [{"key", "section", "unit", "gate", "help"}...],   // from fields.h
//   "results": [{"name", "scenario", "args": {..}, "threads", "allocator", "plugin",
//                "alloc": {...} | null, "time": {...} | null,
//                "counters"?: {"name": {"value", "unit"}}, "error"?: "...", "note"?: "..."}]
// }
#ifndef ALLOCBENCH_HARNESS_RESULTS_JSON_H_
#define ALLOCBENCH_HARNESS_RESULTS_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "result.h"

namespace allocbench {

// Bump on any incompatible change; the Python side refuses other versions with a message.
inline constexpr int kResultsSchemaVersion = 1;

nlohmann::json ResultToJson(const InstanceResult& result, const std::string& allocator);

// `results`: a JSON array of ResultToJson() entries.
nlohmann::json ResultsDocument(const nlohmann::json& context, const nlohmann::json& results,
                               bool complete);

// JSON text, with any invalid UTF-8 replaced (it never throws for text).
std::string Dump(const nlohmann::json& value, int indent = -1);

// Writes `content` to `path` through a temporary file in the same folder and a rename, so
// `path` holds either its old content or all of the new. Only a regular file is ever replaced:
// a symlink, FIFO, device or directory at `path` is a UserError, as is any failure.
void WriteFileAtomically(const std::string& path, const std::string& content);

// Throws UserError, naming the path and the reason, if `path` cannot be written.
void CheckWritable(const std::string& path);

// The UserError of a failed write: `what` failed ("write", "sync") with errno `err`.
[[noreturn]] void FailWrite(const std::string& path, const char* what, int err);

}  // namespace allocbench

#endif  // ALLOCBENCH_HARNESS_RESULTS_JSON_H_
