#include "metrics/context_generator.h"

#include <cstdint>
#include <string>
#include <utility>

namespace metrics {
namespace {

// splitmix64's finalizer: a fixed, well-spread function of (context, tag).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <class Format>
std::vector<std::string> Generate(int n, Format format) {
  std::vector<std::string> values;
  for (int i = 0; i < n; ++i) values.push_back(format(i));
  return values;
}

std::string Hex(uint64_t seed, int digits) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint64_t x = Mix(seed); digits-- > 0; x >>= 4) out += kHex[x & 15];
  return out;
}

const std::vector<std::string> kServices = {
    "checkout-api",   "payments-worker",  "inventory-service",   "cart-api",
    "search-indexer", "user-profile-api", "notification-worker", "shipping-quotes",
    "pricing-engine", "auth-gateway",     "recommendations",     "fraud-scorer",
    "order-history",  "catalog-api",      "media-resizer",       "ledger-writer"};

const std::vector<std::string> kRegions = {"us-east-1", "us-west-2", "eu-west-1", "eu-central-1",
                                           "ap-southeast-2"};

const std::vector<std::string> kMeasures = {
    "request.duration", "request.count", "request.errors", "db.query.time", "db.pool.in_use",
    "cache.hits",       "cache.misses",  "queue.depth",    "queue.latency", "gc.pause"};

// The 26 keys of a typical agent config and the values each takes.
std::vector<std::pair<std::string, std::vector<std::string>>> StandardTags() {
  return {
      {"env", {"production", "staging", "canary"}},
      {"service", kServices},
      {"version", Generate(8, [](int i) { return "1.42." + std::to_string(i); })},
      {"host", Generate(200,
                        [](int i) {
                          return "ip-10-0-" + std::to_string(i / 64) + "-" +
                                 std::to_string(i * 7 % 251) + ".ec2.internal";
                        })},
      {"region", kRegions},
      {"availability-zone",
       Generate(15, [](int i) { return kRegions[i / 3] + static_cast<char>('a' + i % 3); })},
      {"kube_cluster_name", Generate(4, [](int i) { return "prod-us1-k8s-" + std::to_string(i); })},
      {"kube_namespace",
       {"checkout", "payments", "platform", "search", "default", "data", "edge", "ml"}},
      {"kube_deployment", kServices},
      {"pod_name", Generate(600,
                            [](int i) {
                              static const char kAlnum[] = "bcdfghjklmnpqrstvwxz2456789";
                              std::string pod = kServices[i % kServices.size()] + "-7d9f8b6c5-";
                              uint64_t x = Mix(i);
                              for (int k = 0; k < 5; ++k, x /= 27) pod += kAlnum[x % 27];
                              return pod;
                            })},
      {"container_name", {"app", "istio-proxy", "datadog-agent", "log-router"}},
      {"image_tag", Generate(12, [](int i) { return "sha-" + Hex(i + 1000, 7); })},
      {"http.method", {"GET", "POST", "PUT", "DELETE", "PATCH"}},
      {"http.status_code",
       {"200", "201", "204", "301", "400", "401", "403", "404", "409", "429", "500", "502", "503"}},
      {"http.route",
       {"/api/v2/orders/{id}",
        "/api/v2/orders",
        "/api/v2/orders/{id}/items",
        "/api/v2/carts/{cart_id}",
        "/api/v2/carts/{cart_id}/checkout",
        "/api/v1/users/{user_id}",
        "/api/v1/users/{user_id}/addresses",
        "/api/v1/sessions",
        "/api/v2/payments/{id}/capture",
        "/api/v2/payments/{id}/refund",
        "/api/v1/search",
        "/api/v1/search/suggest",
        "/api/v1/catalog/products/{sku}",
        "/api/v1/catalog/categories/{slug}",
        "/healthz",
        "/metrics",
        "/api/v2/shipping/quotes",
        "/api/v2/inventory/{sku}/reserve",
        "/api/v1/recommendations/{user_id}",
        "/api/v2/ledger/entries"}},
      {"peer.service",
       {"postgres-orders", "redis-sessions", "kafka-events", "s3", "stripe-api", "elasticsearch",
        "memcached", "dynamodb", "sqs", "auth-gateway"}},
      {"db.system", {"postgresql", "redis", "mysql", "mongodb", "elasticsearch"}},
      {"team", {"payments", "checkout", "search", "core", "growth", "infra", "data", "mobile"}},
      {"datacenter", {"us1", "us3", "eu1"}},
      {"runtime", {"go1.22", "cpython", "jvm17"}},
      {"language", {"go", "python", "java", "ruby"}},
      {"os.type", {"linux"}},
      {"customer_tier", {"free", "pro", "enterprise"}},
      {"source", {"dogstatsd", "openmetrics"}},
      {"shard", Generate(32, [](int i) { return std::to_string(i); })},
      {"git.commit.sha", Generate(6, [](int i) { return Hex(i + 2000, 16); })},
  };
}

}  // namespace

ContextGenerator::ContextGenerator(int contexts, int tags_per_context) : contexts_(contexts) {
  for (const std::string& service : kServices) {
    for (const std::string& measure : kMeasures) names_.push_back(service + "." + measure);
  }
  auto standard = StandardTags();
  for (int k = 0; k < tags_per_context; ++k) {
    if (k < static_cast<int>(standard.size())) {
      keys_.push_back(std::move(standard[k].first));
      values_.push_back(std::move(standard[k].second));
    } else {
      keys_.push_back("custom.tag_" + std::to_string(k));
      values_.push_back(Generate(10, [](int i) { return "value-" + std::to_string(i); }));
    }
  }
}

std::string_view ContextGenerator::Name(int context) const {
  // Consecutive contexts share a name and differ in tags, as one metric's contexts do.
  return names_[(context / 50) % names_.size()];
}

std::string_view ContextGenerator::TagValue(int context, int tag) const {
  const std::vector<std::string>& values = values_[tag];
  return values[Mix(static_cast<uint64_t>(context) * 64 + tag) % values.size()];
}

}  // namespace metrics
