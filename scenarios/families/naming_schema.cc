// naming_schema: the operation and service names spans need, per protocol and per database,
// under schema v0 and v1, built by concatenation on every call (precomputed:0) or looked up in
// tables made once (precomputed:1), as in the .NET tracer's PR #8196. Every op asks for every
// enum value once, so every op does the same work. precomputed:1 is 0 B/op by construction.
#include <allocbench/scenario.h>

#include "tracer/naming.h"

namespace {

using tracer::Name;
using tracer::NamingSchema;

NamingSchema Schema(allocbench::State& state) {
  const auto version =
      state.range(0) != 0 ? tracer::SchemaVersion::kV1 : tracer::SchemaVersion::kV0;
  return NamingSchema(version, "web-store", state.range(1) != 0);
}

// What an HTTP or gRPC client span asks for: its operation name and its service name.
ALLOCBENCH_SCENARIO(ProtocolNames, state) {
  const NamingSchema naming = Schema(state);
  for (auto _ : state) {
    for (std::size_t i = 0; i < tracer::kProtocolCount; ++i) {
      const auto protocol = static_cast<tracer::Protocol>(i);
      Name operation = naming.ProtocolOperationName(protocol);
      Name service = naming.ProtocolServiceName(protocol);
      allocbench::DoNotOptimize(operation);
      allocbench::DoNotOptimize(service);
    }
  }
}
ALLOCBENCH_REGISTER(ProtocolNames)
    ->Name("naming_schema/protocol_names")
    ->ArgNames({"schema", "precomputed"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1});

// What a database client span asks for, for each of the ten databases.
ALLOCBENCH_SCENARIO(DatabaseNames, state) {
  const NamingSchema naming = Schema(state);
  for (auto _ : state) {
    for (std::size_t i = 0; i < tracer::kDatabaseCount; ++i) {
      const auto database = static_cast<tracer::Database>(i);
      Name operation = naming.DatabaseOperationName(database);
      Name service = naming.DatabaseServiceName(database);
      allocbench::DoNotOptimize(operation);
      allocbench::DoNotOptimize(service);
    }
  }
}
ALLOCBENCH_REGISTER(DatabaseNames)
    ->Name("naming_schema/database_names")
    ->ArgNames({"schema", "precomputed"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1});

}  // namespace
