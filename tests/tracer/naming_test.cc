// Naming: the precomputed tables agree with the interpolated strings for every enum value and
// both schemas (as the .NET tracer's PR #8196 tests do), and spot values are spelled out.
#include "tracer/naming.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace tracer {
namespace {

const std::string kService = "web-store";
constexpr SchemaVersion kVersions[] = {SchemaVersion::kV0, SchemaVersion::kV1};

TEST(TracerNaming, SpotValuesAreSpelledOut) {
  const NamingSchema v0(SchemaVersion::kV0, kService, true);
  const NamingSchema v1(SchemaVersion::kV1, kService, true);
  EXPECT_EQ(v0.ProtocolOperationName(Protocol::kHttp).view(), "http.request");
  EXPECT_EQ(v1.ProtocolOperationName(Protocol::kGrpc).view(), "grpc.client.request");
  EXPECT_EQ(v0.ProtocolServiceName(Protocol::kGrpc).view(), "web-store-grpc-client");
  EXPECT_EQ(v1.ProtocolServiceName(Protocol::kHttp).view(), "web-store");
  EXPECT_EQ(v0.DatabaseOperationName(Database::kSqlServer).view(), "sql-server.query");
  EXPECT_EQ(v1.DatabaseOperationName(Database::kElasticsearch).view(), "elasticsearch.query");
  EXPECT_EQ(v0.DatabaseServiceName(Database::kMongoDb).view(), "web-store-mongodb");
  EXPECT_EQ(v1.DatabaseServiceName(Database::kRedis).view(), "web-store");
}

TEST(TracerNaming, PrecomputedAgreesWithInterpolatedForEveryProtocol) {
  for (SchemaVersion version : kVersions) {
    const NamingSchema tables(version, kService, true);
    const NamingSchema built(version, kService, false);
    for (std::size_t i = 0; i < kProtocolCount; ++i) {
      const auto p = static_cast<Protocol>(i);
      const std::string op = InterpolateProtocolOperationName(version, p);
      const std::string service = InterpolateProtocolServiceName(version, kService, p);
      EXPECT_EQ(tables.ProtocolOperationName(p).view(), op) << ProtocolName(p);
      EXPECT_EQ(tables.ProtocolServiceName(p).view(), service) << ProtocolName(p);
      EXPECT_EQ(built.ProtocolOperationName(p).view(), op) << ProtocolName(p);
      EXPECT_EQ(built.ProtocolServiceName(p).view(), service) << ProtocolName(p);
    }
  }
}

TEST(TracerNaming, PrecomputedAgreesWithInterpolatedForEveryDatabase) {
  for (SchemaVersion version : kVersions) {
    const NamingSchema tables(version, kService, true);
    const NamingSchema built(version, kService, false);
    for (std::size_t i = 0; i < kDatabaseCount; ++i) {
      const auto d = static_cast<Database>(i);
      const std::string op = InterpolateDatabaseOperationName(version, d);
      const std::string service = InterpolateDatabaseServiceName(version, kService, d);
      EXPECT_EQ(tables.DatabaseOperationName(d).view(), op) << DatabaseName(d);
      EXPECT_EQ(tables.DatabaseServiceName(d).view(), service) << DatabaseName(d);
      EXPECT_EQ(built.DatabaseOperationName(d).view(), op) << DatabaseName(d);
      EXPECT_EQ(built.DatabaseServiceName(d).view(), service) << DatabaseName(d);
    }
  }
}

TEST(TracerNaming, AnotherServiceChangesTheServiceTables) {
  const NamingSchema v0(SchemaVersion::kV0, "checkout", true);
  EXPECT_EQ(v0.DatabaseServiceName(Database::kCassandra).view(), "checkout-cassandra");
  EXPECT_EQ(v0.DatabaseServiceName(Database::kCassandra).view(),
            InterpolateDatabaseServiceName(SchemaVersion::kV0, "checkout", Database::kCassandra));
}

TEST(TracerNaming, EveryEnumValueHasItsOwnName) {
  std::set<std::string_view> protocols;
  for (std::size_t i = 0; i < kProtocolCount; ++i) {
    protocols.insert(ProtocolName(static_cast<Protocol>(i)));
  }
  std::set<std::string_view> databases;
  for (std::size_t i = 0; i < kDatabaseCount; ++i) {
    databases.insert(DatabaseName(static_cast<Database>(i)));
  }
  EXPECT_EQ(protocols.size(), kProtocolCount);
  EXPECT_EQ(databases.size(), kDatabaseCount);
  EXPECT_EQ(protocols.count(""), 0u);
  EXPECT_EQ(databases.count(""), 0u);
}

TEST(TracerNaming, PrecomputedNamesAreBorrowedFromOneTable) {
  const NamingSchema tables(SchemaVersion::kV0, kService, true);
  const Name a = tables.DatabaseServiceName(Database::kPostgres);
  const Name b = tables.DatabaseServiceName(Database::kPostgres);
  EXPECT_FALSE(a.owned());
  EXPECT_EQ(a.view().data(), b.view().data());  // the same table entry, no copy
  const NamingSchema built(SchemaVersion::kV0, kService, false);
  EXPECT_TRUE(built.DatabaseServiceName(Database::kPostgres).owned());
}

TEST(TracerNaming, AnOwnedNameSurvivesAMove) {
  const NamingSchema built(SchemaVersion::kV1, kService, false);
  Name name = built.ProtocolOperationName(Protocol::kHttp);
  const Name moved = std::move(name);
  EXPECT_EQ(moved.view(), "http.client.request");
}

}  // namespace
}  // namespace tracer
