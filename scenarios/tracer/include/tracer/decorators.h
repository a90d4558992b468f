// What the HTTP-server and database-client integrations put on their spans, from the request
// they observed: the tag sets of the Java tracer's span-creation benchmarks (7 tags for a web
// server span, 9 for a JDBC-style client span), plus the resource each integration derives.
#ifndef ALLOCBENCH_TRACER_DECORATORS_H_
#define ALLOCBENCH_TRACER_DECORATORS_H_

#include <cstdint>
#include <string_view>

#include "tracer/naming.h"
#include "tracer/span.h"
#include "tracer/span_builder.h"

namespace tracer {

struct HttpServerRequest {
  std::string_view method;  // "GET"
  std::string_view url;     // the full URL, query included
  std::string_view route;   // the framework's route template, "/api/v1/users/{id}"
  int64_t status_code = 0;
  std::string_view user_agent;
  std::string_view host;       // the server's host name as the client addressed it
  std::string_view component;  // the integration, e.g. "cpp-httplib"
};

struct DbClientQuery {
  Database database = Database::kPostgres;
  std::string_view instance;  // the database name
  std::string_view user;
  std::string_view statement;  // the (obfuscated) query, also the span's resource
  std::string_view operation;  // "SELECT"
  std::string_view host;
  int64_t port = 0;
  std::string_view component;  // the client library, e.g. "libpq"
};

// 7 tags (method, url, route, status code, user agent, peer host, component), and the resource
// "<method> <route>" built once per span.
void DecorateHttpServerSpan(const HttpServerRequest& request, Span& span);
void DecorateHttpServerSpan(const HttpServerRequest& request, SpanBuilder& builder);

// 9 tags (db.type, db.instance, db.user, db.statement, db.operation, peer host, peer port,
// span.kind, component); the resource is the statement.
void DecorateDbClientSpan(const DbClientQuery& query, Span& span);

}  // namespace tracer

#endif  // ALLOCBENCH_TRACER_DECORATORS_H_
