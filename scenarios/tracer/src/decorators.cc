#include "tracer/decorators.h"

#include <cstring>
#include <string>

namespace tracer {
namespace {

// One tag list for both paths: set after start on a span, or given to a builder before start.
template <class SetTag>
void HttpServerTags(const HttpServerRequest& request, SetTag&& set) {
  set(TagId::kHttpMethod, request.method);
  set(TagId::kHttpUrl, request.url);
  set(TagId::kHttpRoute, request.route);
  set(TagId::kHttpStatusCode, request.status_code);
  set(TagId::kHttpUserAgent, request.user_agent);
  set(TagId::kPeerHostname, request.host);
  set(TagId::kComponent, request.component);
}

// "GET /api/v1/users/{id}", the resource of a web span, passed to `use` as a view. Built on the
// stack when it fits, so that the span's own copy is the only allocation it costs.
template <class Use>
void WithHttpResource(const HttpServerRequest& request, Use&& use) {
  const std::size_t size = request.method.size() + 1 + request.route.size();
  char buffer[256];
  if (size > sizeof buffer) {
    use(std::string(request.method) + ' ' + std::string(request.route));
    return;
  }
  std::memcpy(buffer, request.method.data(), request.method.size());
  buffer[request.method.size()] = ' ';
  std::memcpy(buffer + request.method.size() + 1, request.route.data(), request.route.size());
  use(std::string_view(buffer, size));
}

}  // namespace

void DecorateHttpServerSpan(const HttpServerRequest& request, Span& span) {
  HttpServerTags(request, [&span](TagId id, auto value) { span.SetTag(id, value); });
  WithHttpResource(request, [&span](std::string_view resource) { span.SetResource(resource); });
}

void DecorateHttpServerSpan(const HttpServerRequest& request, SpanBuilder& builder) {
  HttpServerTags(request, [&builder](TagId id, auto value) { builder.WithTag(id, value); });
  WithHttpResource(request,
                   [&builder](std::string_view resource) { builder.WithResource(resource); });
}

void DecorateDbClientSpan(const DbClientQuery& query, Span& span) {
  span.SetTag(TagId::kDbType, DatabaseName(query.database));
  span.SetTag(TagId::kDbInstance, query.instance);
  span.SetTag(TagId::kDbUser, query.user);
  span.SetTag(TagId::kDbStatement, query.statement);
  span.SetTag(TagId::kDbOperation, query.operation);
  span.SetTag(TagId::kPeerHostname, query.host);
  span.SetTag(TagId::kPeerPort, query.port);
  span.SetTag(TagId::kSpanKind, "client");
  span.SetTag(TagId::kComponent, query.component);
  span.SetResource(query.statement);
}

}  // namespace tracer
