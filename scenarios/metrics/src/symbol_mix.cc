#include "metrics/symbol_mix.h"

#include <string_view>
#include <unordered_map>

namespace metrics {
namespace {

class Rng {  // splitmix64: tiny, fixed and the same everywhere
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t x = (state_ += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  int Below(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }
  // Skewed towards 0: a few hot modules and functions take most samples.
  int Skewed(int n) {
    const double u = static_cast<double>(Next() >> 11) / 9007199254740992.0;
    return static_cast<int>(u * u * u * n);
  }

 private:
  uint64_t state_;
};

const char* const kPackages[] = {"checkout", "payments", "inventory", "search",
                                 "users",    "orders",   "shipping",  "pricing",
                                 "catalog",  "cart",     "ledger",    "fraud",
                                 "reviews",  "media",    "accounts",  "notifications"};
const char* const kLayers[] = {"api.views",
                               "api.serializers",
                               "api.permissions",
                               "services.order_service",
                               "services.payment_service",
                               "services.pricing_rules",
                               "repositories.sql",
                               "repositories.cache",
                               "domain.models",
                               "domain.events",
                               "tasks.workers",
                               "tasks.schedules",
                               "utils.retry",
                               "utils.formatting",
                               "integrations.http_client",
                               "integrations.queue"};
const char* const kClasses[] = {"OrderService", "PaymentGateway", "Repository",  "ViewSet",
                                "Serializer",   "EventPublisher", "RetryPolicy", "Worker"};
const char* const kVerbs[] = {"get",     "process", "validate", "serialize", "load",   "apply",
                              "publish", "compute", "fetch",    "update",    "_build", "_check"};
const char* const kNouns[] = {
    "order_items",           "payment_method", "line_item",   "customer_profile", "shipping_quote",
    "inventory_reservation", "discount_rules", "audit_event", "session_token",    "search_results"};

struct LibraryFrame {
  const char* path;  // below site-packages, or the stdlib for "lib/..."
  const char* module;
  const char* function;
};
// Root to leaf: the frames every request passes through, then the clients it calls.
const LibraryFrame kRootFrames[] = {
    {"gunicorn/arbiter.py", "gunicorn.arbiter", "run"},
    {"gunicorn/workers/sync.py", "gunicorn.workers.sync", "run_for_one"},
    {"gunicorn/workers/sync.py", "gunicorn.workers.sync", "handle_request"},
    {"django/core/handlers/wsgi.py", "django.core.handlers.wsgi", "WSGIHandler.__call__"},
    {"django/core/handlers/base.py", "django.core.handlers.base", "BaseHandler.get_response"},
    {"django/core/handlers/exception.py", "django.core.handlers.exception", "inner"},
    {"django/core/handlers/base.py", "django.core.handlers.base", "BaseHandler._get_response"},
    {"rest_framework/views.py", "rest_framework.views", "APIView.dispatch"}};
// Four clients an app frame ends in, three frames each.
const LibraryFrame kLeafFrames[][3] = {
    {{"django/db/models/sql/compiler.py", "django.db.models.sql.compiler",
      "SQLCompiler.execute_sql"},
     {"django/db/backends/utils.py", "django.db.backends.utils", "CursorWrapper._execute"},
     {"psycopg2/extras.py", "psycopg2.extras", "RealDictCursor.execute"}},
    {{"requests/sessions.py", "requests.sessions", "Session.request"},
     {"requests/adapters.py", "requests.adapters", "HTTPAdapter.send"},
     {"urllib3/connectionpool.py", "urllib3.connectionpool", "HTTPConnectionPool.urlopen"}},
    {{"redis/client.py", "redis.client", "Redis.execute_command"},
     {"redis/connection.py", "redis.connection", "Connection.read_response"},
     {"lib/socket.py", "socket", "SocketIO.readinto"}},
    {{"lib/logging/__init__.py", "logging", "Logger._log"},
     {"lib/logging/__init__.py", "logging", "Handler.handle"},
     {"lib/json/encoder.py", "json.encoder", "JSONEncoder.encode"}}};

class MixBuilder {
 public:
  void Frame(const std::string& function, const std::string& path, const std::string& symbol) {
    Insert(function);
    Insert(path);
    Insert(symbol);
  }
  void Library(const LibraryFrame& f) {
    const std::string_view path = f.path;
    const std::string full = path.substr(0, 4) == "lib/"
                                 ? "/usr/local/lib/python3.11/" + std::string(path.substr(4))
                                 : "/usr/local/lib/python3.11/site-packages/" + std::string(path);
    const std::string_view qualified = f.function;
    const size_t dot = qualified.rfind('.');
    Frame(std::string(dot == qualified.npos ? qualified : qualified.substr(dot + 1)), full,
          std::string(f.module) + ":" + f.function);
  }
  SymbolMix Take() { return std::move(mix_); }

 private:
  void Insert(const std::string& s) {
    auto [it, fresh] = ids_.emplace(s, static_cast<uint32_t>(mix_.distinct.size()));
    if (fresh) mix_.distinct.push_back(s);
    mix_.inserts.push_back(it->second);
  }

  SymbolMix mix_;
  std::unordered_map<std::string, uint32_t> ids_;
};

void AppFrame(Rng& rng, MixBuilder& mix) {
  const int package = rng.Skewed(16);
  const int layer = rng.Below(16);
  const std::string module = std::string(kPackages[package]) + "." + kLayers[layer];
  std::string path = "/app/src/" + module + ".py";
  for (size_t i = 9; i < path.size() - 3; ++i) {
    if (path[i] == '.') path[i] = '/';
  }
  const std::string function = std::string(kVerbs[rng.Skewed(12)]) + "_" + kNouns[rng.Skewed(10)];
  const std::string symbol = module + ":" + kClasses[(package + layer) % 8] + "." + function;
  mix.Frame(function, path, symbol);
}

}  // namespace

SymbolMix GenerateSymbolMix(int samples, uint64_t seed) {
  Rng rng(seed);
  MixBuilder mix;
  for (int s = 0; s < samples; ++s) {
    for (const LibraryFrame& f : kRootFrames) mix.Library(f);
    const int app_depth = 3 + rng.Below(6);
    for (int d = 0; d < app_depth; ++d) AppFrame(rng, mix);
    for (const LibraryFrame& f : kLeafFrames[rng.Below(4)]) mix.Library(f);
  }
  return mix.Take();
}

}  // namespace metrics
