#include "tracer/naming.h"

#include <utility>

namespace tracer {
namespace {

constexpr std::size_t kVersionCount = 2;

constexpr std::array<std::string_view, kProtocolCount> kProtocolNames = {"http", "grpc"};
constexpr std::array<std::string_view, kDatabaseCount> kDatabaseNames = {
    "postgres", "mysql",   "sql-server",    "oracle",    "sqlite",
    "redis",    "mongodb", "elasticsearch", "couchbase", "cassandra",
};

// The precomputed tables are written out, not derived from the interpolating functions, so that
// the tests comparing the two compare independent sources (as the .NET PR's tests do).
constexpr std::array<std::array<std::string_view, kProtocolCount>, kVersionCount>
    kProtocolOperationNames = {{
        {"http.request", "grpc.request"},
        {"http.client.request", "grpc.client.request"},
    }};
constexpr std::array<std::string_view, kDatabaseCount> kDatabaseOperationNames = {
    "postgres.query", "mysql.query",   "sql-server.query",    "oracle.query",    "sqlite.query",
    "redis.query",    "mongodb.query", "elasticsearch.query", "couchbase.query", "cassandra.query",
};
// v0 service names are "<service><suffix>"; v1 service names are the service itself.
constexpr std::array<std::string_view, kProtocolCount> kV0ProtocolServiceSuffixes = {
    "-http-client", "-grpc-client"};
constexpr std::array<std::string_view, kDatabaseCount> kV0DatabaseServiceSuffixes = {
    "-postgres", "-mysql",   "-sql-server",    "-oracle",    "-sqlite",
    "-redis",    "-mongodb", "-elasticsearch", "-couchbase", "-cassandra",
};

static_assert(static_cast<std::size_t>(Protocol::kGrpc) + 1 == kProtocolCount,
              "kProtocolCount must follow the last Protocol");
static_assert(static_cast<std::size_t>(Database::kCassandra) + 1 == kDatabaseCount,
              "kDatabaseCount must follow the last Database");

std::size_t Index(Protocol protocol) { return static_cast<std::size_t>(protocol); }
std::size_t Index(Database database) { return static_cast<std::size_t>(database); }
std::size_t Index(SchemaVersion version) { return static_cast<std::size_t>(version); }

}  // namespace

std::string_view ProtocolName(Protocol protocol) { return kProtocolNames[Index(protocol)]; }
std::string_view DatabaseName(Database database) { return kDatabaseNames[Index(database)]; }

// Written the way such code is written, concatenation on every call: the cost under test.
std::string InterpolateProtocolOperationName(SchemaVersion version, Protocol protocol) {
  if (version == SchemaVersion::kV0) return std::string(ProtocolName(protocol)) + ".request";
  return std::string(ProtocolName(protocol)) + ".client.request";
}

std::string InterpolateProtocolServiceName(SchemaVersion version, const std::string& service,
                                           Protocol protocol) {
  if (version == SchemaVersion::kV0) {
    return service + "-" + std::string(ProtocolName(protocol)) + "-client";
  }
  return service;
}

std::string InterpolateDatabaseOperationName(SchemaVersion version, Database database) {
  (void)version;  // the same in both schemas
  return std::string(DatabaseName(database)) + ".query";
}

std::string InterpolateDatabaseServiceName(SchemaVersion version, const std::string& service,
                                           Database database) {
  if (version == SchemaVersion::kV0) return service + "-" + std::string(DatabaseName(database));
  return service;
}

NamingSchema::NamingSchema(SchemaVersion version, std::string service, bool precomputed)
    : version_(version), service_(std::move(service)), precomputed_(precomputed) {
  const bool v0 = version_ == SchemaVersion::kV0;
  for (std::size_t i = 0; i < kProtocolCount; ++i) {
    protocol_services_[i] =
        v0 ? std::string(service_).append(kV0ProtocolServiceSuffixes[i]) : service_;
  }
  for (std::size_t i = 0; i < kDatabaseCount; ++i) {
    database_services_[i] =
        v0 ? std::string(service_).append(kV0DatabaseServiceSuffixes[i]) : service_;
  }
}

Name NamingSchema::ProtocolOperationName(Protocol protocol) const {
  if (precomputed_) return Name::Borrow(kProtocolOperationNames[Index(version_)][Index(protocol)]);
  return Name::Own(InterpolateProtocolOperationName(version_, protocol));
}

Name NamingSchema::ProtocolServiceName(Protocol protocol) const {
  if (precomputed_) return Name::Borrow(protocol_services_[Index(protocol)]);
  return Name::Own(InterpolateProtocolServiceName(version_, service_, protocol));
}

Name NamingSchema::DatabaseOperationName(Database database) const {
  if (precomputed_) return Name::Borrow(kDatabaseOperationNames[Index(database)]);
  return Name::Own(InterpolateDatabaseOperationName(version_, database));
}

Name NamingSchema::DatabaseServiceName(Database database) const {
  if (precomputed_) return Name::Borrow(database_services_[Index(database)]);
  return Name::Own(InterpolateDatabaseServiceName(version_, service_, database));
}

}  // namespace tracer
