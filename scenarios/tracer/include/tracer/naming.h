// Operation and service names under the naming schemas v0 and v1, for client protocols and
// databases, in the two forms of the .NET tracer's PR #8196:
//
//  - interpolated: the string is built by concatenation on every call (`$"{protocol}.request"`),
//    one or more heap allocations whenever the result outgrows the small-string buffer;
//  - precomputed: looked up by enum in tables filled once (literal tables for the operation
//    names, tables built at construction for the service names, which depend on the service);
//    a lookup never allocates.
//
// The enums index the tables: a new value needs its entry in every table of naming.cc
// (static_asserts catch a wrong length, the tests a wrong order).
#ifndef ALLOCBENCH_TRACER_NAMING_H_
#define ALLOCBENCH_TRACER_NAMING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tracer {

enum class SchemaVersion : uint8_t { kV0, kV1 };

enum class Protocol : uint8_t { kHttp, kGrpc };
inline constexpr std::size_t kProtocolCount = 2;

enum class Database : uint8_t {
  kPostgres,
  kMySql,
  kSqlServer,
  kOracle,
  kSqlite,
  kRedis,
  kMongoDb,
  kElasticsearch,
  kCouchbase,
  kCassandra,
};
inline constexpr std::size_t kDatabaseCount = 10;

std::string_view ProtocolName(Protocol protocol);  // "http", "grpc"
std::string_view DatabaseName(Database database);  // "postgres", "sql-server", ...

// The "before": built per call.
//   protocol operation  v0 "<protocol>.request"           v1 "<protocol>.client.request"
//   protocol service    v0 "<service>-<protocol>-client"  v1 "<service>"
//   database operation  v0 "<database>.query"             v1 "<database>.query"
//   database service    v0 "<service>-<database>"         v1 "<service>"
std::string InterpolateProtocolOperationName(SchemaVersion version, Protocol protocol);
std::string InterpolateProtocolServiceName(SchemaVersion version, const std::string& service,
                                           Protocol protocol);
std::string InterpolateDatabaseOperationName(SchemaVersion version, Database database);
std::string InterpolateDatabaseServiceName(SchemaVersion version, const std::string& service,
                                           Database database);

// A name as a NamingSchema returns it: borrowed from a table (no allocation) or built for this
// call and owned. Moving either kind allocates nothing.
class Name {
 public:
  // REQUIRES: `name` outlives the Name.
  static Name Borrow(std::string_view name) { return Name(name); }
  static Name Own(std::string name) { return Name(std::move(name)); }

  std::string_view view() const { return owned_ ? std::string_view(built_) : borrowed_; }
  bool owned() const { return owned_; }

 private:
  explicit Name(std::string_view borrowed) : borrowed_(borrowed) {}
  explicit Name(std::string built) : built_(std::move(built)), owned_(true) {}

  std::string_view borrowed_;
  std::string built_;
  bool owned_ = false;
};

class NamingSchema {
 public:
  // `precomputed` selects the tables; otherwise every call interpolates.
  NamingSchema(SchemaVersion version, std::string service, bool precomputed);

  Name ProtocolOperationName(Protocol protocol) const;
  Name ProtocolServiceName(Protocol protocol) const;
  Name DatabaseOperationName(Database database) const;
  Name DatabaseServiceName(Database database) const;

  SchemaVersion version() const { return version_; }
  bool precomputed() const { return precomputed_; }
  const std::string& service() const { return service_; }

 private:
  SchemaVersion version_;
  std::string service_;
  bool precomputed_;
  // Filled once at construction (service names depend on the service), whatever the mode.
  std::array<std::string, kProtocolCount> protocol_services_;
  std::array<std::string, kDatabaseCount> database_services_;
};

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_NAMING_H_
